"""The page in a real headless Chromium (Debian's ``chromium``), driven by Playwright.

A visitor picks a pair, translates a demo phrase and watches the output fill in; the UI follows the
browser's language (Chinese here); markup typed by a visitor stays text; right-to-left targets are
rendered right-to-left; a document goes up and its translation comes down under the page's
Content-Security-Policy, which blocks nothing the page needs. Screenshots land in ``assets/`` for
the README.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from apphelpers import free_port
from browserhelpers import CHROMIUM, CSP_VIOLATIONS, pick
from playwright.sync_api import expect

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.service import Translator

CACHE_SIZE = 0  # the page at url (tests/browser/conftest.py) has no phrase cache
# Records every value the page writes into the output box: a sampled recording (one value per
# animation frame) missed the partial texts of a fast answer in headless Chromium.
RECORD_OUTPUT = """() => {
  window.__seen = [];
  const value = Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value');
  Object.defineProperty(HTMLTextAreaElement.prototype, 'value', {
    configurable: true,
    get() { return value.get.call(this); },
    set(v) {
      if (this.closest('#output-box')) window.__seen.push(v);
      value.set.call(this, v);
    },
  });
}"""

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]


def open_page(browser, url: str, locale: str):
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale=locale)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#translate-btn")
    return page


def test_translate_a_phrase_and_watch_it_stream(browser, url):
    page = open_page(browser, url, "en-US")
    pick(page, "source-lang", "简体中文 · Chinese")
    pick(page, "target-lang", "English")
    page.locator("#input-box textarea").fill("这本书很有意思。")
    assert page.locator("#char-count").inner_text().startswith("8 / ")
    page.evaluate(RECORD_OUTPUT)
    page.locator("#translate-btn").click()
    page.wait_for_function("() => document.querySelector('#output-box textarea').value"
                           " === 'This book is very interesting.'", timeout=60_000)
    seen = list(dict.fromkeys(v for v in page.evaluate("window.__seen") if v))
    # It filled in: a partial text was shown before the whole (redrawn at most every 50 ms, and
    # the demo model writes this sentence in less: the first words, then the rest).
    assert len(seen) >= 2, seen
    assert all(b.startswith(a) for a, b in zip(seen, seen[1:]))
    # The detection, status and timings come with the run's last update, after the whole text.
    expect(page.locator("#status-line")).to_contain_text("ready")
    expect(page.locator("#progress")).to_contain_text("Last translation")


def test_ctrl_enter_translates_and_detection_is_shown(browser, url):
    page = open_page(browser, url, "en-US")
    page.locator("#input-box textarea").fill("谢谢你的帮助。")
    page.locator("#input-box textarea").press("Control+Enter")
    page.wait_for_function("() => document.querySelector('#output-box textarea').value"
                           " === 'Thank you for your help.'", timeout=60_000)
    expect(page.locator("#detected-lang")).to_contain_text("Chinese")  # with the last update


def test_the_page_follows_the_browser_language(browser, url):
    page = open_page(browser, url, "zh-CN")
    assert page.locator("#translate-btn").inner_text() == "翻译"
    assert "混元翻译" in page.content()
    pick(page, "source-lang", "English · 英语")
    pick(page, "target-lang", "简体中文")
    page.locator("#input-box textarea").fill("Thank you for your help.")
    page.locator("#translate-btn").click()
    page.wait_for_function("() => document.querySelector('#output-box textarea').value"
                           " === '谢谢你的帮助。'", timeout=60_000)


def test_markup_stays_text_and_rtl_targets_render_right_to_left(browser, url):
    page = open_page(browser, url, "en-US")
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pick(page, "target-lang", "العربية · Arabic")
    markup = "<img src=x onerror=alert(1)><script>window.__pwned=1</script> Thank you."
    page.locator("#input-box textarea").fill(markup)
    pick(page, "source-lang", "English")
    page.locator("#translate-btn").click()
    page.wait_for_function("() => document.querySelector('#output-box textarea').value.length > 0",
                           timeout=60_000)
    page.get_by_text("History (kept in this browser").click()
    page.wait_for_timeout(500)
    assert dialogs == []
    assert page.evaluate("window.__pwned") is None
    assert page.locator("#input-box textarea").input_value() == markup
    box = page.locator("#output-box textarea")
    assert box.get_attribute("dir") == "rtl" or "right" in (box.get_attribute("style") or "")


def test_the_same_sentence_twice_comes_from_the_cache_with_the_page_defaults(browser, engine,
                                                                            demo_settings):
    """The page's defaults (the model card's sampling) used to bypass the phrase cache: 30
    students translating the class example ran the model 30 times."""
    import httpx

    port = free_port()
    settings = replace(demo_settings, port=port, cache_size=100)
    translator = Translator(engine, engine.spec, settings, cache=PhraseCache(size=100))
    server = Server(create_app(settings, translator), settings).start()
    try:
        def hits() -> int:
            return httpx.get(server.url + "/v1/cache", trust_env=False).json()["hits"]

        page = open_page(browser, server.url, "en-US")
        pick(page, "source-lang", "简体中文 · Chinese")
        page.locator("#input-box textarea").fill("我们明天见。")
        page.locator("#translate-btn").click()
        page.wait_for_function("() => document.querySelector('#output-box textarea').value"
                               " === 'See you tomorrow.'", timeout=60_000)
        page.wait_for_function("() => document.querySelector('#progress').innerText"
                               ".includes('Last translation')", timeout=60_000)
        assert "phrase cache" not in page.locator("#progress").inner_text()
        before = hits()
        page.locator("#translate-btn").click()
        page.wait_for_function("() => document.querySelector('#progress').innerText"
                               ".includes('From the phrase cache')", timeout=60_000)
        assert page.locator("#output-box textarea").input_value() == "See you tomorrow."
        assert hits() == before + 1
        page.locator("#retranslate-btn").click()  # a fresh answer on request
        # Leaving the cached state is not the end of the fresh run: the output streams in and the
        # report comes back only when it has finished.
        page.wait_for_function("() => { const t = document.querySelector('#progress').innerText;"
                               " return t.includes('Last translation')"
                               " && !t.includes('From the phrase cache'); }", timeout=60_000)
        assert page.locator("#output-box textarea").input_value() == "See you tomorrow."
        assert hits() == before + 1
    finally:
        server.stop()


def test_a_document_round_trip_under_the_content_security_policy(browser, url, tmp_path):
    source = tmp_path / "notes.md"
    source.write_text("# 你好\n\n谢谢你的帮助。\n", encoding="utf-8")
    context = browser.new_context(viewport={"width": 1280, "height": 1000}, locale="en-US")
    context.add_init_script(CSP_VIOLATIONS)
    page = context.new_page()
    response = page.goto(url)
    assert "frame-ancestors 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector("#translate-btn")
    page.get_by_role("tab", name="Document").click()
    # Its Stop looks like the text tab's: not red while there is nothing to stop.
    page.locator("#doc-stop-btn").wait_for()
    assert "secondary" in page.locator("#doc-stop-btn").get_attribute("class").split()
    page.locator("#doc-upload input[type=file]").set_input_files(str(source))
    page.locator("#doc-upload").get_by_text("notes.md").wait_for()
    page.locator("#doc-translate-btn").click()
    page.wait_for_function("() => document.querySelector('#doc-status').innerText"
                           ".includes('Done')", timeout=60_000)
    link = page.locator("#doc-download a").first.get_attribute("href")
    assert page.request.get(link).text() == "# Hello\n\nThank you for your help.\n"
    # Another browser (no session cookie of this one) cannot fetch it.
    assert browser.new_context().request.get(link).status == 404
    assert page.evaluate("window.__csp") == []
    context.close()
