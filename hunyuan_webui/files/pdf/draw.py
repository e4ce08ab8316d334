"""The translated PDF: each page's original text operators removed with pypdf (images, paths
and tables kept), and the translations drawn with fpdf2 (HarfBuzz shaping through uharfbuzz,
right-to-left scripts, fonts embedded as subsets) on an overlay merged onto the page."""

from __future__ import annotations

import io
import math
from collections.abc import Sequence

from hunyuan_webui.files.pdf.fonts import LATIN, Font
from hunyuan_webui.files.pdf.layout import Block, Page

LEADING = 1.18  # line height / font size
MIN_SIZE = 4.0  # points: below this a block is not laid out in its box
SHRINK = 0.92


def write(data: bytes, pages: Sequence[Page], texts: dict[int, str],
          font: Font) -> tuple[bytes, list[int]]:
    """The PDF with ``texts`` (per block unit) in place of each page's text; and the pages laid
    out as flowing text because their blocks could not be kept in place."""
    import pypdf

    overlay, flowed = _overlay(pages, texts, font)
    reader = pypdf.PdfReader(io.BytesIO(data))
    drawn = pypdf.PdfReader(io.BytesIO(overlay))
    writer = pypdf.PdfWriter(clone_from=reader)
    for page, out, over in zip(pages, writer.pages, drawn.pages, strict=True):
        if page.blocks:
            _strip_text(out, writer)
            out.merge_page(over)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue(), flowed


def _strip_text(page, writer) -> None:
    """Remove every text object (BT … ET) from the page's content and its form XObjects."""
    from pypdf.generic import ContentStream

    contents = page.get_contents()
    if contents is not None:
        page.replace_contents(_without_text(ContentStream(contents, writer)))
    seen: set[int] = set()
    resources = page.get("/Resources")
    _strip_forms(resources.get_object() if resources else None, writer, seen, 0)


def _strip_forms(resources, writer, seen: set[int], depth: int) -> None:
    from pypdf.generic import ContentStream, DictionaryObject

    if not isinstance(resources, DictionaryObject) or depth > 8:
        return
    xobjects = resources.get("/XObject")
    if xobjects is None:
        return
    for ref in xobjects.get_object().values():
        xobject = ref.get_object()
        if id(xobject) in seen or xobject.get("/Subtype") != "/Form":
            continue
        seen.add(id(xobject))
        stripped = _without_text(ContentStream(xobject, writer))
        xobject.set_data(stripped.get_data())
        inner = xobject.get("/Resources")
        _strip_forms(inner.get_object() if inner else None, writer, seen, depth + 1)


def _without_text(stream):
    kept, inside = [], False
    for operands, operator in stream.operations:
        if operator == b"BT":
            inside = True
        elif operator == b"ET":
            inside = False
        elif not inside:
            kept.append((operands, operator))
    stream.operations = kept
    return stream


# --------------------------------------------------------------------------------------------
# The overlay


def _overlay(pages: Sequence[Page], texts: dict[int, str], font: Font) -> tuple[bytes, list[int]]:
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.set_auto_page_break(False)
    pdf.set_margins(0, 0, 0)
    pdf.c_margin = 0
    pdf.add_font("target", fname=font.file, collection_font_number=font.index)
    if font is not LATIN:
        pdf.add_font("latin", fname=LATIN.file)
        pdf.set_fallback_fonts(["latin"])
    pdf.set_text_shaping(font.shaped)
    flowed = []
    for page in pages:
        pdf.add_page(format=(page.width, page.height))
        blocks = [(b, texts.get(b.unit, b.text)) for b in page.blocks]
        if not blocks:
            continue
        placed = page.upright and _place_all(pdf, page, blocks, font)
        if not placed:
            flowed.append(page.number)
            _flow(pdf, page, blocks, font)
    return bytes(pdf.output()), flowed


def _place_all(pdf, page: Page, blocks, font: Font) -> bool:
    """Each block in its box, the font shrunk until it fits (nothing drawn unless all fit)."""
    plans = []
    for block, text in blocks:
        width, height = _room(page, block)
        size = _fit(pdf, text, width, height, block.size)
        if size is None:
            return False
        plans.append((block, text, width, size))
    for block, text, width, size in plans:
        x0, _, x1, y1 = block.box
        pdf.set_font("target", size=size)
        left = x0 if not font.rtl else min(x1, page.width) - width
        pdf.set_xy(max(left, 0), page.height - y1)
        pdf.multi_cell(width, size * LEADING, text, align="R" if font.rtl else "L")
    return True


def _room(page: Page, block: Block) -> tuple[float, float]:
    """How wide and tall the translation may be: the block's box, widened to the right and
    down into free space (no further than the next block, rule or cell border) by at most 4.5%
    of the page."""
    x0, y0, x1, y1 = block.box
    right = min(page.width - min(b.box[0] for b in page.blocks), x1 + 0.045 * page.width)
    lowest = min([b.box[1] for b in page.blocks] + [e[1] for e in page.edges])
    bottom = max(lowest, y0 - 0.045 * page.height, 0)
    others = [b.box for b in page.blocks if b is not block] + page.edges
    for ox0, oy0, _, oy1 in others:
        if ox0 >= x1 - 0.5 and oy0 < y1 and oy1 > y0:
            right = min(right, ox0 - 2)
    for ox0, _, ox1, oy1 in others:
        if oy1 <= y0 + 0.5 and ox0 < right and ox1 > x0:
            bottom = max(bottom, oy1 + 1)
    return max(right, x1) - x0, y1 - min(bottom, y0)


def _fit(pdf, text: str, width: float, height: float, size: float) -> float | None:
    """The largest font size (from the source's, shrinking) at which ``text`` wrapped to
    ``width`` fits ``height`` (a line's leading less is tolerated: the box is the glyphs').
    The search starts at the largest size whose lines could fill the box with no gaps (each
    trial wraps the text, shaping it, so the sizes above that one are not tried)."""
    pdf.set_font("target", size=size)
    per_point = pdf.get_string_width(text) / size  # the text's width in one line, per point
    if per_point > 0:
        size = min(size, round(math.sqrt(1.6 * height * width / (per_point * LEADING)), 2))
    while size >= MIN_SIZE:
        pdf.set_font("target", size=size)
        lines = pdf.multi_cell(width, size * LEADING, text, dry_run=True, output="LINES")
        needed, room = len(lines) * size * LEADING, height + size * (LEADING - 0.7)
        if needed <= room or (len(lines) == 1 and size * LEADING <= height * 1.6):
            return size
        # The lines' total height grows as the size squared: shrink by the square root of
        # how much too tall it is (at least SHRINK, at most by half).
        size = round(size * min(SHRINK, max(math.sqrt(room / needed), 0.5)), 2)
    return None


def _flow(pdf, page: Page, blocks, font: Font) -> None:
    """The page's translations as paragraphs in the area its text took, one size for all."""
    x0 = min(b.box[0] for b, _ in blocks)
    x1 = max(b.box[2] for b, _ in blocks)
    y0 = min(b.box[1] for b, _ in blocks)
    y1 = max(b.box[3] for b, _ in blocks)
    ordered = sorted(blocks, key=lambda bt: (-bt[0].box[3], bt[0].box[0]))
    text = "\n".join(t for _, t in ordered)
    size = max(b.size for b, _ in blocks)
    width = max(x1 - x0, page.width * 0.5)
    x0 = min(x0, page.width - width)
    while size > 2:
        pdf.set_font("target", size=size)
        lines = pdf.multi_cell(width, size * LEADING, text, dry_run=True, output="LINES")
        if len(lines) * size * LEADING <= max(y1 - y0, page.height * 0.3):
            break
        size = round(size * SHRINK, 2)
    pdf.set_font("target", size=size)
    pdf.set_xy(x0, page.height - y1)
    pdf.multi_cell(width, size * LEADING, text, align="R" if font.rtl else "L")
