"""A class spoken, in headless Chromium (Debian's) with a fake microphone: Chromium plays a WAV
file as the microphone (``--use-file-for-fake-audio-capture``; it loops the file), the page
captures it with getUserMedia and its AudioWorklet, and sends 16 kHz frames over the WebSocket
to the demo recogniser; the demo model translates.

- The teacher presses 🎤 and says 早上好。 (espeak-ng's Mandarin voice): the teacher's page shows the
  words as a draft and then the sentence heard; a student's phone (390x844, English) shows the
  grey draft line, which settles into "Good morning."; the projector's captions page
  (``?lang=en,fr``) shows the sentence with both translations.
- The 🎤 on the Translate tab fills the text box with what was said.
- Half a minute of silence from the microphone: frames reach the server, no sentence comes.

Screenshots of the teacher's page while speaking and of the phone go to $HYMT_SHOTS when it is
set (they are looked at, not compared).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from browserhelpers import ARGS, CHROMIUM, OUTPUT

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.demo.asr import ensure_demo_asr
from hunyuan_webui.demo.voices import speak
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.speech.audio import decode, wav_bytes
from hunyuan_webui.speech_choice import build_speech
from hunyuan_webui.urls import free_port

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
RATE = 48_000  # what a microphone gives; the page's worklet brings it to 16 kHz
OUTPUT_IN = "document.querySelector('#input-box textarea').value"
MODEL_WAIT = 120_000  # ms: a wait where the recogniser or the model answers, on a busy machine
# Every server message the page's WebSockets get, and how many frames they sent.
WIRE = """
window.__heard = []; window.__frames = 0;
const Native = window.WebSocket;
window.WebSocket = class extends Native {
  constructor(...a) {
    super(...a);
    this.addEventListener('message', (m) => {
      if (typeof m.data === 'string') window.__heard.push(JSON.parse(m.data));
    });
  }
  send(data) { if (typeof data !== 'string') window.__frames += 1; return super.send(data); }
};
"""


def spoken(text: str, lang: str, pause_s: float) -> np.ndarray:
    """espeak-ng's ``text`` at 48 kHz, with ``pause_s`` of silence after it (the file loops)."""
    voice = decode(speak(text, lang))  # 16 kHz float
    at = np.arange(len(voice) * RATE // 16_000) * (16_000 / RATE)
    up = np.interp(at, np.arange(len(voice)), voice).astype(np.float32)
    return np.concatenate([np.zeros(RATE // 2, np.float32), up,
                           np.zeros(int(pause_s * RATE), np.float32)])


def fake_mic(browser_type: Any, path: Path) -> Any:
    return browser_type.launch(executable_path=CHROMIUM, args=[
        *ARGS, "--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream",
        "--autoplay-policy=no-user-gesture-required", f"--use-file-for-fake-audio-capture={path}",
        "--host-resolver-rules=MAP class.lan 127.0.0.1"])  # the server as a LAN name


@pytest.fixture(scope="module")
def speech() -> Iterator[Speech]:
    loaded = build_speech(Settings(asr_model=str(ensure_demo_asr()), demo=True))
    assert loaded.wait_ready(120).state == "ready"
    yield loaded
    loaded.close()


@pytest.fixture(scope="module")
def served(engine: Any, demo_settings: Settings, speech: Speech) -> Iterator[tuple[str, Any]]:
    settings = replace(demo_settings, port=free_port(), cache_size=1000)
    app = create_app(settings, Translator(engine, engine.spec, settings,
                                          cache=PhraseCache(size=1000)), speech=speech)
    server = Server(app, settings).start()
    try:
        yield server.url, app
    finally:
        server.stop()


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="module")
def speaking(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Chromium whose microphone says 早上好。 then waits 25 s (before the file starts again)."""
    path = tmp_path_factory.mktemp("mic") / "phrase.wav"
    path.write_bytes(wav_bytes(spoken("早上好。", "zh", 25), RATE))
    browser = fake_mic(playwright.chromium, path)
    yield browser
    browser.close()


def open_class(served: tuple[str, Any], lang: str = "zh") -> dict[str, str]:
    url, app = served
    room = app.state.rooms.create(lang)
    return {**room, "join": f"{url}/class/{room['code']}",
            "teacher": f"{url}/class/teach/{room['code']}#key={room['key']}"}


def shot(page: Any, name: str) -> None:
    where = os.environ.get("HYMT_SHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"{name}.png"))


def student(browser: Any, room: dict[str, str], lang: str) -> Any:
    page = browser.new_context(locale=lang, **PHONE).new_page()
    page.goto(room["join"])
    page.wait_for_selector("#enter", timeout=60_000)
    page.locator("#enter").click()
    page.wait_for_selector("#lesson", timeout=60_000)
    return page


def teacher(browser: Any, room: dict[str, str], script: str = "") -> Any:
    context = browser.new_context(locale="en-US", viewport={"width": 1280, "height": 800})
    context.add_init_script(WIRE + script)
    page = context.new_page()
    page.goto(room["teacher"])
    page.wait_for_selector("#mic", timeout=60_000)
    return page


# Every time the grey draft line shows words, what it shows (the phone's draft, as it comes).
DRAFTS = """
window.__drafts = [];
new MutationObserver(() => {
  const d = document.querySelector('#speech-draft');
  const t = d && !d.hidden ? d.querySelector('.speech-draft-text').textContent : '';
  const last = window.__drafts[window.__drafts.length - 1];
  if (t && (!last || last.text !== t)) window.__drafts.push({text: t, color: getComputedStyle(d).color});
}).observe(document, {subtree: true, childList: true, characterData: true, attributes: true});
"""
READS = ("t => [...document.querySelectorAll('#lesson .tr:not(.draft)')]"
         ".some(e => e.textContent === t)")


def test_the_teacher_speaks_and_a_phone_reads_the_translation(speaking: Any, served) -> None:
    room = open_class(served, "zh")
    phone = student(speaking, room, "en")
    phone.add_init_script(DRAFTS)
    phone.reload()
    phone.wait_for_selector("#lesson", timeout=60_000)
    captions = speaking.new_page()
    captions.goto(f"{served[0]}/class/{room['code']}/captions?lang=en,fr")
    captions.wait_for_function("() => document.querySelector('.status')?.hidden === false",
                               timeout=60_000)
    desk = teacher(speaking, room, DRAFTS)
    desk.locator("#mic").click()
    # While the words come: a draft on the teacher's screen, then the sentence heard.
    desk.wait_for_function("() => window.__drafts.length > 0", timeout=MODEL_WAIT)
    shot(desk, "teacher-speaking")
    shot(phone, "phone-speaking")
    desk.wait_for_function("() => document.querySelector('#mic-heard .mic-heard-text')"
                           "?.textContent === '早上好。'", timeout=MODEL_WAIT)
    # The phone: the grey line while it is spoken, settling into the translation.
    phone.wait_for_function(READS, arg="Good morning.", timeout=MODEL_WAIT)
    shot(phone, "phone")
    drafts = phone.evaluate("window.__drafts")
    assert drafts, "the phone showed no draft while it was spoken"
    print("the phone's drafts:", drafts)
    ink = phone.evaluate("getComputedStyle(document.querySelector('#lesson .tr')).color")
    assert all(d["color"] != ink for d in drafts), (drafts, ink)  # grey, not the lesson's ink
    phone.wait_for_function("() => document.querySelector('#speech-draft').hidden",
                            timeout=MODEL_WAIT)
    # The projector: the sentence with its two translations, as they come.
    captions.wait_for_function(
        "() => { const l = document.querySelector('.lines .line'); if (!l) return false;"
        " const tr = (c) => l.querySelector(`.tr[data-lang=${c}]`);"
        " return l.querySelector('.orig').textContent === '早上好。' &&"
        " tr('en').textContent === 'Good morning.' && tr('fr').textContent === 'Bonjour.' &&"
        " !l.querySelector('.pending'); }", timeout=MODEL_WAIT)
    shot(captions, "captions")
    desk.locator("#mic").click()
    desk.wait_for_function("() => document.querySelector('#mic').getAttribute('aria-pressed')"
                           " === 'false'", timeout=MODEL_WAIT)
    heard = desk.evaluate("window.__heard")
    assert [m["type"] for m in heard][0] == "ready" and heard[-1]["type"] == "stopped"
    finals = [m for m in heard if m["type"] == "final" and m.get("sentences")]
    assert finals and all(m["text"] == "早上好。" for m in finals)
    # The teacher fixes what was heard (✎): the phone and the projector get the mended sentence.
    desk.locator("#mic-heard .mic-fix").click()
    desk.locator(".mic-fix-input").fill("请打开书。")
    desk.get_by_role("button", name="Send the correction").click()
    desk.wait_for_function("() => document.querySelector('#mic-heard .mic-heard-text')"
                           "?.textContent === '请打开书。'", timeout=MODEL_WAIT)
    phone.wait_for_function(READS, arg="Please open your books.", timeout=MODEL_WAIT)
    captions.wait_for_function(
        "() => { const l = document.querySelector('.lines .line:last-child');"
        " return l.querySelector('.orig').textContent === '请打开书。' &&"
        " l.querySelector('.tr[data-lang=en]').textContent === 'Please open your books.'; }",
        timeout=MODEL_WAIT)
    for page in (desk, phone, captions):
        page.context.close()


def test_captions_page_in_light_dark_and_for_obs(speaking: Any, served) -> None:
    room = open_class(served, "zh")
    page = speaking.new_page(viewport={"width": 1280, "height": 720})
    page.goto(f"{served[0]}/class/{room['code']}/captions?lang=en&theme=light&bg=transparent"
              "&lines=2")
    page.wait_for_function("() => document.querySelector('.status')?.hidden === false",
                           timeout=60_000)
    assert page.evaluate("document.body.dataset.theme") == "light"
    # Transparent for OBS: nothing painted behind the words.
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgba(0, 0, 0, 0)"
    for sentence in ("早上好。", "请打开书。", "谢谢你的帮助。"):  # they roll: two lines kept
        httpx.post(f"{served[0]}/class/api/rooms/{room['code']}/sentences",
                   json={"text": sentence}, headers={"X-Class-Key": room["key"]}, timeout=60,
                   trust_env=False).raise_for_status()
    page.wait_for_function("() => [...document.querySelectorAll('.lines .tr[data-lang=en]')]"
                           ".map(e => e.textContent).join('|') === "
                           "'Please open your books.|Thank you for your help.'",
                           timeout=MODEL_WAIT)
    assert page.locator(".lines .orig").all_text_contents() == ["请打开书。", "谢谢你的帮助。"]
    light = page.evaluate("getComputedStyle(document.querySelector('.lines .orig')).color")
    page.mouse.move(10, 10)
    page.get_by_role("button", name="Light or dark").click()
    page.get_by_role("button", name="Background: normal, transparent, green (for OBS)").click()
    assert page.evaluate("document.body.dataset.theme") == "dark"
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(0, 177, 64)"  # chroma-key green
    dark = page.evaluate("getComputedStyle(document.querySelector('.lines .orig')).color")
    assert light != dark
    size = page.evaluate("parseFloat(getComputedStyle(document.querySelector('.lines .orig'))"
                         ".fontSize)")
    page.get_by_role("button", name="Larger text").click()
    assert page.evaluate("parseFloat(getComputedStyle(document.querySelector('.lines .orig'))"
                         ".fontSize)") > size
    # The address keeps the choices, to paste into OBS.
    assert "theme=dark" in page.url and "bg=green" in page.url and "lang=en" in page.url
    shot(page, "captions-green")
    page.close()


def test_dictation_fills_the_text_box(speaking: Any, served) -> None:
    page = speaking.new_page(viewport={"width": 1280, "height": 900})
    page.goto(served[0])
    page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)
    page.locator("#dictate-btn").click()
    page.wait_for_function(f"() => {OUTPUT_IN} === '早上好。'", timeout=MODEL_WAIT)
    page.locator("#dictate-btn").click()
    page.wait_for_function("() => document.querySelector('#dictate-btn')"
                           ".getAttribute('aria-pressed') === 'false'", timeout=MODEL_WAIT)
    page.locator("#translate-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === 'Good morning.'", timeout=MODEL_WAIT)
    page.close()


def test_a_lan_page_over_https_hears_the_teacher(speaking: Any, engine: Any, speech: Speech,
                                                 demo_settings: Settings, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """--https: a laptop on the LAN (class.lan) gets the microphone once the teacher has
    accepted the self-signed certificate; frames go over wss://."""
    monkeypatch.setenv("HYMT_STATE_DIR", str(tmp_path))
    settings = replace(demo_settings, port=free_port(), https=True)
    app = create_app(settings, Translator(engine, engine.spec, settings), speech=speech)
    server = Server(app, settings).start()
    try:
        url = server.url.replace("127.0.0.1", "class.lan").replace("localhost", "class.lan")
        assert url.startswith("https://class.lan:")
        room = open_class((url, app), "zh")
        context = speaking.new_context(ignore_https_errors=True)  # the certificate, accepted
        context.add_init_script(WIRE)
        desk = context.new_page()
        desk.goto(room["teacher"])
        desk.locator("#mic:not([disabled])").click(timeout=60_000)
        desk.wait_for_function("() => document.querySelector('#mic-heard .mic-heard-text')"
                               "?.textContent === '早上好。'", timeout=MODEL_WAIT)
        desk.locator("#mic").click()
        context.close()
    finally:
        server.stop()


@pytest.fixture(scope="module")
def silent(playwright: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Chromium whose microphone hears nothing (half a minute of silence, again and again)."""
    path = tmp_path_factory.mktemp("mic") / "silence.wav"
    path.write_bytes(wav_bytes(np.zeros(30 * RATE, np.float32), RATE))
    browser = fake_mic(playwright.chromium, path)
    yield browser
    browser.close()


def test_half_a_minute_of_silence_gives_no_sentence(silent: Any, served) -> None:
    room = open_class(served, "zh")
    desk = teacher(silent, room)
    desk.locator("#mic").click()
    # 300 frames of 100 ms sent and taken by the server: 30 s of the microphone.
    desk.wait_for_function("() => window.__heard.some(m => m.type === 'ack' && m.next >= 300)",
                           timeout=180_000)
    desk.locator("#mic").click()
    desk.wait_for_function("() => window.__heard.some(m => m.type === 'stopped')",
                           timeout=MODEL_WAIT)
    said = [m for m in desk.evaluate("window.__heard") if m["type"] in ("draft", "final")]
    assert all(not m.get("text") and not m.get("sentences") for m in said), said
    assert desk.locator("#lesson [data-sid]").count() == 0
    log = httpx.get(f"{served[0]}/class/api/rooms/{room['code']}/transcript",
                    headers={"X-Class-Key": room["key"]}, timeout=60, trust_env=False)
    assert log.status_code == 200 and "。" not in log.text
    desk.context.close()


# -- when the microphone cannot be had: words, and typing still works --------------------------
@pytest.fixture(scope="module")
def deaf(engine: Any, demo_settings: Settings) -> Iterator[tuple[str, Any]]:
    """The app without a recogniser (--no-speech)."""
    settings = replace(demo_settings, port=free_port(), cache_size=1000)
    app = create_app(settings, Translator(engine, engine.spec, settings,
                                          cache=PhraseCache(size=1000)), speech=None)
    server = Server(app, settings).start()
    try:
        yield server.url, app
    finally:
        server.stop()


@pytest.fixture(scope="module")
def refused(playwright: Any) -> Iterator[Any]:
    """Chromium with a microphone, whose user does not allow it (no permission is given); the
    server is also class.lan to it (a phone on the LAN, without --https)."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=[
        *ARGS, "--use-fake-device-for-media-stream",
        # A name on the LAN for the server, reached over plain http: not a secure page.
        "--host-resolver-rules=MAP class.lan 127.0.0.1"])
    yield browser
    browser.close()


def typing_still_works(desk: Any, phone: Any) -> None:
    desk.locator("textarea#text").fill("请打开书。")
    desk.keyboard.press("Enter")
    phone.wait_for_function(READS, arg="Please open your books.", timeout=MODEL_WAIT)


def translating_still_works(page: Any) -> None:
    page.locator("#input-box textarea").fill("早上好。")
    page.locator("#translate-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === 'Good morning.'", timeout=MODEL_WAIT)


NO_WORKLET = "delete window.AudioWorkletNode;"  # a browser without AudioWorklet
CASES = {  # the browser, the server, how the page is reached, what it says, a script
    "no permission": ("refused", "served", "127.0.0.1", "did not allow the microphone", ""),
    "no recogniser": ("speaking", "deaf", "127.0.0.1", "Speech recognition is not available", ""),
    "no AudioWorklet": ("speaking", "served", "127.0.0.1", "no AudioWorklet", NO_WORKLET),
    "not https": ("refused", "served", "class.lan", "The microphone needs a secure page", ""),
}


@pytest.mark.parametrize("case", list(CASES))
def test_without_a_microphone_the_page_says_why(case: str, request: pytest.FixtureRequest) -> None:
    browser_name, server_name, host, words, script = CASES[case]
    browser = request.getfixturevalue(browser_name)
    url, app = request.getfixturevalue(server_name)
    server = (url.replace("127.0.0.1", host), app)
    room = open_class(server, "zh")
    phone = student(browser, room, "en")
    desk = teacher(browser, room, script)
    if desk.locator("#mic").is_enabled():  # else the button is off and says why already
        desk.locator("#mic").click()
    desk.wait_for_function("w => document.querySelector('#mic-status.bad')?.textContent"
                           ".includes(w)", arg=words, timeout=MODEL_WAIT)
    assert desk.locator("#mic").get_attribute("aria-pressed") == "false"
    # The words wrap beside the text box: it keeps room to type in.
    assert desk.locator("textarea#text").bounding_box()["width"] >= 250
    shot(desk, f"teacher-{case.replace(' ', '-')}")
    typing_still_works(desk, phone)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.add_init_script(script)
    page.goto(server[0])
    page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)
    page.locator("#dictate-btn").click()
    page.wait_for_function("w => document.querySelector('#dictate-note')?.textContent"
                           ".includes(w)", arg=words, timeout=MODEL_WAIT)
    assert page.locator("#dictate-btn").get_attribute("aria-pressed") == "false"
    translating_still_works(page)
    for each in (desk, phone, page):
        each.context.close()


# The browser's speech synthesis as a phone with an English voice (and no French one) has it;
# headless Chromium has no voices of its own (nor can a script make a SpeechSynthesisVoice, so
# the utterance is a plain one too). What the page asks it to say is kept.
VOICES = """
window.__said = [];
window.SpeechSynthesisUtterance = class { constructor(text) { this.text = text; } };
Object.defineProperty(window, 'speechSynthesis', {value: {
  getVoices: () => [{lang: 'en-US', name: 'English', default: true}],
  speak: (u) => window.__said.push({text: u.text, lang: u.lang}),
  cancel: () => {}, addEventListener: () => {},
}});
"""


def test_a_tap_reads_the_translation_aloud_where_there_is_a_voice(speaking: Any, served) -> None:
    room = open_class(served, "zh")
    phones = {}
    for lang in ("en", "fr"):
        phones[lang] = speaking.new_context(locale=lang, **PHONE).new_page()
        phones[lang].add_init_script(VOICES)
        phones[lang].goto(room["join"])
        phones[lang].wait_for_selector("#enter", timeout=60_000)
        phones[lang].locator("#enter").click()
        phones[lang].wait_for_selector("#lesson", timeout=60_000)
    httpx.post(f"{served[0]}/class/api/rooms/{room['code']}/sentences", json={"text": "早上好。"},
               headers={"X-Class-Key": room["key"]}, timeout=60,
               trust_env=False).raise_for_status()
    for lang, words in (("en", "Good morning."), ("fr", "Bonjour.")):
        phones[lang].wait_for_function(READS, arg=words, timeout=MODEL_WAIT)
        phones[lang].locator("#lesson .tr", has_text=words).tap()
    phones["en"].wait_for_function("() => window.__said.length > 0", timeout=60_000)
    assert phones["en"].evaluate("window.__said") == [{"text": "Good morning.", "lang": "en-US"}]
    assert phones["fr"].evaluate("window.__said") == []  # no French voice: nothing is said
    for page in phones.values():
        page.context.close()
