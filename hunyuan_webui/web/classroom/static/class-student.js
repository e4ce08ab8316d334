/* /class/{code}: a student's page, in the student's language: before they choose, the
   browser's; once chosen, theirs (kept in this browser with their place in the class). */
"use strict";
(function () {
  const C = window.HYClass, el = C.el, T = C.T;
  const SAVED = "hymt-class-" + C.CODE;
  const saved = () => JSON.parse(localStorage.getItem(SAVED) || "null");

  /* A page that only says why (no class with this code, it ended, you were removed), with a
     way to type another code. */
  function stopped(message, id) {
    const app = C.app;
    app.textContent = "";
    const code = el("input", { id: "code", inputmode: "numeric", autocomplete: "off", placeholder: "123 456", "aria-label": T("codeLabel") });
    app.append(el("div", { class: "top" }, C.uiPicker(() => stopped(message(), id))), C.demoNotice(),
      el("p", { class: "notice", id, role: "alert", text: message() }),
      el("form", { class: "card", onsubmit: (e) => {
        e.preventDefault();
        const c = code.value.replace(/\D/g, "");
        if (c) location.href = `${C.P}/${c}`;
      } }, el("label", { for: "code", text: T("codeLabel") }),
      el("div", { class: "row" }, code, el("button", { id: "go", text: T("go") }))));
  }
  /* The lesson's title is the teacher's words, in the teacher's language. */
  const title = (room, otherwise) => (room.title ? C.inLang("h1", room.lang, room.title) : el("h1", { text: otherwise }));
  const why = (x) => () => C.worded(x);
  const whyId = (x) => ({ room_not_found: "not-found", room_ended: "ended", student_removed: "removed",
    room_locked: "locked" })[x.code] || "refused";

  async function student() {
    let room;
    try { room = await C.call(`/rooms/${C.CODE}`); } catch (x) { return stopped(why(x), whyId(x)); }
    if (room.ended) { localStorage.removeItem(SAVED); return stopped(() => T("ended"), "ended"); }
    const me = saved();
    if (me) return enter(room, me);
    joinForm(room, C.ui);
  }

  function joinForm(room, chosen) {
    const app = C.app;
    app.textContent = "";
    const lang = el("select", { id: "lang" });
    for (const l of C.LANGS) lang.append(el("option", { value: l.code, lang: l.tag, text: C.langName(l.code) }));
    lang.value = chosen;
    const name = el("input", { id: "name", maxlength: "40", autocomplete: "nickname" });
    const err = el("div", { class: "error", role: "alert", id: "join-error" });
    // The page speaks the language the student picks, at once.
    lang.addEventListener("change", async () => {
      const typed = name.value;
      await C.useLanguage(lang.value, true);
      joinForm(room, lang.value);
      document.getElementById("name").value = typed;
      document.getElementById("lang").focus();
    });
    app.append(C.demoNotice(), title(room, T("joinClass", { code: C.spaced(room.code) })),
      el("form", { class: "card", onsubmit: async (e) => {
        e.preventDefault();
        try {
          const joined = await C.call(`/rooms/${room.code}/join`, { lang: lang.value, name: name.value });
          const mine = { student: joined.student, lang: joined.lang, name: name.value };
          localStorage.setItem(SAVED, JSON.stringify(mine));
          enter(room, mine);
        } catch (x) { err.textContent = C.worded(x); }
      } }, el("label", { for: "lang", text: T("read") }), lang, el("label", { for: "name", text: T("name") }), name, err,
      el("button", { id: "enter", text: T("enter") })));
  }

  async function enter(room, me) {
    if (C.ui !== me.lang) await C.useLanguage(me.lang, true);
    try { await C.call(`/rooms/${room.code}/join`, { lang: me.lang, name: me.name || "", student: me.student }); }
    catch (x) {
      if (["student_removed", "room_ended", "room_not_found"].includes(x.code)) {
        localStorage.removeItem(SAVED);
        return stopped(why(x), whyId(x));
      }
      localStorage.removeItem(SAVED);
      return joinForm(room, me.lang);
    }
    lessonPage(room, me);
  }

  function lessonPage(room, me) {
    const app = C.app;
    app.textContent = "";
    const status = el("span", { class: "status", id: "status", role: "status", text: T("reconnecting") });
    const box = el("div", { id: "lesson", "aria-live": "polite" }, el("p", { class: "status", id: "waiting", text: T("waiting") }));
    const lesson = C.Lesson(box, me.lang);
    const rom = el("input", { type: "checkbox", id: "roman", class: "check", onchange: () => lesson.romanize(rom.checked) });
    const q = el("textarea", { id: "question", maxlength: "300", dir: "auto", lang: C.tag(me.lang), "aria-label": T("ask"), placeholder: T("ask") });
    const note = el("div", { class: "status", id: "asked", role: "status" });
    const notice = el("p", { class: "notice", id: "notice", role: "status", hidden: "" });
    const mine = el("select", { id: "my-lang", "aria-label": T("changeLang"), title: T("changeLang") });
    for (const l of C.LANGS) mine.append(el("option", { value: l.code, lang: l.tag, text: l.autonym }));
    mine.value = me.lang;
    mine.addEventListener("change", () => {  // the same student, another language
      localStorage.setItem(SAVED, JSON.stringify({ ...me, lang: mine.value }));
      localStorage.setItem("hymt-class-ui", mine.value);
      location.reload();
    });
    const askForm = el("form", { class: "ask", onsubmit: async (e) => {
      e.preventDefault();
      if (!q.value.trim()) return;
      try { await C.call(`/rooms/${room.code}/questions`, { student: me.student, text: q.value }); q.value = ""; note.textContent = T("sent"); }
      catch (x) { note.textContent = C.worded(x); }
    } }, el("div", { class: "row" }, q, el("button", { id: "ask", text: T("send") })));
    if (room.paused) show(T("paused"), "paused");
    app.append(C.demoNotice(),
      el("div", { class: "row head" }, title(room, C.spaced(room.code)),
        el("label", { class: "globe" }, C.globe(), mine)),
      el("div", { class: "row status" }, status, el("label", { class: "inline" }, rom, " " + T("romanize"))),
      me.lang !== room.lang ? el("p", { class: "status hint", text: T("tapOrig") }) : null, notice, box, note, askForm);

    function show(text, id) { notice.hidden = false; notice.textContent = text; notice.dataset.why = id; }
    function finish(text, id) {  // the class is over for this phone: say so, stop asking
      show(text, id);
      stream.close();
      status.textContent = ""; askForm.hidden = true;
    }
    /* The stream cannot reopen: ended, or this student removed? Then stop trying. */
    async function gone() {
      try { await C.call(`/rooms/${room.code}/join`, { lang: me.lang, name: me.name || "", student: me.student }); return false; }
      catch (x) {
        if (!["room_ended", "room_not_found", "student_removed"].includes(x.code)) return false;
        if (x.code === "student_removed") localStorage.removeItem(SAVED);
        finish(C.worded(x), x.code === "student_removed" ? "removed" : "ended");
        return true;
      }
    }
    const url = `${C.API}/rooms/${room.code}/events?student=${encodeURIComponent(me.student)}&lang=${encodeURIComponent(me.lang)}`;
    const stream = C.follow(url, (ev) => {
      const w = document.getElementById("waiting"); if (w) w.remove();
      switch (ev.type) {
        case "sentence": lesson.add(ev); break;
        case "draft": lesson.set(ev, false); break;
        case "translation": lesson.set(ev, true); break;
        case "correction": lesson.correct(ev); break;
        case "delayed": lesson.delayed(ev); break;
        case "paused": show(T("paused"), "paused"); break;
        case "resumed": notice.hidden = true; break;
        case "clear": lesson.clear(); show(T("cleared"), "cleared"); break;
        case "ended": localStorage.removeItem(SAVED); finish(T("ended"), "ended"); break;
        case "removed":
          if (ev.student === me.student) { localStorage.removeItem(SAVED); finish(T("removed"), "removed"); }
          break;
      }
    }, status, gone);
  }

  C.views.student = student;
  C.boot(() => (saved() || {}).lang || C.savedUi() || C.browserLang());
})();
