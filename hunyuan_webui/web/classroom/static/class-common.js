/* What a class's pages share (see hunyuan_webui/web/classroom/routes.py): the page's words in
   its reader's language (static/i18n/<code>.json, served from hunyuan_webui/web/words/class/),
   building elements,
   calling the class's API, following an event stream, and the lesson as a reader sees it.
   Each page's own script (class-start.js, class-student.js, class-teacher.js) registers its
   view in window.HYClass.views; this one starts it once the words and languages are here. */
"use strict";
(function () {
  const app = document.getElementById("app");
  const P = app.dataset.prefix, API = P + "/api";
  const C = (window.HYClass = { app, P, API, VIEW: app.dataset.view, CODE: app.dataset.code,
    DEMO: app.dataset.demo === "1", views: {}, LANGS: [], text: {}, ui: "en" });
  const UI_KEY = "hymt-class-ui";  // the page language a reader chose, kept in this browser

  // -- words ---------------------------------------------------------------------------------
  C.T = function (key, vars) {
    let s = C.text[key];
    if (s === undefined) s = key;
    for (const [k, v] of Object.entries(vars || {})) s = s.split("{" + k + "}").join(String(v));
    return s;
  };
  C.lang = (code) => C.LANGS.find((l) => l.code === code);
  C.tag = (code) => (C.lang(code) || {}).tag || code;  // its BCP 47 tag: fonts and voices follow it
  C.rtl = (code) => !!(C.lang(code) || {}).rtl;
  /* A language's name for this page: its own name, and the name in the page's language where
     the page is English or Chinese (the table has those). */
  C.langName = function (code) {
    const l = C.lang(code);
    if (!l) return code;
    if (C.ui === "en" && code !== "en") return `${l.autonym} · ${l.english}`;
    if (/^(zh|zh-Hant|yue)$/.test(C.ui) && l.autonym !== l.chinese) return `${l.autonym} · ${l.chinese}`;
    return l.autonym;
  };
  /* The reader's languages as the browser lists them, in our codes. */
  C.browserLang = function (fallback) {
    const codes = C.LANGS.map((l) => l.code);
    for (const raw of navigator.languages || [navigator.language || "en"]) {
      const l = raw.toLowerCase();
      if (/^(yue|zh-yue)\b/.test(l)) return "yue";
      if (/^zh-(tw|hk|mo|hant)/.test(l)) return "zh-Hant";
      const base = { fil: "tl", iw: "he", in: "id", nb: "", no: "" }[l.split("-")[0]] ?? l.split("-")[0];
      if (codes.includes(base)) return base;
    }
    return fallback || "en";
  };
  C.savedUi = () => localStorage.getItem(UI_KEY);
  /* Load the page's words in ``code`` and set the page's language and direction. */
  C.useLanguage = async function (code, remember) {
    if (!C.LANGS.some((l) => l.code === code)) code = "en";
    const r = await fetch(`${P}/static/i18n/${encodeURIComponent(code)}.json`);
    C.text = await r.json();
    C.ui = code;
    if (remember) localStorage.setItem(UI_KEY, code);
    document.documentElement.lang = C.tag(code);
    document.documentElement.dir = C.rtl(code) ? "rtl" : "ltr";
    document.title = `${C.T("pageTitle")} · Hunyuan-MT`;
  };
  /* A picker of the page's own language (a globe, at the top of a page). */
  C.uiPicker = function (onChange) {
    const sel = C.el("select", { id: "ui-lang", class: "ui-lang", "aria-label": C.T("pageLang"), title: C.T("pageLang") });
    for (const l of C.LANGS) sel.append(C.el("option", { value: l.code, lang: l.tag, text: l.autonym }));
    sel.value = C.ui;
    sel.addEventListener("change", async () => { await C.useLanguage(sel.value, true); onChange(sel.value); });
    return C.el("label", { class: "globe" }, C.globe(), sel);
  };
  /* A globe drawn in SVG (an emoji needs a font a projector's laptop may lack). */
  C.globe = function () {
    const NS = "http://www.w3.org/2000/svg";
    const svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 24 24"); svg.setAttribute("aria-hidden", "true"); svg.setAttribute("class", "icon");
    const path = document.createElementNS(NS, "path");
    path.setAttribute("d", "M12 2a10 10 0 1 0 0 20a10 10 0 1 0 0-20M2 12h20M12 2c3 3 3 17 0 20M12 2c-3 3-3 17 0 20");
    svg.append(path);
    return svg;
  };

  // -- elements and calls --------------------------------------------------------------------
  C.el = function (tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined && v !== false) node.setAttribute(k, v);
    }
    for (const kid of kids) if (kid) node.append(kid);
    return node;
  };
  /* Text in a language: ``lang`` and ``dir`` set, so that fonts and screen readers follow. */
  C.inLang = function (tag, code, text, attrs) {
    return C.el(tag, { ...(attrs || {}), lang: C.tag(code), dir: C.rtl(code) ? "rtl" : "ltr", text });
  };
  C.call = async function (path, body, key, method) {
    const headers = { "Content-Type": "application/json" };
    if (key) headers["X-Class-Key"] = key;
    const init = { headers, method: method || (body === undefined ? "GET" : "POST") };
    if (body !== undefined) init.body = JSON.stringify(body);
    const r = await fetch(API + path, init);
    const data = await r.json().catch(() => ({}));
    if (!r.ok) {
      const e = new Error((data.error && data.error.message) || data.message || r.statusText);
      e.code = (data.error && data.error.code) || ""; e.status = r.status;
      throw e;
    }
    return data;
  };
  /* A refusal in the reader's words, when it is one the pages know. */
  const WORDED = { room_not_found: "notFound", room_locked: "locked", room_ended: "ended",
    student_removed: "removed", room_full: "full", rate_limited: "tooMany",
    too_many_wrong_codes: "tooMany", room_paused: "pausedNote" };
  C.worded = (x) => (WORDED[x.code] ? C.T(WORDED[x.code]) : x.status >= 500 || !x.status ? C.T("error") : x.message);
  C.spaced = (code) => code.slice(0, 3) + " " + code.slice(3);
  C.demoNotice = () => (C.DEMO ? C.el("p", { class: "demo", id: "demo-notice", role: "note", text: C.T("demo") }) : null);

  // -- an event stream that reconnects ---------------------------------------------------------
  /* ``onGone`` (optional) is asked, when the stream cannot reopen, whether the page should stop
     trying (the class ended, the student was removed): it answers true to stop. */
  C.follow = function (url, onEvent, statusEl, onGone) {
    let last = 0, source = null, timer = null, stopped = false;
    function bad() { statusEl.textContent = C.T("reconnecting"); statusEl.className = "status bad"; }
    function open() {
      if (stopped) return;
      source = new EventSource(url + (url.includes("?") ? "&" : "?") + "after=" + last);
      source.onopen = () => { statusEl.textContent = C.T("connected"); statusEl.className = "status"; };
      source.onmessage = (m) => {
        const ev = JSON.parse(m.data);
        if (ev.seq) { if (ev.seq <= last) return; last = ev.seq; }
        onEvent(ev);
        document.dispatchEvent(new CustomEvent("hymt:class-event", { detail: ev }));  // static/live/speech.js
      };
      source.onerror = async () => {
        bad();
        if (source.readyState !== EventSource.CLOSED) return;
        clearTimeout(timer);
        if (onGone && await onGone()) { stop(); return; }
        timer = setTimeout(open, 2000);
      };
    }
    function stop() { stopped = true; clearTimeout(timer); if (source) source.close(); }
    open();
    // A phone that wakes up: reconnect at once rather than at the browser's leisure.
    document.addEventListener("visibilitychange", () => {
      if (!stopped && !document.hidden && source && source.readyState !== EventSource.OPEN) { source.close(); open(); }
    });
    window.addEventListener("online", () => { if (stopped) return; if (source) source.close(); open(); });
    window.addEventListener("offline", () => { if (stopped) return; if (source) source.close(); bad(); });
    return { close: stop };
  };

  // -- the lesson as a reader sees it ----------------------------------------------------------
  /* Rows by sentence number: the sentence in the reader's language ``lang`` (its translation,
     or the sentence itself when it is written in it), the original a tap away. */
  C.Lesson = function (box, lang, opts) {
    opts = opts || {};
    const rows = new Map();
    let roman = false;
    function add(ev) {
      if (rows.has(ev.seq)) return;
      const mine = ev.lang === lang;
      const tr = C.inLang("span", lang, mine ? ev.text : "…", { class: "tr" + (mine ? "" : " draft") });
      const orig = C.inLang("span", ev.lang, mine ? "" : ev.text, { class: "orig", hidden: mine ? null : "" });
      const rom = C.el("span", { class: "roman", lang: lang + "-Latn", hidden: "" });
      const flag = C.el("span", { class: "flag", hidden: "" });
      const question = ev.kind === "question";
      const p = C.el("p", { class: "s" + (question ? " q" : ""), "data-sid": ev.seq, dir: C.rtl(lang) ? "rtl" : "ltr",
        tabindex: mine || opts.teacher ? null : "0", "aria-label": null,
        onclick: () => { if (!mine && !opts.teacher) orig.hidden = !orig.hidden; },
        onkeydown: (e) => { if ((e.key === "Enter" || e.key === " ") && !mine && !opts.teacher) { e.preventDefault(); orig.hidden = !orig.hidden; } } },
      question ? C.el("span", { class: "who", text: "? " + C.T("question") + (ev.who ? " · " + ev.who : "") }) : null,
      tr, rom, orig, flag);
      if (ev.lead && /\n\s*\n/.test(ev.lead) && box.lastChild) p.classList.add("para");
      const row = { p, tr, rom, orig, flag, done: mine, mine, source: ev.lang, text: ev.text };
      rows.set(ev.seq, row);
      box.append(p);
      if (opts.onRow) opts.onRow(ev, row);
      if (!opts.noScroll) p.scrollIntoView({ block: "nearest" });
    }
    function mark(r, warnings, corrected) {
      const words = [];
      if (corrected) words.push("✓ " + C.T("corrected"));
      if (warnings && warnings.length) words.push("⚠ " + C.T("unsure"));
      r.flag.textContent = words.join(" · ");
      r.flag.hidden = !words.length;
      r.flag.className = "flag" + (warnings && warnings.length ? " warn" : "");
      r.p.classList.toggle("unsure", !!(warnings && warnings.length));
      if (warnings && warnings.length) r.tr.dataset.warnings = warnings.map((w) => w.code).join(" ");
      else delete r.tr.dataset.warnings;
    }
    function set(ev, final) {
      const r = rows.get(ev.sid);
      if (!r || (r.done && !final)) return;
      if (ev.error) { r.tr.textContent = C.T("failed"); r.tr.title = ev.error; r.tr.className = "tr draft failed"; return; }
      r.tr.textContent = ev.text;
      r.tr.className = "tr" + (final ? "" : " draft");
      if (final) {
        r.done = true;
        if (ev.roman) { r.rom.textContent = ev.roman; r.rom.hidden = !roman; }
        mark(r, ev.warnings, false);
      }
    }
    /* A correction: of the original (``source``) or of this reader's translation. */
    function correct(ev) {
      const r = rows.get(ev.sid);
      if (!r) return;
      if (ev.source) {
        r.text = ev.text;
        if (r.mine) { r.tr.textContent = ev.text; mark(r, [], true); } else r.orig.textContent = ev.text;
        return;
      }
      if (ev.lang !== lang) return;
      // A guard's correction while the answer still streams (published, no number): the draft's
      // words replaced; the finished translation follows.
      if (!ev.seq && !r.done) { set(ev, false); return; }
      r.tr.textContent = ev.text; r.tr.className = "tr"; r.done = true;
      r.rom.textContent = ev.roman || ""; r.rom.hidden = !roman || !ev.roman;
      mark(r, ev.warnings, true);
    }
    function delayed(ev) {
      const r = rows.get(ev.sid);
      if (r && !r.done && (!ev.lang || ev.lang === lang)) { r.tr.textContent = C.T("delayed"); r.tr.className = "tr draft"; }
    }
    function clear() { rows.clear(); box.textContent = ""; }
    return {
      add, set, correct, delayed, clear, rows,
      romanize(on) { roman = on; for (const r of rows.values()) r.rom.hidden = !on || !r.rom.textContent; },
    };
  };

  // -- start the page ------------------------------------------------------------------------
  C.boot = async function (pickLanguage) {
    C.LANGS = await (await fetch(API + "/languages")).json();
    await C.useLanguage(pickLanguage(), false);
    C.views[C.VIEW]();
  };
})();
