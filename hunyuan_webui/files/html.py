""".html: the text between tags translated, every byte of markup copied as it is.

The standard library's :class:`html.parser.HTMLParser` finds the text (it knows comments,
doctypes, CDATA, character references and the raw text of ``<script>`` and ``<style>``); the
source range of each piece of text is recorded, and the output is the input with only those
ranges replaced, so tags, attributes, comments and whitespace between tags come back byte for
byte, as the .md translator keeps Markdown. The text is unescaped before it is translated and
escaped again after. Not translated, as in DeepL's HTML handling: ``<script>``, ``<style>`` and
elements marked ``translate="no"`` (with everything inside them). A sentence cut by an
inline tag (``a <b>very</b> good day``) is translated in pieces, the price of never sending
markup to the model. An image's ``alt`` text (quoted) is translated too: it is what a screen
reader reads, and what shows where the image cannot.

A bilingual copy (:attr:`Batch.bilingual`) gives each innermost block that holds text (a
paragraph, a heading, a list item, a table cell...) twice: as it was, then translated, with the
target's ``lang`` on the copy's tag; text outside such a block is translated in place.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

from hunyuan_webui.files.common import Batch, Finish, Text
from hunyuan_webui.segment import is_translatable

RAW = frozenset({"script", "style"})
BLOCKS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "li", "dt", "dd", "td", "th",
                    "blockquote", "caption", "figcaption", "div", "pre", "address", "summary",
                    "legend"})
ALT = frozenset({"img", "area"})  # elements whose alt text is translated
_ALT_RE = re.compile(r"""\salt\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                  "param", "source", "track", "wbr"})


class _Texts(HTMLParser):
    """Records ``(start, raw text)`` of every piece of text outside ignored elements."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=False)
        self.source = source
        self.line_starts = [0]
        for i, ch in enumerate(source):
            if ch == "\n":
                self.line_starts.append(i + 1)
        self.pieces: list[tuple[int, int]] = []  # (start, end) in source
        self.ignored: list[str] = []  # the open elements not to translate, innermost last
        self.raw = False
        self.open_blocks: list[tuple[str, int]] = []  # (tag, start) of the open blocks
        self.blocks: list[tuple[int, int]] = []  # (start, end) of each closed block, markup and all
        self.attributes: list[tuple[int, int]] = []  # (start, end) of each image's alt text

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.raw = tag in RAW
        if tag in ALT and not self.ignored and not any(
                k == "translate" and (v or "").strip().lower() == "no" for k, v in attrs):
            self._alt(self.get_starttag_text() or "")
        if tag in VOID:
            return
        if tag in BLOCKS:
            self.open_blocks.append((tag, self._offset()))
        if self.ignored or any(k == "translate" and (v or "").strip().lower() == "no"
                               for k, v in attrs):
            self.ignored.append(tag)

    def _alt(self, tag: str) -> None:
        """The range of an image's ``alt`` text (a quoted value), read out to those who do not
        see the image: translated like the text between tags."""
        match = _ALT_RE.search(tag)
        if match is not None:
            group = 1 if match.group(1) is not None else 2
            start = self._offset()
            self.attributes.append((start + match.start(group), start + match.end(group)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in BLOCKS:  # an empty block (<div/>) holds no text: not one
            self.handle_starttag(tag, attrs)
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        self.raw = False
        if tag in BLOCKS and any(t == tag for t, _ in self.open_blocks):
            while self.open_blocks:
                open_tag, start = self.open_blocks.pop()
                if open_tag == tag:
                    end = self.source.find(">", self._offset())
                    self.blocks.append((start, len(self.source) if end < 0 else end + 1))
                    break
        if self.ignored and tag in self.ignored:
            while self.ignored and self.ignored.pop() != tag:
                pass

    def _text(self, length: int) -> None:
        start = self._offset()
        if self.raw or self.ignored:
            return
        if self.pieces and self.pieces[-1][1] == start:  # text, a reference, text: one piece
            self.pieces[-1] = (self.pieces[-1][0], start + length)
        else:
            self.pieces.append((start, start + length))

    def handle_data(self, data: str) -> None:
        self._text(len(data))

    def handle_entityref(self, name: str) -> None:
        closed = self.source.startswith(f"&{name};", self._offset())
        self._text(len(name) + (2 if closed else 1))

    def handle_charref(self, name: str) -> None:
        self.handle_entityref("#" + name)


def html_file(src: Text, batch: Batch) -> Finish:
    parser = _Texts(src.text)
    parser.feed(src.text)
    parser.close()
    units: list[tuple[int, int, int]] = []  # (start, end, unit)
    for start, end in sorted(parser.pieces + parser.attributes):
        plain = html.unescape(src.text[start:end])
        if is_translatable(plain):
            units.append((start, end, batch.add_text(plain)))
    quoted = {start for start, _ in parser.attributes}  # escaped with their quotes

    blocks = _leaf_blocks(parser.blocks, units) if batch.bilingual else []

    def finish(rendered: list[str]) -> bytes:
        out, pos = [], 0
        for start, end, inside in _regions(units, blocks):
            out.append(src.text[pos:start])
            if inside is None:  # one text, translated in place
                out.append(html.escape(rendered[unit_at[start]], quote=start in quoted))
            else:  # a block as it was, then translated
                out.append(src.text[start:end])
                out.append(_lang(_translated(src.text, start, end, inside, rendered, quoted),
                                 batch.target))
            pos = end
        out.append(src.text[pos:])
        return src.encode("".join(out))

    unit_at = {start: unit for start, _, unit in units}
    return finish


def _leaf_blocks(blocks: list[tuple[int, int]],
                 units: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
    """The blocks with text that hold no other block with text (a list item's paragraph, not
    the item), each once."""
    with_text = [b for b in set(blocks) if any(b[0] <= s and e <= b[1] for s, e, _ in units)]
    return sorted(b for b in with_text if not any(
        o != b and b[0] <= o[0] and o[1] <= b[1] for o in with_text))


def _regions(units: list[tuple[int, int, int]], blocks: list[tuple[int, int]]):
    """``(start, end, units inside)`` in order: each chosen block with its texts, and each text
    outside them alone (``None``)."""
    regions, b = [], 0
    for start, end, unit in units:
        while b < len(blocks) and blocks[b][1] <= start:
            b += 1
        if b < len(blocks) and blocks[b][0] <= start and end <= blocks[b][1]:
            if not regions or regions[-1][:2] != blocks[b]:
                regions.append((*blocks[b], []))
            regions[-1][2].append((start, end, unit))
        else:
            regions.append((start, end, None))
    return regions


def _translated(text: str, start: int, end: int, inside: list[tuple[int, int, int]],
                rendered: list[str], quoted: set[int]) -> str:
    out, pos = [], start
    for s, e, unit in inside:
        out.append(text[pos:s])
        out.append(html.escape(rendered[unit], quote=s in quoted))
        pos = e
    out.append(text[pos:end])
    return "".join(out)


_TAG_RE = re.compile(r"<([A-Za-z][\w:-]*)([^>]*?)(/?)>")
_ID_RE = re.compile(r"""\s(?:xml:)?id\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)""")


def _lang(block: str, target: str | None) -> str:
    """The translated copy's first tag says the language it is written in (unless it says one)
    and loses its ``id`` (the source keeps it: links go there, and an id is one element's)."""
    match = _TAG_RE.match(block)
    if match is None:
        return block
    attrs = _ID_RE.sub("", match.group(2))
    if target and not re.search(r"\blang\s*=", attrs):
        attrs += f' lang="{target}"'
    return f"<{match.group(1)}{attrs}{match.group(3)}>" + block[match.end():]
