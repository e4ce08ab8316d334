"""A PDF's pages read with pdfminer.six: each page's size, its text blocks with their boxes and
font sizes, whether it holds images, and whether its text can be laid out again in place."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from hunyuan_webui.errors import InputError


@dataclass
class Block:
    text: str
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in PDF points (origin bottom left)
    size: float  # the block's most common font size
    lines: int
    unit: int | None = None  # the block's document in the batch


@dataclass
class Page:
    number: int  # 1-based
    width: float
    height: float
    blocks: list[Block] = field(default_factory=list)
    images: int = 0
    upright: bool = True  # False: rotated or vertical text (laid out as flowing text)
    edges: list[tuple[float, float, float, float]] = field(default_factory=list)  # rules, boxes
    # The images' XObject names and boxes (where a Word copy of the page puts them)
    pictures: list[tuple[str, tuple[float, float, float, float]]] = field(default_factory=list)

    @property
    def scanned(self) -> bool:
        """Only images, no text: a scan (there is no OCR)."""
        return not self.blocks and self.images > 0


def read_pages(data: bytes) -> list[Page]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError

    pages = []
    try:
        for number, layout in enumerate(extract_pages(io.BytesIO(data), laparams=LAParams(line_margin=0.8)), 1):
            pages.append(_page(number, layout))
    except (PDFEncryptionError, PDFPasswordIncorrect):
        raise InputError("This PDF is encrypted. Save an unprotected copy and upload "
                         "that.") from None
    except RecursionError:
        raise InputError("This PDF is damaged: its objects nest too deeply.") from None
    except (PDFSyntaxError, ValueError, KeyError, TypeError, AttributeError, IndexError,
            AssertionError, OverflowError) as exc:
        raise InputError(f"This PDF is damaged and cannot be read: {str(exc)[:200] or type(exc).__name__}") from None
    except Exception as exc:  # pdfminer raises many other types for broken files
        raise InputError(f"This PDF is damaged and cannot be read: "
                         f"{str(exc)[:200] or type(exc).__name__}") from None
    if not pages:
        raise InputError("This PDF has no pages (is it damaged?).")
    return pages


def _page(number: int, layout) -> Page:
    from pdfminer.layout import LTCurve, LTImage, LTTextBox, LTTextBoxVertical

    x0, y0, x1, y1 = layout.bbox
    page = Page(number, x1 - x0, y1 - y0)
    for item in _walk(layout):
        if isinstance(item, LTImage):
            page.images += 1
            page.pictures.append((item.name, tuple(item.bbox)))
        elif isinstance(item, LTTextBoxVertical):
            page.upright = False
            page.blocks.append(_block(item))
        elif isinstance(item, LTTextBox):
            page.blocks.extend(block for block in _blocks(item) if block.text)
            if not _upright(item):
                page.upright = False
        elif isinstance(item, LTCurve):  # lines and rectangles too
            page.edges.append(tuple(item.bbox))
    return page


def _walk(item):
    from pdfminer.layout import LTFigure, LTPage, LTTextBox

    for child in item:
        yield child
        if isinstance(child, LTFigure | LTPage) and not isinstance(child, LTTextBox):
            yield from _walk(child)


def _chars(box):
    from pdfminer.layout import LTChar

    for line in box:
        for char in getattr(line, "_objs", ()):
            if isinstance(char, LTChar):
                yield char


def _blocks(box) -> list[Block]:
    """A box's lines as blocks: a new block where the font size changes (a heading set close
    above its paragraph)."""
    groups: list[list] = []
    for line in box:
        size = _size([line])
        if groups and abs(_size(groups[-1]) - size) <= 0.15 * size:
            groups[-1].append(line)
        else:
            groups.append([line])
    return [_block(lines) for lines in groups]


def _size(lines) -> float:
    sizes: dict[float, int] = {}
    for char in _chars(lines):
        size = round(char.size, 1)
        sizes[size] = sizes.get(size, 0) + 1
    return max(sizes, key=sizes.get) if sizes else 10.0


def _block(group) -> Block:
    lines = [" ".join(line.get_text().split()) for line in group]
    lines = [line for line in lines if line]
    box = (min(line.x0 for line in group), min(line.y0 for line in group),
           max(line.x1 for line in group), max(line.y1 for line in group))
    return Block(_join(lines), box, _size(group), max(len(lines), 1))


def _join(lines: list[str]) -> str:
    """A block's lines as one text: a word hyphenated at a line's end joined again; no space
    between lines of a script written without spaces."""
    out = ""
    for line in lines:
        if not out:
            out = line
        elif out.endswith("-") and out[-2:-1].isalpha() and line[:1].islower():
            out = out[:-1] + line
        elif ord(out[-1]) >= 0x2E80 and ord(line[0]) >= 0x2E80:
            out += line
        else:
            out += " " + line
    return out


def _upright(box) -> bool:
    """Whether a horizontal box's characters are upright (no rotated or skewed text)."""
    for char in _chars(box):
        a, b, c, d = char.matrix[:4]
        if abs(b) > 1e-3 or abs(c) > 1e-3 or a <= 0 or d <= 0:
            return False
    return True
