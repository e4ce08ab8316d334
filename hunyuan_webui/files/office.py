""".pptx and .xlsx: the text of the package's XML translated, every other byte kept.

Both are zip packages of XML parts, like .docx. Only the parts that hold the text people read
are parsed (with lxml, which python-docx brings); every other member (images, charts, themes,
layouts, styles, formulas, relationships) is copied as it is, in the same order, with the same
compression. Text is translated per *formatting span*, as the .docx translator does: consecutive
runs with identical run properties, so a paragraph in one style is translated whole while a bold
word keeps exactly its formatting.

- ``.pptx``: every ``a:p`` of the slides and the speaker notes (shapes, text boxes, tables,
  grouped shapes); runs are ``a:r`` with ``a:rPr``; line breaks (``a:br``) and fields (the slide
  number, the date: ``a:fld``) stay where they are and are not translated. Slide layouts and
  masters (the template's placeholder prompts) are not translated.
- ``.xlsx``: every shared string (``xl/sharedStrings.xml``, the text of the cells) and every
  inline string of the sheets, plain or rich text (``r`` with ``rPr``); numbers, dates, formulas
  and their cached results, sheet names and comments are not translated. Each sheet's first row
  (its headings, as a rule) is translated but does not decide the workbook's language.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable

from hunyuan_webui.files.common import Batch, Finish, spaced_rewrites
from hunyuan_webui.files.ooxml import open_office
from hunyuan_webui.files.package import parse_xml
from hunyuan_webui.segment import is_translatable

_A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
_S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"


class _Kind:
    def __init__(self, ext: str, name: str, article: str, parts: str, para: str, run: str, rpr: str,
                 text: str, needs: str) -> None:
        self.ext, self.name, self.article, self.parts = ext, name, article, re.compile(parts)
        self.a_name = f"{article} {name}"
        self.para, self.run, self.rpr, self.text, self.needs = para, run, rpr, text, needs


PPTX = _Kind(".pptx", "PowerPoint", "a", r"^ppt/(slides/slide|notesSlides/notesSlide)\d+\.xml$",
             _A + "p", _A + "r", _A + "rPr", _A + "t", "ppt/presentation.xml")
XLSX = _Kind(".xlsx", "Excel", "an", r"^xl/(sharedStrings|worksheets/sheet\d+)\.xml$",
             "", _S + "r", _S + "rPr", _S + "t", "xl/workbook.xml")


def pptx_file(data: bytes, batch: Batch, max_bytes: int) -> Finish:
    return _package_file(data, batch, max_bytes, PPTX)


def xlsx_file(data: bytes, batch: Batch, max_bytes: int) -> Finish:
    return _package_file(data, batch, max_bytes, XLSX)


def _package_file(data: bytes, batch: Batch, max_bytes: int, kind: _Kind) -> Finish:
    from lxml import etree

    members = _open_package(data, max_bytes, kind)
    trees: dict[str, object] = {}
    parsed: dict[str, object] = {}
    # Per paragraph, its spans: (text nodes, source text, touches the one before, unit or None).
    paragraphs: list[list[tuple[list, str, bool, int | None]]] = []
    for info, blob in members:
        if not kind.parts.match(info.filename):
            continue
        root = parse_xml(blob, kind.ext, info.filename)
        parsed[info.filename] = root
        for groups in _spans(root, kind):
            spans = []
            for nodes, touches in groups:
                text = "".join(t.text or "" for t in nodes)
                unit = batch.add_text(text) if is_translatable(text) else None
                spans.append((nodes, text, touches, unit))
            if any(unit is not None for *_, unit in spans):
                paragraphs.append(spans)
                trees[info.filename] = root  # rewritten; a part without text stays as it was

    if kind is XLSX:
        for heading in _first_rows(parsed):
            batch.mark_headings(heading)

    def finish(rendered: list[str]) -> bytes:
        for spans in paragraphs:
            for nodes, new in spaced_rewrites(spans, rendered, batch.target):
                nodes[0].text = new
                if kind is XLSX:
                    nodes[0].set(_XML_SPACE, "preserve")
                for t in nodes[1:]:
                    t.text = ""
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w") as package:
            for info, blob in members:
                root = trees.get(info.filename)
                if root is not None:
                    blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8",
                                          standalone=True)
                package.writestr(info, blob)
        return out.getvalue()

    return finish


def _open_package(data: bytes, max_bytes: int, kind: _Kind) -> list[tuple[zipfile.ZipInfo, bytes]]:
    """Every member of the package, unpacked within its limits (checked whole first, keeping
    nothing, so that a bomb is refused before any of it is held), or a refusal that says what
    the file really is."""
    with open_office(data, kind.ext, kind.name, kind.article, max_bytes, kind.needs) as package:
        package.check()
        return list(package.members())


def _paragraphs(root, kind: _Kind) -> Iterable:
    if kind is PPTX:
        yield from root.iter(kind.para)
    else:  # a shared string, or a cell's inline string
        yield from root.iter(_S + "si")
        yield from root.iter(_S + "is")


def _spans(root, kind: _Kind) -> Iterable[list[tuple[list, bool]]]:
    """Per paragraph, its groups of consecutive text nodes with the same formatting,
    uninterrupted, each with whether it touches the group before it (only a change of
    formatting between them, no break or field)."""
    from lxml import etree

    for p in _paragraphs(root, kind):
        groups: list[tuple[list, bool]] = []
        current: list = []
        touches, fmt = False, None
        for child in p:
            if child.tag == kind.text:  # a plain shared string: its one text
                current.append(child)
                continue
            if child.tag != kind.run:  # a break, a field, phonetic hints: a span ends here
                if current:
                    groups.append((current, touches))
                current, touches, fmt = [], False, None
                continue
            rpr = child.find(kind.rpr)
            r_fmt = etree.tostring(rpr) if rpr is not None else b""
            if current and r_fmt != fmt:
                groups.append((current, touches))
                current, touches = [], True
            fmt = r_fmt
            current.extend(t for t in child if t.tag == kind.text)
        if current:
            groups.append((current, touches))
        yield groups


def _first_rows(parsed: dict[str, object]) -> list[str]:
    """The text of each sheet's first row of cells: its headings, as a rule (English column names
    over Chinese cells made a Chinese workbook "English")."""
    shared = parsed.get("xl/sharedStrings.xml")
    strings = [_cell_text(si) for si in shared.iter(_S + "si")] if shared is not None else []
    out: list[str] = []
    for name, root in parsed.items():
        row = next(root.iter(_S + "row"), None) if name.startswith("xl/worksheets/") else None
        for cell in row.iter(_S + "c") if row is not None else ():
            if cell.get("t") == "inlineStr" and cell.find(_S + "is") is not None:
                out.append(_cell_text(cell.find(_S + "is")))
            elif cell.get("t") == "s":
                try:
                    out.append(strings[int(cell.findtext(_S + "v") or "")])
                except (ValueError, IndexError):
                    continue
    return out


def _cell_text(node) -> str:
    """A string item's text (its runs), without its phonetic hints."""
    return "".join(t.text or "" for t in node.iter(_S + "t") if t.getparent().tag != _S + "rPh")
