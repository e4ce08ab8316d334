""".html: the text between tags translated, every byte of markup copied as it is.

The standard library's :class:`html.parser.HTMLParser` finds the text (it knows comments,
doctypes, CDATA, character references and the raw text of ``<script>`` and ``<style>``); the
source range of each piece of text is recorded, and the output is the input with only those
ranges replaced, so tags, attributes, comments and whitespace between tags come back byte for
byte, as the .md translator keeps Markdown. The text is unescaped before it is translated and
escaped again after. Not translated, as in DeepL's HTML handling: ``<script>``, ``<style>`` and
elements marked ``translate="no"`` (with everything inside them). A sentence cut by an
inline tag (``a <b>very</b> good day``) is translated in pieces, the price of never sending
markup to the model.
"""

from __future__ import annotations

import html
from html.parser import HTMLParser

from hunyuan_webui.files.common import Batch, Finish, Text
from hunyuan_webui.segment import is_translatable

RAW = frozenset({"script", "style"})
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

    def _offset(self) -> int:
        line, col = self.getpos()
        return self.line_starts[line - 1] + col

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.raw = tag in RAW
        if tag in VOID:
            return
        if self.ignored or any(k == "translate" and (v or "").strip().lower() == "no"
                               for k, v in attrs):
            self.ignored.append(tag)

    def handle_endtag(self, tag: str) -> None:
        self.raw = False
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
    for start, end in parser.pieces:
        plain = html.unescape(src.text[start:end])
        if is_translatable(plain):
            units.append((start, end, batch.add_text(plain)))

    def finish(rendered: list[str]) -> bytes:
        out, pos = [], 0
        for start, end, unit in units:
            out.append(src.text[pos:start])
            out.append(html.escape(rendered[unit], quote=False))
            pos = end
        out.append(src.text[pos:])
        return src.encode("".join(out))

    return finish
