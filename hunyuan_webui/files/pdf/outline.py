"""A PDF read as a document, for the copies of it that are not laid out like it (a Word file, a
bilingual PDF): its text blocks in reading order (pdfminer.six's: columns one after another, a
table column by column), headings told by font size, and its images where they stand among the
blocks."""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hunyuan_webui.files.pdf.layout import Block, Page

HEADING = 1.2  # a block set this much larger than the body text is a heading
HEADING_CHARS = 200  # a longer block is body text, whatever its size
MAX_PICTURE_PIXELS = 40_000_000  # a larger image is left out (and counted)


@dataclass(frozen=True)
class Item:
    """A block of text (with its heading level, 0 for body text) or a picture."""

    block: Block | None = None
    level: int = 0
    picture: Any = None  # a PIL image
    width: float = 0.0  # the picture's width on the page, in points


def levels(pages: Sequence[Page]) -> dict[float, int]:
    """Heading levels by font size: the body text's size is the one most characters have; each
    size at least :data:`HEADING` times larger is a heading, the largest level 1 (at most 3)."""
    weights: Counter[float] = Counter()
    for page in pages:
        for block in page.blocks:
            weights[round(block.size, 1)] += len(block.text)
    if not weights:
        return {}
    body = max(weights, key=lambda size: weights[size])
    bigger = sorted((size for size in weights if size >= body * HEADING), reverse=True)
    return {size: min(i + 1, 3) for i, size in enumerate(bigger)}


def items(data: bytes, pages: Sequence[Page]) -> tuple[list[list[Item]], int]:
    """Each page's items in reading order (a picture after the blocks that start above it), and
    how many images could not be read (left out)."""
    headings = levels(pages)
    pictures, missing = _pictures(data, pages)
    out = []
    for page, found in zip(pages, pictures, strict=True):
        row = [Item(block, headings.get(round(block.size, 1), 0)
                    if len(block.text) <= HEADING_CHARS else 0) for block in page.blocks]
        for top, picture, width in sorted(found, key=lambda p: -p[0]):
            above = [i for i, item in enumerate(row)
                     if item.block is not None and item.block.box[3] >= top]
            row.insert(above[-1] + 1 if above else 0, Item(picture=picture, width=width))
        out.append(row)
    return out, missing


def _pictures(data: bytes, pages: Sequence[Page]) -> tuple[list[list[tuple]], int]:
    """Per page, its images as ``(top, PIL image, width)`` (pypdf decodes them, by the names
    pdfminer.six gave them)."""
    import pypdf

    reader = pypdf.PdfReader(io.BytesIO(data))
    out, missing = [], 0
    for page, source in zip(pages, reader.pages, strict=True):
        found = []
        if page.pictures:
            images = dict(_named(source))
            for name, (x0, _, x1, y1) in page.pictures:
                picture = _picture(images.get(name))
                if picture is None:
                    missing += 1
                else:
                    found.append((y1, picture, x1 - x0))
        out.append(found)
    return out, missing


def _named(page) -> Iterator[tuple[str, Any]]:
    try:
        for image in page.images:
            yield image.name.rsplit(".", 1)[0], image
    except Exception:  # noqa: BLE001 - an image pypdf cannot list is left out, and counted
        return


def _picture(image) -> Any:
    if image is None:
        return None
    try:
        picture = image.image
        if picture.width * picture.height > MAX_PICTURE_PIXELS:
            return None
        return picture if picture.mode in ("RGB", "L") else picture.convert("RGB")
    except Exception:  # noqa: BLE001 - a damaged or exotic image is left out, and counted
        return None
