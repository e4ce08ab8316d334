/* /class: a student types a code; a teacher starts a class, or goes back to one running from
   this browser (its teacher's key is kept in this browser's storage and sent only to this
   server, in the X-Class-Key header). */
"use strict";
(function () {
  const C = window.HYClass, el = C.el, T = C.T;
  const TEACH = "hymt-teach-";

  /* The classes this browser teaches that still run: links back to their teacher's pages. */
  async function running(box) {
    const codes = [];
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i);
      if (k && k.startsWith(TEACH)) codes.push(k.slice(TEACH.length));
    }
    const found = [];
    await Promise.all(codes.map(async (code) => {
      try { found.push(await C.call(`/rooms/${encodeURIComponent(code)}`)); }
      catch (x) { if (x.status === 404) localStorage.removeItem(TEACH + code); }
    }));
    if (!found.length) return;
    box.append(el("h2", { text: T("yourClasses") }));
    for (const room of found) {
      box.append(el("a", { class: "resume", id: `resume-${room.code}`, href: `${C.P}/teach/${room.code}`,
        text: T("backTo", { code: C.spaced(room.code) }) + (room.title ? ` · ${room.title}` : "") }));
    }
  }

  function render() {
    const app = C.app;
    app.textContent = "";
    const teach = el("select", { id: "teach-lang" });
    for (const l of C.LANGS) teach.append(el("option", { value: l.code, lang: l.tag, text: C.langName(l.code) }));
    teach.value = C.browserLang("zh");
    const title = el("input", { id: "title", maxlength: "80" });
    const err = el("div", { class: "error", role: "alert" });
    const code = el("input", { id: "code", inputmode: "numeric", autocomplete: "off", placeholder: "123 456" });
    const mine = el("div", { id: "running" });
    app.append(
      el("div", { class: "top" }, C.uiPicker(render)), C.demoNotice(), mine,
      el("h1", { text: T("join") }),
      el("form", { class: "card", onsubmit: (e) => {
        e.preventDefault();
        const c = code.value.replace(/\D/g, "");
        if (c) location.href = `${C.P}/${c}`;
      } }, el("label", { for: "code", text: T("codeLabel") }),
      el("div", { class: "row" }, code, el("button", { id: "go", text: T("go") }))),
      el("h1", { text: T("start") }), el("p", { class: "status", text: T("startHint") }),
      el("form", { class: "card", onsubmit: async (e) => {
        e.preventDefault();
        try {
          const room = await C.call("/rooms", { lang: teach.value, title: title.value });
          location.href = room.teacher_url;
        } catch (x) { err.textContent = C.worded(x); }
      } }, el("label", { for: "teach-lang", text: T("teachIn") }), teach,
      el("label", { for: "title", text: T("title") }), title, err, el("button", { id: "start", text: T("start") })));
    running(mine);
  }

  C.views.start = render;
  C.boot(() => C.savedUi() || C.browserLang());
})();
