/* A class's pages (see hunyuan_webui/web/rooms.py): start, student, teacher. No framework. */
"use strict";
(function () {
  const app = document.getElementById("app");
  const P = app.dataset.prefix, API = P + "/api", VIEW = app.dataset.view;
  const CODE = app.dataset.code;
  const zh = (navigator.languages || [navigator.language || "en"]).some(
    (l) => /^zh/i.test(l)) && /^zh/i.test(navigator.language || "");
  const T = {
    en: {
      start: "Start a class", startHint: "You write once; every student reads it in their own language.",
      teachIn: "I teach in", title: "Lesson title (optional)", join: "Join a class",
      codeLabel: "Class code", go: "Join", read: "I read", name: "Your name (optional)",
      enter: "Enter", connected: "Connected", reconnecting: "Reconnecting…",
      ask: "Ask the teacher", send: "Send", sent: "Sent to the teacher.",
      tapOrig: "Tap a sentence to see the original.", romanize: "Romanization",
      joinAt: "Students: scan the code or open", write: "Write a sentence (Enter sends it)",
      auto: "Send each sentence as I finish it", students: "students", questions: "Questions",
      show: "Show to the class", shown: "Shown", download: "Transcript:",
      lesson: "Sent", waiting: "Waiting for the teacher…", noKey: "This link has no teacher's key.",
      hideQr: "Hide the QR code", showQr: "Show the QR code", translations: "translations",
      failed: "Could not translate",
    },
    zh: {
      start: "开始上课", startHint: "您只写一次，每位学生用自己的语言阅读。",
      teachIn: "授课语言", title: "课程标题（可选）", join: "加入课堂",
      codeLabel: "课堂代码", go: "加入", read: "我的语言", name: "你的名字（可选）",
      enter: "进入", connected: "已连接", reconnecting: "正在重新连接…",
      ask: "向老师提问", send: "发送", sent: "已发送给老师。",
      tapOrig: "点按句子查看原文。", romanize: "拼音/罗马字",
      joinAt: "学生：扫描二维码或打开", write: "输入句子（回车发送）",
      auto: "每写完一句就发送", students: "名学生", questions: "提问",
      show: "展示给全班", shown: "已展示", download: "下载记录：",
      lesson: "已发送", waiting: "等待老师发言…", noKey: "此链接没有教师密钥。",
      hideQr: "隐藏二维码", showQr: "显示二维码", translations: "次翻译",
      failed: "无法翻译",
    },
  }[zh ? "zh" : "en"];
  document.documentElement.lang = zh ? "zh-CN" : "en";

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
  async function call(path, body, key) {
    const headers = { "Content-Type": "application/json" };
    if (key) headers["X-Class-Key"] = key;
    const r = await fetch(API + path, body === undefined ? { headers }
      : { method: "POST", headers, body: JSON.stringify(body) });
    const data = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error((data.error && data.error.message) || data.message || r.statusText);
    return data;
  }
  let LANGS = [];
  const langName = (c) => { const l = LANGS.find((x) => x.code === c); return l ? (zh ? l.chinese : l.autonym) : c; };
  function browserLang(codes) {
    for (const raw of navigator.languages || [navigator.language || "en"]) {
      const l = raw.toLowerCase();
      if (/^zh-(tw|hk|mo|hant)/.test(l) && codes.includes("zh-Hant")) return "zh-Hant";
      const base = l.split("-")[0];
      if (codes.includes(base)) return base;
    }
    return "en";
  }
  function langSelect(id, chosen) {
    const sel = el("select", { id });
    for (const l of LANGS) sel.append(el("option", { value: l.code, text: `${l.autonym} · ${zh ? l.chinese : l.english}` }));
    sel.value = chosen;
    return sel;
  }
  const spaced = (code) => code.slice(0, 3) + " " + code.slice(3);

  // -- start ------------------------------------------------------------------------------------
  function start() {
    const teach = langSelect("teach-lang", zh ? "zh" : browserLang(LANGS.map((l) => l.code)));
    const title = el("input", { id: "title", maxlength: "80" });
    const err = el("div", { class: "error", role: "alert" });
    const code = el("input", { id: "code", inputmode: "numeric", autocomplete: "off", placeholder: "123 456" });
    app.append(
      el("h1", { text: T.join }),
      el("form", { class: "card", onsubmit: (e) => { e.preventDefault(); const c = code.value.replace(/\D/g, ""); if (c) location.href = `${P}/${c}`; } },
        el("label", { for: "code", text: T.codeLabel }), el("div", { class: "row" }, code, el("button", { id: "go", text: T.go }))),
      el("h1", { text: T.start }), el("p", { class: "status", text: T.startHint }),
      el("form", { class: "card", onsubmit: async (e) => {
        e.preventDefault();
        try {
          const room = await call("/rooms", { lang: teach.value, title: title.value });
          location.href = room.teacher_url;
        } catch (x) { err.textContent = x.message; }
      } }, el("label", { for: "teach-lang", text: T.teachIn }), teach,
      el("label", { for: "title", text: T.title }), title, err, el("button", { id: "start", text: T.start }))
    );
  }

  // -- the lesson as a reader sees it -----------------------------------------------------------
  function Lesson(box, lang) {
    const rows = new Map();
    let roman = false;
    function row(sid) { return rows.get(sid); }
    function add(ev) {
      if (rows.has(ev.seq)) return;
      const mine = ev.lang === lang;
      const tr = el("span", { class: "tr" + (mine ? "" : " draft"), dir: "auto", text: mine ? ev.text : "…" });
      const orig = el("span", { class: "orig", dir: "auto", hidden: mine ? null : "", text: mine ? "" : ev.text });
      const rom = el("span", { class: "roman", hidden: "" });
      const p = el("p", { class: "s" + (ev.kind === "question" ? " q" : ""), "data-sid": ev.seq,
        onclick: () => { if (!mine) orig.hidden = !orig.hidden; } },
      ev.kind === "question" ? el("span", { class: "who", text: "? " + (ev.who || "") }) : null, tr, rom, orig);
      if (ev.lead && /\n\s*\n/.test(ev.lead) && box.lastChild) p.style.marginTop = "1.2rem";
      rows.set(ev.seq, { p, tr, rom, done: mine });
      box.append(p);
      p.scrollIntoView({ block: "nearest" });
    }
    function set(ev, final) {
      const r = row(ev.sid);
      if (!r || (r.done && !final)) return;
      if (ev.error) { r.tr.textContent = `${T.failed}: ${ev.error}`; r.tr.className = "tr draft"; return; }
      r.tr.textContent = ev.text;
      r.tr.className = "tr" + (final ? "" : " draft");
      if (final) { r.done = true; if (ev.roman) { r.rom.textContent = ev.roman; r.rom.hidden = !roman; } }
    }
    return {
      add, set, rows,
      romanize(on) { roman = on; for (const r of rows.values()) r.rom.hidden = !on || !r.rom.textContent; },
    };
  }

  function follow(url, onEvent, statusEl) {
    let last = 0, source = null, timer = null;
    function open() {
      source = new EventSource(url + (url.includes("?") ? "&" : "?") + "after=" + last);
      source.onopen = () => { statusEl.textContent = T.connected; statusEl.className = "status"; };
      source.onmessage = (m) => {
        const ev = JSON.parse(m.data);
        if (ev.seq) { if (ev.seq <= last) return; last = ev.seq; }
        onEvent(ev);
        document.dispatchEvent(new CustomEvent("hymt:class-event", { detail: ev }));  // static/live/speech.js
      };
      source.onerror = () => {
        statusEl.textContent = T.reconnecting; statusEl.className = "status bad";
        if (source.readyState === EventSource.CLOSED) { clearTimeout(timer); timer = setTimeout(open, 2000); }
      };
    }
    open();
    // A phone that wakes up: reconnect at once rather than at the browser's leisure.
    document.addEventListener("visibilitychange", () => {
      if (!document.hidden && source && source.readyState !== EventSource.OPEN) { source.close(); open(); }
    });
    window.addEventListener("online", () => { if (source) source.close(); open(); });
    window.addEventListener("offline", () => {  // no network: wait for it rather than retry blind
      if (source) source.close();
      statusEl.textContent = T.reconnecting; statusEl.className = "status bad";
    });
    return { close() { source && source.close(); } };
  }

  // -- student ----------------------------------------------------------------------------------
  async function student() {
    let room;
    try { room = await call(`/rooms/${CODE}`); } catch (x) { app.append(el("p", { class: "error", text: x.message })); return start(); }
    const saved = JSON.parse(localStorage.getItem("hymt-class-" + room.code) || "null");
    if (saved) return enter(room, saved);
    const lang = langSelect("lang", browserLang(LANGS.map((l) => l.code)));
    const name = el("input", { id: "name", maxlength: "40", autocomplete: "nickname" });
    const err = el("div", { class: "error", role: "alert" });
    app.append(el("h1", { text: room.title || `${T.join} ${spaced(room.code)}` }),
      el("form", { class: "card", onsubmit: async (e) => {
        e.preventDefault();
        try {
          const me = await call(`/rooms/${room.code}/join`, { lang: lang.value, name: name.value });
          const mine = { student: me.student, lang: me.lang, name: name.value };
          localStorage.setItem("hymt-class-" + room.code, JSON.stringify(mine));
          app.textContent = ""; enter(room, mine);
        } catch (x) { err.textContent = x.message; }
      } }, el("label", { for: "lang", text: T.read }), lang, el("label", { for: "name", text: T.name }), name, err,
      el("button", { id: "enter", text: T.enter })));
  }

  async function enter(room, me) {
    try { await call(`/rooms/${room.code}/join`, { lang: me.lang, name: me.name || "", student: me.student }); }
    catch (x) { localStorage.removeItem("hymt-class-" + room.code); app.textContent = ""; return student(); }
    const status = el("span", { class: "status", id: "status", role: "status", text: T.reconnecting });
    const box = el("div", { id: "lesson", "aria-live": "polite" }, el("p", { class: "status", id: "waiting", text: T.waiting }));
    const lesson = Lesson(box, me.lang);
    const rom = el("input", { type: "checkbox", id: "roman", style: "width:auto", onchange: () => lesson.romanize(rom.checked) });
    const q = el("textarea", { id: "question", maxlength: "300", dir: "auto", "aria-label": T.ask, placeholder: T.ask });
    const note = el("div", { class: "status", id: "asked", role: "status" });
    app.append(el("div", { class: "row" }, el("h1", { text: `${room.title || spaced(room.code)} · ${langName(me.lang)}` })),
      el("div", { class: "row status" }, status, el("label", { style: "font-weight:400;flex:0 0 auto" }, rom, " " + T.romanize)),
      el("p", { class: "status", text: T.tapOrig }), box, note,
      el("form", { class: "ask", onsubmit: async (e) => {
        e.preventDefault();
        if (!q.value.trim()) return;
        try { await call(`/rooms/${room.code}/questions`, { student: me.student, text: q.value }); q.value = ""; note.textContent = T.sent; }
        catch (x) { note.textContent = x.message; }
      } }, el("div", { class: "row" }, q, el("button", { id: "ask", text: T.send }))));
    const url = `${API}/rooms/${room.code}/events?student=${encodeURIComponent(me.student)}&lang=${encodeURIComponent(me.lang)}`;
    follow(url, (ev) => {
      const w = document.getElementById("waiting"); if (w) w.remove();
      if (ev.type === "sentence") lesson.add(ev);
      else if (ev.type === "draft") lesson.set(ev, false);
      else if (ev.type === "translation") lesson.set(ev, true);
    }, status);
  }

  // -- teacher ----------------------------------------------------------------------------------
  async function teacher() {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("key");
    if (fromHash) localStorage.setItem("hymt-teach-" + CODE, fromHash);
    const key = fromHash || localStorage.getItem("hymt-teach-" + CODE);
    if (!key) { app.append(el("p", { class: "error", text: T.noKey })); return; }
    let room;
    try { room = await call(`/rooms/${CODE}`); await call(`/rooms/${CODE}/stats`, undefined, key); }
    catch (x) { app.append(el("p", { class: "error", text: x.message })); return; }
    app.classList.add("wide");
    const status = el("span", { class: "status", id: "status", role: "status" });
    const stats = el("div", { id: "stats", class: "langs" });
    const questions = el("div", { id: "questions" });
    const box = el("div", { id: "lesson" });
    const lesson = Lesson(box, room.lang);
    const text = el("textarea", { id: "text", dir: "auto", "aria-label": T.write, placeholder: T.write });
    const auto = el("input", { type: "checkbox", id: "auto", checked: "", style: "width:auto" });
    const err = el("div", { class: "error", role: "alert" });
    async function send(all) {
      let value = text.value;
      if (!all) {  // only what is finished: up to the last sentence end followed by a space (or CJK)
        const m = value.match(/^[\s\S]*([。！？]|[.!?…]["'”’)]*\s)/);
        if (!m) return;
        value = m[0]; text.value = text.value.slice(value.length);
      } else text.value = "";
      if (!value.trim()) return;
      try { await call(`/rooms/${room.code}/sentences`, { text: value }, key); err.textContent = ""; }
      catch (x) { err.textContent = x.message; if (all) text.value = value; }
    }
    text.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(true); } });
    text.addEventListener("input", (e) => { if (auto.checked && !e.isComposing && e.inputType !== "insertFromPaste") send(false); });
    const qr = el("img", { class: "qr", id: "qr", alt: "QR", src: `${API}/rooms/${room.code}/qr.svg` });
    const toggle = el("button", { class: "quiet", type: "button", text: T.hideQr, onclick: () => { qr.hidden = !qr.hidden; toggle.textContent = qr.hidden ? T.showQr : T.hideQr; } });
    function download(fmt) {
      return el("a", { href: "#", text: fmt.toUpperCase(), onclick: async (e) => {
        e.preventDefault();
        const r = await fetch(`${API}/rooms/${room.code}/transcript?format=${fmt}`, { headers: { "X-Class-Key": key } });
        const url = URL.createObjectURL(await r.blob());
        const a = el("a", { href: url, download: `class-${room.code}.${fmt}` }); a.click();
        setTimeout(() => URL.revokeObjectURL(url), 5000);
      } });
    }
    app.append(el("div", { class: "teacher" },
      el("section", {}, el("h1", { text: (room.title ? room.title + " · " : "") + langName(room.lang) }),
        el("div", { class: "row status" }, status, el("span", { id: "counts" })),
        box, el("label", { for: "text", text: T.write }), text,
        el("div", { id: "speech-slot", class: "slot" }),  // the microphone: static/live/speech.js
        el("div", { class: "row" }, el("label", { style: "font-weight:400" }, auto, " " + T.auto),
          el("button", { id: "send", type: "button", text: T.send, onclick: () => send(true), style: "flex:0 0 auto" })), err,
        el("div", { class: "links status" }, T.download + " ", download("txt"), download("csv"), download("md"))),
      el("aside", { class: "big" }, el("div", { class: "card" },
        el("div", { class: "status", text: T.joinAt }), el("div", { class: "code", id: "join-code", text: spaced(room.code) }),
        qr, el("div", { class: "status", id: "join-url", text: room.join_url }), toggle),
      el("div", { class: "card" }, stats), el("h2", { text: T.questions }), questions)));
    follow(`${API}/rooms/${room.code}/events?role=teacher&key=${encodeURIComponent(key)}`, (ev) => {
      if (ev.type === "sentence") lesson.add(ev);
      else if (ev.type === "translation") lesson.set(ev, true);
      else if (ev.type === "stats") {
        stats.textContent = "";
        stats.append(el("strong", { text: `${ev.students} ${T.students}` }), " ");
        for (const [c, n] of Object.entries(ev.languages)) stats.append(el("span", { "data-lang": c, text: `${langName(c)}: ${n}` }));
        document.getElementById("counts").textContent = ` · ${ev.sentences} → ${ev.translations} ${T.translations}`;
      } else if (ev.type === "question") {
        const btn = el("button", { class: "quiet", type: "button", text: T.show, onclick: async () => {
          try { await call(`/rooms/${room.code}/questions/${ev.seq}/show`, {}, key); btn.textContent = T.shown; btn.disabled = true; }
          catch (x) { err.textContent = x.message; }
        } });
        questions.prepend(el("div", { class: "card question" },
          el("span", { class: "who", text: `${ev.name || "?"} · ${langName(ev.lang)}` }),
          el("div", { class: "tr", dir: "auto", text: ev.translation || ev.error || "" }),
          ev.translation !== ev.text ? el("span", { class: "orig", dir: "auto", text: ev.text }) : null, btn));
      }
    }, status);
  }

  fetch(API + "/languages").then((r) => r.json()).then((langs) => {
    LANGS = langs;
    ({ start, student, teacher })[VIEW]();
  });
})();
