// Translate as you type (the rule that turns it on by default: live.py). With the
// toggle on, every keystroke in the text box first cancels the running translation (the hidden
// #live-cancel: Gradio's `cancels`, Stop's path, so the engine's job stops too), then, once the
// typing pauses for DELAY_MS, the hidden #live-btn translates the text as Translate does. One
// request per pause, not per key. While an input method composes (Chinese, Japanese…), nothing
// is sent until the word is chosen. A language picked meanwhile translates the text again.
(() => {
  const DELAY_MS = 600;  // live.py, DEBOUNCE_MS: why this long
  let timer = null;
  const on = () => {
    const box = document.querySelector('#live-toggle input[type=checkbox]');
    return Boolean(box && box.checked);
  };
  const press = (id) => {
    const b = document.getElementById(id);
    if (b) b.click();
  };
  const inBox = (e) => Boolean(e.target && e.target.closest && e.target.closest('#input-box'));
  const wait = () => { clearTimeout(timer); timer = null; };

  function keystroke(composing) {
    wait();
    if (!on()) return;
    press('live-cancel');
    if (composing) return;
    const box = document.querySelector('#input-box textarea');
    if (!box || !box.value.trim()) return;
    timer = setTimeout(() => {
      timer = null;
      const translate = document.getElementById('translate-btn');
      if (on() && translate && !translate.disabled) press('live-btn');
    }, DELAY_MS);
  }

  // The visitor picked another language (events.py: the pair as a picker takes focus, then on
  // its input event, which comes on every blur too): the text is translated again at once, as
  // DeepL does, not after the typing delay. A picker opened and left as it was sends nothing.
  let seen = null;
  window.hymt.pairSeen = (source, target) => { seen = `${source} > ${target}`; };
  window.hymt.pairChanged = (source, target) => {
    const pair = `${source} > ${target}`;
    if (seen === null || pair === seen) return;
    seen = pair;
    wait();
    const box = document.querySelector('#input-box textarea');
    if (!on() || !box || !box.value.trim()) return;
    press('live-cancel');
    setTimeout(() => {  // the cancel first
      const translate = document.getElementById('translate-btn');
      if (on() && translate && !translate.disabled) press('live-btn');
    }, 50);
  };

  document.addEventListener('input', (e) => { if (inBox(e)) keystroke(e.isComposing); }, true);
  document.addEventListener('compositionend', (e) => { if (inBox(e)) keystroke(false); }, true);
  // Translate, Retranslate or Clear pressed: the pending draft would only repeat or undo it.
  // Clear also stops what is running (a stream went on filling the emptied boxes).
  document.addEventListener('click', (e) => {
    if (e.target.closest?.('#translate-btn, #retranslate-btn, #clear-btn')) wait();
    if (e.target.closest?.('#clear-btn')) press('live-cancel');
  }, true);
  document.addEventListener('keydown', (e) => {
    if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') wait();  // 00-core.js: Translate
  }, true);
})();
