"""The class pages as their readers see them, in headless Chromium (Debian's), on the demo model.

- A student's phone in Arabic, French, Japanese, Spanish, Russian or Uyghur reads the join page,
  the lesson, its notices and a mistyped code's answer in its own language: a scan of the
  visible text, the chosen options, aria-labels, titles and placeholders finds no word of the
  English table (words the language's own translations use too excepted). The lesson's lines
  themselves are the model's words, not the page's: the demo answers a pair it does not know
  (Chinese into Spanish) with scraps of its phrases, English ones included. Arabic and Uyghur pages are
  right-to-left, and the lesson's lines sit on the right.
- The teacher's screen on a projector (1366x768, 1280x720, 1920x1080, and 1366x768 and 1280x720
  at 150% zoom): after 40 sentences the join code or "Show code", and the input, are on screen
  without scrolling the page; F2 shows the code full-screen; a question raises a signal.
- The room's controls from the teacher's screen: a locked room refuses a new student with words,
  a removed student's page and an ended class's pages say so, pause and clear reach the phones;
  the teacher gets back to a running class from /class.
- What each language reads: a guard's warning shows on the sentence, the teacher corrects a
  translation and a sentence, and the phones show the mended text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from browserhelpers import ASSETS, CHROMIUM, CSP_VIOLATIONS, readme_picture

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.service import Translator
from hunyuan_webui.service.rooms import edits
from hunyuan_webui.urls import free_port
from hunyuan_webui.web.classroom import text

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


@pytest.fixture(scope="module")
def served(engine: Any, demo_settings: Any) -> Iterator[tuple[str, Any]]:
    """The app on the demo model, and its FastAPI object (its rooms, for the test's own
    classes: made by the server itself, as ``--class`` makes one, they count against no
    teacher's limit)."""
    settings = replace(demo_settings, port=free_port(), cache_size=1000)
    app = create_app(settings, Translator(engine, engine.spec, settings,
                                          cache=PhraseCache(size=1000)))
    server = Server(app, settings).start()
    try:
        yield server.url, app
    finally:
        server.stop()


def open_class(served: tuple[str, Any], lang: str = "zh") -> dict[str, str]:
    url, app = served
    room = app.state.rooms.create(lang)
    return {**room, "join": f"{url}/class/{room['code']}",
            "teacher": f"{url}/class/teach/{room['code']}#key={room['key']}"}


def send(served: tuple[str, Any], room: dict[str, str], sentence: str) -> dict[str, Any]:
    answer = httpx.post(f"{served[0]}/class/api/rooms/{room['code']}/sentences",
                        json={"text": sentence}, headers={"X-Class-Key": room["key"]},
                        timeout=30, trust_env=False)
    assert answer.status_code == 200, answer.text
    return answer.json()


def tab(browser: Any, locale: str, **options: Any) -> Any:
    context = browser.new_context(locale=locale, **options)
    context.add_init_script(CSP_VIOLATIONS)
    return context.new_page()


def join(page: Any, room: dict[str, str], name: str = "") -> None:
    page.goto(room["join"])
    page.wait_for_selector("#enter")
    if name:
        page.locator("#name").fill(name)
    page.locator("#enter").click()
    page.wait_for_function("() => document.querySelector('#status')?.textContent &&"
                           " !document.querySelector('#status').classList.contains('bad')",
                           timeout=60_000)


def reads(page: Any, expected: str, timeout: float = 60_000) -> None:
    page.wait_for_function("t => [...document.querySelectorAll('#lesson .tr:not(.draft)')]"
                           ".some(e => e.textContent === t)", arg=expected, timeout=timeout)


# -- no English on a student's phone ----------------------------------------------------------
WORD = re.compile(r"[A-Za-z]{2,}")
SEEN = """() => {
  const out = [document.title];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walk.nextNode());) {
    const e = node.parentElement;
    const skip = 'select, script, style, #lesson .tr, #lesson .orig, #lesson .roman';
    if (!e || e.closest(skip) || !e.getClientRects().length) continue;
    out.push(node.textContent);
  }
  for (const e of document.querySelectorAll('select')) out.push(e.selectedOptions[0]?.text ?? '');
  for (const e of document.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
    if (e.getClientRects().length) for (const a of ['aria-label', 'title', 'placeholder', 'alt'])
      out.push(e.getAttribute(a) || '');
  }
  return out.join('\\n');
}"""


def english_words(code: str) -> set[str]:
    """The words of the English table, less the placeholders' names and the words that the
    language's own translations use too (French "pause" in "mis le cours en pause"): a string
    left as the English one does not count as a translation that uses its words."""
    english = text.table("en")

    def words(values: list[str]) -> set[str]:
        return {w.casefold() for v in values for w in WORD.findall(text.PLACEHOLDER.sub(" ", v))}
    own = [v for k, v in text.table(code).items() if v != english[k]]
    return words(list(english.values())) - words(own)


def english_seen(page: Any, code: str) -> list[str]:
    return sorted({w for w in WORD.findall(page.evaluate(SEEN))
                   if w.casefold() in english_words(code)})


LOCALES = {"ar": "ar", "fr": "fr-FR", "ja": "ja-JP", "es": "es-ES", "ru": "ru-RU", "ug": "ug-CN"}


@pytest.mark.parametrize("code", list(LOCALES))
def test_a_students_phone_shows_no_english_word(browser, served, code):
    room = open_class(served)
    phone = tab(browser, LOCALES[code], **PHONE)
    phone.goto(room["join"])
    phone.wait_for_selector("#enter")
    assert phone.locator("#lang").input_value() == code  # the browser's language, chosen
    assert phone.locator("#demo-notice").is_visible()  # the demo model says what it is
    assert english_seen(phone, code) == []
    phone.locator("#enter").click()
    phone.wait_for_selector("#waiting")
    assert english_seen(phone, code) == []
    send(served, room, "早上好。")
    send(served, room, "请打开书。")
    phone.wait_for_function("() => document.querySelectorAll('#lesson .tr:not(.draft)').length"
                            " === 2", timeout=60_000)
    phone.locator("#question").fill("?")
    phone.locator("#ask").click()
    phone.wait_for_function("() => document.querySelector('#asked').textContent !== ''")
    assert english_seen(phone, code) == [], phone.evaluate(SEEN)
    if code in ("ar", "ug"):  # right to left: the page, and each lesson line on the right
        assert phone.evaluate("document.documentElement.dir") == "rtl"
        line = phone.locator("#lesson .s").first
        assert line.get_attribute("dir") == "rtl"
        assert line.locator(".tr").get_attribute("lang") == ("ug-Arab" if code == "ug" else "ar")
        assert line.locator(".orig").get_attribute("lang") == "zh-Hans"
        box, words = (phone.locator("#lesson").bounding_box(),
                      line.locator(".tr").bounding_box())
        assert abs((box["x"] + box["width"]) - (words["x"] + words["width"])) <= 2, (box, words)
        assert words["x"] > box["x"] + 20
    # A mistyped code: "no class with this code", in the student's language, not the start form.
    phone.goto(room["join"].rsplit("/", 1)[0] + "/000001")
    phone.wait_for_selector("#not-found")
    assert phone.locator("#not-found").inner_text() == text.table(code)["notFound"]
    assert phone.locator("#start").count() == 0
    assert english_seen(phone, code) == []
    assert phone.evaluate("window.__csp") == []
    phone.context.close()


def test_a_chinese_phone_reads_the_page_in_chinese(browser, served, tmp_path):
    room = open_class(served, "en")
    phone = tab(browser, "zh-CN", **PHONE)
    join(phone, room, "小明")
    send(served, room, "Good morning.")
    reads(phone, "早上好。")
    assert phone.locator("#ask").inner_text() == "发送"
    assert phone.locator(".hint").inner_text() == text.table("zh")["tapOrig"]
    assert phone.evaluate("document.documentElement.lang") == "zh-Hans"
    (tmp_path / "phone-zh.png").write_bytes(phone.screenshot())
    phone.context.close()


# -- the teacher's screen on a projector ------------------------------------------------------
SCREENS = {"1366x768": (1366, 768, 1), "1280x720": (1280, 720, 1), "1920x1080": (1920, 1080, 1),
           "1366x768@150%": (1366, 768, 1.5), "1280x720@150%": (1280, 720, 1.5)}
ON_SCREEN = """(sel) => { const e = document.querySelector(sel); if (!e) return false;
  const r = e.getBoundingClientRect();
  return r.width > 0 && r.height > 0 && r.top >= 0 && r.left >= 0 &&
    r.bottom <= innerHeight + 0.5 && r.right <= innerWidth + 0.5; }"""


@pytest.fixture(scope="module")
def long_lesson(browser, served) -> dict[str, str]:
    """A class with 40 sentences, typed on the teacher's page, and a French student."""
    room = open_class(served)
    phone = tab(browser, "fr-FR", **PHONE)
    join(phone, room, "Ana")
    teacher = tab(browser, "en-US", viewport={"width": 1366, "height": 768})
    teacher.goto(room["teacher"])
    teacher.wait_for_selector("#text")
    for i in range(40):
        teacher.locator("#text").fill(("早上好。", "请打开书。", "谢谢。", "请坐。")[i % 4])
        teacher.locator("#text").press("Enter")
        teacher.wait_for_function("n => document.querySelectorAll('#lesson .s').length >= n",
                                  arg=i + 1, timeout=60_000)
    phone.wait_for_function("() => document.querySelectorAll('#lesson .s').length === 40",
                            timeout=60_000)
    teacher.context.close()
    return {**room, "phone": phone}


@pytest.mark.parametrize("screen", list(SCREENS))
def test_on_a_projector_the_code_and_the_input_stay_on_screen(browser, served, long_lesson,
                                                               screen):
    width, height, zoom = SCREENS[screen]
    # Browser zoom: the page gets a viewport `zoom` times smaller in CSS pixels, drawn sharper.
    teacher = tab(browser, "en-US", viewport={"width": round(width / zoom),
                                              "height": round(height / zoom)},
                  device_scale_factor=zoom)
    teacher.goto(long_lesson["teacher"])
    teacher.wait_for_function("() => document.querySelectorAll('#lesson .s').length === 40",
                              timeout=60_000)
    teacher.wait_for_timeout(300)
    assert teacher.evaluate(ON_SCREEN, "#text") and teacher.evaluate(ON_SCREEN, "#send")
    assert teacher.evaluate(ON_SCREEN, "#join-code") or teacher.evaluate(ON_SCREEN, "#show-code")
    assert teacher.evaluate(ON_SCREEN, "#bar-code")
    # The page itself does not scroll: the lesson scrolls in its own pane, to its newest line.
    assert teacher.evaluate("document.scrollingElement.scrollHeight <= innerHeight + 1")
    pane = teacher.locator("#lesson-pane")
    assert pane.evaluate("p => p.scrollHeight > p.clientHeight")
    assert teacher.evaluate(ON_SCREEN, "#lesson .s:last-child .tr")
    # One key brings the code back full-screen; Escape puts it away.
    teacher.keyboard.press("F2")
    overlay = teacher.locator("#code-overlay")
    assert overlay.is_visible()
    assert overlay.locator(".code").inner_text().replace(" ", "") == long_lesson["code"]
    assert teacher.evaluate(ON_SCREEN, "#code-overlay .qr") and \
        teacher.evaluate(ON_SCREEN, "#close-code")
    teacher.keyboard.press("Escape")
    assert not overlay.is_visible()
    if screen == "1366x768":  # the README's picture: what each language reads
        teacher.locator("#tab-languages").click()
        teacher.wait_for_selector("#reads .read")
        readme_picture(teacher, "class-teacher.png")
    assert teacher.evaluate("window.__csp") == []
    teacher.context.close()


def test_a_question_raises_a_polite_signal(browser, served, long_lesson):
    teacher = tab(browser, "en-US", viewport={"width": 1366, "height": 768})
    teacher.goto(long_lesson["teacher"])
    teacher.wait_for_selector("#lesson .s")
    teacher.locator("#tab-languages").click()
    phone = long_lesson["phone"]
    phone.locator("#question").fill("谢谢。")
    phone.locator("#ask").click()
    toast = teacher.locator("#question-toast")
    toast.wait_for(timeout=60_000)
    assert toast.inner_text() == "? New question from Ana"
    assert teacher.locator("#question-badge").inner_text() == "1"
    assert teacher.title().startswith("(1) ")
    assert teacher.locator("#announce").get_attribute("aria-live") == "polite"
    assert teacher.evaluate("document.activeElement.id") != "question-toast"  # focus stays
    toast.click()
    assert teacher.locator("#panel-questions").is_visible()
    assert teacher.locator("#question-badge").is_hidden() and not teacher.title().startswith("(")
    teacher.context.close()


# -- the room's controls -----------------------------------------------------------------------
def teacher_tab(browser: Any, room: dict[str, str]) -> Any:
    page = tab(browser, "en-US", viewport={"width": 1366, "height": 768})
    page.goto(room["teacher"])
    page.wait_for_selector("#text")
    return page


def menu(page: Any, control: str, twice: bool = False) -> None:
    if page.locator("#room-menu-button").get_attribute("aria-expanded") != "true":
        page.locator("#room-menu-button").click()
    page.locator(f"#{control}").click()
    if twice:  # it asks first
        page.locator(f"#{control}.armed").click()


def test_lock_pause_clear_remove_and_end_reach_the_phones(browser, served):
    room = open_class(served)
    teacher = teacher_tab(browser, room)
    fr, ja = tab(browser, "fr-FR", **PHONE), tab(browser, "ja-JP", **PHONE)
    join(fr, room, "Ana")
    join(ja, room, "Ken")
    send(served, room, "早上好。")
    reads(fr, "Bonjour.")

    menu(teacher, "lock")  # a new student is refused, in their language
    teacher.wait_for_function("() => document.querySelector('#room-state').textContent"
                              ".includes('Locked')")
    late = tab(browser, "es-ES", **PHONE)
    late.goto(room["join"])
    late.locator("#enter").click()
    late.wait_for_function("() => document.querySelector('#join-error').textContent !== ''")
    assert late.locator("#join-error").inner_text() == text.table("es")["locked"]
    menu(teacher, "lock")  # unlock

    teacher.locator("#pause").click()
    fr.wait_for_selector("#notice[data-why=paused]")
    assert fr.locator("#notice").inner_text() == text.table("fr")["paused"]
    teacher.locator("#text").fill("请坐。")
    teacher.locator("#text").press("Enter")
    teacher.wait_for_function("() => document.querySelector('#send-error').textContent"
                              " === 'Paused: nothing reaches the students.'")
    teacher.locator("#pause").click()  # resume
    fr.wait_for_selector("#notice", state="hidden")

    menu(teacher, "clear")
    fr.wait_for_function("() => !document.querySelector('#lesson .s')")
    assert fr.locator("#notice").inner_text() == text.table("fr")["cleared"]

    teacher.locator("#tab-students").click()
    teacher.wait_for_selector("#students li[data-student] button")
    row = teacher.locator("#students li", has_text="Ken")
    row.locator("button").click()
    row.locator("button.armed").click()
    ja.wait_for_selector("#notice[data-why=removed]")
    assert ja.locator("#notice").inner_text() == text.table("ja")["removed"]
    assert ja.locator(".ask").is_hidden()
    ja.reload()  # and it stays out
    ja.wait_for_selector("#removed, #enter")

    menu(teacher, "end", twice=True)
    fr.wait_for_selector("#notice[data-why=ended]")
    assert fr.locator("#notice").inner_text() == text.table("fr")["ended"]
    teacher.wait_for_function("() => document.querySelector('#room-state').textContent"
                              ".includes('The class has ended')")
    assert teacher.locator("#text").is_disabled()
    again = tab(browser, "fr-FR", **PHONE)  # a student who comes later reads that it ended
    again.goto(room["join"])
    again.wait_for_selector("#ended")
    assert again.locator("#ended").inner_text() == text.table("fr")["ended"]
    # The transcript stays the teacher's.
    got = teacher.evaluate("async (code) => (await fetch(`/class/api/rooms/${code}/transcript"
                           "?format=txt`, {headers: {'X-Class-Key': localStorage.getItem("
                           "'hymt-teach-' + code)}})).status", room["code"])
    assert got == 200
    for page in (teacher, fr, ja, late, again):
        assert page.evaluate("window.__csp") == []
        page.context.close()


def test_a_teacher_gets_back_to_a_running_class_from_the_start_page(browser, served):
    url = served[0]
    teacher = tab(browser, "en-US", viewport={"width": 1280, "height": 800})
    teacher.goto(f"{url}/class")
    teacher.locator("#start").click()
    teacher.wait_for_selector("#join-code")
    code = teacher.locator("#join-code").inner_text().replace(" ", "")
    key = teacher.evaluate("c => localStorage.getItem('hymt-teach-' + c)", code)
    requests: list[str] = []
    teacher.on("request", lambda r: requests.append(r.url))
    teacher.goto(f"{url}/class")  # the tab was closed; the browser remembers
    teacher.locator(f"#resume-{code}").click()
    teacher.wait_for_selector("#join-code")
    assert "#key" not in teacher.url and teacher.locator("#text").is_enabled()
    assert all(r.startswith(url) for r in requests)  # the key goes to this server only
    assert not any(key in r for r in requests if "/events" not in r)  # and not in URLs
    teacher.context.close()


# -- what each language reads, and mending it -------------------------------------------------
def test_the_teacher_sees_each_language_and_mends_a_translation(browser, served):
    url, app = served
    room = open_class(served)
    fr, ar = tab(browser, "fr-FR", **PHONE), tab(browser, "ar", **PHONE)
    join(fr, room, "Ana")
    join(ar, room, "ليلى")
    teacher = teacher_tab(browser, room)
    sid = send(served, room, "早上好。")["sentences"][0]
    reads(fr, "Bonjour.")
    reads(ar, "صباح الخير.")
    teacher.locator("#tab-languages").click()
    teacher.locator("#lang-chips .chip[data-lang=fr]").click()
    read = teacher.locator("#reads .read[data-lang=fr]").first
    read.wait_for()
    assert read.locator(".tr").inner_text() == "Bonjour."
    assert read.locator(".tr").get_attribute("lang") == "fr"
    teacher.locator("#lang-chips .chip[data-lang=ar]").click()
    shown = teacher.locator("#reads .read[data-lang=ar] .tr").first
    assert shown.inner_text() == "صباح الخير." and shown.get_attribute("dir") == "rtl"

    # A guard's warning on a translation (the event the answer guards send): flagged for the
    # teacher on the sentence, and on the phone.
    edits.log_correction(app.state.rooms, room["code"], sid, "ar", "صباح.", by="guard",
                          warnings=[{"code": "wrong_language", "guard": "language"}])
    teacher.wait_for_function("() => document.querySelector('#lesson .s .langs-warned')"
                              "?.textContent === '⚠ ar'")
    teacher.wait_for_selector("#reads .read.unsure[data-lang=ar]")
    assert "wrong_language" in teacher.locator("#reads .read.unsure .flag").inner_text()
    ar.wait_for_function("() => document.querySelector('#lesson .s .flag').textContent"
                         ".includes(\"قد تكون هذه الترجمة خاطئة\")")
    assert ar.locator("#lesson .tr").first.inner_text() == "صباح."

    # The teacher writes the Arabic by hand; then translates the French again.
    teacher.locator("#reads .read[data-lang=ar] .fix").first.click()
    teacher.locator("#reads form.editing textarea").fill("صباح الخير يا طلاب.")
    teacher.locator("#reads form.editing button:not(.quiet)").click()
    reads(ar, "صباح الخير يا طلاب.")
    assert "مُصحَّح" in ar.locator("#lesson .s .flag").first.inner_text()
    teacher.locator("#lang-chips .chip[data-lang=fr]").click()
    teacher.locator("#reads .read[data-lang=fr] .resend").first.click()
    fr.wait_for_function("() => document.querySelector('#lesson .s .flag')?.textContent"
                         ".includes('Corrigé')", timeout=60_000)
    assert fr.locator("#lesson .tr").first.inner_text() == "Bonjour."

    # The teacher corrects the sentence itself: every language reads the new one.
    teacher.locator("#lesson .s .fix").first.click()
    teacher.locator("#lesson form.editing textarea").fill("请打开书。")
    teacher.locator("#lesson form.editing button:not(.quiet)").click()
    reads(fr, "Veuillez ouvrir vos livres.")
    reads(ar, "من فضلكم افتحوا كتبكم.")
    fr.locator("#lesson .s").first.click()
    assert fr.locator("#lesson .s .orig").first.inner_text() == "请打开书。"
    transcript = httpx.get(f"{url}/class/api/rooms/{room['code']}/transcript?format=txt",
                           headers={"X-Class-Key": room["key"]}, trust_env=False).text
    assert "请打开书。" in transcript and "Veuillez ouvrir vos livres." in transcript
    for page in (teacher, fr, ar):
        page.context.close()



AXE = ASSETS.parent / "node_modules" / "axe-core" / "axe.min.js"


def axe_problems(page: Any) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("async () => (await axe.run(document, {resultTypes: ['violations']}))"
                          ".violations.map(v => ({id: v.id, impact: v.impact, "
                          "nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)}))")
    return [f"{v['impact']} {v['id']}: {v['nodes']}" for v in found
            if v["impact"] in ("critical", "serious")]


@pytest.mark.parametrize("dark", [False, True], ids=["light", "dark"])
def test_axe_finds_no_serious_problem_on_the_class_pages(browser, served, dark):
    assert AXE.exists(), "run `npm ci` (bash launch.sh test does) to install axe-core"
    scheme = "dark" if dark else "light"
    room = open_class(served)
    start = tab(browser, "ar", **PHONE, color_scheme=scheme)
    start.goto(f"{served[0]}/class")
    start.wait_for_selector("#start")
    phone = tab(browser, "ar", **PHONE, color_scheme=scheme)
    join(phone, room, "ليلى")
    send(served, room, "早上好。")
    reads(phone, "صباح الخير.")
    teacher = tab(browser, "en-US", viewport={"width": 1366, "height": 768}, color_scheme=scheme)
    teacher.goto(room["teacher"])
    teacher.wait_for_selector("#lesson .s")
    teacher.locator("#tab-languages").click()
    teacher.wait_for_selector("#reads .read")
    for page in (start, phone, teacher):
        problems = axe_problems(page)
        assert problems == [], "\n".join(problems)
        page.context.close()
