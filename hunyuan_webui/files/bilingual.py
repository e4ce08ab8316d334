"""Bilingual copies for learners: a text beside its translation, in two columns (a CSV file and a
Word table, the page's export), and a translated document whose every paragraph follows its
source (:data:`BILINGUAL` formats, ``bilingual=true`` on ``/v1/documents``).

A document's paragraph is copied before it is translated (:func:`copy_before`): the copy keeps the
source, the paragraph itself takes the translation, so both keep the paragraph's style (a heading
stays a heading, a table cell holds both). What may exist once only (a picture, a footnote, a
bookmark, a comment's anchor) stays with the translation, not in the copy. HTML (and an EPUB's
chapters) does the same with the markup of each innermost block (:mod:`~hunyuan_webui.files.html`).

The rows are paragraphs: the service gives a translation the line layout of its source (every
line break, blank line and indent is kept, only the sentences are replaced), so line ``i`` of the
translation is the translation of line ``i`` of the source. Where the two do not line up (a model
wrote a line break of its own, or the text was edited since), the non-empty paragraphs are paired
if their counts agree, else the whole texts make one row: never a row beside the wrong one.

The CSV is UTF-8 with a byte order mark, so that Excel opens Chinese as Chinese; the .docx is one
two-column table (python-docx), its header row repeated on every page.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from hunyuan_webui.errors import InputError
from hunyuan_webui.files import formulas

Rows = list[tuple[str, str]]
# The formats a bilingual copy is made of: paragraph by paragraph (a PDF's as flowing text).
BILINGUAL = frozenset({".docx", ".odt", ".odp", ".ods", ".html", ".htm", ".epub", ".pdf"})
# The formats whose bilingual copy may also be side by side, in a two-column table.
COLUMNS = frozenset({".pdf", ".docx"})
# What a file may come back as besides its own format (``output_format``).
OUTPUTS = {".pdf": frozenset({".docx"})}
PARAGRAPHS = "paragraphs"  # each paragraph followed by its translation
SIDE_BY_SIDE = "columns"  # a two-column table


def header(source: str | None, target: str | None) -> tuple[str, str]:
    """A side-by-side copy's column names: the languages' English names ("Source" where the
    file's language was not given)."""
    from hunyuan_webui import languages

    return (languages.get(source).english if source else "Source",
            languages.get(target or "en").english)


def mode(value: bool | str | None) -> str:
    """A bilingual request as one of "" (none), :data:`PARAGRAPHS` or :data:`SIDE_BY_SIDE`:
    ``True``/"true" ask for paragraphs."""
    if value is None or value is False:
        return ""
    if value is True:
        return PARAGRAPHS
    word = str(value).strip().lower()
    if word in ("", "false", "0", "no", "off"):
        return ""
    if word in ("true", "1", "yes", "on", PARAGRAPHS):
        return PARAGRAPHS
    if word in (SIDE_BY_SIDE, "side-by-side", "table"):
        return SIDE_BY_SIDE
    raise InputError("Field 'bilingual' is true, false, paragraphs or columns "
                     "(side by side, in a two-column table).")


def copy_before(paragraphs: Iterable, drop: frozenset[str]) -> list[tuple[object, object]]:
    """Put a copy of each paragraph (lxml elements) right before it, without the elements
    ``drop`` (tags that may exist once only): the copy keeps the source text, the paragraph is
    then translated in place. A paragraph met twice (nested ones) is copied once. The pairs
    ``(copy, paragraph)``."""
    import copy

    seen: set[int] = set()
    made = []
    for p in paragraphs:
        if id(p) in seen:
            continue
        seen.add(id(p))
        twin = copy.deepcopy(p)
        for node in [n for n in twin.iter() if n is not twin and n.tag in drop]:
            parent = node.getparent()
            if parent is None:
                continue
            tail = node.tail
            previous = node.getprevious()
            parent.remove(node)
            if tail:  # the text after a dropped element stays
                if previous is not None:
                    previous.tail = (previous.tail or "") + tail
                else:
                    parent.text = (parent.text or "") + tail
        twin.tail = None
        p.addprevious(twin)
        made.append((twin, p))
    return made


def enclosing(node, tags: tuple[str, ...]):
    """The nearest ancestor of ``node`` (an lxml element) with one of ``tags``."""
    return next((a for a in node.iterancestors() if a.tag in tags), None)


def pairs(source: str, translation: str) -> Rows:
    """The text and its translation, paragraph beside paragraph (see the module's notes)."""
    left = [line.strip() for line in source.splitlines()]
    right = [line.strip() for line in translation.splitlines()]
    if len(left) == len(right):
        return [(a, b) for a, b in zip(left, right, strict=True) if a or b]
    left, right = [a for a in left if a], [b for b in right if b]
    if len(left) == len(right):
        return list(zip(left, right, strict=True))
    return [(source.strip(), translation.strip())]


def csv_bytes(rows: Rows, header: Sequence[str]) -> bytes:
    """Two columns, ``header`` first, UTF-8 with a BOM (Excel's cue for UTF-8)."""
    buffer = io.StringIO()
    writer = formulas.writer(buffer)  # a text or its translation is never a formula
    writer.writerow(list(header))
    writer.writerows(rows)
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


def docx_bytes(rows: Sequence[Sequence[str]], header: Sequence[str], *, title: str = "",
               rtl: Sequence[bool] = ()) -> bytes:
    """A Word document of one table: ``header`` (bold, repeated on each page), then one row per
    item of ``rows`` (a paragraph beside its translation; a class's sentence beside each
    language's). ``title`` is a heading above it; ``rtl[i]`` sets column ``i`` right to left
    (Arabic, Hebrew...). More than three columns turn the page to landscape."""
    import docx
    from docx.enum.section import WD_ORIENT
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = docx.Document()
    if len(header) > 3:
        section = document.sections[0]
        section.orientation = WD_ORIENT.LANDSCAPE
        section.page_width, section.page_height = section.page_height, section.page_width
    if title:
        document.add_heading(title, level=1)
    table = document.add_table(rows=1, cols=len(header))
    table.style = "Table Grid"
    for cell, name in zip(table.rows[0].cells, header, strict=True):
        cell.paragraphs[0].add_run(name).bold = True
    repeat = OxmlElement("w:tblHeader")
    repeat.set(qn("w:val"), "true")
    table.rows[0]._tr.get_or_add_trPr().append(repeat)
    for row in rows:
        for i, (cell, text) in enumerate(zip(table.add_row().cells, row, strict=True)):
            cell.text = text
            if i < len(rtl) and rtl[i]:
                cell.paragraphs[0].paragraph_format.element.get_or_add_pPr().append(
                    OxmlElement("w:bidi"))
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()
