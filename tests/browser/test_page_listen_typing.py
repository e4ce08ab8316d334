"""Listen and translate as you type, in headless Chromium and at the rule.

Listen: headless Chromium has no voices, so each page gets a stand-in ``speechSynthesis`` (an
init script) whose voices arrive late, as Chrome's do, and which records what it is asked to say.
Translate as you type: the demo model translates a typed phrase without Translate being pressed;
a slow scripted engine shows one request per pause and a keystroke cancelling the running one
(the engine's own stream is cancelled), and that the rule leaves it off for a 7B not on a GPU.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from apphelpers import CHROMIUM, running_app, wait_until
from browserhelpers import OUTPUT, pick
from fakes import ScriptedEngine

from hunyuan_webui.engine import EngineState, EngineStatus
from hunyuan_webui.web.page.live import LiveRule
from hunyuan_webui.web.page.text import LABELS

DESKTOP, PHONE = (1366, 768), (390, 844)

# A speechSynthesis that speaks nothing: voices come when the test says (voiceschanged), and
# every speak() and cancel() is recorded.
FAKE_SPEECH = r"""
(() => {
  let voices = [];
  const listeners = [];
  const synth = {
    speaking: false, pending: false, paused: false, onvoiceschanged: null, current: null,
    getVoices() { return voices.slice(); },
    speak(u) {
      window.__speech.spoken.push({text: u.text, lang: u.lang, voice: u.voice && u.voice.name});
      this.speaking = true;
      this.current = u;
    },
    cancel() {
      window.__speech.cancels += 1;
      const u = this.current;
      this.current = null;
      this.speaking = false;
      if (u && u.onend) setTimeout(() => u.onend({}), 0);
    },
    pause() {}, resume() {},
    addEventListener(type, fn) { if (type === 'voiceschanged') listeners.push(fn); },
    removeEventListener() {},
  };
  window.__speech = {
    spoken: [], cancels: 0,
    setVoices(list) {
      voices = list.map(([lang, name]) => ({lang, name, voiceURI: name, localService: true,
                                            default: false}));
      listeners.forEach((fn) => fn(new Event('voiceschanged')));
      if (synth.onvoiceschanged) synth.onvoiceschanged(new Event('voiceschanged'));
    },
  };
  Object.defineProperty(window, 'speechSynthesis', {configurable: true, get: () => synth});
  window.SpeechSynthesisUtterance = function (text) {
    this.text = text; this.lang = ''; this.voice = null;
  };
})();
"""


def open_page(chromium, url: str, locale: str, size: tuple[int, int], speech: bool = False):
    width, height = size
    mobile = width < 640
    context = chromium.new_context(viewport={"width": width, "height": height}, locale=locale,
                                  is_mobile=mobile, has_touch=mobile)
    if speech:
        context.add_init_script(FAKE_SPEECH)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)
    return page


def shown(page, side: str) -> bool:
    return page.evaluate(f"() => {{ const b = document.getElementById('listen-{side}');"
                         " return Boolean(b) && !b.hidden && b.offsetWidth > 0; }")


CASES = [  # locale, size, the URL's pair, a demo phrase typed, its translation, the voice tags
    ("en-US", DESKTOP, "sl=en&tl=zh", "Thank you for your help.", "谢谢你的帮助。",
     ("en-US", "zh-CN")),
    # On "Detect language": the text's voice is the detected language's.
    ("zh-CN", PHONE, "sl=auto&tl=en", "谢谢你的帮助。", "Thank you for your help.",
     ("zh-CN", "en-GB")),
]


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
@pytest.mark.parametrize(("locale", "size", "pair", "typed", "expected", "tags"), CASES,
                         ids=["en-US-1366x768", "zh-CN-390x844"])
def test_typing_translates_and_listen_reads_each_box_in_its_language(
        browser, demo_url, locale, size, pair, typed, expected, tags):  # noqa: F811
    """The demo model (a CPU, a tiny model: the rule says on): typing a phrase translates it
    without Translate. Listen shows only with text and a voice for that box's language, voices
    arriving late; it reads the exact translation with that voice's language; again stops."""
    words = LABELS["zh" if locale == "zh-CN" else "en"]
    page = open_page(browser, f"{demo_url}/?{pair}", locale, size, speech=True)
    page.wait_for_function("() => document.querySelector('#live-toggle input')?.checked",
                           timeout=60_000)
    assert words["live_typing"] in page.locator("#live-toggle").inner_text()
    page.evaluate("(tags) => window.__speech.setVoices(tags.map((t) => [t, 'Fake ' + t]))",
                  list(tags))
    page.wait_for_timeout(400)
    assert not shown(page, "source") and not shown(page, "target")  # no text yet

    page.evaluate("() => window.__speech.setVoices([])")  # voices not there yet
    page.locator("#input-box textarea").click()
    page.keyboard.type(typed, delay=30)
    page.wait_for_function(f"(want) => {OUTPUT} === want", arg=expected, timeout=60_000)
    page.wait_for_timeout(400)
    assert not shown(page, "source") and not shown(page, "target")  # text, but no voice

    source_tag, target_tag = tags
    page.evaluate("(tag) => window.__speech.setVoices([[tag, 'Fake source']])", source_tag)
    page.wait_for_function("() => { const b = document.getElementById('listen-source');"
                           " return b && !b.hidden; }", timeout=60_000)
    assert not shown(page, "target")  # no voice for the translation's language
    page.evaluate("(tags) => window.__speech.setVoices(tags.map((t) => [t, 'Fake ' + t]))",
                  list(tags))
    target = page.get_by_role("button", name=words["listen_target"], exact=True)
    target.wait_for(state="visible", timeout=60_000)
    source = page.get_by_role("button", name=words["listen_source"], exact=True)
    assert source.is_visible()
    for button in (source, target):
        box = button.bounding_box()
        assert box["width"] >= 44 and box["height"] >= 44, box

    target.click()
    spoken = page.evaluate("() => window.__speech.spoken")
    assert spoken == [{"text": expected, "lang": target_tag, "voice": f"Fake {target_tag}"}]
    stop = page.get_by_role("button", name=words["listen_stop"], exact=True)
    stop.wait_for(state="visible", timeout=60_000)
    cancels = page.evaluate("() => window.__speech.cancels")
    stop.click()
    target.wait_for(state="visible", timeout=60_000)
    assert page.evaluate("() => window.__speech.cancels") == cancels + 1
    assert len(page.evaluate("() => window.__speech.spoken")) == 1  # stopped, not read again

    source.click()
    spoken = page.evaluate("() => window.__speech.spoken")
    assert spoken[-1] == {"text": typed, "lang": source_tag, "voice": f"Fake {source_tag}"}
    page.context.close()


def _long_answer(prompt, options):
    return "ok " * 400  # 1,200 characters at 20 ms each: running until cancelled


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_typing_sends_one_request_per_pause_and_a_keystroke_cancels_the_running_one(
        browser):  # noqa: F811
    """A 7B model on an engine not on a GPU: off by default, and typing translates nothing. Once
    the visitor turns it on (kept in the browser over a reload), eleven keys make one request;
    a keystroke while that one runs cancels its engine stream, and one more request follows with
    the whole text."""
    engine = ScriptedEngine(_long_answer, delay=0.02)
    with running_app(engine, cache_size=0) as app:
        page = open_page(browser, f"{app.url}/?sl=en&tl=de", "en-US", DESKTOP)
        toggle = page.locator("#live-toggle input[type=checkbox]")
        box = page.locator("#input-box textarea")
        box.click()
        page.keyboard.type("Good morning", delay=30)
        page.wait_for_timeout(1_500)
        assert not toggle.is_checked()
        assert engine.calls == [] and page.evaluate(OUTPUT) == ""

        toggle.check()
        box.click()
        page.keyboard.press("End")
        page.keyboard.type(" to you all", delay=40)
        assert wait_until(lambda: len(engine.calls) == 1, timeout=10)
        page.wait_for_function(f"() => {OUTPUT}.length > 0", timeout=60_000)
        page.wait_for_timeout(800)
        assert len(engine.calls) == 1, [prompt for prompt, _ in engine.calls]
        assert "Good morning to you all" in engine.calls[0][0]

        page.keyboard.type("!")
        assert wait_until(lambda: len(engine.cancelled) == 1, timeout=10), engine.cancelled
        assert wait_until(lambda: len(engine.calls) == 2, timeout=10)
        assert "Good morning to you all!" in engine.calls[1][0]
        assert engine.cancelled[0].prompt == engine.calls[0][0]

        page.locator("#stop-btn").click()  # Stop ends a live translation too
        assert wait_until(lambda: len(engine.cancelled) == 2, timeout=10), engine.cancelled

        page.reload()
        page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)
        page.wait_for_function("() => document.querySelector('#live-toggle input')?.checked",
                               timeout=60_000)
        page.context.close()


class _Engine:
    def __init__(self, device: str) -> None:
        self.device = device

    def status(self) -> EngineStatus:
        return EngineStatus(EngineState.READY, "m", device=self.device)


def _rule(device: str, params_b: float | None) -> LiveRule:
    # The page learns the device through the translator (Translator.status), not its engine.
    return LiveRule(SimpleNamespace(status=_Engine(device).status, spec=SimpleNamespace(
        params_b=params_b)))


def _result(first_token_s: float | None, cached: bool = False) -> SimpleNamespace:
    return SimpleNamespace(cached=cached, usage={"first_token_s": first_token_s})


@pytest.mark.parametrize(("device", "params_b", "on"), [
    ("cpu", 0.03, True),  # the demo model
    ("cpu", 7.0, False),  # the 7B on a CPU: seconds to the first token
    ("cpu", 1.8, False),
    ("gpu (llama.cpp)", 7.0, True),
    ("cuda:0", 7.0, True),
    ("remote 10.0.0.2:8000", None, False),
])
def test_before_any_translation_the_rule_goes_by_device_and_size(device, params_b, on):
    assert _rule(device, params_b).default() is on


def test_measured_first_token_times_decide_once_there_are_enough():
    rule = _rule("cpu", 7.0)
    for first in (0.05, 0.08):
        rule.observe(_result(first))
    rule.observe(_result(0.01, cached=True))  # the cache: no engine work, not counted
    rule.observe(_result(None))
    assert rule.default() is False  # two measurements: the prior still decides
    rule.observe(_result(0.12))
    assert rule.default() is True  # median 80 ms
    for first in (2.5, 3.1, 2.9, 4.0):
        rule.observe(_result(first))
    assert rule.default() is False  # median 2.5 s: a busy or slow engine


def test_the_visitors_own_choice_wins_over_the_rule():
    rule = _rule("cpu", 7.0)
    assert rule.choose(None) is False
    assert rule.choose(True) is True
    assert _rule("cuda", 7.0).choose(False) is False


# -- drafts, a new pair, Clear (what the first version left out) ---------------------------------
def _typed(translator, steps: list[tuple[str, str, bool]]) -> list[list[str]]:
    """Each step a (text, target, live) translation from English, as the page sends them one
    after another; answers the history after the last."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from hunyuan_webui.web.page.form import TextForm
    from hunyuan_webui.web.page.ui import TranslatorUI

    ui, history = TranslatorUI(translator), []

    async def run() -> list[list[str]]:
        nonlocal history
        for text, target, live in steps:
            form = TextForm(text=text, source="en", target=target, deterministic=True,
                            history=history, live=live)
            async for update in ui.translate(form):
                history = update.get("history", history)
        return history

    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API may hold this thread's loop
        return pool.submit(asyncio.run, run()).result()


def test_a_sentence_typed_with_pauses_is_one_history_row(translator):
    """Each pause in the typing translated the text so far, and each one added a history row.
    A translation made as you type takes the place of the newest row when that row was a draft
    of it; Translate itself, another language or another text still adds one."""
    texts = lambda history: [(row[0], row[4]) for row in history]  # noqa: E731
    drafts = [("Good", "zh", True), ("Good morning.", "zh", True),
              ("Good morning. Please sit down.", "zh", True)]
    assert texts(_typed(translator, drafts)) == [("Good morning. Please sit down.", "zh")]
    deleted = [*drafts, ("Good morning.", "zh", True)]  # deleted back to the first sentence
    assert texts(_typed(translator, deleted)) == [("Good morning.", "zh")]
    assert texts(_typed(translator, [*drafts, ("Good morning. Please sit down.", "fr", True),
                                     ("Please sit down.", "fr", True)])) == [
        ("Please sit down.", "fr"), ("Good morning. Please sit down.", "fr"),
        ("Good morning. Please sit down.", "zh")]
    pressed = [("Good morning.", "zh", False), ("Good morning. Please sit down.", "zh", False)]
    assert texts(_typed(translator, pressed)) == [("Good morning. Please sit down.", "zh"),
                                                 ("Good morning.", "zh")]


def _history(page) -> str:
    return page.evaluate("() => document.querySelector('#history')?.innerText ?? ''")


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_typing_on_replaces_its_draft_and_a_new_language_translates_again(
        browser, demo_url):  # noqa: F811
    """The demo model, typing on: the first sentence's translation, then both sentences', leave
    one history row. Picking French translates the text again without Translate (a row of its
    own), and so does a language chosen with the keys; opening a picker and leaving it as it
    was sends nothing."""

    page = open_page(browser, f"{demo_url}/?sl=en&tl=zh", "en-US", DESKTOP)
    page.wait_for_function("() => document.querySelector('#live-toggle input')?.checked",
                           timeout=60_000)
    page.get_by_text("History (kept in this browser").click()
    page.locator("#input-box textarea").click()
    page.keyboard.type("Good morning.", delay=30)
    page.wait_for_function(f"() => {OUTPUT} === '早上好。'", timeout=60_000)
    page.wait_for_function("() => document.querySelector('#history').innerText"
                           ".includes('早上好。')", timeout=60_000)
    page.keyboard.type(" Please sit down.", delay=30)
    page.wait_for_function(f"() => {OUTPUT} === '早上好。请坐。'", timeout=60_000)
    page.wait_for_function("() => document.querySelector('#history').innerText"
                           ".includes('早上好。请坐。')", timeout=60_000)
    assert _history(page).count("Good morning.") == 1, _history(page)

    joins = []
    page.on("request", lambda r: joins.append(r.url) if "/queue/join" in r.url else None)
    pick(page, "target-lang", "Français · French")  # with the mouse
    page.wait_for_function(f"() => {OUTPUT} === \"Bonjour. Asseyez-vous, s'il vous plaît.\"",
                           timeout=60_000)
    page.wait_for_function("() => document.querySelector('#history').innerText"
                           ".includes('Bonjour.')", timeout=60_000)
    history = _history(page)
    assert history.count("Good morning. Please sit down.") == 2, history
    assert "English → French" in history and "English → Chinese" in history, history
    assert len(joins) == 1, joins

    page.locator("#source-lang input").click()  # a look at the list, nothing chosen
    page.locator("#input-box textarea").click()
    page.wait_for_timeout(1_500)
    assert len(joins) == 1, joins
    assert page.evaluate(OUTPUT) == "Bonjour. Asseyez-vous, s'il vous plaît."

    page.locator("#target-lang input").click()  # with the keys
    page.keyboard.press("Control+a")
    page.keyboard.type("Chinese")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => {OUTPUT} === '早上好。请坐。'", timeout=60_000)
    assert len(joins) == 2, joins
    page.context.close()


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_clear_stops_the_running_translation(browser):  # noqa: F811
    """Clear emptied the boxes while the translation went on streaming into them."""
    engine = ScriptedEngine(_long_answer, delay=0.02)
    with running_app(engine, cache_size=0) as app:
        page = open_page(browser, f"{app.url}/?sl=en&tl=de", "en-US", DESKTOP)
        page.locator("#input-box textarea").fill("Good morning")
        page.locator("#translate-btn").click()
        page.wait_for_function(f"() => {OUTPUT}.length > 20", timeout=60_000)
        page.locator("#clear-btn").click()
        assert wait_until(lambda: len(engine.cancelled) == 1, timeout=10), engine.cancelled
        page.wait_for_timeout(1_000)
        assert page.evaluate(OUTPUT) == ""
        assert page.locator("#input-box textarea").input_value() == ""
        page.context.close()
