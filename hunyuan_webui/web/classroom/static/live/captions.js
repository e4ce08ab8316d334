/* /class/{code}/captions?lang=en,fr: big rolling captions for a projector, or OBS as a browser
   source. Read-only, no key: it joins the class like a student's phone would, once per
   language (so that the class translates into them), and shows the original with one or two
   languages under it, the words being spoken in grey at the bottom.
   URL options (kept in the address as they change, so it can be pasted into OBS):
   lang=en,fr   the languages under the original (at most two)
   theme=dark|light
   size=48      the font size in px (A−/A+)
   bg=page|transparent|green   transparent or a chroma-key green for OBS
   lines=3      sentences kept on screen
   controls=0   no buttons (they hide themselves anyway when the mouse rests) */
"use strict";
(function () {
  const box = document.getElementById("captions");
  const CODE = box.dataset.code, API = box.dataset.prefix + "/api";
  const q = new URLSearchParams(location.search);
  const opt = {
    langs: (q.get("lang") || "").split(",").map((s) => s.trim()).filter(Boolean).slice(0, 2),
    theme: q.get("theme") === "light" ? "light" : "dark",
    size: Math.max(16, Math.min(160, parseInt(q.get("size") || "44", 10) || 44)),
    bg: ["transparent", "green"].includes(q.get("bg")) ? q.get("bg") : "page",
    lines: Math.max(1, Math.min(12, parseInt(q.get("lines") || "3", 10) || 3)),
    controls: q.get("controls") !== "0",
  };
  const T = (key) => {
    const all = window.HYLiveWords || { en: {} };
    const table = /^zh/i.test(navigator.language || "") ? all.zh || all.en : all.en;
    return table[key] || all.en[key] || key;
  };
  const rows = new Map();  // sentence number -> its row
  const done = new Set();
  let room = null;

  function el(tag, attrs, ...kids) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else if (v !== null && v !== undefined) node.setAttribute(k, v);
    }
    for (const kid of kids) if (kid) node.append(kid);
    return node;
  }
  function apply() {
    document.body.dataset.theme = opt.theme;
    document.body.dataset.bg = opt.bg;
    document.documentElement.style.setProperty("--size", opt.size + "px");
    const p = new URLSearchParams(location.search);
    p.set("theme", opt.theme); p.set("size", String(opt.size)); p.set("bg", opt.bg);
    if (opt.langs.length) p.set("lang", opt.langs.join(","));
    history.replaceState(null, "", location.pathname + "?" + p.toString());
  }
  const lines = el("div", { class: "lines", "aria-live": "polite" });
  const draft = el("div", { class: "line draft", hidden: "" }, el("div", { class: "orig", dir: "auto" }));
  const status = el("div", { class: "status", role: "status", text: T("waiting") });

  function row(seq, ev) {
    if (rows.has(seq)) return rows.get(seq);
    const r = el("div", { class: "line", "data-sid": seq }, el("div", { class: "orig", dir: "auto", lang: ev.lang, text: ev.text }));
    for (const code of opt.langs) {
      if (code === ev.lang) continue;
      r.append(el("div", { class: "tr pending", dir: "auto", lang: code, "data-lang": code, text: "…" }));
    }
    rows.set(seq, r);
    lines.append(r);
    while (rows.size > opt.lines) { const [first, node] = rows.entries().next().value; node.remove(); rows.delete(first); }
    status.hidden = true;
    return r;
  }
  function setTr(sid, lang, text, final) {
    const r = rows.get(sid);
    const node = r && r.querySelector(`.tr[data-lang="${lang}"]`);
    if (!node || (!final && !node.classList.contains("pending"))) return;
    node.textContent = text;
    node.classList.toggle("pending", !final);
  }
  function onEvent(ev) {
    if (ev.type === "sentence") { row(ev.seq, ev); draft.hidden = true; }
    else if (ev.type === "translation" && ev.text) setTr(ev.sid, ev.lang, ev.text, true);
    else if (ev.type === "draft") setTr(ev.sid, ev.lang, ev.text, false);
    else if (ev.type === "correction" && ev.text) {
      const r = rows.get(ev.sid);
      if (r && ev.source) r.querySelector(".orig").textContent = ev.text;
      else setTr(ev.sid, ev.lang, ev.text, true);
    } else if (ev.type === "speech_draft") onSpeech(ev);
  }
  function onSpeech(ev) {
    if (done.has(ev.utterance)) return;
    if (ev.done) { done.add(ev.utterance); draft.hidden = true; return; }
    if (draft.dataset.utterance !== ev.utterance) {
      draft.dataset.utterance = ev.utterance;
      for (const n of [...draft.querySelectorAll(".tr")]) n.remove();
      for (const code of opt.langs) if (!room || code !== room.lang) draft.append(el("div", { class: "tr", dir: "auto", "data-lang": code }));
    }
    if (ev.source) draft.querySelector(".orig").textContent = ev.text;
    else { const n = draft.querySelector(`.tr[data-lang="${ev.lang}"]`); if (n) n.textContent = ev.text; }
    draft.hidden = false;
  }

  /* One stream per language, as a phone follows the class; events come once (by number). */
  const seen = new Set();
  let primary = null;  // the stream whose drafts of the original are shown (each stream has them)
  function follow(student, lang) {
    if (primary === null) primary = lang;
    let last = 0, source = null;
    const open = () => {
      source = new EventSource(`${API}/rooms/${CODE}/events?student=${encodeURIComponent(student)}&lang=${encodeURIComponent(lang)}&after=${last}`);
      source.onmessage = (m) => {
        const ev = JSON.parse(m.data);
        if (ev.seq) { last = Math.max(last, ev.seq); if (seen.has(ev.seq)) return; seen.add(ev.seq); }
        else if (ev.type === "speech_draft" && ev.source && lang !== primary) return;  // once
        onEvent(ev);
      };
      source.onerror = () => { if (source.readyState === EventSource.CLOSED) setTimeout(open, 2000); };
    };
    open();
  }
  async function join(lang) {
    const saved = "hymt-captions-" + CODE + "-" + lang;
    const body = { lang, name: T("captionsName"), student: localStorage.getItem(saved) || undefined };
    const r = await fetch(`${API}/rooms/${CODE}/join`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error?.message || r.statusText);
    const me = await r.json();
    localStorage.setItem(saved, me.student);
    follow(me.student, me.lang);
  }

  function controls() {
    const bar = el("div", { class: "bar" },
      el("button", { type: "button", title: T("smaller"), "aria-label": T("smaller"), text: "A−", onclick: () => { opt.size = Math.max(16, opt.size - 6); apply(); } }),
      el("button", { type: "button", title: T("bigger"), "aria-label": T("bigger"), text: "A+", onclick: () => { opt.size = Math.min(160, opt.size + 6); apply(); } }),
      el("button", { type: "button", title: T("theme"), "aria-label": T("theme"), text: "◐", onclick: () => { opt.theme = opt.theme === "dark" ? "light" : "dark"; apply(); } }),
      el("button", { type: "button", title: T("background"), "aria-label": T("background"), text: "▦", onclick: () => { opt.bg = { page: "transparent", transparent: "green", green: "page" }[opt.bg]; apply(); } }));
    let timer = null;
    const wake = () => { bar.classList.remove("asleep"); clearTimeout(timer); timer = setTimeout(() => bar.classList.add("asleep"), 3000); };
    document.addEventListener("mousemove", wake); document.addEventListener("keydown", wake);
    wake();
    return bar;
  }

  async function startPage() {
    apply();
    box.append(lines, draft, status);
    if (opt.controls) box.append(controls());
    try { room = await (await fetch(`${API}/rooms/${CODE}`)).json(); if (!room.code) throw new Error(T("notFound")); }
    catch (x) { status.textContent = T("notFound"); return; }
    document.title = `${T("captions")} · ${room.title || room.code}`;
    const langs = opt.langs.filter((c) => c !== room.lang);
    try {
      if (!langs.length) await join(room.lang);  // the original only: still a reader
      for (const code of langs) await join(code);
    } catch (x) { status.textContent = x.message; }
  }
  startPage();
})();
