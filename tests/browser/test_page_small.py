"""The smaller findings of a walk-through of the page: each told from what a student sees.

- Three of the twelve example chips were not in the demo model's table (ug → zh gave an empty
  answer labelled "From the phrase cache"): every chip now gives its exact demo translation, and
  an empty answer from any model is said to be one (en + zh) and never cached.
- "12345" wiped the output behind red error badges (DeepL echoes it): a text with nothing to
  translate (digits, punctuation, a URL, an e-mail address) comes back as itself, with a quiet
  note, and is not sent to the model.
- A long paste gained an empty paragraph at a part boundary (80 paragraphs in, 81 out).
- A 51,000-character paste was cut to 50,000 by the text box, silently: now it stays whole, the
  counter says it is too long, and Translate refuses it with a message.
- Swap swapped the pair and the texts but left the output empty: it translates the new source,
  as DeepL does.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest
from apphelpers import CHROMIUM, running_app
from browserhelpers import OUTPUT, Visitor, last_changes, open_page
from fakes import FakeEngine, InstantEngine

from hunyuan_webui import models
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.demo.model import load_phrases
from hunyuan_webui.engine import Stream
from hunyuan_webui.engine.base import options_per_prompt
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.service.translate.translator import NOTHING_TO_TRANSLATE
from hunyuan_webui.settings import Settings
from hunyuan_webui.web.page.layout import EXAMPLES, _example_label
from hunyuan_webui.web.page.text import MESSAGES

NOTHING = ["12345", "3.14 + 2 = 5.14 !!", "https://example.com/a?b=1", "teacher@school.edu",
           "👍 🎉 …", "（1）2024-06-01"]
PROGRESS = "document.querySelector('#progress').innerText"
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


def _demo_table() -> dict[tuple[str, str, str], str]:
    return {(p.source_lang, p.target_lang, p.source): p.target for p in load_phrases()}


def _translator(engine: Any, guards: bool = False, **settings: Any) -> Translator:
    spec = models.resolve("tencent/Hunyuan-MT-7B")
    return Translator(engine, spec, Settings(guards=guards, **settings),
                      cache=PhraseCache(size=100))


class SilentEngine(FakeEngine):
    """A model that answers nothing at all (as the demo does for a pair it does not know)."""

    def submit(self, prompts_: Any, options: Any) -> list[Stream]:
        streams = [Stream(p, o) for p, o in zip(prompts_, options_per_prompt(prompts_, options))]
        for stream in streams:
            stream.finish("stop")
        return streams


# -- example chips ------------------------------------------------------------------------------
def test_every_example_chip_is_a_phrase_the_demo_model_knows():
    table = _demo_table()
    unknown = [row for row in EXAMPLES if tuple(row[1:]) + (row[0],) not in
               {(s, t, text) for s, t, text in table}]
    assert unknown == []


# -- an empty answer ------------------------------------------------------------------------------
@pytest.mark.parametrize("guards", [False, True], ids=["guards-off", "guards-on"])
def test_an_empty_answer_is_never_cached(guards):
    """Both ways into the cache (the in-flight table's, and the guards' once they passed an
    answer): an empty answer is not kept, so it is asked for again, not served as a hit."""
    translator = _translator(SilentEngine(), guards=guards)
    request = TranslationRequest(text="رەھمەت.", source_lang="ug", target_lang="zh")
    first, second = translator.translate(request), translator.translate(request)
    assert first.text == second.text == ""
    assert not second.cached and second.cached_segments == 0
    assert translator.model_calls >= 2
    assert translator.cache is not None and translator.cache.stats().size == 0


def test_a_blank_value_is_neither_stored_nor_served_by_any_layer(tmp_path):
    cache = PhraseCache(size=10, directory=str(tmp_path))
    cache.set("k", "")
    cache.set("k2", " \n")
    assert cache.get("k") is None and cache.stats().size == 0
    cache._disk.set("old", "")  # an empty answer an earlier version stored on disk
    assert cache.get("old") is None and cache.get_many(["old", "k"]) == [None, None]


# -- nothing to translate -------------------------------------------------------------------------
@pytest.mark.parametrize("text", NOTHING)
def test_a_text_with_nothing_to_translate_comes_back_as_it_is_without_the_model(text):
    translator = _translator(InstantEngine())
    for source in ("auto", "zh"):
        request = TranslationRequest(text=text, source_lang=source, target_lang="en")
        [result] = translator.translate_texts([request]).result()  # the page's way
        assert result.text == text and result.notice == NOTHING_TO_TRANSLATE
    assert translator.model_calls == 0


def test_deepl_echoes_a_number_as_deepl_does():
    with running_app(InstantEngine()) as app, httpx.Client(base_url=app.url,
                                                           trust_env=False) as c:
        answer = c.post("/v2/translate", json={"text": ["12345"], "target_lang": "DE"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["translations"][0]["text"] == "12345"
        assert app.translator.model_calls == 0


# -- a long paste -------------------------------------------------------------------------------
PARAGRAPHS = [("谢谢你的帮助。这本书很有意思。", "Thank you for your help. This book is very interesting."),
              ("今天天气很好。我们明天见。", "The weather is nice today. See you tomorrow."),
              ("欢迎来到北京。", "Welcome to Beijing."),
              ("你叫什么名字？早上好。", "What is your name? Good morning.")]


@pytest.mark.parametrize("gap", ["\n\n", "\n"], ids=["blank-lines", "lines"])
def test_a_long_paste_keeps_its_paragraphs_across_parts(make_translator, gap):
    """80 paragraphs in, 80 out: in order, each its exact demo translation, the text cut into
    several parts (an empty paragraph appeared at a part boundary)."""
    rows = [PARAGRAPHS[i % len(PARAGRAPHS)] for i in range(80)]
    text = gap.join(source for source, _ in rows)
    translator = make_translator(max_input_chars=250)
    request = TranslationRequest(text=text, source_lang="zh", target_lang="en",
                                 options=translator.decoding(deterministic=True))
    operation = translator.translate_texts([request])
    assert operation.parts >= 4
    out = operation.result()[0].text
    paragraphs = out.split(gap)
    assert len(paragraphs) == 80, [p for p in paragraphs if not p.strip()][:3]
    assert paragraphs == [target for _, target in rows]


# -- the page ------------------------------------------------------------------------------------
def _words(locale: str) -> dict[str, str]:
    return MESSAGES["zh" if locale == "zh-CN" else "en"]


def _translate(page, text: str) -> None:
    page.locator("#input-box textarea").fill(text)
    page.locator("#translate-btn").click()


def _toasts(page) -> list[str]:
    return page.locator(".toast-body").all_inner_texts()


@pytest.mark.slow
@pytest.mark.browser
@needs_chromium
@pytest.mark.parametrize(("locale", "width", "height"), [("en-US", 1366, 768),
                                                          ("zh-CN", 390, 844)],
                         ids=["desktop-en", "phone-zh"])
def test_small_fixes_on_the_demo_page(browser, demo_url, locale, width, height):  # noqa: F811
    words = _words(locale)
    page = open_page(browser, demo_url, locale=locale, width=width, height=height,
                     mobile=width < 500)
    # Nothing to translate: the text itself, a quiet note, no error badge (source: detect).
    for text in NOTHING[:4]:
        _translate(page, text)
        page.wait_for_function(f"() => {OUTPUT} === {text!r}", timeout=60_000)
        page.wait_for_function(f"() => {PROGRESS}.includes({words['nothing_to_translate']!r})",
                               timeout=60_000)
    assert _toasts(page) == []
    # Swap translates the new source: zh → en, then en → zh (on a Chinese page the default
    # target is Chinese, switched to English for a Chinese text).
    _translate(page, "谢谢你的帮助。")
    page.wait_for_function(f"() => {OUTPUT} === 'Thank you for your help.'", timeout=60_000)
    page.locator("#swap-btn").click()
    page.wait_for_function("() => document.querySelector('#input-box textarea').value"
                           " === 'Thank you for your help.'", timeout=60_000)
    page.wait_for_function(f"() => {OUTPUT} === '谢谢你的帮助。'", timeout=60_000)
    # A 51,000-character paste stays whole; the counter and Translate say it is too long.
    long = ("谢谢你的帮助。" * 7300)[:50_999] + "a"  # 51,000 characters
    assert len(long) == 51_000
    box = page.locator("#input-box textarea")
    box.fill("")
    box.focus()
    page.keyboard.insert_text(long)  # as a paste arrives (fill() may skip maxlength)
    page.wait_for_function("() => document.querySelector('#char-count').innerText"
                           ".startsWith('51,000 / 50,000')", timeout=60_000)
    assert page.evaluate("() => document.querySelector('#input-box textarea').value.length"
                         ) == 51_000
    counter = page.locator("#char-count").inner_text()
    assert ("太长" if locale == "zh-CN" else "too long") in counter, counter
    page.locator("#translate-btn").click()
    page.locator(".toast-body").first.wait_for(timeout=60_000)
    refused = " ".join(_toasts(page))
    assert "51,000" in refused and ("太长" if locale == "zh-CN" else "too long") in refused
    assert page.evaluate(OUTPUT) == "谢谢你的帮助。"  # the last translation, untouched
    page.context.close()


@pytest.mark.parametrize("accept", ["en-US,en;q=0.9", "zh-CN,zh;q=0.9"])
def test_an_empty_answer_says_so_and_is_asked_for_again(accept):
    """ug → zh "رەھمەت." was not in the demo table: an empty answer labelled "From the phrase
    cache". The page says it is empty (in the page's language), twice: it was not kept."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    from hunyuan_webui.web.page.form import TextForm
    from hunyuan_webui.web.page.ui import TranslatorUI

    words = MESSAGES["zh" if accept.startswith("zh") else "en"]
    ui = TranslatorUI(_translator(SilentEngine()))
    form = TextForm(text="رەھمەت.", source="ug", target="zh", history=[])
    for _ in range(2):
        # On a thread of its own: Playwright's sync API may keep an event loop running in this one.
        with ThreadPoolExecutor(1) as pool:
            out = pool.submit(asyncio.run, last_changes(ui.translate(form, Visitor(accept)))
                              ).result()
        assert out["output"] == "" and out["progress"] == words["empty_answer"]
        assert out["history"] == []
    assert ui.translator.model_calls == 2


@pytest.mark.slow
@pytest.mark.browser
@needs_chromium
def test_every_example_chip_gives_its_exact_demo_translation(browser, demo_url):  # noqa: F811
    table = _demo_table()
    page = open_page(browser, demo_url, locale="en-US", width=1366, height=768)
    for text, source, target in EXAMPLES:
        expected = table[(source, target, text)]
        started = time.monotonic()
        page.get_by_text(_example_label(text, source, target), exact=True).first.click()
        page.wait_for_function(f"() => {OUTPUT} === {expected!r}", timeout=60_000)
        assert time.monotonic() - started < 30
    page.context.close()

