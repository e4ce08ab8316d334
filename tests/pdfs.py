"""PDFs built in the tests with reportlab (a heading, paragraphs of demo phrases, a table, an
image), and what a result PDF holds (its text blocks read back with pdfminer.six)."""

from __future__ import annotations

import io
import re
import zlib
from pathlib import Path

from PIL import Image


def _demo() -> dict[str, str]:
    """The demo model's Chinese → English phrases (assets/demo_phrases.tsv)."""
    rows = (line.split("\t") for line in
            (Path(__file__).resolve().parent.parent / "assets" / "demo_phrases.tsv")
            .read_text(encoding="utf-8").splitlines()[1:])
    return {row[2]: row[3] for row in rows if row[:2] == ["zh", "en"]}


ANSWERS = _demo()
HEADING = "你好"
PARAGRAPHS = (
    "谢谢你的帮助。早上好。今天天气很好。欢迎来到北京。这本书很有意思。你叫什么名字？"
    "我们明天见。请打开书。谢谢你的帮助。早上好。今天天气很好。",
    "欢迎来到北京。我们明天见。谢谢。",
)
CELLS = (("早上好。", "谢谢。"), ("请打开书。", "你好"))
_WRITTEN = HEADING + "".join(PARAGRAPHS) + "".join(cell for row in CELLS for cell in row)
SHOWN = frozenset(answer for source, answer in ANSWERS.items() if source in _WRITTEN)
"""The translations the lesson's result must show (the demo knows more phrases than it has)."""


def png(width: int = 60, height: int = 40) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (200, 30, 30)).save(buffer, "PNG")
    return buffer.getvalue()


def lesson_pdf(pages: int = 1) -> bytes:
    """A Chinese worksheet: heading, two paragraphs, a 2×2 table, an image (on each page)."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import Image as RLImage
    from reportlab.platypus import (
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    head = ParagraphStyle("h", fontName="STSong-Light", fontSize=20, leading=26)
    body = ParagraphStyle("b", fontName="STSong-Light", fontSize=12, leading=18, wordWrap="CJK")
    story = []
    for n in range(pages):
        story += [Paragraph(HEADING, head), Spacer(1, 12)]
        story += [p for text in PARAGRAPHS for p in (Paragraph(text, body), Spacer(1, 10))]
        table = Table([[Paragraph(c, body) for c in row] for row in CELLS], colWidths=[150, 150])
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
        story += [table, Spacer(1, 12), RLImage(io.BytesIO(png()), 60, 40)]
        if n + 1 < pages:
            story.append(PageBreak())
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4).build(story)
    return buffer.getvalue()


def blocks(data: bytes) -> list[list[tuple[str, tuple[float, float, float, float]]]]:
    """Per page, its text blocks (text, box) as pdfminer.six reads them."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextBox

    out = []
    for page in extract_pages(io.BytesIO(data)):
        out.append([(" ".join(b.get_text().split()), tuple(b.bbox)) for b in page
                    if isinstance(b, LTTextBox) and b.get_text().strip()])
    return out


def images(data: bytes) -> int:
    import pypdf

    return sum(len(page.images) for page in pypdf.PdfReader(io.BytesIO(data)).pages)


def flate_bomb(megabytes: int) -> bytes:
    """A one-page PDF whose content stream inflates to ``megabytes`` MB of zeros."""
    stream = zlib.compressobj(9)
    packed = b"".join(stream.compress(b"\0" * 1_000_000) for _ in range(megabytes)) + stream.flush()
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
                 b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(packed) + packed
                 + b"\nendstream"])


def _pdf(objects: list[bytes], trailer: bytes = b"") -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for n, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % n + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, trailer, xref))
    return out.getvalue()


def encrypted() -> bytes:
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(lesson_pdf())))
    writer.encrypt("secret", algorithm="AES-128")
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def damaged() -> bytes:
    """A real PDF with its middle overwritten and its cross-reference table cut off."""
    data = bytearray(lesson_pdf())
    middle = len(data) // 3
    data[middle:middle + 400] = b"\x07" * 400
    return bytes(data[: len(data) * 2 // 3])


def many_objects(claimed: int = 1_000_000_000) -> bytes:
    """A small PDF whose object stream and cross-reference say they hold a billion objects."""
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [] /Count 0 >>",
                 b"<< /Type /ObjStm /N %d /First 10 /Length 10 >>\nstream\n0 0 1 0 2 0\nendstream"
                 % claimed], trailer=b"/Size %d " % claimed)


def nested(depth: int = 100_000) -> bytes:
    """A page whose content stream is an array nested ``depth`` deep."""
    body = b"[" * depth + b"]" * depth
    return _pdf([b"<< /Type /Catalog /Pages 2 0 R >>",
                 b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                 b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
                 b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(zlib.compress(body))
                 + zlib.compress(body) + b"\nendstream"])


def scanned(pages: int = 2) -> bytes:
    """Pages that are only a (large) image each: a scan."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=(595, 842))
    for _ in range(pages):
        page.drawImage(ImageReader(io.BytesIO(png(1200, 1700))), 0, 0, 595, 842)
        page.showPage()
    page.save()
    return buffer.getvalue()


def english(rotated: bool = False, scan_page: bool = False) -> bytes:
    """An English page (heading, two lines), optionally rotated text, and a scanned page after."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=(595, 842))
    page.setFont("Helvetica-Bold", 20)
    page.drawString(72, 770, "Good morning.")
    page.setFont("Helvetica", 12)
    page.drawString(72, 740, "Thank you. Good morning. Thank you. Good morning. Thank you.")
    page.drawString(72, 725, "Good morning. Thank you.")
    if rotated:
        page.saveState()
        page.translate(300, 400)
        page.rotate(30)
        page.drawString(0, 0, "Thank you.")
        page.restoreState()
    page.showPage()
    if scan_page:
        page.drawImage(ImageReader(io.BytesIO(png(600, 800))), 0, 0, 595, 842)
        page.showPage()
    page.save()
    return buffer.getvalue()


def fonts_of(data: bytes) -> set[str]:
    """The base font names a PDF's pages use (subset prefixes removed)."""
    import pypdf

    names = set()
    for page in pypdf.PdfReader(io.BytesIO(data)).pages:
        for font in (page.get("/Resources") or {}).get("/Font", {}).values():
            names.add(str(font.get_object().get("/BaseFont", "")).split("+")[-1])
    return names


def text_lines(data: bytes) -> list[list[tuple[str, tuple[float, float, float, float]]]]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTTextBox

    return [[(" ".join(line.get_text().split()), tuple(line.bbox)) for box in page
             if isinstance(box, LTTextBox) for line in box if line.get_text().strip()]
            for page in extract_pages(io.BytesIO(data))]


def assert_in_boxes(source: bytes, result: bytes, tolerance: float = 0.05) -> None:
    """Every line of the result lies within a text block of the same page of the source,
    give or take ``tolerance`` of the page's width and height."""
    for page, (before, after) in enumerate(zip(blocks(source), text_lines(result),
                                               strict=True), 1):
        width, height = 595, 842
        dx, dy = tolerance * width, tolerance * height
        for text, (x0, y0, x1, y1) in after:
            assert any(x0 >= bx0 - dx and x1 <= bx1 + dx and y0 >= by0 - dy and y1 <= by1 + dy
                       for _, (bx0, by0, bx1, by1) in before), (page, text, (x0, y0, x1, y1))


def sentences(text: str) -> list[str]:
    return re.findall(r"[^。？]+[。？]?", text)


def translated(text: str) -> str:
    """The demo model's English for one of the lesson's blocks, sentence by sentence."""
    return " ".join(ANSWERS[s] for s in sentences(text))


# The lesson's blocks in reading order (pdfminer.six's: the table column by column), and each
# one's English.
LESSON_BLOCKS = (HEADING, *PARAGRAPHS, CELLS[0][0], CELLS[1][0], CELLS[0][1], CELLS[1][1])
LESSON_ENGLISH = tuple(translated(text) for text in LESSON_BLOCKS)
