"""Sentence highlight and the readings, at the service, the page's HTML and in Chromium.

Pointing at (desktop) or tapping (phone) a sentence of the sentence view marks its counterpart on
the other side, from the service's alignment (which part of the translation is which source
segment's), shown only when every segment's translation is known. The pinyin / romanization
toggle acts at once on the texts in the boxes, the output's and now the source's, and unticking
removes them. Demo model, exact demo outputs (assets/demo_phrases.tsv); desktop 1366x768 in
English, phone 390x844 in Chinese.
"""

from __future__ import annotations

import json
import re

import pytest
from apphelpers import CHROMIUM
from browserhelpers import OUTPUT, open_page

from hunyuan_webui.engine import GREEDY
from hunyuan_webui.service import TranslationRequest, TranslationResult
from hunyuan_webui.web.page.aligned import reading, sentence_view, text_key
from hunyuan_webui.web.page.text import say

ZH_TWO, EN_TWO = "今天天气很好。我们明天见。", "The weather is nice today. See you tomorrow."
# The space between the two English sentences is layout, but not kept after a full-width stop.
EN_PAIR, ZH_PAIR = "Thank you. Please sit down.", "谢谢。请坐。"
ZH_TWO_PINYIN = "jīn tiān tiān qì hěn hǎo。 wǒ men míng tiān jiàn。"
ZH_PAIR_PINYIN = "xiè xiè。 qǐng zuò。"
MARKED = re.compile(r"(^|\s)marked(\s|$)")


# -- the service's alignment -----------------------------------------------------------------------
def test_a_translation_knows_which_of_its_sentences_is_whose(translator):
    """Each source sentence's place beside its own translation's, in characters."""
    result = translator.translate(TranslationRequest(ZH_TWO, "en", "zh", options=GREEDY))
    assert result.text == EN_TWO
    assert result.alignment == ((0, 7, 0, 26), (7, 13, 27, 44))
    pairs = [(ZH_TWO[s0:s1], EN_TWO[t0:t1]) for s0, s1, t0, t1 in result.alignment]
    assert pairs == [("今天天气很好。", "The weather is nice today."),
                     ("我们明天见。", "See you tomorrow.")]
    # Returned unchanged (already in the target language): nothing to align.
    same = translator.translate(TranslationRequest(ZH_TWO, "zh", "zh", options=GREEDY))
    assert same.text == ZH_TWO and same.alignment == ()


def test_into_chinese_no_space_follows_a_full_stop(translator):
    """"Thank you. Please sit down." came back "谢谢。 请坐。": the space between the English
    sentences, kept as layout, is a typo after a Chinese full stop. A line break stays, and so
    does the space into French, and after a translation that does not end in a full stop."""
    from hunyuan_webui.languages import closes_up

    def into(text: str, target: str) -> TranslationResult:
        return translator.translate(TranslationRequest(text, source_lang="en",
                                                       target_lang=target, options=GREEDY))

    zh = into(EN_PAIR, "zh")
    assert zh.text == ZH_PAIR
    assert [(EN_PAIR[s0:s1], ZH_PAIR[t0:t1]) for s0, s1, t0, t1 in zh.alignment] == [
        ("Thank you.", "谢谢。"), ("Please sit down.", "请坐。")]
    lines = "Thank you.\nPlease sit down."
    assert into(lines, "zh").text == "谢谢。\n请坐。"
    french = into("Good morning. Please sit down.", "fr").text
    assert french == "Bonjour. Asseyez-vous, s'il vous plaît."
    assert closes_up("ja", "ありがとうございます。", " ") and closes_up("zh-Hant", "謝謝！", "  ")
    assert not closes_up("zh", "你好", " ")  # a heading-like line: the space is all there is
    assert not closes_up("th", "ขอบคุณ", " ") and not closes_up("zh", "谢谢。", " \n")


# -- the page's HTML ---------------------------------------------------------------------------
def test_the_sentence_view_marks_only_what_the_alignment_knows():
    view = sentence_view(ZH_TWO, EN_TWO, ((0, 7, 0, 26), (7, 13, 27, 44)), "zh", "en", "zh")
    assert '<span class="hymt-seg" data-seg="1" tabindex="0">我们明天见。</span>' in view
    assert ('<span class="hymt-seg" data-seg="0" tabindex="0">The weather is nice today.</span> '
            '<span class="hymt-seg" data-seg="1" tabindex="0">See you tomorrow.</span>') in view
    assert say("zh", "sentences_title") in view
    assert f'data-hymt-src="{text_key(ZH_TWO)}"' in view
    # One sentence, an alignment that does not fit the texts, or none: no view at all.
    assert sentence_view("你好。", "Hello.", ((0, 3, 0, 6),), "zh", "en") == ""
    assert sentence_view(ZH_TWO, EN_TWO, ((0, 7, 0, 26), (7, 13, 27, 99)), "zh", "en") == ""
    assert sentence_view(ZH_TWO, EN_TWO, ((0, 7, 27, 44), (7, 13, 0, 26)), "zh", "en") == ""
    assert sentence_view(ZH_TWO, EN_TWO, (), "zh", "en") == ""
    # Markup typed by a visitor stays text; a right-to-left translation runs right to left.
    view = sentence_view("<b>Hi.</b> Bye.", "مرحبا. وداعا.", ((0, 10, 0, 6), (11, 15, 7, 13)),
                         "en", "ar")
    assert "&lt;b&gt;Hi.&lt;/b&gt;" in view and 'lang="ar" dir="rtl"' in view


def test_a_reading_is_shown_only_where_it_reads_something():
    assert ZH_PAIR_PINYIN in reading(ZH_PAIR, "zh", True, "out")
    assert f'data-hymt-out="{text_key(ZH_PAIR)}"' in reading(ZH_PAIR, "zh", True, "out")
    assert reading(ZH_PAIR, "zh", False) == ""
    assert reading(EN_PAIR, "zh", True) == ""  # not Chinese after all: nothing to read
    assert reading(EN_PAIR, "en", True) == ""
    assert text_key("") == "811c9dc5" and text_key("a") == "e40c292c"  # FNV-1a, as the script
    assert text_key("👍") != text_key("👎")


# -- in Chromium -------------------------------------------------------------------------------
def _translate(page, text: str, expected: str) -> None:
    page.locator("#input-box textarea").fill(text)
    page.locator("#translate-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === {json.dumps(expected)}", timeout=60_000)


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_desktop_pointing_at_a_sentence_marks_its_counterpart_and_pinyin_reads_the_source(
        browser, demo_url):  # noqa: F811
    """1366x768, English page: pointing at the source's second sentence marks the translation's
    second; the toggle shows the Chinese source's pinyin at once (no new translation) and
    unticking removes it; an edit hides the view of the text that has gone."""
    from playwright.sync_api import expect

    page = open_page(browser, f"{demo_url}/?sl=zh&tl=en", "en-US", 1366, 768)
    _translate(page, ZH_TWO, EN_TWO)
    view = page.locator("#sentence-view .hymt-sentences")
    expect(view).to_be_visible(timeout=60_000)
    source = [page.locator(f"#align-source [data-seg='{i}']") for i in (0, 1)]
    target = [page.locator(f"#align-target [data-seg='{i}']") for i in (0, 1)]
    assert [s.inner_text() for s in source] == ["今天天气很好。", "我们明天见。"]
    assert [t.inner_text() for t in target] == ["The weather is nice today.", "See you tomorrow."]
    source[1].hover()
    expect(target[1]).to_have_class(MARKED)
    expect(source[1]).to_have_class(MARKED)
    expect(target[0]).not_to_have_class(MARKED)
    target[0].hover()  # and the other way
    expect(source[0]).to_have_class(MARKED)
    expect(target[1]).not_to_have_class(MARKED)
    assert page.evaluate(OUTPUT) == EN_TWO  # the box itself stays plain text
    assert page.locator("#source-romanized .hymt-reading").count() == 0  # toggle off

    # The keyboard reaches the sentences too: Tab marks as pointing does, Enter pins.
    page.mouse.move(0, 0)
    page.locator("#input-box textarea").focus()
    for _ in range(40):  # past the buttons and the output box, to the sentence view
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.dataset?.seg") is not None:
            break
    assert page.evaluate("document.activeElement.closest('#align-source') !== null")
    expect(target[0]).to_have_class(MARKED)
    page.keyboard.press("Tab")
    expect(target[1]).to_have_class(MARKED)
    expect(target[0]).not_to_have_class(MARKED)
    page.keyboard.press("Enter")  # pinned: it stays marked when the focus leaves
    page.locator("#input-box textarea").focus()
    expect(target[1]).to_have_class(MARKED)
    expect(source[1]).to_have_class(MARKED)

    last_run = page.locator("#progress").inner_text()
    page.locator("#romanize input[type=checkbox]").check()
    expect(page.locator("#source-romanized .hymt-reading")).to_have_text(ZH_TWO_PINYIN)
    expect(page.locator("#source-romanized")).to_be_visible()
    assert page.locator("#romanized .hymt-reading").count() == 0  # English has no reading
    assert page.locator("#progress").inner_text() == last_run  # no new translation
    page.locator("#romanize input[type=checkbox]").uncheck()
    expect(page.locator("#source-romanized .hymt-reading")).to_have_count(0)
    expect(page.locator("#source-romanized")).to_be_hidden()

    page.locator("#input-box textarea").press("End")
    page.locator("#input-box textarea").press_sequentially("好")
    expect(view).to_be_hidden()  # the view of a text that is no longer in the box
    page.context.close()


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_phone_tapping_a_sentence_marks_its_counterpart_and_the_toggle_acts_at_once(
        browser, demo_url):  # noqa: F811
    """390x844, Chinese page: tapping the source's second sentence marks the translation's
    second; ticking pinyin reads the current output at once, unticking removes it."""
    from playwright.sync_api import expect

    page = open_page(browser, f"{demo_url}/?sl=en&tl=zh", "zh-CN", 390, 844, mobile=True)
    _translate(page, EN_PAIR, ZH_PAIR)
    view = page.locator("#sentence-view .hymt-sentences")
    expect(view).to_be_visible(timeout=60_000)
    expect(page.locator("#sentence-view .hymt-sentences-title")).to_have_text(
        say("zh", "sentences_title"))
    source = [page.locator(f"#align-source [data-seg='{i}']") for i in (0, 1)]
    target = [page.locator(f"#align-target [data-seg='{i}']") for i in (0, 1)]
    assert [t.inner_text() for t in target] == ["谢谢。", "请坐。"]
    source[1].tap()
    expect(target[1]).to_have_class(MARKED)
    expect(target[0]).not_to_have_class(MARKED)
    target[0].tap()  # and the other way
    expect(source[0]).to_have_class(MARKED)
    expect(source[1]).not_to_have_class(MARKED)
    target[0].tap()  # a second tap unmarks (the tap's focus does not hold the mark)
    expect(source[0]).not_to_have_class(MARKED)

    last_run = page.locator("#progress").inner_text()
    box = page.locator("#romanize input[type=checkbox]")
    box.tap()
    expect(page.locator("#romanized .hymt-reading")).to_have_text(ZH_PAIR_PINYIN)
    assert page.locator("#source-romanized .hymt-reading").count() == 0  # English: none
    assert page.locator("#progress").inner_text() == last_run  # no new translation
    assert page.evaluate(OUTPUT) == ZH_PAIR
    box.tap()
    expect(page.locator("#romanized .hymt-reading")).to_have_count(0)
    expect(page.locator("#romanized")).to_be_hidden()
    page.context.close()
