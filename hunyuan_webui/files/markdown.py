"""``.md``: only the text that markdown-it-py's ``text`` rule consumes is replaced."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from hunyuan_webui.files.common import LINE_RE, Batch, Finish, Text
from hunyuan_webui.segment import Document, Piece, split_document

_FRONT_MATTER = {"---": ("---", "..."), "+++": ("+++",)}


def _front_matter_lines(lines: list[str]) -> int:
    """Number of lines of a YAML (---) or TOML (+++) front matter block at the top, or 0."""
    if not lines:
        return 0
    closers = _FRONT_MATTER.get(lines[0].rstrip())
    if not closers:
        return 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in closers:
            return i + 1
    return 0


class _TextRecorder:
    """Inline-rule hooks that record where markdown-it's text comes from.

    The ``text`` rule and the one-character fallback are the only ways literal text enters a
    paragraph; everything else (emphasis delimiters, code spans, links' destinations, HTML,
    entities, escapes, autolinks) is markup. Image alt text is parsed from a copy of the label, so
    the ``image`` hook remembers where that copy starts in its parent.
    """

    def __init__(self, text_rule: Callable, link_rule: Callable, image_rule: Callable) -> None:
        self.ranges: list[tuple[str, int, int]] = []
        self._nested: list[tuple[str, int]] = []
        self._text_rule = text_rule
        self._link_rule = link_rule
        self._image_rule = image_rule

    def text(self, state, silent: bool) -> bool:
        start = state.pos
        ok = self._text_rule(state, silent)
        if ok and not silent:
            self._record(state.src, start, state.pos)
        return ok

    def fallback(self, state, silent: bool) -> bool:
        if not silent:
            state.pending += state.src[state.pos]
            self._record(state.src, state.pos, state.pos + 1)
        state.pos += 1
        return True

    def link(self, state, silent: bool) -> bool:
        return self._reference_safe(self._link_rule, state, silent, state.pos)

    def image(self, state, silent: bool) -> bool:
        self._nested.append((state.src, state.pos + 2))
        try:
            return self._reference_safe(self._image_rule, state, silent, state.pos + 1)
        finally:
            self._nested.pop()

    def _reference_safe(self, rule: Callable, state, silent: bool, label_start: int) -> bool:
        """Run a link/image rule; in ``[label]`` and ``[label][]`` references the label is the
        reference name, so the text recorded inside it is dropped again (left untranslated)."""
        before = len(self.ranges)
        ok = rule(state, silent)
        if ok and not silent:
            end = state.pos
            label_end = state.md.helpers.parseLinkLabel(state, label_start, True)
            state.pos = end
            tail = state.src[label_end + 1 : end] if label_end >= 0 else ""
            if label_end >= 0 and tail in ("", "[]"):
                del self.ranges[before:]
        return ok

    def _record(self, src: str, start: int, end: int) -> None:
        for outer, base in reversed(self._nested):
            if src is outer:
                break
            if outer[base : base + len(src)] != src:
                return  # cannot place it: leave it untranslated
            src, start, end = outer, start + base, end + base
        self.ranges.append((src, start, end))


def _markdown_text_ranges(text: str) -> list[tuple[int, int]]:
    """Absolute [start, end) ranges of human text in a Markdown document."""
    from markdown_it import MarkdownIt, rules_inline

    lines = LINE_RE.findall(text)
    starts, pos = [], 0
    for line in lines:
        starts.append(pos)
        pos += len(line)
    bodies = [line.rstrip("\r\n") for line in lines]
    front = _front_matter_lines(bodies)
    source = "\n" * front + "".join(lines[front:])  # keeps line numbers; front matter is blank

    md = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    rec = _TextRecorder(rules_inline.text, rules_inline.link, rules_inline.image)
    md.inline.ruler.at("text", rec.text)
    md.inline.ruler.at("link", rec.link)
    md.inline.ruler.at("image", rec.image)
    md.inline.ruler.push("hy_text_fallback", rec.fallback)
    tokens = md.parse(source)

    by_src: dict[int, list[tuple[int, int]]] = {}
    for src, a, b in rec.ranges:
        by_src.setdefault(id(src), []).append((a, b))

    out: list[tuple[int, int]] = []
    cursors: dict[int, int] = {}  # table rows: where the previous cell of the line ended
    for prev, tok in zip([None, *tokens], tokens, strict=False):
        if tok.type != "inline" or not tok.map or not tok.content:
            continue
        ranges = by_src.get(id(tok.content))
        if not ranges:
            continue
        cell = prev is not None and prev.type in ("th_open", "td_open")
        out.extend(
            _place_inline(tok.content, tok.map[0], ranges, bodies, starts, front, cursors, cell)
        )
    out.sort()
    merged: list[tuple[int, int]] = []
    for a, b in out:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _place_inline(
    content: str,
    first_line: int,
    ranges: list[tuple[int, int]],
    bodies: list[str],
    starts: list[int],
    front: int,
    cursors: dict[int, int],
    cell: bool,
) -> Iterable[tuple[int, int]]:
    """Map ranges in an inline token's content to absolute offsets, line by line."""
    offset = 0
    for i, line in enumerate(content.split("\n")):
        lo = offset + len(line) - len(line.lstrip())
        hi = offset + len(line.rstrip())
        offset += len(line) + 1
        core = content[lo:hi]
        n = first_line + i
        if not core or n < front or n >= len(bodies):
            continue
        body = bodies[n]
        # Table rows hold several cells: search left to right from the previous cell.
        if cell:
            at = body.find(core, cursors.get(n, 0))
        elif body.rstrip().endswith(core):
            at = len(body.rstrip()) - len(core)
        else:
            at = body.rfind(core)  # an ATX heading's closing #s follow the text
        if at < 0:
            continue
        cursors[n] = at + len(core)
        for a, b in ranges:
            a, b = max(a, lo), min(b, hi)
            if a < b:
                yield starts[n] + at + (a - lo), starts[n] + at + (b - lo)


def markdown_file(src: Text, batch: Batch) -> Finish:
    text = src.text
    pieces: list[Piece] = []
    pos = 0
    for a, b in _markdown_text_ranges(text):
        if a > pos:
            pieces.append(Piece(text[pos:a], False))
        pieces.extend(split_document(text[a:b], batch.lang, batch.max_chars).pieces)
        pos = b
    if pos < len(text):
        pieces.append(Piece(text[pos:], False))
    batch.add(Document(tuple(pieces)))
    return lambda rendered: src.encode(rendered[0])
