"""``.docx``: python-docx; text translated per formatting span, everything else kept."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.bilingual import copy_before, enclosing, header
from hunyuan_webui.files.columns import side_by_side
from hunyuan_webui.files.common import Batch, Finish, first_line, spaced_rewrites
from hunyuan_webui.files.ooxml import CONTENT_TYPES, open_office
from hunyuan_webui.segment import is_translatable

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_TRANSPARENT = {_W + "rPr", _W + "lastRenderedPageBreak", _W + "softHyphen", _W + "proofErr"}
# What a bilingual copy's source paragraph leaves to its translation: what may exist once only.
_ONCE = frozenset(_W + name for name in (
    "bookmarkStart", "bookmarkEnd", "drawing", "pict", "object", "footnoteReference",
    "endnoteReference", "commentRangeStart", "commentRangeEnd", "commentReference"))
_TEXT_PARTS = re.compile(r"^/word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$")


def docx_file(data: bytes, batch: Batch, max_bytes: int) -> Finish:
    _check_package(data, max_bytes)

    import docx
    from lxml import etree

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises many types for foreign or broken packages
        raise InputError(
            f"This .docx file cannot be opened as a Word document: {first_line(exc)}"
        ) from None

    batch.closers.append(lambda: _release(document))
    roots, generic = _text_roots(document)
    # Per paragraph, its spans: (text nodes, source text, touches the one before, unit or None).
    paragraphs: list[list[tuple[list, str, bool, int | None]]] = []
    for root in roots:
        for p in root.iter(_W + "p"):
            spans = []
            for nodes, touches in _text_spans(p):
                text = "".join(t.text or "" for t in nodes)
                unit = batch.add_text(text) if is_translatable(text) else None
                spans.append((nodes, text, touches, unit))
            if any(unit is not None for *_, unit in spans):
                paragraphs.append(spans)

    def finish(rendered: list[str]) -> bytes:
        pairs = []
        if batch.bilingual:  # each paragraph's source copied before it (files/bilingual.py)
            pairs = copy_before([enclosing(spans[0][0][0], (_W + "p",))
                                 for spans in paragraphs], _ONCE)
        for spans in paragraphs:
            for nodes, new in spaced_rewrites(spans, rendered, batch.target):
                first = nodes[0]
                first.text = new
                first.set(_XML_SPACE, "preserve")
                for t in nodes[1:]:
                    t.text = ""
        if batch.side_by_side:  # ...and beside it, in two-column tables (files/columns.py)
            side_by_side(document.element.body, pairs, header(batch.lang, batch.target))
        for part, root in generic:
            part._blob = etree.tostring(
                root, xml_declaration=True, encoding="UTF-8", standalone=True
            )
        buf = io.BytesIO()
        document.save(buf)
        return buf.getvalue()

    return finish


def _check_package(data: bytes, max_bytes: int) -> None:
    """Refuse what is not a .docx (an old .doc, another format), and unpack the whole package
    once within its limits (:mod:`~hunyuan_webui.files.package`) before python-docx, which
    reads and parses every part by itself, opens it."""
    with open_office(data, ".docx", "Word", "a", max_bytes, CONTENT_TYPES) as package:
        package.check()


def _release(document) -> None:
    """python-docx's parts and package refer to each other: cut each part's tree and bytes
    loose, so that they are freed now, not when the garbage collector next finds the cycle."""
    for part in list(document.part.package.iter_parts()):
        part._blob = None
        if hasattr(part, "_element"):
            part._element = None


def _text_roots(document) -> tuple[list, list]:
    """The XML roots of the parts that hold text (body, headers, footers, notes), and those of
    them python-docx keeps only as bytes, as ``(part, root)``: they must be written back."""
    from docx.opc.part import XmlPart
    from docx.oxml.parser import parse_xml

    roots, generic = [], []
    for part in document.part.package.iter_parts():
        if not _TEXT_PARTS.match(str(part.partname)):
            continue
        if isinstance(part, XmlPart):
            roots.append(part.element)
        else:
            try:
                root = parse_xml(part.blob)
            except Exception:
                continue
            roots.append(root)
            generic.append((part, root))
    return roots, generic


def _runs(p) -> Iterable:
    """The runs of paragraph ``p`` in order, not descending into nested paragraphs."""
    for child in p:
        tag = child.tag
        if tag == _W + "r":
            yield child
        elif tag == _W + "p" or not isinstance(tag, str):
            continue
        elif tag not in (_W + "pPr", _W + "rPr"):
            yield from _runs(child)  # hyperlinks, insertions, smart tags, content controls


def _text_spans(p) -> Iterable[tuple[list, bool]]:
    """Groups of consecutive ``w:t`` with the same container and formatting, uninterrupted, each
    with whether it touches the group before it (only a change of formatting or container
    between them, no tab, break, image or field)."""
    from lxml import etree

    current: list = []
    touches = False  # whether ``current`` touches the group yielded before it
    parent, fmt = None, None
    for r in _runs(p):
        rpr = r.find(_W + "rPr")
        # lxml returns the same proxy for a node while a reference to it lives: compare with `is`
        r_parent, r_fmt = r.getparent(), etree.tostring(rpr) if rpr is not None else b""
        if current and (r_parent is not parent or r_fmt != fmt):
            yield current, touches
            current, touches = [], True
        parent, fmt = r_parent, r_fmt
        for child in r:
            if child.tag == _W + "t":
                current.append(child)
            elif child.tag not in _TRANSPARENT:
                if current:
                    yield current, touches
                current, touches = [], False
    if current:
        yield current, touches
