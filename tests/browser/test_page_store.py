"""What the page keeps in the visitor's browser: the phrasebook, the history, the
glossary; and what it says of a glossary and of alternatives after a translation.

A starred translation is in the phrasebook after a reload, and the one export holds it and the
history; the same translation twice is one history row, its pair by name ("English → Chinese",
"中文 → 英语"), not by codes; three identical alternatives say there was one distinct
translation (they showed nothing); the glossary report lists only the terms that occur in the
text; the glossary is still there after a reload. In headless Chromium with the demo model, on a
desktop (1366x768) and a phone (390x844), in English and Chinese; and at the listeners.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from apphelpers import CHROMIUM
from browserhelpers import OUTPUT, Visitor, open_page

from hunyuan_webui.service import TranslationResult
from hunyuan_webui.web.page.report import extras_markdown, history_rows

# What this file tests is imported where it is used, so that each test fails on its own
# before the change it tests (the phrasebook's module was new).
EXPORT_COLUMNS = ["list", "source_lang", "target_lang", "source", "translation", "saved"]

TEXT_OF = "(selector) => document.querySelector(selector)?.innerText ?? ''"
TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}")
GLOSSARY_CSV = "Thank you,谢谢\nfriend,朋友\n"
DESKTOP, PHONE = (1366, 768), (390, 844)
NO_CHROMIUM = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")


def _result(text: str, **fields) -> TranslationResult:
    return TranslationResult(text=text, source_lang="en", target_lang="zh", model="demo",
                             cached=False, **fields)


# -- at the listeners --------------------------------------------------------------------------
@pytest.mark.parametrize(("accept", "pair"), [("en-US,en;q=0.9", "English → Chinese"),
                                              ("zh-CN,zh;q=0.9", "英语 → 中文")])
def test_the_same_translation_twice_is_one_history_row_named_by_language(translator, accept,
                                                                         pair):
    """The history kept every repeat, and showed its pair as codes ("en → zh")."""
    from hunyuan_webui.web.page.form import TextForm
    from hunyuan_webui.web.page.ui import TranslatorUI

    ui, visitor = TranslatorUI(translator), Visitor(accept)
    history = [["Good morning.", "早上好。", "en → zh", "en", "zh"]]

    async def twice() -> dict:
        nonlocal history
        out: dict = {}
        for _ in range(2):
            form = TextForm(text="Thank you.", source="en", target="zh", deterministic=True,
                            history=history)
            async for update in ui.translate(form, visitor):
                out.update(update)
            history = out["history"]
        return out

    with ThreadPoolExecutor(1) as pool:  # Playwright's sync API may hold this thread's loop
        out = pool.submit(asyncio.run, twice()).result()
    assert [row[:2] for row in out["history"]] == [["Thank you.", "谢谢。"],
                                                   ["Good morning.", "早上好。"]]
    assert out["table"]["data"] == [["Thank you.", "谢谢。", pair],
                                    ["Good morning.", "早上好。", pair]]


def test_identical_alternatives_collapse_into_one_said_to_be_the_only_one():
    """The service keeps distinct variants only: three identical answers came back as one, and
    the page, which listed two or more, showed nothing."""
    assert extras_markdown(_result("谢谢。", alternatives=("谢谢。",)), lang="en") == (
        "**Alternatives** — only one distinct translation: 谢谢。")
    assert extras_markdown(_result("谢谢。", alternatives=("谢谢。",) * 3), lang="zh") == (
        "**其他译法** — 只有一种不同的译法：谢谢。")
    two = extras_markdown(_result("谢谢。", alternatives=("谢谢。", "多谢。", "谢谢。")))
    assert two == "**Alternatives**\n1. 谢谢。\n2. 多谢。"


def test_the_glossary_report_names_only_the_terms_in_the_text():
    """It listed every term of the glossary, those absent from the text as "missing"."""
    from hunyuan_webui.web.page.report import glossary_markdown

    glossary = (("Thank you", "谢谢"), ("friend", "朋友"), ("HELP", "帮助"))
    line = glossary_markdown("Thank you for your help.", "谢谢你的帮忙。", glossary, "en")
    assert line == ("**Glossary** — 2 of its 3 terms occur in the text; kept in the translation: "
                    "Thank you → 谢谢; not in the translation: HELP → 帮助")
    assert glossary_markdown("Good morning.", "早上好。", glossary, "zh") == (
        "**术语表** — 3 个术语都没有出现在原文中。")
    report = extras_markdown(_result("谢谢。", glossary_found=("谢谢",),
                                     glossary_missing=("朋友",)),
                             source="Thank you.", glossary=glossary[:2])
    assert "朋友" not in report and "Thank you → 谢谢" in report


def test_the_export_holds_the_phrasebook_and_the_history_in_one_csv():
    from hunyuan_webui.web.page import store

    history = [["Thank you.", "谢谢。", "en → zh", "en", "zh"]]
    phrasebook = [["你好", "Hello", "zh → en", "zh", "en", "2026-12-02 09:41"]]
    data = store.export_csv(history, phrasebook)
    assert data.startswith(b"\xef\xbb\xbf")  # UTF-8 with a BOM: spreadsheets read its Chinese
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"))))
    assert rows == [EXPORT_COLUMNS,
                    ["phrasebook", "zh", "en", "你好", "Hello", "2026-12-02 09:41"],
                    ["history", "en", "zh", "Thank you.", "谢谢。", ""]]


def test_a_history_row_of_an_unknown_code_keeps_its_stored_pair():
    assert history_rows([["a", "b", "xx → zh", "xx", "zh"], ["c", "d", "old"]], "zh")["data"] \
        == [["a", "b", "xx → 中文"], ["c", "d", "old"]]


# -- in the browser ------------------------------------------------------------------------------
def _open_panel(page, panel: str) -> None:
    page.locator(f"#{panel} .label-wrap").first.click()


def _translate(page, text: str, expected: str) -> None:
    page.locator("#clear-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === ''", timeout=60_000)
    page.locator("#input-box textarea").fill(text)
    page.locator("#translate-btn").click()
    page.wait_for_function(f"() => {OUTPUT} === {expected!r}", timeout=60_000)


def _type_cell(page, cell: str, term: str) -> None:
    """Types into a table cell as a visitor does: double-click, then type once its editor has
    the focus (keys typed before it has are lost on a busy machine), then Enter."""
    page.locator(cell).dblclick()
    page.locator(f"{cell} textarea").wait_for(state="visible", timeout=60_000)
    page.wait_for_function("(s) => document.activeElement === document.querySelector(s)",
                           arg=f"{cell} textarea", timeout=60_000)
    page.keyboard.type(term)
    page.keyboard.press("Enter")
    page.wait_for_function("([s, t]) => (document.querySelector(s)?.innerText ?? '').includes(t)",
                           arg=[cell, term], timeout=60_000)


def _reload(page) -> None:
    page.reload()
    page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)


def _table(page, selector: str) -> str:
    return page.evaluate(TEXT_OF, selector)


def _exported(page, button: str, file: str) -> str:
    page.locator(button).click()
    link = page.locator(f"{file} a").first
    link.wait_for(timeout=60_000)
    body = page.request.get(link.get_attribute("href")).body()
    assert body.startswith(b"\xef\xbb\xbf"), body[:20]
    return body.decode("utf-8-sig")


@pytest.mark.parametrize(("locale", "size", "case"), [
    ("en-US", DESKTOP, ("en", "zh", "Thank you.", "谢谢。", "English → Chinese",
                        "☆ Save to phrasebook")),
    ("zh-CN", PHONE, ("zh", "en", "谢谢你的帮助。", "Thank you for your help.", "中文 → 英语",
                      "☆ 收藏到短语本")),
], ids=["en-US-desktop", "zh-CN-phone"])
@pytest.mark.slow
@pytest.mark.browser
@NO_CHROMIUM
def test_a_starred_translation_and_the_glossary_survive_a_reload(browser, demo_url, tmp_path,  # noqa: F811
                                                                 locale, size, case):
    """Star → reload → still in the phrasebook, by name and with its time; the one export holds
    it and the history; the same translation twice is one history row, named not coded; the
    glossary is still there after a reload; a removed entry stays removed."""
    sl, tl, text, translation, pair, star = case
    phone = size == PHONE
    page = open_page(browser, f"{demo_url}/?sl={sl}&tl={tl}", locale=locale, width=size[0],
                     height=size[1], mobile=phone)
    _translate(page, text, translation)
    _translate(page, text, translation)  # the same translation twice
    button = page.get_by_role("button", name=star)
    box = button.bounding_box()
    assert box and (box["height"] >= 44 or not phone), box
    button.click()
    _open_panel(page, "modes-panel")
    if phone:  # a CSV of term pairs
        glossary = tmp_path / "glossary.csv"
        glossary.write_text(GLOSSARY_CSV, encoding="utf-8")
        page.locator("#glossary-file input[type=file]").set_input_files(str(glossary))
    else:  # typed into the table
        for cell, term in (("cell-0-0", "friend"), ("cell-0-1", "朋友")):
            _type_cell(page, f"#glossary [data-testid={cell}]", term)
    page.wait_for_function("() => (document.querySelector('#glossary')?.innerText ?? '')"
                           ".includes('朋友')", timeout=60_000)
    _open_panel(page, "phrasebook-panel")
    page.wait_for_function(f"() => (document.querySelector('#phrasebook')?.innerText ?? '')"
                           f".includes({translation!r})", timeout=60_000)
    _reload(page)
    for panel in ("history-panel", "phrasebook-panel", "modes-panel"):
        _open_panel(page, panel)
    page.wait_for_function("() => (document.querySelector('#phrasebook')?.innerText ?? '')"
                           ".includes('→')", timeout=60_000)
    saved = _table(page, "#phrasebook")
    assert text in saved and translation in saved and pair in saved, saved
    assert TIME.search(saved), saved
    history = _table(page, "#history")
    assert history.count(text) == 1 and pair in history, history
    assert f"{sl} → {tl}" not in history, history
    # The glossary comes back from the browser's storage beside the phrasebook, maybe a moment later.
    page.wait_for_function("() => { const t = document.querySelector('#glossary')?.innerText ?? '';"
                           " return t.includes('朋友') && t.includes('friend'); }")
    exported = _exported(page, "#phrasebook-export", "#phrasebook-file")
    rows = list(csv.reader(io.StringIO(exported)))
    assert rows[0] == EXPORT_COLUMNS
    assert rows[1][:5] == ["phrasebook", sl, tl, text, translation] and TIME.fullmatch(rows[1][5])
    assert ["history", sl, tl, text, translation, ""] in rows[2:], rows
    page.locator("#phrasebook").get_by_text(translation).filter(visible=True).first.click()
    page.locator("#phrasebook-remove").click()
    page.wait_for_function("(t) => !(document.querySelector('#phrasebook')?.innerText ?? '')"
                           ".includes(t)", arg=translation, timeout=60_000)
    _reload(page)
    _open_panel(page, "phrasebook-panel")
    _open_panel(page, "history-panel")
    page.wait_for_function("(t) => (document.querySelector('#history')?.innerText ?? '')"
                           ".includes(t)", arg=text, timeout=60_000)
    assert translation not in _table(page, "#phrasebook")
    page.context.close()


@pytest.mark.parametrize(("locale", "size", "words"), [
    ("zh-CN", DESKTOP, ("三种译法", "翻译", "只有一种不同的译法：谢谢。",
                        "2 个术语中有 1 个出现在原文中")),
    ("en-US", PHONE, ("3 alternatives", "Translate", "only one distinct translation: 谢谢。",
                      "1 of its 2 terms occur in the text")),
], ids=["zh-CN-desktop", "en-US-phone"])
@pytest.mark.slow
@pytest.mark.browser
@NO_CHROMIUM
def test_alternatives_collapse_and_the_glossary_report_names_the_texts_terms(
        browser, demo_url, tmp_path, locale, size, words):  # noqa: F811
    """Three identical alternatives showed nothing; the glossary report named "friend → 朋友"
    as missing from a text without "friend"."""
    alternatives, translate_mode, one, counted = words
    page = open_page(browser, f"{demo_url}/?sl=en&tl=zh", locale=locale, width=size[0],
                     height=size[1], mobile=size == PHONE)
    _open_panel(page, "modes-panel")
    page.locator("#mode").get_by_text(alternatives).click()  # maybe marked ✓
    _translate(page, "Thank you.", "谢谢。")
    page.wait_for_function("(t) => (document.querySelector('#extras')?.innerText ?? '')"
                           ".includes(t)", arg=one, timeout=60_000)
    page.locator("#mode").get_by_text(translate_mode, exact=True).click()
    glossary = tmp_path / "glossary.csv"
    glossary.write_text(GLOSSARY_CSV, encoding="utf-8")
    page.locator("#glossary-file input[type=file]").set_input_files(str(glossary))
    page.wait_for_function("() => (document.querySelector('#glossary')?.innerText ?? '')"
                           ".includes('朋友')", timeout=60_000)
    page.locator("#input-box textarea").fill("Thank you.")
    page.locator("#translate-btn").click()
    page.wait_for_function("(t) => (document.querySelector('#extras')?.innerText ?? '')"
                           ".includes(t)", arg=counted, timeout=60_000)
    report = _table(page, "#extras")
    assert "Thank you → 谢谢" in report and "朋友" not in report, report
    page.context.close()



def test_the_history_keeps_the_newest_rows_that_fit_a_quarter_of_the_request_limit():
    """The browser sends the whole history with every Translate: in bytes as it sends them
    (Chinese is three bytes a character), newest first, the newest always (it is on screen)."""
    from hunyuan_webui.web.page.history import HISTORY_LIMIT, within_budget

    def row(i: int, text: str) -> list[str]:
        return [f"{i} {text}", text.upper(), "en → zh", "en", "zh"]

    short = [row(i, "Good morning.") for i in range(80)]
    assert within_budget(short, 1_000_000) == short[:HISTORY_LIMIT]
    wide = [row(i, "早" * 10_000) for i in range(10)]  # ~60 kB each in UTF-8
    assert within_budget(wide, 1_000_000) == wide[:4]  # 4 x 60 kB within 250 kB
    assert within_budget(wide, 100_000) == wide[:1]  # the newest alone is over: kept all the same
    assert within_budget([], 100_000) == []


def test_the_phrasebook_is_bounded_as_the_history_is():
    """The browser sends the phrasebook with every star and every page load."""
    from hunyuan_webui.web.page.store import PHRASEBOOK_LIMIT, star

    book = [[f"{i} " + "早" * 10_000, "Early", "zh → en", "zh", "en", ""] for i in range(6)]
    kept, _ = star(book, [], "谢谢。", "Thank you.", "zh", "en", "", "09:00",
                   max_body_bytes=200_000)
    assert [row[0] for row in kept] == ["谢谢。", book[0][0]]  # 50 kB: the newest two that fit
    short = [[f"{i}", "x", "zh → en", "zh", "en", ""] for i in range(600)]
    kept, _ = star(short, [], "谢谢。", "Thank you.", "zh", "en", "", "", max_body_bytes=200_000)
    assert len(kept) == PHRASEBOOK_LIMIT and kept[0][0] == "谢谢。"
