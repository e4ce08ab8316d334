// Sentence highlight: in the sentence view under the boxes (web/page/aligned.py),
// pointing at a sentence with a mouse, tapping it, or reaching it with Tab marks it and its
// counterpart on the other side (the same data-seg). A tapped sentence (or one Enter or Space
// pressed on) stays marked until the next tap.
// The view and the readings (pinyin...) name the texts they were made for (data-hymt-src,
// data-hymt-out: a key of the source and of the output box's text); once a box holds something
// else (an edit, Swap, Clear, a history row), they hide, so they never describe a text that has
// gone. Keyed as aligned.text_key does: FNV-1a over UTF-16 code units.
(() => {
  const SEG = '#sentence-view .hymt-seg';
  let pinned = null;  // the tapped (or clicked) sentence
  let pointed = null;  // the sentence under the mouse
  const mark = () => {
    const on = pinned ?? pointed;
    document.querySelectorAll(SEG).forEach((e) => {
      const marked = on !== null && e.dataset.seg === on;
      e.classList.toggle('marked', marked);
      if (marked) e.setAttribute('data-marked', 'true'); else e.removeAttribute('data-marked');
    });
  };
  const segOf = (e) => (e.target instanceof Element ? e.target.closest(SEG) : null);
  document.addEventListener('pointerover', (e) => {
    const seg = segOf(e);
    if (e.pointerType !== 'mouse' || !seg) return;
    pointed = seg.dataset.seg;
    mark();
  });
  document.addEventListener('pointerout', (e) => {
    const seg = segOf(e);
    if (e.pointerType !== 'mouse' || !seg || seg.contains(e.relatedTarget)) return;
    pointed = null;
    mark();
  });
  const pin = (seg) => {
    if (seg) pinned = pinned === seg.dataset.seg ? null : seg.dataset.seg;
    else if (pinned !== null) pinned = null;
    else return;
    mark();
  };
  document.addEventListener('click', (e) => pin(segOf(e)));
  // The keyboard: a sentence reached with Tab is marked as one pointed at; Enter or Space pins.
  document.addEventListener('focusin', (e) => {
    const seg = segOf(e);
    // Only the keyboard's focus: a tap focuses the sentence too, and a second tap unpins it.
    if (!seg || !seg.matches(':focus-visible')) return;
    pointed = seg.dataset.seg;
    mark();
  });
  document.addEventListener('focusout', (e) => {
    const seg = segOf(e);
    if (!seg || seg.contains(e.relatedTarget)) return;
    pointed = null;
    mark();
  });
  document.addEventListener('keydown', (e) => {
    const seg = segOf(e);
    if (!seg || (e.key !== 'Enter' && e.key !== ' ')) return;
    e.preventDefault();  // Space would scroll the page
    pin(seg);
  });

  const key = (text) => {
    let h = 0x811c9dc5;
    for (let i = 0; i < text.length; i++) {
      h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
    }
    return h.toString(16).padStart(8, '0');
  };
  const keys = {};  // box -> [value, key]: a box's key is computed again only when it changed
  const keyOf = (box) => {
    const area = document.querySelector(`#${box} textarea`);
    if (!area) return null;
    if (!keys[box] || keys[box][0] !== area.value) keys[box] = [area.value, key(area.value)];
    return keys[box][1];
  };
  const sync = () => {
    const made = document.querySelectorAll('[data-hymt-src], [data-hymt-out]');
    if (!made.length) return;
    const src = keyOf('input-box');
    const out = keyOf('output-box');
    made.forEach((e) => {
      const fresh = (!e.dataset.hymtSrc || e.dataset.hymtSrc === src)
        && (!e.dataset.hymtOut || e.dataset.hymtOut === out);
      if (e.hidden === fresh) e.hidden = !fresh;
    });
  };
  document.addEventListener('input', sync, true);
  setInterval(sync, 300);
})();
