/* A class spoken, on the class pages (hunyuan_webui/web/classroom/speech.py):
   - the teacher's 🎤 (in #speech-slot): frames over the WebSocket, numbered, resent after a
     drop from where the server says it is; the last sentence heard, with ✎ to fix it; how far
     each language is behind (the room's stats ``lag``);
   - everyone's draft line: the words being spoken, grey, under the lesson (in the reader's
     language when the server could translate the draft, else the original), gone when the
     sentence arrives;
   - a student's tap on a translation reads it aloud (speechSynthesis, when the browser has a
     voice for the language; nothing otherwise).
   It hears the page's stream through one event the page dispatches for each message it reads:
   document "hymt:class-event" (detail: the event). */
"use strict";
(function () {
  const app = document.getElementById("app");
  if (!app) return;
  const VIEW = app.dataset.view, CODE = app.dataset.code, P = app.dataset.prefix, API = P + "/api";
  const W = () => window.HYCapture.words();
  const state = { sentences: new Map(), done: new Set(), drafts: new Map(), room: null };

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const kid of kids) if (kid) node.append(kid);
    return node;
  }
  const myLang = () => {
    if (VIEW === "teacher") return state.room ? state.room.lang : "";
    try { return (JSON.parse(localStorage.getItem("hymt-class-" + CODE) || "null") || {}).lang || ""; }
    catch (x) { return ""; }
  };
  // Only the teacher's page asks (a student's page, or a mistyped code, costs the room's lookups nothing).
  if (VIEW === "teacher" && CODE) fetch(`${API}/rooms/${CODE}`).then((r) => r.json()).then((room) => { state.room = room; }).catch(() => {});

  // -- the draft line: the words being spoken ---------------------------------------------------
  function draftLine() {
    let line = document.getElementById("speech-draft");
    const lesson = document.getElementById("lesson");
    if (!line && lesson) {
      line = el("p", { id: "speech-draft", class: "speech-draft", "aria-live": "off", hidden: "" },
        el("span", { class: "speech-draft-icon", "aria-hidden": "true", text: "🎤 " }), el("span", { class: "speech-draft-text", dir: "auto" }));
      lesson.after(line);
    }
    return line;
  }
  function onDraft(ev) {
    const line = draftLine();
    if (!line || state.done.has(ev.utterance)) return;
    if (ev.done) {
      state.done.add(ev.utterance);
      if (state.drafts.get("shown") === ev.utterance) { line.hidden = true; state.drafts.delete("shown"); }
      return;
    }
    const mine = myLang();
    const translated = !ev.source && ev.lang === mine;
    const own = ev.source && ev.lang === mine;
    // The original shows until this reader's translation of the draft arrives (and for the teacher).
    if (!translated && !own && state.drafts.get(ev.utterance + ":tr")) return;
    if (translated) state.drafts.set(ev.utterance + ":tr", true);
    state.drafts.set("shown", ev.utterance);
    line.hidden = false;
    line.classList.toggle("original", !(translated || own));
    line.querySelector(".speech-draft-text").textContent = ev.text;
    line.scrollIntoView({ block: "nearest" });
  }

  // -- a mended sentence, where the page itself does not know corrections -------------------------
  function onCorrection(ev) {
    if (window.HYClass) return;  // the class pages that know corrections draw them themselves
    const row = document.querySelector(`#lesson [data-sid="${ev.sid}"]`);
    if (!row || !ev.text) return;
    const mine = myLang();
    if (ev.source && VIEW !== "teacher" && ev.lang !== mine) {
      const orig = row.querySelector(".orig"); if (orig) orig.textContent = ev.text;
      return;
    }
    if (!ev.source && ev.lang !== mine) return;
    const tr = row.querySelector(".tr"); if (tr) { tr.textContent = ev.text; tr.className = "tr"; }
  }

  // -- a student's tap reads a translation aloud ----------------------------------------------------
  function voiceFor(code) {
    const synth = window.speechSynthesis;
    if (!synth || !code) return null;
    const voices = synth.getVoices() || [];
    const norm = (t) => String(t || "").replace(/_/g, "-").toLowerCase();
    const want = { zh: ["zh-cn", "cmn"], "zh-Hant": ["zh-tw", "zh-hk"], yue: ["yue", "zh-hk"], tl: ["fil", "tl"], he: ["he", "iw"] }[code] || [code.toLowerCase()];
    for (const tag of want) {
      const v = voices.find((x) => norm(x.lang) === tag || norm(x.lang).startsWith(tag + "-"));
      if (v) return v;
    }
    return null;
  }
  function readAloud(e) {
    const tr = e.target.closest && e.target.closest("#lesson .tr");
    if (!tr || tr.classList.contains("draft")) return;
    const voice = voiceFor(myLang());
    if (!voice) return;  // no voice for this language: say nothing
    const say = new SpeechSynthesisUtterance(tr.textContent);
    say.voice = voice; say.lang = voice.lang;
    window.speechSynthesis.cancel();
    window.speechSynthesis.speak(say);
  }
  if (VIEW === "student") document.addEventListener("click", readAloud);

  document.addEventListener("hymt:class-event", (e) => {
    const ev = e.detail || {};
    if (ev.type === "speech_draft") onDraft(ev);
    else if (ev.type === "correction") onCorrection(ev);
    else if (ev.type === "sentence") {
      state.sentences.set(ev.seq, ev.text);
      const line = document.getElementById("speech-draft");
      if (line && !line.hidden && state.drafts.get("shown") && state.done.has(state.drafts.get("shown"))) line.hidden = true;
    } else if (ev.type === "stats" && VIEW === "teacher") showLag(ev.lag || {});
  });

  // -- the teacher: how far each language is behind -------------------------------------------------
  function showLag(lag) {
    const slot = document.getElementById("speech-slot");
    if (!slot) return;
    let box = document.getElementById("speech-lag");
    if (!box) { box = el("div", { id: "speech-lag", class: "speech-lag", role: "status", title: W()("lagTitle") }); slot.append(box); }
    const t = W();
    const names = (code) => { const l = (window.HYClass && window.HYClass.lang(code)) || null; return l ? l.autonym : code; };
    const behind = Object.entries(lag).filter(([, v]) => v.seconds >= 2);
    box.hidden = !behind.length;
    box.textContent = behind.length ? t("behind", { langs: behind.map(([c, v]) => t("behindOne", { lang: names(c), seconds: Math.round(v.seconds), n: v.sentences })).join(" · ") }) : "";
  }

  // -- the teacher's microphone ------------------------------------------------------------------------
  function key() {
    return new URLSearchParams(location.hash.slice(1)).get("key") || localStorage.getItem("hymt-teach-" + CODE) || "";
  }
  function Microphone(ui) {
    const FRAMES_KEPT = 600;  // 60 s not acknowledged at most (then the oldest go: a gap)
    let ws = null, capture = null, session = "", seq = 0, unsent = new Map(), on = false, tries = 0, stopping = false;
    const t = W();
    function url() {
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      return `${scheme}//${location.host}${API}/rooms/${CODE}/speech?key=${encodeURIComponent(key())}&session=${session}`;
    }
    function frame(buffer) {
      const n = seq++;
      const data = new Uint8Array(4 + buffer.byteLength);
      new DataView(data.buffer).setUint32(0, n, true);
      data.set(new Uint8Array(buffer), 4);
      unsent.set(n, data);
      if (unsent.size > FRAMES_KEPT) unsent.delete(unsent.keys().next().value);
      if (ws && ws.readyState === WebSocket.OPEN) ws.send(data);
    }
    function connect() {
      ws = new WebSocket(url());
      ws.binaryType = "arraybuffer";
      ws.onmessage = (m) => {
        const msg = JSON.parse(m.data);
        if (msg.type === "ready") { tries = 0; ui.status(t("listening")); for (const [n, data] of unsent) if (n >= msg.next) ws.send(data); acked(msg.next); }
        else if (msg.type === "ack") acked(msg.next);
        else if (msg.type === "final" && msg.sentences && msg.sentences.length) ui.heard(msg);
        else if (msg.type === "error") ui.error(msg.code === "speaker_busy" ? t("busy") : msg.message);
        else if (msg.type === "stopped") { ws.close(); ws = null; ui.idle(); }
      };
      ws.onclose = (e) => {
        if (e.code >= 4000) { finish(); return; }  // refused: its words are shown, no retry
        if (!on || stopping) return;
        ui.status(t("reconnecting"), true);
        setTimeout(() => { if (on) connect(); }, Math.min(5000, 500 * 2 ** tries++));
      };
    }
    function acked(next) { for (const n of [...unsent.keys()]) if (n < next) unsent.delete(n); }
    function finish() { on = false; if (capture) capture.stop(); capture = null; ui.idle(); }
    async function start() {
      session = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
      seq = 0; unsent = new Map(); on = true; stopping = false;
      ui.status(t("connecting"));
      try { capture = await window.HYCapture.start(frame, ui.level); }
      catch (x) { on = false; ui.error(t(x.reason || "noMedia")); ui.idle(); return; }
      ui.live();
      connect();
    }
    function stop() {
      stopping = true;
      if (capture) capture.stop(); capture = null;
      if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ type: "stop" }));
      else ui.idle();
      on = false;
    }
    return { start, stop, get on() { return on; } };
  }

  function teacherPanel(slot) {
    const t = W();
    const why = window.HYCapture.unavailable();
    const button = el("button", { id: "mic", type: "button", class: "mic", "aria-pressed": "false", title: t("micTitle"), text: t("mic") });
    const meter = el("span", { class: "mic-level", "aria-hidden": "true" }, el("span", {}));
    const status = el("span", { id: "mic-status", class: "mic-status", role: "status" });
    const heard = el("div", { id: "mic-heard", class: "mic-heard", hidden: "" });
    const ui = {
      status(text, bad) { status.textContent = text; status.classList.toggle("bad", !!bad); },
      error(text) { status.textContent = text; status.classList.add("bad"); },
      level(v) { meter.firstChild.style.width = Math.min(100, Math.round(v * 300)) + "%"; },
      live() { button.textContent = t("micStop"); button.setAttribute("aria-pressed", "true"); button.classList.add("on"); },
      idle() { button.textContent = t("mic"); button.setAttribute("aria-pressed", "false"); button.classList.remove("on"); meter.firstChild.style.width = "0"; if (!status.classList.contains("bad")) status.textContent = ""; },
      heard(msg) { lastHeard(heard, msg.sentences[msg.sentences.length - 1]); },
    };
    const mic = Microphone(ui);
    button.addEventListener("click", () => { status.classList.remove("bad"); if (mic.on) mic.stop(); else mic.start(); });
    if (why) { button.disabled = true; ui.error(t(why)); }
    slot.append(el("span", { class: "mic-row" }, button, meter, status), heard);
  }
  /* The last sentence heard, and ✎ to fix it (a correction every phone gets). */
  function lastHeard(box, sid) {
    const t = W();
    const text = state.sentences.get(sid) || "";
    box.hidden = false; box.textContent = "";
    const fix = el("button", { type: "button", class: "mic-fix", title: t("fixTitle"), text: t("fix") });
    box.append(el("span", { class: "mic-heard-label", text: t("heard") + ": " }), el("span", { class: "mic-heard-text", dir: "auto", text: text || "…" }), fix);
    fix.addEventListener("click", () => {
      const input = el("input", { class: "mic-fix-input", dir: "auto", value: state.sentences.get(sid) || text });
      const note = el("span", { class: "mic-status", role: "status" });
      const form = el("form", { class: "mic-fix-form", onsubmit: async (e) => {
        e.preventDefault();
        const r = await fetch(`${API}/rooms/${CODE}/sentences/${sid}/correct`, { method: "POST",
          headers: { "Content-Type": "application/json", "X-Class-Key": key() }, body: JSON.stringify({ text: input.value }) });
        if (r.ok) { state.sentences.set(sid, input.value.trim()); lastHeard(box, sid); box.append(el("span", { class: "mic-status", text: " " + t("fixed") })); }
        else { const d = await r.json().catch(() => ({})); note.textContent = (d.error && d.error.message) || r.statusText; }
      } }, input, el("button", { text: t("save") }), el("button", { type: "button", text: t("cancel"), onclick: () => lastHeard(box, sid) }), note);
      box.textContent = ""; box.append(form); input.focus();
    });
  }

  // -- the teacher: a link to the projector's captions (in the class pages' #captions-slot) -------
  function captionsLink() {
    const slot = document.getElementById("captions-slot");
    if (!slot || slot.dataset.mounted) return;
    slot.dataset.mounted = "1";
    slot.append(el("a", { id: "captions-link", href: `${P}/${encodeURIComponent(CODE)}/captions`, target: "_blank", rel: "noopener", text: W()("captionsName") }));
  }

  if (VIEW === "teacher") {
    const tryMount = () => {
      const slot = document.getElementById("speech-slot");
      if (slot && !slot.dataset.mounted) { slot.dataset.mounted = "1"; teacherPanel(slot); captionsLink(); return true; }
      return false;
    };
    if (!tryMount()) {
      const watch = new MutationObserver(() => { if (tryMount()) watch.disconnect(); });
      watch.observe(app, { childList: true, subtree: true });
    }
  }
})();
