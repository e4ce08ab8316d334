"""A Chinese page that is Chinese, and a page a thumb can use.

A zh-CN visitor of ``--demo`` read English all over the page: the banner, every language name
("Chinese · 中文 · 简体中文"), the status line ("demo-model · cpu · fp32"), the modes' and the
glossary's notices, the detection error, "Top-k / Top-p". Here the whole page, its panels opened,
on a desktop and both phones, is scanned for Latin-alphabet words outside the text boxes and the
demo's commands. The pickers show each language by its own name first, and still find it by its
English name. On phones every control is a 44x44 px touch target; the Advanced panel says in plain
words what each sampling setting does. (axe-core on every layout: tests/browser/test_browser_class.py.)
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
import regex
from apphelpers import CHROMIUM
from browserhelpers import OUTPUT, Visitor, last_changes, open_page

from hunyuan_webui import languages


def browser_test(test):
    for mark in (pytest.mark.slow, pytest.mark.browser,
                 pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")):
        test = mark(test)
    return test


# Latin-alphabet words a Chinese page may show: languages' own names (the pickers and the example
# chips name each language by its own name), key caps, file types and data formats as they are
# written, and product names.
NATIVE = {w for lang in languages.LANGUAGES for w in regex.findall(r"\p{Latin}+", lang.autonym)}
ALLOWED = NATIVE | {"Ctrl", "Cmd", "Enter", "CSV", "JSON", "XML", "YAML", "TOML", "INI", "TSV",
                    "UTF", "Chimera", "Gradio", "API"}

# Every text a visitor (or a screen reader) meets, outside the text boxes, the demo's commands
# (code) and the visitor's own texts in the history: text nodes and the labels in attributes.
PAGE_WORDS = """() => {
  const shown = (e) => e && e.checkVisibility({checkVisibilityCSS: true})
    && !e.closest('[aria-hidden=true], code, pre, script, style, #romanized, #history .body-cell');
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue.trim();
    if (text && shown(node.parentElement)) {
      out.push({text, where: node.parentElement.closest('[id]')?.id || node.parentElement.tagName});
    }
  }
  for (const e of document.body.querySelectorAll('[aria-label], [title], [placeholder], [alt]')) {
    if (!shown(e)) continue;
    for (const name of ['aria-label', 'title', 'placeholder', 'alt']) {
      const text = e.getAttribute(name);
      if (text) out.push({text, where: `${e.closest('[id]')?.id || e.tagName} @${name}`});
    }
  }
  return out;
}"""


# What Gradio announces to screen readers (a status region, emptied after a second): it read out
# "common.complete", a key its Chinese table lacks, after every event.
RECORD_ANNOUNCED = """() => { window.__said = []; new MutationObserver(() => {
  for (const e of document.querySelectorAll('[role=status][aria-live]')) {
    const text = e.textContent.trim();
    if (text) window.__said.push({text, where: 'announced'});
  }
}).observe(document.body, {subtree: true, childList: true, characterData: true}); }"""


def english_words(page, samples: set[str]) -> list[str]:
    """Latin-alphabet words on the page (or announced so far) that are none of :data:`ALLOWED`
    (nor the example chips' sample texts, which are texts to translate), with where they are."""
    found = []
    for item in page.evaluate(PAGE_WORDS) + page.evaluate("window.__said || []"):
        text = regex.sub(r"\.[a-z]+\b|https?://\S+", " ", item["text"])  # .docx, a link
        words = [w for w in regex.findall(r"\p{Latin}{2,}", text)
                 if w not in ALLOWED and w not in samples]
        if words:
            found.append(f"{item['where']}: {' '.join(words)}  «{item['text'][:80]}»")
    return list(dict.fromkeys(found))


def open_panels(page) -> None:
    """The banner's details, Advanced, Modes & glossary and History: what a visitor can open."""
    for panel in ("demo-banner", "advanced-panel", "modes-panel", "history-panel"):
        page.locator(f"#{panel} .label-wrap").first.click()
    page.wait_for_function("() => ['#history th', '#glossary th', '#opt-temperature input', "
                           "'#banner'].every((s) => document.querySelector(s))", timeout=60_000)
    page.wait_for_timeout(300)  # the tables' headers in the page's language (a load event)


@browser_test
@pytest.mark.parametrize("size", [(1366, 768), (390, 844), (360, 640)],
                         ids=["desktop", "390x844", "360x640"])
def test_a_chinese_page_shows_no_english_word(browser, demo_url, size):  # noqa: F811
    """zh-CN, ``--demo``: after a translation, with every panel open, then on the Document tab,
    no Latin-alphabet English word outside the text boxes and the demo's commands."""
    from hunyuan_webui.web.page.layout import EXAMPLES

    samples = {w for row in EXAMPLES for w in regex.findall(r"\p{Latin}+", row[0])}
    width, height = size
    page = open_page(browser, demo_url, locale="zh-CN", width=width, height=height,
                     mobile=width < 600)
    page.evaluate(RECORD_ANNOUNCED)
    page.locator("#input-box textarea").fill("Thank you for your help.")
    page.locator("#translate-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === '谢谢你的帮助。'", timeout=60_000)
    page.wait_for_function("() => document.querySelector('#progress').innerText.includes('上次')",
                           timeout=60_000)
    open_panels(page)
    found = english_words(page, samples)
    page.get_by_role("tab", name="文档").click()
    page.locator("#doc-upload").wait_for(timeout=60_000)
    found += english_words(page, samples)
    page.context.close()
    assert found == [], "English on the Chinese page:\n" + "\n".join(found)


OPTIONS = "() => [...document.querySelectorAll('[data-testid=dropdown-option]')].map(o => " \
          "o.innerText.replace(/^✓/, '').trim())"


@browser_test
@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_pickers_show_native_names_and_find_english_ones(browser, demo_url, locale):  # noqa: F811
    """Each language by its own name first ("Deutsch · 德语"; the Chinese page shows no English
    name), and typing its English name ("German") or its Chinese one (德语) still finds it."""
    zh = locale == "zh-CN"
    page = open_page(browser, demo_url, locale=locale, width=1366, height=768)
    box = page.locator("#target-lang input")
    box.click()
    shown = page.evaluate(OPTIONS)
    assert len(shown) == len(languages.LANGUAGES), shown
    for lang, label in zip(languages.LANGUAGES, shown, strict=True):
        assert label.split(" · ")[0] == lang.autonym, (lang.code, label)
        if zh and lang.english not in lang.autonym:
            assert lang.english not in label, label
    for typed in ("German", "德语", "deutsch"):
        box.fill("")
        box.press_sequentially(typed)
        # Gradio filters on a keydown; Playwright types 德语 without one (an IME sends them).
        box.press("End")
        page.wait_for_function(f"() => ({OPTIONS})().length === 1", timeout=60_000)
        assert page.evaluate(OPTIONS) == ["Deutsch · 德语" if zh else "Deutsch · German"], typed
    box.press("Enter")
    page.wait_for_function("() => document.querySelector('#target-lang input').value"
                           ".startsWith('Deutsch')", timeout=60_000)
    source = page.locator("#source-lang input")
    source.click()
    source.fill("")
    source.press_sequentially("英语")
    source.press("End")
    page.wait_for_function(f"() => ({OPTIONS})().length === 1", timeout=60_000)
    source.press("Enter")
    page.wait_for_function("() => document.querySelector('#source-lang input').value"
                           ".startsWith('English')", timeout=60_000)
    # The values are still the codes the listeners and the API read: English into German.
    page.locator("#input-box textarea").fill("Good morning.")
    page.locator("#translate-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === 'Guten Morgen.'", timeout=60_000)
    page.context.close()

# Every control a visitor can touch, with the box a touch lands on: a check box's or a radio's
# label (tapping it ticks the box), else the element itself.
SMALL_TARGETS = """() => {
  const controls = 'button, a[href], input:not([type=hidden]), select, textarea, summary, '
    + '[role=button], [role=tab], [role=checkbox], [role=radio], [role=switch], [role=combobox], '
    + '[role=slider], [role=option], [role=gridcell], [role=columnheader], .label-wrap';
  const out = [];
  for (const e of document.querySelectorAll(controls)) {
    if (!e.checkVisibility({checkVisibilityCSS: true}) || e.closest('[aria-hidden=true]')) continue;
    if (e.disabled && e.matches('input, textarea')) continue;
    const target = e.matches('input[type=checkbox], input[type=radio]') ? e.closest('label') || e : e;
    const r = target.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.width < 44 - 0.5 || r.height < 44 - 0.5) {
      const name = (e.getAttribute('aria-label') || e.innerText || e.value || '').trim().slice(0, 30);
      out.push(`${e.closest('[id]')?.id || ''} ${e.tagName.toLowerCase()} "${name}" `
               + `${Math.round(r.width)}x${Math.round(r.height)}`);
    }
  }
  return out;
}"""


@browser_test
@pytest.mark.parametrize(("size", "locale"), [((390, 844), "en-US"), ((360, 640), "zh-CN")],
                         ids=["390x844-en", "360x640-zh"])
def test_on_a_phone_every_control_is_a_44px_touch_target(browser, demo_url, size,  # noqa: F811
                                                        locale):
    """32 of 34 controls were under 44 px on a phone. With the banner, Advanced, Modes & glossary
    and History open, every control a thumb can reach is at least 44x44 CSS px."""
    width, height = size
    page = open_page(browser, demo_url, locale=locale, width=width, height=height, mobile=True)
    small = page.evaluate(SMALL_TARGETS)
    open_panels(page)
    small += page.evaluate(SMALL_TARGETS)
    page.context.close()
    assert small == [], "Under 44x44 px:\n" + "\n".join(dict.fromkeys(small))



# -- without a browser ----------------------------------------------------------------------------
LATIN_WORD = regex.compile(r"\p{Latin}{2,}")


def test_each_language_is_labelled_by_its_own_name_first():
    from hunyuan_webui.web.page.text import LABELS, picker_label, picker_search

    assert picker_label("zh", "de") == "Deutsch · 德语"
    assert picker_label("en", "de") == "Deutsch · German"
    assert picker_label("zh", "zh") == "简体中文" and picker_label("en", "en") == "English"
    assert picker_label("zh", "en") == "English · 英语"
    for lang in languages.LANGUAGES:
        for ui in ("en", "zh"):
            assert LABELS[ui][f"lang_{lang.code}"].startswith(lang.autonym)
    german = next(entry for entry in picker_search() if "Deutsch · 德语" in entry["labels"])
    assert {"German", "德语", "de"} <= set(german["keys"].split("\n"))


def test_the_advanced_panel_says_what_each_setting_does_in_both_languages():
    """Advanced was five sampling sliders without a plain word."""
    from hunyuan_webui.web.page.text import LABELS

    for key in ("temperature", "top_p", "top_k", "repetition_penalty", "max_new_tokens"):
        en, zh = LABELS["en"][f"{key}_info"], LABELS["zh"][f"{key}_info"]
        assert len(en.split()) >= 8 and len(zh) >= 12, key
        assert not LATIN_WORD.search(zh), zh
    assert "translation" in LABELS["en"]["temperature_info"]


def test_the_status_line_is_in_plain_words(translator):
    """"demo-model · cpu · fp32" on the Chinese page; now 演示模型 · 处理器 · 32 位浮点."""

    from hunyuan_webui.web.page.ui import TranslatorUI

    ui = TranslatorUI(translator)
    zh = ui.status(Visitor("zh-CN,zh;q=0.9"))[0]
    en = ui.status(Visitor("en-US"))[0]
    assert zh.startswith("**演示模型** · 处理器 · 32 位浮点 · 状态：就绪"), zh
    assert not LATIN_WORD.search(zh), zh
    assert en.startswith("**demo model** · CPU · 32-bit floats · state: ready"), en


def test_device_and_precision_words():
    from hunyuan_webui.web.page.wording import device_words, precision_words

    assert device_words("zh", "cuda:1") == "显卡 1" and device_words("en", "cuda:0") == "GPU 0"
    assert device_words("zh", "remote 10.0.0.2:8000") == "remote 10.0.0.2:8000"
    assert precision_words("zh", "Q4_K_M") == "4 位量化"
    assert precision_words("zh", "bf16") == "16 位脑浮点"
    assert precision_words("en", "int8") == "8-bit integers"


def test_the_notices_and_refusals_a_page_shows_read_in_chinese():
    """The modes' and the glossary's notices, and refusals such as "Could not detect the source
    language", are the service's English sentences: the Chinese page reads them in Chinese."""
    from hunyuan_webui import modes
    from hunyuan_webui.errors import InputError
    from hunyuan_webui.web.page.errors import visitor_text
    from hunyuan_webui.web.page.wording import in_page_language, sentences

    values = {"n": 3, "mode": "style", "format": "JSON", "why": "a key is missing"}
    for english, _ in sentences("zh"):
        text = english.format(**values)
        leftover = set(LATIN_WORD.findall(in_page_language("zh", text))) - {"JSON"}
        assert not leftover, (english, in_page_language("zh", text))
        assert in_page_language("en", text) == text
    both = " ".join([modes.GLOSSARY_NOTICE, modes.STYLE_NOTICE])
    assert in_page_language("zh", both) == (
        "此模型没有专门的术语表提示词：术语已按通用格式尽量交给它，请核对下面的报告。"
        "此模型没有风格提示词：风格没有被使用。")
    assert "“指定风格”" in in_page_language("zh", modes.GLOSSARY_UNUSED.format(mode="style"))
    refusal = InputError("Could not detect the source language; please choose it.")
    assert visitor_text(refusal, "zh") == "无法判断文本的语言，请选择源语言。"
    assert visitor_text(refusal, "en") == refusal.user_message


def test_a_mode_notice_on_the_chinese_page(translator):
    """The style mode on the demo model (it has no style prompt) says so, in Chinese."""

    from hunyuan_webui.web.page.form import TextForm
    from hunyuan_webui.web.page.ui import TranslatorUI

    ui = TranslatorUI(translator)
    form = TextForm(text="谢谢你的帮助。", source="zh", target="en", deterministic=True,
                    mode="style", style="正式", history=[])
    with ThreadPoolExecutor(1) as pool:
        out = pool.submit(asyncio.run, last_changes(
            ui.translate(form, Visitor("zh-CN,zh;q=0.9")))).result()
    assert "此模型没有风格提示词：风格没有被使用。" in out["progress"], out["progress"]
    assert not LATIN_WORD.search(out["progress"]), out["progress"]


def test_the_demo_banner_in_chinese_keeps_its_commands():
    from hunyuan_webui.web.page.wording import banner_markdown

    english = ("**Demo model.** This is the bundled demo model (demo, under 1M parameters): it "
               "knows only the 64 phrases in assets/demo_phrases.tsv. For a real model: "
               "`hf download x`, then `bash launch.sh`; or `bash launch.sh`.")
    zh = banner_markdown("zh", english)
    assert zh.startswith("**演示模型。**") and " 64 个短语" in zh
    assert zh.count("`bash launch.sh`") == 1 and "`hf download x`" in zh
    outside_code = regex.sub(r"`[^`]*`", "", zh)
    assert not LATIN_WORD.search(outside_code), outside_code
    assert banner_markdown("en", english) == english


@pytest.fixture(scope="module")
def slow_url(engine, demo_settings):
    """A page under the banner of the slow model path (the 1.8B through PyTorch because
    llama-cpp-python is missing), exactly as the launch choice writes it."""
    from dataclasses import replace

    from hunyuan_webui.app import Server, create_app
    from hunyuan_webui.choice import Choice, _slow_banner
    from hunyuan_webui.service import Translator
    from hunyuan_webui.urls import free_port

    settings = replace(demo_settings, port=free_port())
    found = Choice(replace(settings, model="tencent/Hy-MT2-1.8B", dtype="fp32"), "")
    banner = _slow_banner(found, "cached Q4_K_M", [])
    translator = Translator(engine, engine.spec, settings)
    server = Server(create_app(settings, translator, banner=banner), settings).start()
    yield server.url
    server.stop()


@browser_test
@pytest.mark.parametrize(("locale", "title", "details"), [
    ("en-US", "Slow model path", "install llama-cpp-python"),
    ("zh-CN", "较慢的运行方式", "本机没有合适的显卡")])
def test_the_slow_model_banner_is_not_titled_demo_model(browser, slow_url, locale, title,  # noqa: F811
                                                         details):
    """Every banner had the demo's title: a real 1.8B on the slow path read "Demo model: a few
    phrases" (演示模型：只会少量短语)."""
    page = open_page(browser, slow_url, locale=locale)
    banner = page.locator("#demo-banner")
    shown = banner.inner_text()
    assert title in shown and "Demo model" not in shown and "演示模型" not in shown, shown
    banner.get_by_text(title).first.click()
    page.get_by_text(details).first.wait_for(timeout=60_000)
    page.context.close()
