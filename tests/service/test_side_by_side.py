"""A Word file's bilingual copy side by side (``bilingual="columns"``, issue 37's "or side by side
in a two-column table"): each run of body paragraphs becomes a two-column table under the
languages' names, source left, translation right, each paragraph with its own style and runs; a
table of the source stays between two such tables with both texts in its cells (no model: the
demo's phrases in a dictionary)."""

from __future__ import annotations

import io

import docx
import pdfs
from docx.oxml.ns import qn

from hunyuan_webui.files import translate_file


def lesson() -> bytes:
    document = docx.Document()
    document.add_heading("欢迎来到北京。", level=1)
    paragraph = document.add_paragraph("谢谢你的帮助。")
    paragraph.add_run("今天天气很好。").bold = True
    document.add_paragraph("我们明天见。")
    document.add_table(rows=1, cols=1).cell(0, 0).text = "这本书很有意思。"
    document.add_paragraph("早上好。")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def cells(table) -> list[list[tuple[str, str]]]:
    return [[(cell.paragraphs[0].style.name, cell.text) for cell in row.cells]
            for row in table.rows]


def test_a_word_files_paragraphs_sit_beside_their_translations_in_two_column_tables():
    result = translate_file("lesson.docx", lesson(), lambda s: [pdfs.ANSWERS[x] for x in s],
                            lang="zh", target_lang="en", bilingual="columns")
    assert result.filename == "lesson.bilingual.en.docx"
    document = docx.Document(io.BytesIO(result.data))
    first, kept, last = document.tables
    names = [("Normal", "Chinese"), ("Normal", "English")]
    assert cells(first) == [
        names,
        [("Heading 1", "欢迎来到北京。"), ("Heading 1", "Welcome to Beijing.")],
        [("Normal", "谢谢你的帮助。今天天气很好。"),
         ("Normal", "Thank you for your help. The weather is nice today.")],
        [("Normal", "我们明天见。"), ("Normal", "See you tomorrow.")]]
    bold = [run.text.strip() for run in first.rows[2].cells[1].paragraphs[0].runs if run.bold]
    assert bold == ["The weather is nice today."]  # the run's formatting, kept beside
    assert cells(kept) == [[("Normal", "这本书很有意思。\nThis book is very interesting.")]]
    assert cells(last) == [names, [("Normal", "早上好。"), ("Normal", "Good morning.")]]
    header = first.rows[0]._tr.trPr
    assert header is not None and header.find(qn("w:tblHeader")) is not None  # on every page
    assert [p.text for p in document.paragraphs] == [""]  # Word's closing paragraph only
