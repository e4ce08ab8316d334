// Dictate: a 🎤 in the text box's corner fills it from speech, through this server's own
// recogniser (the WebSocket /class/api/dictate: 16 kHz PCM frames in, the words back, drafts
// while speaking; under the page's access policy). The capture is the class pages' own
// (class/static/live/capture.js, loaded on first use). When the microphone cannot be had the
// button says why (not a secure page, no permission, no AudioWorklet, no recogniser) and
// typing goes on. Its words: web/speech_words.py.
(() => {
  const base = new URL('class/static/live/', document.baseURI).href;
  const state = {source: 'auto', on: false, ws: null, capture: null, seq: 0, kept: '', draft: '',
                 speech: null, loaded: null};
  const words = () => (window.HYCapture ? window.HYCapture.words() : (k) => k);
  const area = () => document.querySelector('#input-box textarea');

  function load() {
    if (!state.loaded) {
      const one = (name) => new Promise((done, fail) => {
        const s = document.createElement('script');
        s.src = base + name; s.onload = done; s.onerror = fail;
        document.head.appendChild(s);
      });
      state.loaded = one('live-words.js').then(() => one('capture.js'));
    }
    return state.loaded;
  }
  async function recogniser() {  // the server's word on its recogniser (/ready says which)
    if (state.speech !== 'ready') {  // asked again while it loads, or after a failed answer
      try {  // 503 while the model or the recogniser loads: its body says which
        const ready = await (await fetch(new URL('ready', document.baseURI))).json();
        state.speech = (ready.speech && ready.speech.state) || 'off';
      } catch (e) { state.speech = 'unknown'; }
    }
    return state.speech;
  }
  function note(text) {
    let n = document.getElementById('dictate-note');
    const block = document.getElementById('input-box');
    if (!n && block) {
      n = document.createElement('div');
      n.id = 'dictate-note'; n.className = 'hymt-dictate-note'; n.setAttribute('role', 'status');
      block.after(n);
    }
    if (n) { n.textContent = text || ''; n.hidden = !text; }
  }
  function fill(text) {  // as if typed: Gradio hears the input event
    const box = area();
    if (!box) return;
    box.value = text;
    box.dispatchEvent(new Event('input', {bubbles: true}));
  }
  function show() {
    const sep = state.kept && !/\s$/.test(state.kept) && state.draft ? ' ' : '';
    fill(state.kept + sep + state.draft);
  }
  function draw() {
    const b = document.getElementById('dictate-btn');
    if (!b) return;
    const t = words();
    const name = state.on ? t('dictateStop') : t('dictate');
    b.setAttribute('aria-label', name); b.title = name;
    b.setAttribute('aria-pressed', String(state.on));
    b.textContent = state.on ? '⏹' : '🎤';
    b.classList.toggle('on', state.on);
  }
  async function start() {
    await load();
    const t = words();
    const why = window.HYCapture.unavailable();
    if (why) { note(t(why)); return; }
    if ((await recogniser()) !== 'ready') { note(t('noSpeech')); return; }
    note('');
    const box = area();
    state.kept = box ? box.value : ''; state.draft = ''; state.seq = 0;
    const lang = state.source && state.source !== 'auto' ? `?lang=${encodeURIComponent(state.source)}` : '';
    const url = new URL(`class/api/dictate${lang}`, document.baseURI);
    url.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(url.href);
    ws.binaryType = 'arraybuffer';
    state.ws = ws;
    ws.onmessage = (m) => {
      const msg = JSON.parse(m.data);
      if (msg.type === 'draft') { state.draft = msg.text; show(); }
      else if (msg.type === 'final') {
        state.draft = '';
        if (msg.text) state.kept += (state.kept && !/\s$/.test(state.kept) ? ' ' : '') + msg.text;
        show();
      } else if (msg.type === 'error') note(msg.message);
    };
    ws.onclose = () => { if (state.ws === ws) { state.ws = null; finish(); } };
    try {
      state.capture = await window.HYCapture.start((buffer) => {
        const data = new Uint8Array(4 + buffer.byteLength);
        new DataView(data.buffer).setUint32(0, state.seq++, true);
        data.set(new Uint8Array(buffer), 4);
        if (ws.readyState === WebSocket.OPEN) ws.send(data);
      });
    } catch (x) { note(t(x.reason || 'noMedia')); ws.close(); return; }
    state.on = true; draw();
  }
  function finish() {
    if (state.capture) state.capture.stop();
    state.capture = null; state.on = false; draw();
  }
  function stop() {
    if (state.capture) state.capture.stop();
    state.capture = null;
    if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify({type: 'stop'}));
    state.on = false; draw();
  }
  function button() {
    const block = document.getElementById('input-box');
    if (!block) return;
    let b = document.getElementById('dictate-btn');
    if (b && b.parentNode !== block) { b.remove(); b = null; }
    if (!b) {
      b = document.createElement('button');
      b.type = 'button'; b.id = 'dictate-btn'; b.className = 'hymt-dictate';
      b.addEventListener('click', (e) => { e.preventDefault(); if (state.on) stop(); else start(); });
      block.appendChild(b);
      load().then(draw);
      draw();
    }
  }
  const pair = window.hymt.listenPair;
  window.hymt.listenPair = (source, target, detected) => {
    state.source = source || 'auto';
    if (pair) pair(source, target, detected);
  };
  setInterval(button, 500);
})();
