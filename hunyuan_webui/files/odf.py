"""OpenDocument (``.odt``, ``.odp``, ``.ods``): the text of ``content.xml`` translated, every other
byte of the package kept.

An OpenDocument file is a zip package (read within bounds by
:mod:`~hunyuan_webui.files.package`) whose ``mimetype`` member names its kind; its text lives in
``content.xml`` (and, for a text document, the headers and footers of the master pages in
``styles.xml``) as ``text:p`` and ``text:h`` paragraphs: in the body, in lists, table cells,
frames and text boxes, footnotes, a presentation's slides and speaker notes
(``presentation:notes``) and a spreadsheet's cells. As for Word, a paragraph's text is translated
per *formatting span*: the consecutive text with the same ``text:span`` styles and the same link
(``text:a``), so a paragraph in one style goes whole and a bold word keeps its formatting; tabs,
line breaks, fields, images, notes and comments stay where they are, and ``text:s`` (a run of
spaces) counts as the spaces it stands for. Links keep their targets, images and every other
member are copied as they are, in the same order with the same compression (``mimetype`` first and
stored, as the format requires).

Not translated: comments (``office:annotation``), a presentation's master pages (the template's
placeholder prompts), sheet names, and a spreadsheet cell that holds a number, a date, a formula
(its shown result is recomputed) or anything else than a string; each sheet's first row is
translated but does not decide the file's language (:meth:`Batch.mark_headings`).

Refused with words: a zip that is no OpenDocument file of that kind, a DOCTYPE in any part (it can
declare entities), and macros (``Basic/``, ``Scripts/``, ``office:script``): a document with code
in it is not translated.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.bilingual import copy_before, enclosing
from hunyuan_webui.files.common import Batch, Finish, binary_kind, spaced_rewrites
from hunyuan_webui.files.package import Limits, Package, is_zip, parse_xml
from hunyuan_webui.segment import is_translatable

_TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
_OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
_STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
_XLINK = "{http://www.w3.org/1999/xlink}"
_CALCEXT = "{urn:org:documentfoundation:names:experimental:calc:xmlns:calcext:1.0}"

KINDS = {  # extension -> (mimetype, what people call it)
    ".odt": ("application/vnd.oasis.opendocument.text", "OpenDocument text (Writer)"),
    ".odp": ("application/vnd.oasis.opendocument.presentation",
             "OpenDocument presentation (Impress)"),
    ".ods": ("application/vnd.oasis.opendocument.spreadsheet",
             "OpenDocument spreadsheet (Calc)"),
}
_PARAGRAPHS = (_TEXT + "p", _TEXT + "h")
_INLINE = (_TEXT + "span", _TEXT + "a")  # containers of text within a paragraph: a span's style
# Marks that take no room in the text: a span of text runs on across them.
_TRANSPARENT = frozenset(_TEXT + name for name in (
    "bookmark", "bookmark-start", "bookmark-end", "reference-mark", "reference-mark-start",
    "reference-mark-end", "soft-page-break", "change-start", "change-end", "change",
    "toc-mark", "alphabetical-index-mark", "user-index-mark")) | {_OFFICE + "annotation-end"}
# Where a paragraph is not the document's text (comments) or is the template's (master pages of a
# presentation hold placeholder prompts).
_SKIP = frozenset({_OFFICE + "annotation", _OFFICE + "scripts", _OFFICE + "event-listeners"})
_MACRO_DIRS = ("Basic/", "Scripts/")
_DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
# What a bilingual copy's source paragraph leaves to its translation: what may exist once only.
_ONCE = frozenset({_DRAW + "frame", _DRAW + "a", _TEXT + "note", _OFFICE + "annotation",
                   _OFFICE + "annotation-end", _TEXT + "bookmark", _TEXT + "bookmark-start",
                   _TEXT + "bookmark-end", _TEXT + "reference-mark", _TEXT + "reference-mark-start",
                   _TEXT + "reference-mark-end", _TEXT + "toc-mark", _TEXT + "alphabetical-index-mark"})



def odf_file(data: bytes, batch: Batch, max_bytes: int, ext: str) -> Finish:
    from lxml import etree

    members = _open(data, ext, max_bytes)
    parts = ["content.xml"] + (["styles.xml"] if ext == ".odt" else [])
    roots, paragraphs = {}, []
    blobs = {info.filename: blob for info, blob in members}
    for name in parts:
        blob = blobs.get(name)
        if blob is None:
            continue
        root = parse_xml(blob, ext, name)
        _refuse_scripts(root, ext, name)
        roots[name] = root
        for p in _paragraphs(root, ext, name):
            spans = [(pieces, text, touches, batch.add_text(text) if is_translatable(text)
                      else None) for pieces, text, touches in _spans(p)]
            if any(unit is not None for *_, unit in spans):
                paragraphs.append(spans)
    if ext == ".ods" and "content.xml" in roots:
        for heading in _first_rows(roots["content.xml"]):
            batch.mark_headings(heading)

    def finish(rendered: list[str]) -> bytes:
        if batch.bilingual:  # each paragraph's source copied before it (files/bilingual.py)
            copy_before([_paragraph_of(spans) for spans in paragraphs], _ONCE)
        for spans in paragraphs:
            for pieces, new in spaced_rewrites(spans, rendered, batch.target):
                _write(pieces, new)
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as package:
            for info, blob in members:
                root = roots.get(info.filename)
                if root is not None:
                    blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
                package.writestr(info, blob)
        return out.getvalue()

    return finish


def _open(data: bytes, ext: str, max_bytes: int) -> list[tuple[zipfile.ZipInfo, bytes]]:
    """Every member, unpacked within the upload's limits (the whole package checked first), once
    the package is known to be an OpenDocument file of kind ``ext`` without macros."""
    mimetype, name = KINDS[ext]
    if not is_zip(data):
        found = binary_kind(data)
        raise InputError(f"This {ext} file is {found or 'not an OpenDocument file'}; expected "
                         f"an {name} file.")
    with Package(data, ext, Limits.for_upload(max_bytes)) as package:
        declared = package.read("mimetype").strip() if package.info("mimetype") else b""
        if declared != mimetype.encode() or package.info("content.xml") is None:
            kind = next((k for k, (m, _) in KINDS.items() if declared == m.encode()), None)
            said = f"it is {KINDS[kind][1]} inside: name it {kind}" if kind else \
                "it is a zip without the parts of one"
            raise InputError(f"This {ext} file is not an {name} file ({said}).")
        macros = [n for n in package.names() if n.startswith(_MACRO_DIRS)]
        if macros:
            raise InputError(f"This {ext} file holds macros ({macros[0][:80]}); documents with "
                             f"code in them are not translated. Save a copy without macros and "
                             f"upload that.")
        package.check()
        return list(package.members())


def _refuse_scripts(root, ext: str, name: str) -> None:
    for tag in (_OFFICE + "script", _OFFICE + "event-listeners"):
        found = next(root.iter(tag), None)
        if found is not None and (len(found) or (found.text or "").strip()):
            raise InputError(f"This {ext} file holds scripts ({name}); documents with code in "
                             f"them are not translated. Save a copy without macros and upload "
                             f"that.")


def _paragraphs(root, ext: str, name: str) -> Iterator:
    """The part's paragraphs that hold the document's text (see the module's notes)."""
    for p in root.iter(*_PARAGRAPHS):
        if any(a.tag in _SKIP for a in p.iterancestors()):
            continue
        if name == "styles.xml" and not any(a.tag == _STYLE + "master-page"
                                            for a in p.iterancestors()):
            continue  # only the headers and footers of a text document's page styles
        if ext == ".ods" and not _string_cell(p):
            continue
        yield p


def _string_cell(p) -> bool:
    """Whether a spreadsheet paragraph is text to translate: outside cells (a drawing's text), or
    in a cell that holds a string, not a number, date, formula or other value."""
    cell = next((a for a in p.iterancestors() if a.tag in (_TABLE + "table-cell",
                                                             _TABLE + "covered-table-cell")),
                None)
    if cell is None:
        return True
    if cell.get(_TABLE + "formula") is not None:
        return False
    kind = cell.get(_OFFICE + "value-type") or cell.get(_CALCEXT + "value-type")
    return kind in (None, "string")


def _pieces(el, key: tuple) -> Iterator[tuple | None]:
    """The text of paragraph (or inline element) ``el`` as pieces ``(node, "text"|"tail"|"space",
    the text, key)`` in order, ``key`` being the styles and link around it; None where a span
    must end (a tab, a break, a field, an image, a note)."""
    yield el, "text", el.text or "", key
    for child in el:
        tag = child.tag
        if tag in _INLINE:
            sig = (tag, child.get(_TEXT + "style-name"), child.get(_XLINK + "href"))
            yield from _pieces(child, key + (sig,))
        elif tag == _TEXT + "s":
            yield child, "space", " " * _count(child), key
        elif tag not in _TRANSPARENT:
            yield None
        yield child, "tail", child.tail or "", key


def _count(space) -> int:
    try:
        return max(1, min(int(space.get(_TEXT + "c") or 1), 1000))
    except ValueError:
        return 1


def _spans(p) -> Iterable[tuple[list, str, bool]]:
    """Groups of consecutive pieces with the same styles, uninterrupted: ``(pieces, text,
    touches)``, ``touches`` being whether only a change of style stands between the group and
    the one before it."""
    current: list = []
    key, touches = None, False
    for piece in _pieces(p, ()):
        if piece is None:
            if current:
                yield current, _text(current), touches
            current, key, touches = [], None, False
            continue
        node, where, text, piece_key = piece
        if not text and where != "space":
            continue
        if current and piece_key != key:
            yield current, _text(current), touches
            current, touches = [], True
        key = piece_key
        current.append((node, where, text))
    if current:
        yield current, _text(current), touches


def _text(pieces: list) -> str:
    return "".join(text for _, _, text in pieces)


def _write(pieces: list, new: str) -> None:
    """Put ``new`` where the span's first piece was and empty the others; its ``text:s`` marks
    go (a span that starts with one takes its place)."""
    spaces = []
    for i, (node, where, _) in enumerate(pieces):
        value = new if i == 0 else ""
        if where == "space":
            spaces.append(node)
        elif where == "text":
            node.text = value
        else:
            node.tail = value
    if pieces[0][1] == "space":  # the text goes where the mark was (_drop moves its tail)
        spaces[0].tail = new + (spaces[0].tail or "")
    for node in spaces:
        _drop(node)


def _drop(node) -> None:
    """Remove element ``node`` keeping its tail where it was."""
    tail = node.tail
    node.tail = None
    previous, parent = node.getprevious(), node.getparent()
    if tail:
        if previous is not None:
            previous.tail = (previous.tail or "") + tail
        else:
            parent.text = (parent.text or "") + tail
    parent.remove(node)


def _paragraph_of(spans: list):
    """The paragraph (``text:p``/``text:h``) a paragraph's spans were read from."""
    node, where, _ = spans[0][0][0]
    holder = node if where == "text" else node.getparent()  # a tail's, a space's: its parent's
    return holder if holder.tag in _PARAGRAPHS else enclosing(holder, _PARAGRAPHS)


def _first_rows(root) -> list[str]:
    """The text of each sheet's first row: its headings, as a rule."""
    out = []
    for table in root.iter(_TABLE + "table"):
        row = next(table.iter(_TABLE + "table-row"), None)
        if row is not None:
            out.extend("".join(p.itertext()) for p in row.iter(_TEXT + "p"))
    return out
