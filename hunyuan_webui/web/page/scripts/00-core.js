// The page's own script, core: keyboard, focus and accessibility fixes, and window.hymt.
// Every scripts/*.js goes into the page's <head>, in name order (client.py, HEAD).
document.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
    const button = document.querySelector('#translate-btn');
    if (button) { e.preventDefault(); button.click(); }
  }
});
// Gradio's dropdown blurs its input once a choice is made, and keyboard focus fell to the page
// body: Tab then started again from the top. After a choice made with Enter, focus returns to
// the picker with its list closed (as Escape leaves it), so Tab goes on to the next control.
// Gradio's focus handler opens the list again a frame or more later (its state needs that
// handler: kept from it, the list opened at the next Tab instead), so the list is shut whenever
// it shows in the next two seconds, while focus stays and no key is pressed. Shutting it once,
// a frame later, left it open on a busy machine, where it opened later than that.
let hymtPicked = null;
document.addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && e.target.matches?.('input[role=combobox]')) {
    hymtPicked = {input: e.target, at: performance.now()};
  }
}, true);
document.addEventListener('focusout', (e) => {
  const picked = hymtPicked;
  if (!picked || e.target !== picked.input || e.relatedTarget
      || performance.now() - picked.at > 1000) return;
  hymtPicked = null;
  setTimeout(() => {
    if (document.activeElement && document.activeElement !== document.body) return;
    picked.input.focus();
    const since = performance.now();
    let typed = false;
    const key = (k) => { if (k.isTrusted) typed = true; };  // not our own Escape
    picked.input.addEventListener('keydown', key);
    const close = (first) => {
      if (!typed && document.activeElement === picked.input) {
        if (first || document.querySelector('[data-testid=dropdown-option]')) {
          picked.input.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
        }
        if (performance.now() - since < 2000) {
          setTimeout(() => close(false), 50);
          return;
        }
      }
      picked.input.removeEventListener('keydown', key);
    };
    requestAnimationFrame(() => close(true));
  }, 0);
}, true);
// And a list left showing once focus has moved on (Gradio handles a key a tick late, and a Tab
// away from a picker could show its list again, over the page, after the blur had shut it):
// shut while focus is elsewhere, for a moment after each blur.
document.addEventListener('focusout', (e) => {
  const input = e.target;
  if (!input.matches?.('input[role=combobox]')) return;
  const since = performance.now();
  const shut = () => {
    if (document.activeElement === input) return;  // back in it: the list is the visitor's
    const list = document.getElementById(input.getAttribute('aria-controls') || '');
    if (list && list.offsetParent && list.querySelector('[data-testid=dropdown-option]')) {
      input.dispatchEvent(new KeyboardEvent('keydown', {key: 'Escape', bubbles: true}));
    }
    if (performance.now() - since < 1500) setTimeout(shut, 100);
  };
  setTimeout(shut, 0);
}, true);
// Two Gradio quirks axe-core reports as serious: an empty file box labelled without a role, and
// an upload button whose label does not contain its visible text. Patched as they appear.
let hymtA11yQueued = false;
new MutationObserver(() => {
  if (hymtA11yQueued) return;
  hymtA11yQueued = true;
  requestAnimationFrame(() => {
    hymtA11yQueued = false;
    document.querySelectorAll('div.empty[aria-label]:not([role])')
      .forEach((e) => e.setAttribute('role', 'img'));
    document.querySelectorAll('button.upload-container[aria-label]')
      .forEach((e) => e.removeAttribute('aria-label'));
  });
}).observe(document.documentElement, {subtree: true, childList: true});
window.hymt = {
  codes: __CODES__,
  aliases: __ALIASES__,
  zh: (navigator.language || 'en').toLowerCase().startsWith('zh'),
  code(tag) {
    if (!tag) return null;
    const t = String(tag).trim();
    const lower = t.toLowerCase();
    const exact = this.codes.find((c) => c.toLowerCase() === lower);
    if (exact) return exact;
    if (this.codes.includes(this.aliases[lower])) return this.aliases[lower];
    const primary = lower.split('-')[0];
    return this.codes.includes(primary) ? primary : null;
  },
  // A shared link with text translates it once, as soon as Translate is enabled (the model is
  // ready); only for that text, and for a few minutes at most.
  translateWhenReady(text) {
    const until = performance.now() + 300000;
    const tick = () => {
      const button = document.querySelector('#translate-btn');
      const box = document.querySelector('#input-box textarea');
      if (button && !button.disabled && box && box.value === text) { button.click(); return; }
      if (box && box.value !== text && box.value !== '') return;  // the visitor changed it
      if (performance.now() < until) setTimeout(tick, 250);
    };
    setTimeout(tick, 250);
  },
  count(text, limit, parts) {
    const n = [...(text || '')].length;
    const fmt = (x) => x.toLocaleString('en-US');
    const el = document.querySelector('#char-count');
    if (el) el.classList.toggle('over', n > limit * parts);
    // Out of what the page takes (it read "50,000 / 5,000": one request's limit).
    const most = `${fmt(n)} / ${fmt(limit * parts)}`;
    if (n <= limit) return most;
    if (n > limit * parts) return this.zh ? `${most} · 太长，请删减` : `${most} · too long`;
    const k = Math.ceil(n / limit);
    return this.zh ? `${most} · 将分 ${k} 部分以上翻译` : `${most} · will be translated in ${k}+ parts`;
  },
};
