"""A PDF as a Word file (python-docx): its text blocks as paragraphs in reading order, the
translation in place of each (headings as Word headings where the font size says so, a table's
cells as paragraphs), its images where they stood, a page break where the PDF's page ended.

Bilingual copies for learners: ``paragraphs``, each block as it was followed by its translation in
the same style; ``columns``, side by side in a two-column table (a heading row naming the
languages, repeated on every Word page; a picture between two tables)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from hunyuan_webui.files.pdf.outline import Item

PICTURE_WIDTH = 468.0  # points: the widest picture on Word's default page (6.5 in)
PICTURE_HEIGHT = 620.0  # points: the tallest (9 in of text height, less a line)


def docx_of(pages: Sequence[Sequence[Item]], texts: dict[int, str], *, mode: str = "",
            header: tuple[str, str] = ("", ""), rtl: tuple[bool, bool] = (False, False)) -> bytes:
    """The Word file. ``texts``: each block's translation by its unit (a block without one, a
    number or a symbol, stays as it was); ``mode``: "" (the translation alone), "paragraphs" or
    "columns"; ``header``: the columns' names; ``rtl``: whether source and translation are
    written right to left."""
    import docx

    document = docx.Document()
    for number, page in enumerate(pages):
        if number:
            document.add_page_break()
        table = None
        for item in page:
            if item.block is None:
                table = None  # the next text starts a new table below the picture
                _picture(document, item)
                continue
            source = item.block.text
            translation = texts.get(item.block.unit, source) if item.block.unit is not None \
                else source
            if mode == "columns":
                if table is None:
                    table = _table(document, header)
                cells = table.add_row().cells
                for cell, text, right in zip(cells, (source, translation), rtl, strict=True):
                    _write(cell.paragraphs[0], text, item.level, right)
                continue
            if mode == "paragraphs" and translation != source:
                _write(document.add_paragraph(), source, item.level, rtl[0])
            _write(document.add_paragraph(), translation, item.level, rtl[1])
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _write(paragraph, text: str, level: int, rtl: bool) -> None:
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.oxml import OxmlElement

    if level:
        paragraph.style = f"Heading {level}"
    paragraph.add_run(text)
    if rtl:
        paragraph.paragraph_format.element.get_or_add_pPr().append(OxmlElement("w:bidi"))
        paragraph.alignment = WD_ALIGN_PARAGRAPH.RIGHT


def _table(document, header: tuple[str, str]):
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    table = document.add_table(rows=1, cols=2)
    table.style = "Table Grid"
    for cell, name in zip(table.rows[0].cells, header, strict=True):
        cell.paragraphs[0].add_run(name).bold = True
    repeat = OxmlElement("w:tblHeader")
    repeat.set(qn("w:val"), "true")
    table.rows[0]._tr.get_or_add_trPr().append(repeat)
    return table


def _picture(document, item: Item) -> None:
    from docx.shared import Pt

    buffer = io.BytesIO()
    item.picture.save(buffer, "PNG")
    buffer.seek(0)
    ratio = item.picture.height / max(item.picture.width, 1)
    width = min(item.width, PICTURE_WIDTH, PICTURE_HEIGHT / ratio)
    document.add_picture(buffer, width=Pt(max(width, 8.0)))
