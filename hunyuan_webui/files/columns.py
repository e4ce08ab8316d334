"""A Word file's bilingual copy side by side (``bilingual=columns`` on a ``.docx``): once each
paragraph has its source copied before it (:func:`~hunyuan_webui.files.bilingual.copy_before`),
each run of such pairs in the document's body becomes a two-column table, the source on the left
and the translation on the right, under a heading row naming the languages (repeated on every
page). The paragraphs are moved into the cells as they are, so each keeps its style, runs,
pictures and links; what stands between two runs of pairs (a table, a paragraph without text, a
section break) stays where it was, between two tables. Tables of the source keep both texts in
each cell, one after the other, as in the paragraph-by-paragraph copy."""

from __future__ import annotations

from collections.abc import Sequence

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
WIDTH = 4680  # twentieths of a point: half of a 6.5-inch text width


def side_by_side(body, pairs: Sequence[tuple[object, object]], header: tuple[str, str]) -> int:
    """Put each ``(source, translation)`` pair of paragraphs that are children of ``body``
    (an lxml ``w:body``), one after the other, into two-column tables; the number of tables."""
    mine = {id(source): translation for source, translation in pairs
            if source.getparent() is body and translation.getparent() is body
            and source.getnext() is translation}
    tables, table = 0, None
    for node in list(body):
        if id(node) in mine:
            if table is None:
                table = _table(header)
                node.addprevious(table)
                tables += 1
            translation = mine[id(node)]
            _row(table, node, translation)
        elif table is not None and not any(id(node) == id(t) for t in mine.values()):
            table = None  # something else stands here: the next pair starts a new table
    content = [node for node in body if node.tag != _W + "sectPr"]
    if content and content[-1].tag == _W + "tbl":  # Word ends a body with a paragraph
        content[-1].addnext(_element("p"))
    return tables


def _element(tag: str, **attrs: str):
    from lxml import etree

    node = etree.Element(_W + tag)
    for name, value in attrs.items():
        node.set(_W + name, value)
    return node


def _table(header: tuple[str, str]):
    table = _element("tbl")
    properties = table.makeelement(_W + "tblPr")
    properties.append(_element("tblW", w="0", type="auto"))
    borders = _element("tblBorders")
    for side in ("top", "left", "bottom", "right", "insideH", "insideV"):
        borders.append(_element(side, val="single", sz="4", space="0", color="auto"))
    properties.append(borders)
    table.append(properties)
    grid = _element("tblGrid")
    for _ in range(2):
        grid.append(_element("gridCol", w=str(WIDTH)))
    table.append(grid)
    row = _element("tr")
    row_properties = _element("trPr")
    row_properties.append(_element("tblHeader"))
    row.append(row_properties)
    for name in header:
        paragraph = _element("p")
        run = _element("r")
        run_properties = _element("rPr")
        run_properties.append(_element("b"))
        run.append(run_properties)
        text = _element("t")
        text.text = name
        run.append(text)
        paragraph.append(run)
        row.append(_cell(paragraph))
    table.append(row)
    return table


def _cell(paragraph):
    cell = _element("tc")
    properties = _element("tcPr")
    properties.append(_element("tcW", w=str(WIDTH), type="dxa"))
    cell.append(properties)
    cell.append(paragraph)
    return cell


def _row(table, source, translation) -> None:
    row = _element("tr")
    for paragraph in (source, translation):  # moved, not copied
        row.append(_cell(paragraph))
    table.append(row)
