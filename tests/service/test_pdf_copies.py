"""A PDF's other copies (issue 37): the same worksheet as a Word file (``output_format="docx"``),
and bilingual copies for learners, each block followed by its translation or beside it in a
two-column table, as a Word file or a PDF of flowing text (no model: a dictionary translates)."""

from __future__ import annotations

import io
import subprocess

import docx
import pdfs
import pytest
from docx.oxml.ns import qn

from hunyuan_webui.errors import InputError
from hunyuan_webui.files import BILINGUAL, read_file, translate_file

ENGLISH_AR = {"Thank you.": "شكرا لك.", "Good morning.": "صباح الخير."}


def dictionary(table: dict[str, str]):
    def translate(segments: list[str]) -> list[str]:
        return [table[s] for s in segments]  # a KeyError: a segment the test did not expect
    return translate


def word(data: bytes) -> docx.document.Document:
    return docx.Document(io.BytesIO(data))


def paragraphs(document) -> list[tuple[str, str]]:
    """The body's paragraphs with text, as (style, text)."""
    return [(p.style.name, p.text) for p in document.paragraphs if p.text.strip()]


def poppler_text(data: bytes, layout: bool = False) -> list[str]:
    """The text of each page as poppler's ``pdftotext`` reads it (pdfminer.six does not read the
    CMap fpdf2 writes for Noto Sans CJK)."""
    out = subprocess.run(["pdftotext", *(["-layout"] if layout else []), "-", "-"], input=data,
                         capture_output=True, timeout=60, check=True)
    return out.stdout.decode().split("\f")[:-1]


def translate_lesson(pages: int = 1, **options) -> tuple[bytes, object]:
    source = pdfs.lesson_pdf(pages=pages)
    return source, translate_file("lesson.pdf", source, dictionary(pdfs.ANSWERS), lang="zh",
                                  target_lang="en", **options)


def test_a_pdf_as_a_word_file_has_its_blocks_in_reading_order_its_heading_and_its_image():
    _, result = translate_lesson(pages=2, output_format="docx")
    assert result.filename == "lesson.en.docx" and result.notes == ()
    document = word(result.data)
    one_page = [("Heading 1", pdfs.LESSON_ENGLISH[0])] + \
        [("Normal", text) for text in pdfs.LESSON_ENGLISH[1:]]
    assert paragraphs(document) == one_page * 2
    assert len(document.inline_shapes) == 2  # each page's image
    breaks = document.element.body.findall(".//" + qn("w:br"))
    assert [b.get(qn("w:type")) for b in breaks] == ["page"]  # where the PDF's page ended


def test_a_bilingual_word_copy_has_each_block_followed_by_its_translation():
    _, result = translate_lesson(output_format="docx", bilingual=True)
    assert result.filename == "lesson.bilingual.en.docx"
    expected = []
    for n, (source, english) in enumerate(zip(pdfs.LESSON_BLOCKS, pdfs.LESSON_ENGLISH,
                                              strict=True)):
        style = "Heading 1" if n == 0 else "Normal"
        expected += [(style, source), (style, english)]
    assert paragraphs(word(result.data)) == expected


def test_a_side_by_side_word_copy_is_a_two_column_table_under_the_languages_names():
    _, result = translate_lesson(output_format="docx", bilingual="columns")
    assert result.filename == "lesson.bilingual.en.docx"
    document = word(result.data)
    [table] = document.tables
    rows = [tuple(cell.text for cell in row.cells) for row in table.rows]
    assert rows == [("Chinese", "English"),
                    *zip(pdfs.LESSON_BLOCKS, pdfs.LESSON_ENGLISH, strict=True)]
    assert table.rows[1].cells[0].paragraphs[0].style.name == "Heading 1"
    assert len(document.inline_shapes) == 1


def squeezed(text: str) -> str:
    return "".join(text.split())


def test_a_bilingual_pdf_has_each_block_followed_by_its_translation_page_by_page():
    source, result = translate_lesson(pages=2, bilingual=True)
    assert result.filename == "lesson.bilingual.en.pdf" and ".pdf" in BILINGUAL
    pages = poppler_text(result.data)
    assert len(pages) == 2  # each page of the source starts a page
    for text in pages:
        flat, at = squeezed(text), 0
        for block, english in zip(pdfs.LESSON_BLOCKS, pdfs.LESSON_ENGLISH, strict=True):
            found = flat.index(squeezed(block), at)  # the source, then its translation
            at = flat.index(squeezed(english), found + len(squeezed(block)))
    assert pdfs.images(result.data) == pdfs.images(source) == 2


def test_a_side_by_side_pdf_puts_each_translation_beside_its_block():
    _, result = translate_lesson(bilingual="columns")
    [page] = poppler_text(result.data, layout=True)
    lines = [" ".join(line.split()) for line in page.splitlines() if line.strip()]
    assert lines[0] == "Chinese English"
    for block, english in zip(pdfs.LESSON_BLOCKS[3:], pdfs.LESSON_ENGLISH[3:], strict=True):
        assert f"{block} {english}" in lines  # the table's cells: one line each, side by side


def test_a_right_to_left_target_is_written_right_to_left_in_both_copies():
    source = pdfs.english()
    result = translate_file("note.pdf", source, dictionary(ENGLISH_AR), lang="en",
                            target_lang="ar", output_format="docx", bilingual=True)
    document = word(result.data)
    texts = paragraphs(document)
    assert texts[:2] == [("Heading 1", "Good morning."), ("Heading 1", "صباح الخير.")]
    arabic = [p for p in document.paragraphs if "صباح" in p.text]
    english = [p for p in document.paragraphs if "Good" in p.text]
    assert all(p._p.pPr.find(qn("w:bidi")) is not None for p in arabic)
    assert all(p._p.pPr is None or p._p.pPr.find(qn("w:bidi")) is None for p in english)
    pdf = translate_file("note.pdf", source, dictionary(ENGLISH_AR), lang="en", target_lang="ar",
                         bilingual=True)
    [page] = poppler_text(pdf.data)
    assert "Good morning." in page and "الخير" in page


@pytest.mark.parametrize(("name", "options", "words"), [
    ("cues.srt", {"output_format": "docx"}, "A .srt file cannot come back as 'docx'"),
    ("lesson.pdf", {"output_format": "xlsx"}, ".pdf as .docx"),
    ("lesson.odt", {"bilingual": "columns"},
     "side-by-side (two-column) copy is made of .docx, .pdf files"),
    ("lesson.pdf", {"bilingual": "maybe"}, "paragraphs or columns"),
])
def test_what_a_file_cannot_come_back_as_is_refused_with_words(name, options, words):
    with pytest.raises(InputError) as refused:
        read_file(name, b"1\n00:00:01,000 --> 00:00:02,000\nHi\n", **options)
    assert words in str(refused.value)


def test_a_scanned_page_comes_into_both_copies_as_its_picture_on_a_page_of_its_own():
    source = pdfs.english(scan_page=True)
    shout = dictionary({"Good morning.": "BONJOUR.", "Thank you.": "MERCI."})
    as_word = translate_file("note.pdf", source, shout, lang="en", target_lang="fr",
                             output_format="docx")
    assert as_word.notes == ("Page 2 is scanned images (no OCR): kept as they are.",)
    [scan] = word(as_word.data).inline_shapes
    assert scan.height.pt <= 620 and scan.width.pt <= 468  # within Word's page
    bilingual = translate_file("note.pdf", source, shout, lang="en", target_lang="fr",
                               bilingual=True)
    first, second = poppler_text(bilingual.data)
    assert "Good morning." in first and "BONJOUR." in first and not second.strip()
    assert pdfs.images(bilingual.data) == 1
