"""PDFs built in the tests with reportlab (a heading, paragraphs of demo phrases, a table, an
image), and what a result PDF holds (its text blocks read back with pdfminer.six)."""

from __future__ import annotations

import io
import zlib

from PIL import Image

HEADING = "你好"
PARAGRAPHS = (
    "谢谢你的帮助。早上好。我在学习中文。会议九点开始。请坐。这个多少钱？火车站在哪里？"
    "谢谢你的帮助。早上好。我在学习中文。",
    "会议九点开始。请坐。谢谢。",
)
CELLS = (("早上好。", "谢谢。"), ("请坐。", "你好"))
ANSWERS = {"你好": "Hello", "谢谢你的帮助。": "Thank you for your help.", "早上好。": "Good morning.",
           "我在学习中文。": "I am learning Chinese.", "会议九点开始。": "The meeting starts at nine o'clock.",
           "请坐。": "Please sit down.", "这个多少钱？": "How much does this cost?",
           "火车站在哪里？": "Where is the train station?", "谢谢。": "Thank you."}


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
