/* /class/teach/{code}#key=...: the teacher's screen, made for a projector. One screen high:
   a bar (the join code, "Show code", the room's controls), the lesson in its own scrolling
   pane, the input always at the bottom; beside them the join card, the questions, what each
   language reads and the students. The key stays in the fragment and this browser's storage,
   and goes only to this server, in the X-Class-Key header (or ?key= for the event stream). */
"use strict";
(function () {
  const C = window.HYClass, el = C.el, T = C.T;
  const TEACH = "hymt-teach-";
  const RECENT = 12;  // sentences per language in "what each language reads"

  async function teacher() {
    const fromHash = new URLSearchParams(location.hash.slice(1)).get("key");
    if (fromHash) localStorage.setItem(TEACH + C.CODE, fromHash);
    const key = fromHash || localStorage.getItem(TEACH + C.CODE);
    if (!key) { C.app.append(el("p", { class: "error", text: T("noKey") })); return; }
    let room;
    try { room = await C.call(`/rooms/${C.CODE}`); await C.call(`/rooms/${C.CODE}/stats`, undefined, key); }
    catch (x) { C.app.append(el("p", { class: "error", id: "refused", text: C.worded(x) })); return; }
    screen(room, key);
  }

  function screen(room, key) {
    const S = { room, key, sentences: new Map(), byLang: new Map(), langs: [], shownLang: null,
      unread: 0, tab: "questions", ended: !!room.ended, locked: !!room.locked, paused: !!room.paused };
    const app = C.app;
    app.textContent = "";
    app.classList.add("wide");
    document.body.classList.add("teaching");
    const api = (path, body, method) => C.call(`/rooms/${room.code}${path}`, body, key, method);

    // -- the lesson pane and the input ---------------------------------------------------------
    const box = el("div", { id: "lesson" });
    const lesson = C.Lesson(box, room.lang, { teacher: true, onRow: (ev, row) => sentenceTools(ev, row) });
    const err = el("div", { class: "error", id: "send-error", role: "alert" });
    const text = C.inLang("textarea", room.lang, "", { id: "text", "aria-label": T("write"), placeholder: T("write") });
    const auto = el("input", { type: "checkbox", id: "auto", checked: "", class: "check" });
    async function send(all) {
      let value = text.value;
      if (!all) {  // only what is finished: up to the last sentence end followed by a space (or CJK)
        const m = value.match(/^[\s\S]*([。！？]|[.!?…]["'”’)]*\s)/);
        if (!m) return;
        value = m[0]; text.value = text.value.slice(value.length);
      } else text.value = "";
      if (!value.trim()) return;
      try { await api("/sentences", { text: value }); err.textContent = ""; }
      catch (x) { err.textContent = C.worded(x); if (all) text.value = value; }
    }
    text.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(true); } });
    text.addEventListener("input", (e) => { if (auto.checked && !e.isComposing && e.inputType !== "insertFromPaste") send(false); });

    // -- the bar: the code, "Show code", the room's controls -------------------------------------
    const status = el("span", { class: "status", id: "status", role: "status" });
    const counts = el("span", { class: "status", id: "counts" });
    const moreCounts = el("span", { class: "status more-counts", id: "more-counts" });
    const note = el("span", { class: "state", id: "room-state", role: "status" });
    const showCode = el("button", { id: "show-code", type: "button", class: "quiet", title: T("showCode") + " (F2)",
      "aria-keyshortcuts": "F2 Alt+C", text: T("showCode"), onclick: () => overlay(true) });
    const controls = {
      pause: el("button", { id: "pause", type: "button", class: "quiet" }),
      lock: el("button", { id: "lock", type: "button", class: "quiet" }),
      clear: el("button", { id: "clear", type: "button", class: "quiet", text: T("clear") }),
      end: el("button", { id: "end", type: "button", class: "quiet danger", text: T("end") }),
    };
    async function control(path, done) {
      try { const state = await api(path, {}); err.textContent = ""; if (done) done(); if (state && "ended" in state) setState(state); }
      catch (x) { err.textContent = C.worded(x); }
    }
    controls.pause.onclick = () => control(S.paused ? "/resume" : "/pause");
    controls.lock.onclick = () => control(S.locked ? "/unlock" : "/lock");
    controls.clear.onclick = () => control("/clear", () => lesson.clear());
    twoStep(controls.end, () => T("endAsk"), () => control("/end"));
    /* The room's rarer controls (lock, clear, end, the page's language) behind one button. */
    const menuButton = el("button", { id: "room-menu-button", type: "button", class: "quiet", "aria-haspopup": "true",
      "aria-expanded": "false", "aria-controls": "room-menu", text: "⋯ " + T("menu"), onclick: () => menu(menuButton.getAttribute("aria-expanded") !== "true") });
    function menu(open) {
      const box = document.getElementById("room-menu");
      box.hidden = !open; menuButton.setAttribute("aria-expanded", String(open));
      if (open) box.querySelector("button:not(:disabled), select").focus();
    }
    document.addEventListener("click", (e) => {
      if (!e.target.closest("#room-menu, #room-menu-button")) menu(false);
    });
    function setState(change) {
      Object.assign(S, change);
      controls.pause.textContent = S.paused ? T("resume") : T("pause");
      controls.pause.setAttribute("aria-pressed", String(S.paused));
      controls.lock.textContent = S.locked ? T("unlock") : T("lock");
      controls.lock.setAttribute("aria-pressed", String(S.locked));
      const words = [S.ended ? T("endedNote") : "", !S.ended && S.paused ? T("pausedNote") : "",
        !S.ended && S.locked ? T("lockedNote") : ""].filter(Boolean);
      note.textContent = words.join(" ");
      note.hidden = !words.length;
      for (const b of Object.values(controls)) b.disabled = S.ended;
      text.disabled = S.ended;
      document.body.classList.toggle("paused", S.paused && !S.ended);
    }

    // -- the join card, and the code full-screen --------------------------------------------------
    const qrSrc = `${C.API}/rooms/${room.code}/qr.svg`;
    const qr = el("img", { class: "qr", id: "qr", alt: "QR", src: qrSrc });
    const toggle = el("button", { class: "quiet small", type: "button", id: "qr-toggle", text: T("hideQr"),
      onclick: () => { qr.hidden = !qr.hidden; toggle.textContent = qr.hidden ? T("showQr") : T("hideQr"); } });
    const join = el("div", { class: "card join", id: "join-card" },
      el("div", { class: "status", text: T("joinAt") }), el("div", { class: "code", id: "join-code", text: C.spaced(room.code) }),
      qr, el("div", { class: "status url", id: "join-url", text: room.join_url }), toggle);
    const big = el("div", { id: "code-overlay", class: "overlay", hidden: "", role: "dialog", "aria-modal": "true",
      "aria-label": T("showCode"), onclick: (e) => { if (e.target === big) overlay(false); } },
    el("div", { class: "overlay-card" }, el("div", { class: "status", text: T("joinAt") }),
      el("div", { class: "code huge", text: C.spaced(room.code) }), el("img", { class: "qr huge", alt: "QR", src: qrSrc }),
      el("div", { class: "url", text: room.join_url }),
      el("button", { id: "close-code", type: "button", text: T("closeCode"), onclick: () => overlay(false) })));
    let before = null;
    function overlay(on) {
      if (on === !big.hidden) return;
      big.hidden = !on;
      if (on) { before = document.activeElement; document.getElementById("close-code").focus(); }
      else if (before) before.focus();
    }
    document.addEventListener("keydown", (e) => {
      if (e.key === "F2" || (e.altKey && (e.key === "c" || e.key === "C" || e.code === "KeyC"))) { e.preventDefault(); overlay(big.hidden); }
      else if (e.key === "Escape" && !big.hidden) { e.preventDefault(); overlay(false); }
      else if (e.key === "Escape" && menuButton.getAttribute("aria-expanded") === "true") { menu(false); menuButton.focus(); }
    });

    // -- the side: questions, languages, students -----------------------------------------------
    const tabs = {}, panels = {};
    const tabBar = el("div", { class: "tabs", role: "tablist" });
    for (const [name, label] of [["questions", T("questions")], ["languages", T("languages")], ["students", T("students")]]) {
      tabs[name] = el("button", { type: "button", role: "tab", id: `tab-${name}`, class: "tab", "aria-controls": `panel-${name}`,
        onclick: () => openTab(name) }, el("span", { text: label }));
      panels[name] = el("div", { role: "tabpanel", id: `panel-${name}`, class: "panel", "aria-labelledby": `tab-${name}` });
      tabBar.append(tabs[name]);
    }
    const badge = el("span", { class: "badge", id: "question-badge", hidden: "" });
    tabs.questions.append(badge);
    const questions = el("div", { id: "questions" });
    panels.questions.append(questions);
    const chips = el("div", { class: "chips", id: "lang-chips" });
    const reads = el("div", { id: "reads" });
    panels.languages.append(chips, reads);
    const people = el("ul", { id: "students", class: "people" });
    panels.students.append(people);
    function openTab(name) {
      S.tab = name;
      for (const [n, t] of Object.entries(tabs)) { t.setAttribute("aria-selected", String(n === name)); panels[n].hidden = n !== name; }
      if (name === "questions") seenQuestions();
      if (name === "languages") drawReads();
      if (name === "students") loadStudents();
    }
    const toast = el("button", { type: "button", class: "toast", id: "question-toast", hidden: "", onclick: () => { openTab("questions"); toast.hidden = true; } });
    const live = el("div", { class: "sr", "aria-live": "polite", id: "announce" });

    // -- new questions: a badge, a toast, the title: polite, never stealing focus ------------------
    let toastTimer = null;
    function signalQuestion(ev) {
      const who = ev.name || T("anonymous");
      if (S.tab !== "questions") { S.unread += 1; badge.hidden = false; badge.textContent = String(S.unread); }
      toast.textContent = "? " + T("newQuestion", { name: who });
      toast.hidden = false;
      live.textContent = T("newQuestion", { name: who });
      clearTimeout(toastTimer); toastTimer = setTimeout(() => { toast.hidden = true; }, 12000);
      document.title = `(${S.unread || 1}) ${T("pageTitle")} · Hunyuan-MT`;
    }
    function seenQuestions() {
      S.unread = 0; badge.hidden = true; toast.hidden = true;
      document.title = `${T("pageTitle")} · Hunyuan-MT`;
    }
    function addQuestion(ev) {
      const btn = el("button", { class: "quiet small", type: "button", text: T("show"), onclick: async () => {
        try { await api(`/questions/${ev.seq}/show`, {}); btn.textContent = T("shown"); btn.disabled = true; }
        catch (x) { err.textContent = x.message; }
      } });
      const remove = el("button", { class: "quiet small danger", type: "button", text: T("remove") });
      twoStep(remove, () => T("removeAsk", { name: ev.name || T("anonymous") }), () => removeStudent(ev.student, remove));
      questions.prepend(el("div", { class: "card question fresh" },
        el("span", { class: "who", text: `${ev.name || T("anonymous")} · ${C.langName(ev.lang)}` }),
        C.inLang("div", room.lang, ev.translation || ev.error || "", { class: "tr" }),
        ev.translation !== ev.text ? C.inLang("span", ev.lang, ev.text, { class: "orig" }) : null,
        el("div", { class: "row tools" }, btn, ev.student ? remove : null)));
      signalQuestion(ev);
    }

    // -- what each language reads --------------------------------------------------------------
    function langOf(code) {
      if (!S.byLang.has(code)) { S.byLang.set(code, new Map()); if (!S.shownLang) S.shownLang = code; }
      return S.byLang.get(code);
    }
    function drawChips() {
      chips.textContent = "";
      const codes = [...new Set([...S.byLang.keys(), ...S.langs])].filter((c) => c !== room.lang);
      for (const code of codes) {
        const warned = [...(S.byLang.get(code) || new Map()).values()].filter((t) => t.warnings && t.warnings.length).length;
        chips.append(el("button", { type: "button", class: "chip", "data-lang": code, "aria-pressed": String(code === S.shownLang),
          onclick: () => { S.shownLang = code; drawChips(); drawReads(); } },
        C.inLang("span", code, C.lang(code) ? C.lang(code).autonym : code), warned ? el("span", { class: "warn", text: ` ⚠ ${warned}` }) : null));
      }
      if (!codes.length) chips.append(el("p", { class: "status", text: T("noStudents") }));
    }
    function drawReads() {
      reads.textContent = "";
      const code = S.shownLang;
      if (!code || S.tab !== "languages" || reads.querySelector("form.editing")) return;  // not under the teacher's pen
      const seen = S.byLang.get(code) || new Map();
      const sids = [...S.sentences.keys()].slice(-RECENT).reverse();  // the newest first
      for (const sid of sids) {
        const t = seen.get(sid);
        const item = el("div", { class: "read" + (t && t.warnings && t.warnings.length ? " unsure" : ""), "data-sid": sid, "data-lang": code });
        item.append(C.inLang("div", room.lang, S.sentences.get(sid), { class: "orig" }));
        const shown = C.inLang("div", code, t ? (t.error ? T("failed") : t.text) : "…", { class: "tr" + (t ? "" : " draft") });
        item.append(shown);
        if (t && t.warnings && t.warnings.length) {
          item.append(el("div", { class: "flag warn", text: "⚠ " + T("unsure") + " (" + t.warnings.map((w) => w.code || w.guard || "?").join(", ") + ")" }));
        } else if (t && t.corrected) item.append(el("div", { class: "flag", text: "✓ " + T("corrected") }));
        const again = el("button", { type: "button", class: "quiet small resend", text: T("resend"), onclick: async () => {
          try { again.disabled = true; await api(`/sentences/${sid}/resend`, { lang: code }); } catch (x) { err.textContent = C.worded(x); }
          finally { again.disabled = false; }
        } });
        const fix = el("button", { type: "button", class: "quiet small fix", text: T("correct"),
          onclick: () => editIn(shown, code, t ? t.text : "", (value) => api(`/sentences/${sid}/correct`, { text: value, lang: code })) });
        item.append(el("div", { class: "row tools" }, again, fix));
        reads.append(item);
      }
    }
    /* An inline editor in place of ``node``: Save sends ``save(value)``, Cancel puts it back. */
    function editIn(node, code, value, save) {
      const area = C.inLang("textarea", code, value, { class: "edit", "aria-label": T("correct") });
      const form = el("form", { class: "editing", onsubmit: async (e) => {
        e.preventDefault();
        try { await save(area.value); form.replaceWith(node); drawReadsSoon(); } catch (x) { err.textContent = C.worded(x); }
      } }, area, el("div", { class: "row tools" }, el("button", { class: "small", text: T("save") }),
        el("button", { type: "button", class: "quiet small", text: T("cancel"), onclick: () => { form.replaceWith(node); drawReadsSoon(); } })));
      node.replaceWith(form);
      area.focus();
    }
    /* The teacher's own sentence: correct it (every language is translated again). */
    function sentenceTools(ev, row) {
      S.sentences.set(ev.seq, ev.text);
      const fix = el("button", { type: "button", class: "quiet tiny fix", title: T("correct"), "aria-label": T("correct"), text: "✎",
        onclick: (e) => { e.stopPropagation(); editIn(row.tr, room.lang, row.text, (value) => api(`/sentences/${ev.seq}/correct`, { text: value })); } });
      row.warn = el("span", { class: "warn langs-warned" });
      row.p.append(el("span", { class: "row-tools" }, row.warn, fix));
    }
    function translated(ev, corrected) {
      if (ev.source) return;
      const seen = langOf(ev.lang);
      seen.set(ev.sid, { text: ev.text, error: ev.error, warnings: ev.warnings || [], corrected });
      while (seen.size > 200) seen.delete(seen.keys().next().value);
      const row = lesson.rows.get(ev.sid);
      if (row && row.warn) {  // the languages in which this sentence may read wrong
        const bad = [...S.byLang.entries()].filter(([, m]) => (m.get(ev.sid) || {}).warnings?.length).map(([c]) => c);
        row.warn.textContent = bad.length ? "⚠ " + bad.join(" ") : "";
        row.warn.title = bad.length ? T("unsure") : "";
      }
      drawChipsSoon();
      if (S.tab === "languages" && ev.lang === S.shownLang) drawReadsSoon();
    }
    const soon = (fn) => { let t = null; return () => { if (!t) t = setTimeout(() => { t = null; fn(); }, 150); }; };
    const drawChipsSoon = soon(drawChips), drawReadsSoon = soon(drawReads);

    // -- students ----------------------------------------------------------------------------------
    async function loadStudents() {
      let list;
      try { list = (await api("/students")).filter((s) => !s.removed && (s.present || s.joining)); }
      catch (x) { people.textContent = C.worded(x); return; }
      people.textContent = "";
      if (!list.length) people.append(el("li", { class: "status", text: T("noStudents") }));
      for (const s of list) {
        const remove = el("button", { type: "button", class: "quiet small danger", text: T("remove") });
        twoStep(remove, () => T("removeAsk", { name: s.name || T("anonymous") }), () => removeStudent(s.student, remove));
        people.append(el("li", { "data-student": s.student }, el("span", { text: `${s.name || T("anonymous")} · ${C.langName(s.lang)}` }), remove));
      }
    }
    async function removeStudent(id, button) {
      try { await api(`/students/${encodeURIComponent(id)}`, undefined, "DELETE"); button.disabled = true; if (S.tab === "students") loadStudents(); }
      catch (x) { err.textContent = C.worded(x); }
    }
    const loadStudentsSoon = soon(() => { if (S.tab === "students") loadStudents(); });

    // -- transcripts ---------------------------------------------------------------------------------
    function download(fmt) {
      return el("a", { href: "#", text: fmt.toUpperCase(), "data-format": fmt, onclick: async (e) => {
        e.preventDefault();
        const r = await fetch(`${C.API}/rooms/${room.code}/transcript?format=${fmt}`, { headers: { "X-Class-Key": key } });
        const url = URL.createObjectURL(await r.blob());
        const a = el("a", { href: url, download: `class-${room.code}.${fmt}` }); a.click();
        setTimeout(() => URL.revokeObjectURL(url), 5000);
      } });
    }

    // -- the screen ------------------------------------------------------------------------------------
    app.append(el("div", { class: "teach", id: "teach" },
      el("header", { class: "bar" },
        el("h1", {}, room.title ? C.inLang("span", room.lang, room.title) : null,
          el("span", { class: "lang-name", text: (room.title ? " · " : "") + C.langName(room.lang) })),
        el("span", { class: "bar-code", id: "bar-code" }, el("span", { class: "status", text: T("codeLabel") + " " }), el("strong", { text: C.spaced(room.code) })),
        showCode, el("span", { id: "captions-slot", class: "slot" }), el("span", { class: "grow" }), status, counts, moreCounts, controls.pause, menuButton,
        el("div", { class: "menu", id: "room-menu", hidden: "" }, controls.lock, controls.clear, controls.end,
          C.uiPicker(() => location.reload()))),
      el("section", { class: "pane", id: "lesson-pane", "aria-label": T("pageTitle") }, C.demoNotice(), note, toast, box),
      el("footer", { class: "composer" },
        el("div", { class: "row" }, text, el("span", { id: "speech-slot", class: "slot" }),
          el("button", { id: "send", type: "button", text: T("send"), onclick: () => send(true) })),
        el("div", { class: "row small-print" }, el("label", { class: "inline" }, auto, " " + T("auto")),
          el("span", { class: "links status", id: "transcripts" }, T("transcript") + ": ", download("txt"), download("csv"), download("md"), download("docx"))),
        err),
      el("aside", { class: "side", id: "side" }, join, tabBar, panels.questions, panels.languages, panels.students)),
    big, live);
    setState({});
    openTab("questions");
    drawChips();

    C.follow(`${C.API}/rooms/${room.code}/events?role=teacher&key=${encodeURIComponent(key)}`, (ev) => {
      switch (ev.type) {
        case "sentence": lesson.add(ev); if (S.tab === "languages") drawReadsSoon(); break;
        case "translation": translated(ev, false); break;
        case "correction":
          if (ev.source) { const r = lesson.rows.get(ev.sid); if (r) { r.text = ev.text; r.tr.textContent = ev.text; } S.sentences.set(ev.sid, ev.text); drawReadsSoon(); }
          else translated(ev, true);
          break;
        case "question": addQuestion(ev); break;
        case "stats":
          S.langs = Object.keys(ev.languages || {});
          if (["locked", "paused", "ended"].some((k) => k in ev && !!ev[k] !== S[k])) setState({ locked: !!ev.locked, paused: !!ev.paused, ended: !!ev.ended });
          counts.textContent = T("studentCount", { n: ev.students });
          moreCounts.textContent = `${T("sentenceCount", { n: ev.sentences })} · ${T("translationCount", { n: ev.translations })}`;
          drawChipsSoon(); loadStudentsSoon();
          break;
        case "paused": setState({ paused: true }); break;
        case "resumed": setState({ paused: false }); break;
        case "locked": setState({ locked: true }); break;
        case "unlocked": setState({ locked: false }); break;
        case "clear": lesson.clear(); break;
        case "ended": setState({ ended: true }); break;
        case "removed": loadStudentsSoon(); break;
      }
    }, status, async () => S.ended);  // an ended class's stream ends: nothing to reopen
  }

  /* A button that asks before it acts: the first press shows the question, the second acts
     (no dialog box: a projector's audience sees nothing pop up). */
  function twoStep(button, ask, act) {
    let armed = null, label = null;
    button.addEventListener("click", () => {
      if (!armed) {
        label = button.textContent; button.textContent = ask(); button.classList.add("armed");
        armed = setTimeout(() => { button.textContent = label; button.classList.remove("armed"); armed = null; }, 5000);
        return;
      }
      clearTimeout(armed); armed = null; button.textContent = label; button.classList.remove("armed");
      act();
    });
  }

  C.views.teacher = teacher;
  C.boot(() => C.savedUi() || C.browserLang());
})();
