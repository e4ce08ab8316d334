"""A bilingual PDF for learners, drawn with fpdf2 as flowing text, page by page: each text block
as it was, then its translation (in blue), headings larger; or, ``columns``, side by side in a
two-column table. Each page of the source starts a page of its own (more follow where the two
languages need more room), its images where they stood.

The layout of the source is not kept: two texts cannot share one block's box at a readable size,
and a learner's copy is read paragraph by paragraph. The source is drawn in the font of its own
script, the translation in the target's (:mod:`~hunyuan_webui.files.pdf.fonts`), each with Noto
Sans behind it for Latin letters and digits."""

from __future__ import annotations

from collections.abc import Sequence

from hunyuan_webui.files.pdf.fonts import LATIN, Font
from hunyuan_webui.files.pdf.layout import Page
from hunyuan_webui.files.pdf.outline import Item

MARGIN = 48.0  # points
BODY = 11.0
HEADINGS = {1: 18.0, 2: 15.0, 3: 13.0}
LEADING = 1.3
BLUE = (20, 60, 160)  # the translation's colour


def bilingual_pdf(pages: Sequence[Page], rows: Sequence[Sequence[Item]], texts: dict[int, str],
                  fonts: tuple[Font, Font], *, columns: bool = False,
                  header: tuple[str, str] = ("", "")) -> bytes:
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.set_margins(MARGIN, MARGIN, MARGIN)
    pdf.set_auto_page_break(True, margin=MARGIN)
    pdf.c_margin = 0
    for name, font in zip(("source", "target"), fonts, strict=True):
        pdf.add_font(name, fname=font.file, collection_font_number=font.index)
    pdf.add_font("latin", fname=LATIN.file)
    pdf.set_fallback_fonts(["latin"])
    pdf.set_text_shaping(True)
    for page, items in zip(pages, rows, strict=True):
        pdf.add_page(format=(page.width, page.height))
        run: list[tuple[int, str, str]] = []
        for item in items:
            if item.block is None:
                if columns:
                    _table(pdf, run, fonts, header)
                run = []
                _picture(pdf, item)
                continue
            source = item.block.text
            translation = texts.get(item.block.unit, source) if item.block.unit is not None \
                else source
            if columns:
                run.append((item.level, source, translation))
            else:
                _pair(pdf, item.level, source, translation, fonts)
        if columns:
            _table(pdf, run, fonts, header)
    return bytes(pdf.output())


def _pair(pdf, level: int, source: str, translation: str, fonts: tuple[Font, Font]) -> None:
    size = HEADINGS.get(level, BODY)
    for name, text, font, colour in (("source", source, fonts[0], (0, 0, 0)),
                                     ("target", translation, fonts[1], BLUE)):
        if name == "target" and translation == source:
            continue  # a number or a symbol: once
        pdf.set_font(name, size=size)
        pdf.set_text_color(*colour)
        pdf.multi_cell(0, size * LEADING, text, align="R" if font.rtl else "L",
                       new_x="LMARGIN", new_y="NEXT")
    pdf.ln(size * 0.6)


def _table(pdf, run: list[tuple[int, str, str]], fonts: tuple[Font, Font],
           header: tuple[str, str]) -> None:
    from fpdf.enums import Align
    from fpdf.fonts import FontFace

    if not run:
        return
    faces = [FontFace(family="source", color=(0, 0, 0)), FontFace(family="target", color=BLUE)]
    align = ["RIGHT" if font.rtl else "LEFT" for font in fonts]
    pdf.set_font("source", size=BODY)
    with pdf.table(col_widths=(1, 1), first_row_as_headings=any(header),
                   headings_style=FontFace(emphasis="", fill_color=(235, 235, 235)),
                   line_height=BODY * LEADING, padding=4,
                   text_align=tuple(Align.coerce(a) for a in align)) as table:
        if any(header):
            row = table.row()
            for name, face in zip(header, faces, strict=True):
                row.cell(name, style=FontFace(family=face.family, emphasis="", size_pt=BODY))
        for level, source, translation in run:
            row = table.row()
            size = HEADINGS.get(level, BODY)
            for text, face in zip((source, translation), faces, strict=True):
                row.cell(text, style=FontFace(family=face.family, color=face.color, size_pt=size))
    pdf.set_text_color(0, 0, 0)
    pdf.ln(BODY * 0.6)


def _picture(pdf, item: Item) -> None:
    ratio = item.picture.height / max(item.picture.width, 1)
    width = min(item.width, pdf.epw, (pdf.page_break_trigger - pdf.t_margin) / ratio)
    height = width * ratio  # a scanned page fits a page of its own
    if pdf.get_y() + height > pdf.page_break_trigger:
        pdf.add_page(same=True)
    pdf.image(item.picture, x=pdf.l_margin, w=width, h=height)
    pdf.ln(BODY * 0.6)
