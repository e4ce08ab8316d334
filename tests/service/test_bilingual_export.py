"""The bilingual export: a text beside its translation, paragraph by paragraph, as a
CSV (UTF-8 with BOM) and a .docx table, from the page's listeners, without a browser."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import gradio as gr
import pytest

from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.files import bilingual
from hunyuan_webui.service import TranslationRequest

TWO_PARAGRAPHS = "谢谢你的帮助。今天天气很好。\n\n欢迎来到北京。"
# The demo model's exact outputs (assets/demo_phrases.tsv), paragraph by paragraph.
PAIRS = [("谢谢你的帮助。今天天气很好。", "Thank you for your help. The weather is nice today."),
         ("欢迎来到北京。", "Welcome to Beijing.")]


class _Visitor:
    def __init__(self, accept: str = "en-US") -> None:
        self.headers = {"accept-language": accept}


def _ui(translator, tmp_path):
    from hunyuan_webui.web.guards.visitor_files import VisitorFiles
    from hunyuan_webui.web.page.ui import TranslatorUI

    return TranslatorUI(translator, files=VisitorFiles(tmp_path, ttl=60))


def test_the_exported_files_hold_the_demo_models_exact_translations(translator, tmp_path):
    import docx

    from hunyuan_webui.web.page.text import language_name

    request = TranslationRequest(text=TWO_PARAGRAPHS, source_lang="auto", target_lang="en",
                                 options=DecodingOptions(deterministic=True))
    output = translator.translate(request).text
    assert output == "\n\n".join(translation for _, translation in PAIRS)
    ui = _ui(translator, tmp_path)
    made = ui.export_bilingual_csv(TWO_PARAGRAPHS, output, "auto", "zh", "en", _Visitor())
    data = Path(made["value"]).read_bytes()
    assert made["value"].endswith("bilingual-zh-en.csv")
    assert data.startswith(b"\xef\xbb\xbf")
    assert list(csv.reader(io.StringIO(data.decode("utf-8-sig")))) == [
        [language_name("en", "zh"), language_name("en", "en")], *map(list, PAIRS)]
    made = ui.export_bilingual_docx(TWO_PARAGRAPHS, output, "auto", "zh", "en",
                                    _Visitor("zh-CN"))
    table = docx.Document(made["value"]).tables[0]
    cells = [tuple(cell.text for cell in row.cells) for row in table.rows]
    assert cells == [(language_name("zh", "zh"), language_name("zh", "en")), *PAIRS]
    assert table.rows[0].cells[0].paragraphs[0].runs[0].bold


@pytest.mark.parametrize(("accept", "words"), [
    ("en-US", "Translate a text first"), ("zh-CN", "请先翻译一段文本")])
def test_nothing_to_export_says_so_in_the_pages_language(tmp_path, accept, words):
    from hunyuan_webui.web.page.files import FileListeners

    with pytest.raises(gr.Error) as refused:
        FileListeners._bilingual(object(), "csv", "你好", "", "auto", "", "en",  # type: ignore
                                 _Visitor(accept))
    assert words in str(refused.value)


def test_paragraphs_pair_up_and_never_beside_the_wrong_one():
    # Line for line, blank lines dropped.
    assert bilingual.pairs("甲。\n\n乙。\n", "A.\n\nB.\n") == [("甲。", "A."), ("乙。", "B.")]
    # A blank line more on one side: the non-empty paragraphs still pair.
    assert bilingual.pairs("甲。\n乙。", "A.\n\nB.") == [("甲。", "A."), ("乙。", "B.")]
    # Counts that disagree: the whole texts, one row.
    assert bilingual.pairs("甲。\n乙。", "A. B.") == [("甲。\n乙。", "A. B.")]


def test_the_csv_has_a_bom_and_the_docx_one_two_column_table():
    import docx

    data = bilingual.csv_bytes(PAIRS, ["zh", "en"])
    assert data.startswith(b"\xef\xbb\xbfzh,en\r\n")
    document = docx.Document(io.BytesIO(bilingual.docx_bytes(PAIRS, ["zh", "en"])))
    assert len(document.tables) == 1
    assert [[c.text for c in row.cells] for row in document.tables[0].rows] == [
        ["zh", "en"], *map(list, PAIRS)]
