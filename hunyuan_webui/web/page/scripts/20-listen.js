// Listen: the text and the translation read aloud by the browser's own speech
// synthesis, no server work. A speaker button in each box's corner, shown only while the box has
// text and the browser has a voice for its language (the text's: the picked source, or the
// detected one on "Detect language"; the translation's: the target). Voices arrive after the
// page (Chrome: on 'voiceschanged'), so the buttons follow them. Pressing it again stops.
(() => {
  const WORDS = __LISTEN_WORDS__;
  // Voice tags to try first for a page code, before any voice of the same primary language.
  const PREFER = {
    'zh': ['zh-cn', 'cmn-hans-cn', 'cmn-cn', 'zh-sg', 'zh'],
    'zh-Hant': ['zh-tw', 'cmn-hant-tw', 'zh-hk', 'zh-hant'],
    'yue': ['yue-hk', 'yue', 'zh-hk'],
    'tl': ['fil-ph', 'fil', 'tl'], 'he': ['he-il', 'he', 'iw-il', 'iw'],
    'id': ['id-id', 'id', 'in-id'], 'no': ['nb-no', 'nb', 'no'],
  };
  const BOXES = {
    source: {block: 'input-box', lang: (s) => (s.source === 'auto' ? s.detected : s.source)},
    target: {block: 'output-box', lang: (s) => s.target},
  };
  const ICONS = {
    speak: '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path fill="currentColor"'
      + ' d="M3 9v6h4l5 5V4L7 9H3zm13.5 3A4.5 4.5 0 0 0 14 8v8a4.5 4.5 0 0 0 2.5-4zM14 3.2v2.1a7'
      + ' 7 0 0 1 0 13.4v2.1a9 9 0 0 0 0-17.6z"/></svg>',
    stop: '<svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><rect fill="currentColor"'
      + ' x="6" y="6" width="12" height="12" rx="1.5"/></svg>',
  };
  const state = {source: 'auto', target: '', detected: '', speaking: null, utterance: null};
  const norm = (tag) => String(tag || '').replace(/_/g, '-').toLowerCase();
  const synth = () => window.speechSynthesis || null;

  function voiceFor(code) {
    const speech = synth();
    if (!code || code === 'auto' || !speech) return null;
    let voices = [];
    try { voices = speech.getVoices() || []; } catch (e) { return null; }
    const tags = PREFER[code] || [code.toLowerCase()];
    for (const tag of tags) {
      const exact = voices.find((v) => norm(v.lang) === tag);
      if (exact) return exact;
    }
    for (const tag of tags) {
      const region = voices.find((v) => norm(v.lang).startsWith(tag + '-'));
      if (region) return region;
    }
    const primary = code.toLowerCase().split('-')[0];
    return voices.find((v) => norm(v.lang).split('-')[0] === primary) || null;
  }

  const textOf = (side) => {
    const area = document.querySelector(`#${BOXES[side].block} textarea`);
    return area ? area.value : '';
  };

  function button(side) {
    const block = document.getElementById(BOXES[side].block);
    if (!block) return null;
    let b = document.getElementById(`listen-${side}`);
    if (b && b.parentNode !== block) { b.remove(); b = null; }  // the box was drawn again
    if (!b) {
      b = document.createElement('button');
      b.type = 'button';
      b.id = `listen-${side}`;
      b.className = 'hymt-listen';
      b.hidden = true;
      b.addEventListener('click', (e) => { e.preventDefault(); toggle(side); });
      block.appendChild(b);
    }
    return b;
  }

  function draw(b, side) {
    const words = WORDS[window.hymt.zh ? 'zh' : 'en'];
    const speaking = state.speaking === side;
    const name = speaking ? words.listen_stop : words[`listen_${side}`];
    if (b.getAttribute('aria-label') !== name) {
      b.setAttribute('aria-label', name);
      b.title = name;
      b.innerHTML = speaking ? ICONS.stop : ICONS.speak;
    }
  }

  function refresh() {
    for (const side of Object.keys(BOXES)) {
      const b = button(side);
      if (!b) continue;
      const voice = textOf(side).trim() ? voiceFor(BOXES[side].lang(state)) : null;
      const show = Boolean(voice) || state.speaking === side;  // Stop stays while it speaks
      if (b.hidden === show) b.hidden = !show;
      draw(b, side);
    }
  }

  function toggle(side) {
    const speech = synth();
    if (!speech) return;
    const again = state.speaking === side;
    state.speaking = null;
    state.utterance = null;
    speech.cancel();  // whatever speaks stops (the other box's reading too)
    const text = textOf(side);
    const voice = voiceFor(BOXES[side].lang(state));
    if (!again && voice && text.trim()) {
      const utterance = new SpeechSynthesisUtterance(text);
      utterance.voice = voice;
      utterance.lang = voice.lang;
      const ended = () => {
        if (state.utterance !== utterance) return;
        state.speaking = null;
        state.utterance = null;
        refresh();
      };
      utterance.onend = ended;
      utterance.onerror = ended;
      state.speaking = side;
      state.utterance = utterance;
      speech.speak(utterance);
    }
    refresh();
  }

  // The pair and the detected language, from the page's events (events.py, LISTEN_JS).
  window.hymt.listenPair = (source, target, detected) => {
    state.source = source || 'auto';
    state.target = target || '';
    state.detected = detected || '';
    refresh();
  };
  const speech = synth();
  if (speech && speech.addEventListener) speech.addEventListener('voiceschanged', refresh);
  else if (speech) speech.onvoiceschanged = refresh;
  // Gradio writes the boxes' values without events (a stream, Clear, Swap): a light poll.
  document.addEventListener('input', refresh, true);
  setInterval(refresh, 300);
})();
