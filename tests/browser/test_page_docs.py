"""The page's documents and its bilingual export, in headless Chromium, the demo
model behind the page, desktop 1366x768 and a 390x844 phone, en-US and zh-CN.

- A Chinese CSV on a Chinese page's default pair (auto → 简体中文) came back byte-identical with
  "Done: 4 distinct segments translated"; now it comes back in English and the page says why.
- After a refused file the page showed red "Error" pills beside the last file's "Done"; now the
  status and the download are the current file's alone.
- The text tab exports the text beside its translation: a CSV (UTF-8 with BOM) and a .docx table
  whose cells are the demo model's exact outputs.
"""

from __future__ import annotations

import csv
import io

import pytest
from apphelpers import CHROMIUM
from browserhelpers import open_page
from playwright.sync_api import expect

pytestmark = [pytest.mark.slow, pytest.mark.browser,
              pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")]

VIEWS = [("en-US", 1366, 768, False), ("zh-CN", 390, 844, True)]
VIEW_IDS = ["en-US-1366x768", "zh-CN-390x844"]
DONE = {"en-US": "Done", "zh-CN": "完成"}
TAB = {"en-US": "Document", "zh-CN": "文档"}
STATUS = "document.querySelector('#doc-status').innerText"
HOMEWORK = ("Student,Homework answer,Teacher's note\r\n"
            "1,谢谢你的帮助。,今天天气很好。\r\n"
            "2,欢迎来到北京。,我们明天见。\r\n")
# Two paragraphs of demo phrases, and the demo model's exact translations of them.
TWO_PARAGRAPHS = "谢谢你的帮助。今天天气很好。\n\n欢迎来到北京。"
PAIRS = [["谢谢你的帮助。今天天气很好。", "Thank you for your help. The weather is nice today."],
         ["欢迎来到北京。", "Welcome to Beijing."]]


def _page(browser, url, view, query=""):  # noqa: F811 - the fixture, passed on
    locale, width, height, mobile = view
    return open_page(browser, url + query, locale=locale, width=width, height=height,
                     mobile=mobile)


def _upload(page, path) -> None:
    """Choose a file, as a visitor does: the last one removed first (its × button)."""
    if page.locator("#doc-upload input[type=file]").count() == 0:  # a file is shown
        page.locator("#doc-upload button").first.click()  # its one button: Clear (清除)
    page.locator("#doc-upload input[type=file]").set_input_files(str(path))
    # Shown as "notes" and ".md" on two lines on a phone: the name, without the whitespace.
    page.wait_for_function("(name) => document.querySelector('#doc-upload').innerText"
                           ".replace(/\\s/g, '').includes(name)", arg=path.name, timeout=60_000)


def _link(page, elem: str, previous: str | None = None) -> str:
    """The href of a file component's download link (a new one, when ``previous`` is given)."""
    page.wait_for_function(
        "([sel, old]) => { const a = document.querySelector(sel + ' a[href]');"
        " return a && a.getAttribute('href') !== old; }", arg=[f"#{elem}", previous],
        timeout=60_000)
    return page.locator(f"#{elem} a[href]").first.get_attribute("href")


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_a_refused_file_leaves_no_stale_done_beside_its_error(browser, demo_url, view,  # noqa: F811
                                                             tmp_path):
    locale = view[0]
    good, bad = tmp_path / "notes.md", tmp_path / "report.docx"
    good.write_text("# 你好\n\n谢谢你的帮助。\n", encoding="utf-8")
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)  # an image named .docx
    page = _page(browser, demo_url, view, "/?sl=zh&tl=en")
    page.get_by_role("tab", name=TAB[locale]).click()
    _upload(page, good)
    page.locator("#doc-translate-btn").click()
    page.wait_for_function(f"() => ({STATUS}).includes('{DONE[locale]}')", timeout=60_000)
    link = _link(page, "doc-download")
    assert page.request.get(link).text() == "# Hello\n\nThank you for your help.\n"

    _upload(page, bad)  # a new file: the last one's result goes at once
    page.wait_for_function(f"() => !({STATUS}).includes('{DONE[locale]}')", timeout=60_000)
    expect(page.locator("#doc-download a[href]")).to_have_count(0)
    page.locator("#doc-translate-btn").click()
    page.locator(".toast-body").first.wait_for(timeout=60_000)
    page.wait_for_function(f"() => ({STATUS}).includes('✗')", timeout=60_000)
    status = page.evaluate(f"() => {STATUS}")
    assert DONE[locale] not in status, status
    expect(page.locator("#doc-download a[href]")).to_have_count(0)
    assert "PNG" in " ".join(page.locator(".toast-body").all_inner_texts())
    page.context.close()


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_a_chinese_csv_on_detect_into_chinese_comes_back_in_english(browser, demo_url, view,  # noqa: F811
                                                                    tmp_path):
    """The pair auto → 简体中文 (a Chinese browser's default; set by the link for the English
    page): the file is translated into English, named for it, and the page says why."""
    locale = view[0]
    source = tmp_path / "homework.csv"
    source.write_bytes(HOMEWORK.encode())
    page = _page(browser, demo_url, view, "" if locale == "zh-CN" else "/?sl=auto&tl=zh")
    # the pair: auto → 简体中文 (set by the page's start script, maybe after Translate is enabled)
    page.wait_for_function("() => document.querySelector('#target-lang input').value"
                           ".includes('中文')")
    page.get_by_role("tab", name=TAB[locale]).click()
    _upload(page, source)
    page.locator("#doc-translate-btn").click()
    page.wait_for_function(f"() => ({STATUS}).includes('{DONE[locale]}')", timeout=60_000)
    status = page.evaluate(f"() => {STATUS}")
    expected = {"zh-CN": "文件已经是中文，已改为译成英语。",
                "en-US": "The file is already in Chinese: translated into English instead."}
    assert expected[locale] in status, status
    link = _link(page, "doc-download")
    assert link.endswith("homework.en.csv"), link
    rows = list(csv.reader(io.StringIO(page.request.get(link).text())))
    assert rows == [["Student", "Homework answer", "Teacher's note"],
                    ["1", "Thank you for your help.", "The weather is nice today."],
                    ["2", "Welcome to Beijing.", "See you tomorrow."]]
    page.context.close()


@pytest.mark.parametrize("view", VIEWS, ids=VIEW_IDS)
def test_the_bilingual_export_holds_the_demo_models_exact_translations(browser, demo_url,  # noqa: F811
                                                                       view):
    import docx

    page = _page(browser, demo_url, view, "/?sl=zh&tl=en")
    page.locator("#input-box textarea").fill(TWO_PARAGRAPHS)
    page.locator("#translate-btn").click()
    page.wait_for_function("() => document.querySelector('#output-box textarea').value === "
                           "'Thank you for your help. The weather is nice today.\\n\\n"
                           "Welcome to Beijing.'", timeout=60_000)
    page.locator("#bilingual-csv-btn").click()
    link = _link(page, "bilingual-file")
    data = page.request.get(link).body()
    assert data.startswith(b"\xef\xbb\xbf")  # the BOM: Excel reads the Chinese as Chinese
    header, *rows = csv.reader(io.StringIO(data.decode("utf-8-sig")))
    assert rows == PAIRS
    assert len(header) == 2
    page.locator("#bilingual-docx-btn").click()
    link = _link(page, "bilingual-file", previous=link)
    assert link.endswith(".docx"), link
    table = docx.Document(io.BytesIO(page.request.get(link).body())).tables[0]
    cells = [[cell.text for cell in row.cells] for row in table.rows]
    assert cells[1:] == PAIRS
    assert cells[0] == header
    page.context.close()
