"""Hostile packages built in the tests: Office files of a few hundred kilobytes that unpack to tens
of megabytes, and the other ways a zip or its XML can lie.

Deflate packs repeated XML about 1000 to 1, so a bomb is a real package (made by python-docx,
python-pptx, openpyxl) with one of its parts, or many added ones, inflated with markup that
repeats. Each is written through ``ZipFile.open(name, "w")`` a megabyte at a time: the tests never
hold the unpacked bytes themselves.
"""

from __future__ import annotations

import functools
import io
import struct
import zipfile
from collections.abc import Callable, Iterable

MB = 1_000_000

# The part whose markup a bomb inflates, where its body starts, and what repeats.
TEXT_PART = {
    ".docx": ("word/document.xml", b"<w:body>", b"<w:p><w:r><w:t>x</w:t></w:r></w:p>"),
    ".pptx": ("ppt/slides/slide1.xml", b"<p:spTree>", b"<p:sp/>"),
    ".xlsx": ("xl/worksheets/sheet1.xml", b"<sheetData>", b"<row/>"),
}
KINDS = tuple(TEXT_PART)


@functools.cache
def base(ext: str) -> bytes:
    """A small, real package of the kind: a paragraph, a slide, a cell."""
    buffer = io.BytesIO()
    if ext == ".docx":
        import docx

        document = docx.Document()
        document.add_paragraph("谢谢你的帮助。")
        document.save(buffer)
    elif ext == ".pptx":
        import pptx

        deck = pptx.Presentation()
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = "谢谢你的帮助。"
        deck.save(buffer)
    else:
        import openpyxl

        book = openpyxl.Workbook()
        book.active["A1"] = "谢谢你的帮助。"
        book.save(buffer)
    return buffer.getvalue()


def repeat(unit: bytes, size: int) -> Iterable[bytes]:
    """About ``size`` bytes of ``unit`` repeated (whole units: the markup stays well formed)."""
    block = unit * (MB // len(unit))
    left = size - size % len(unit)
    while left > 0:
        yield block[:left]
        left -= len(block)


def rebuild(data: bytes, replace: dict[str, Callable[[bytes], Iterable[bytes]]] | None = None,
            extra: Iterable[tuple[str, Iterable[bytes]]] = ()) -> bytes:
    """``data``'s members again, each one named in ``replace`` written from what its function
    makes of the original bytes, then the ``extra`` members; all deflated."""
    replace = replace or {}
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            original = source.read(info)
            with target.open(info.filename, "w", force_zip64=False) as stream:
                for chunk in replace[info.filename](original) if info.filename in replace \
                        else [original]:
                    stream.write(chunk)
        for name, chunks in extra:
            with target.open(name, "w") as stream:
                for chunk in chunks:
                    stream.write(chunk)
    return out.getvalue()


def inflated(original: bytes, after: bytes, unit: bytes, size: int) -> Iterable[bytes]:
    """``original`` with ``size`` bytes of ``unit`` repeated right after ``after``."""
    at = original.index(after) + len(after)
    yield original[:at]
    yield from repeat(unit, size)
    yield original[at:]


@functools.cache
def one_member(ext: str, size: int = 60 * MB) -> bytes:
    """The text part of a real package inflated to ``size`` bytes of repeated markup."""
    part, after, unit = TEXT_PART[ext]
    return rebuild(base(ext), {part: lambda original: inflated(original, after, unit, size)})


@functools.cache
def many_members(ext: str, count: int = 120, each: int = MB // 2) -> bytes:
    """A real package with ``count`` added XML parts of ``each`` bytes: none large alone."""
    unit = b"<a/>"
    extra = ((f"bomb/part{i}.xml", repeat(unit, each)) for i in range(count))
    return rebuild(base(ext), extra=extra)


@functools.cache
def lying_sizes(ext: str, size: int = 60 * MB, claimed: int = 1000) -> bytes:
    """:func:`one_member`, with the member's unpacked size claimed to be ``claimed`` bytes in its
    local header and in the central directory."""
    data = bytearray(one_member(ext, size))
    part = TEXT_PART[ext][0].encode()
    for signature, size_at, name_at in ((b"PK\x01\x02", 24, 46), (b"PK\x03\x04", 22, 30)):
        at = data.find(signature)
        while at >= 0:
            name_length = struct.unpack_from("<H", data, at + 28 if signature == b"PK\x01\x02"
                                             else at + 26)[0]
            if bytes(data[at + name_at:at + name_at + name_length]) == part:
                struct.pack_into("<I", data, at + size_at, claimed)
                break
            at = data.find(signature, at + 4)
    return bytes(data)


BOMBS = {"one member": one_member, "many members": many_members, "lying sizes": lying_sizes}


# -- the other lies --------------------------------------------------------------------------------
@functools.cache
def empty_members(count: int = 100_000) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as package:
        for i in range(count):
            package.writestr(f"m{i}", b"")
    return out.getvalue()


def outside_name(ext: str) -> bytes:
    """A real package with a member named ``../../x``."""
    return rebuild(base(ext), extra=[("../../x", [b"escaped"])])


@functools.cache
def zip_in_zip(ext: str, depth: int = 3) -> bytes:
    """A package whose one member is a zip of a zip ... of a bomb."""
    data = one_member(ext, 20 * MB)
    for level in range(depth):
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
            package.writestr(f"inner{level}.zip", data)
        data = out.getvalue()
    return data


BILLION_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">' + b"".join(
    b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
    for i in range(1, 10)) + b"]>")


def billion_laughs(ext: str) -> bytes:
    """The text part with a DOCTYPE that declares the "billion laughs" entities, used once."""
    part = TEXT_PART[ext][0]

    def laughing(original: bytes) -> Iterable[bytes]:
        body = original.split(b"?>", 1)[1] if original.startswith(b"<?xml") else original
        after = TEXT_PART[ext][1]
        at = body.index(after) + len(after)
        yield BILLION_LAUGHS + body[:at] + b"&lol9;" + body[at:]

    return rebuild(base(ext), {part: laughing})


def deep_nesting(ext: str, depth: int = 100_000) -> bytes:
    """The text part with elements nested ``depth`` levels deep."""
    part, after, _ = TEXT_PART[ext]
    return rebuild(base(ext), {part: lambda original: _nested(original, after, depth)})


def _nested(original: bytes, after: bytes, depth: int) -> Iterable[bytes]:
    at = original.index(after) + len(after)
    yield original[:at] + b"<a>" * depth + b"</a>" * depth + original[at:]


LIES = {"100,000 empty members": lambda ext: empty_members(),
        "a member named ../../x": outside_name, "a zip in a zip": zip_in_zip,
        "billion laughs": billion_laughs, "nested 100,000 deep": deep_nesting}
