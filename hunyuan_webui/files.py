"""Translate uploaded files and give back the same kind of file with the same structure.

:func:`translate_file` takes a file's name and bytes and a ``translate`` function (a batch of
plain-text segments in, the same number of translations out) and returns a :class:`FileResult`.
Every format is parsed with a maintained library, its human text is cut into sentences with
:func:`hunyuan_webui.segment.split_document`, and **all** segments of the file go to ``translate``
in one call, each distinct sentence once (repeated sentences are common in policy documents,
subtitles and spreadsheets), before the file is rebuilt. Nothing is returned unless every segment
was translated: an exception from ``translate`` propagates and no partial file exists.

Formats:

- ``.txt``: the text through ``split_document`` (layout kept byte for byte).
- ``.md``: markdown-it-py finds the inline text; a parser hook records the source range of every
  piece of text the ``text`` rule (and the one-character fallback) consumes, so code blocks,
  inline code, link and image URLs, autolinks, HTML, link definitions, front matter and all markup
  characters are never touched: the output is the input with only those text ranges replaced.
  Image alt text is translated. Emphasis markers split a sentence into pieces (``This is
  **very** good`` is sent as ``This is``, ``very``, ``good``), the price of never sending markup.
- ``.srt``: parsed and validated with the ``srt`` library; indices, timings and positions are
  copied from the input untouched. The lines of one cue are translated together (a sentence often
  runs over two subtitle lines) and the translation is re-wrapped into at most the same number of
  lines; dialogue cues (every line starts with ``-``) keep one line per speaker. Leading and
  trailing ``<i>``/``{\\an8}`` tags of each line are kept in place.
- ``.docx``: python-docx. Every paragraph of the body, tables (nested too), text boxes, headers,
  footers, footnotes and endnotes. Trade-off chosen: text is translated per *formatting span* (a
  run of consecutive ``w:r`` with identical run properties, not interrupted by a tab, break,
  image or field), and the translation goes into the span's first text node. A paragraph in one
  style (the usual case) is therefore translated whole, sentence by sentence, while a bold or
  italic word keeps exactly its formatting (at the cost of being translated on its own). Images,
  tabs, breaks, fields, bookmarks and comments anchors stay where they are. Comments and
  SmartArt/chart text are not translated.
- ``.csv``: ``csv`` with a sniffed dialect; the header row is kept; only the chosen columns (by
  default every column with prose in it) are translated. Rows and fields that are not translated
  are copied byte for byte, and a translated field keeps its original quoting.

Errors the user can fix raise :class:`InputError` (or ``InputTooLongError``) with a message that
says what is wrong: unsupported extension, too large, content that does not match the extension,
text that is not UTF-8, malformed SRT or CSV.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import unicodedata
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from hunyuan_webui import languages
from hunyuan_webui.errors import EngineError, InputError, InputTooLongError
from hunyuan_webui.segment import (
    DEFAULT_MAX_SEGMENT_CHARS,
    Document,
    Piece,
    is_translatable,
    split_document,
)

__all__ = ["SUPPORTED", "FileResult", "TranslateFn", "csv_columns", "translate_file"]

TranslateFn = Callable[[list[str]], list[str]]
SUPPORTED = {".txt", ".md", ".srt", ".docx", ".csv"}
DEFAULT_MAX_BYTES = 5_000_000
# A .docx is a zip: refuse archives that inflate to more than this many times the upload limit.
_ZIP_INFLATION_LIMIT = 20


@dataclass(frozen=True)
class FileResult:
    filename: str  # e.g. "report.en.docx"
    data: bytes
    segments: int  # number of (distinct) segments sent to translate


# --------------------------------------------------------------------------------------------
# Entry points


def translate_file(
    filename: str,
    data: bytes,
    translate: TranslateFn,
    *,
    lang: str | None = None,
    target_lang: str = "en",
    csv_columns: Sequence[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> FileResult:
    """Translate one uploaded file, keeping its format and structure.

    ``lang`` is the source language (None or "auto" when unknown; it only tunes sentence
    splitting), ``target_lang`` names the output file (``report.docx`` -> ``report.en.docx``).
    """
    ext = _extension(filename)
    target = languages.normalize(target_lang)
    if lang is not None and lang.strip().lower() not in ("", languages.AUTO):
        lang = languages.normalize(lang)
    else:
        lang = None
    if len(data) > max_bytes:
        raise InputTooLongError(f"The file is {_size(len(data))}; the limit is {_size(max_bytes)}.")
    batch = _Batch(lang, sentence_gap=languages.sentence_gap(target))
    if ext == ".docx":
        finish = _docx(data, batch, max_bytes)
    elif ext == ".csv":
        finish = _csv(_decode(data, ext), batch, csv_columns)
    elif ext == ".srt":
        finish = _srt(_decode(data, ext), batch)
    elif ext == ".md":
        finish = _markdown(_decode(data, ext), batch)
    else:
        finish = _txt(_decode(data, ext), batch)
    rendered = batch.run(translate)
    return FileResult(_output_name(filename, target), finish(rendered), batch.sent)


def csv_columns(data: bytes) -> list[str]:
    """The header names of a CSV file (for the UI's column picker); [] for an empty file."""
    text = _decode(data, ".csv")
    table = _read_csv(text.text)
    return list(table.header) if table.header is not None else []


# --------------------------------------------------------------------------------------------
# The batch: every segment of the file, deduplicated, in one call


class _Batch:
    def __init__(self, lang: str | None, max_chars: int = DEFAULT_MAX_SEGMENT_CHARS,
                 sentence_gap: str = "") -> None:
        self.lang = lang
        self.sentence_gap = sentence_gap
        self.max_chars = max_chars
        self.docs: list[Document] = []
        self.sent = 0

    def add_text(self, text: str) -> int:
        return self.add(split_document(text, self.lang, self.max_chars))

    def add(self, doc: Document) -> int:
        self.docs.append(doc)
        return len(self.docs) - 1

    def run(self, translate: TranslateFn) -> list[str]:
        unique = list(dict.fromkeys(s for d in self.docs for s in d.segments))
        self.sent = len(unique)
        if not unique:
            return [d.text for d in self.docs]
        result = translate(list(unique))
        if isinstance(result, str | bytes) or not isinstance(result, Sequence):
            raise EngineError("The translator returned something other than a list of texts.")
        if len(result) != len(unique):
            raise EngineError(
                f"The translator returned {len(result)} translations for {len(unique)} segments."
            )
        if not all(isinstance(t, str) for t in result):
            raise EngineError("The translator returned something other than text.")
        table = {src: _one_line(dst) for src, dst in zip(unique, result, strict=True)}
        return [d.render([table[s] for s in d.segments], self.sentence_gap) for d in self.docs]


_BREAKS_RE = re.compile(r"\s*[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+\s*")


def _one_line(text: str) -> str:
    """A segment never holds a line break, so neither may its translation (it would break the
    structure of an SRT cue, a Markdown heading or a table row)."""
    return _BREAKS_RE.sub(" ", text).strip()


# --------------------------------------------------------------------------------------------
# Names, sizes, encodings


def _extension(filename: str) -> str:
    name = re.split(r"[\\/]", filename or "")[-1]
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if ext not in SUPPORTED:
        shown = f"'{ext}'" if ext else "without an extension"
        raise InputError(
            f"Files {shown} are not supported. Upload one of: {', '.join(sorted(SUPPORTED))}."
        )
    return ext


def _output_name(filename: str, target: str) -> str:
    name = re.split(r"[\\/]", filename)[-1]
    dot = name.rfind(".")
    return f"{name[:dot]}.{target}{name[dot:]}"


def _size(n: int) -> str:
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.0f} kB"
    return f"{n} bytes"


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a zip archive (for example .docx or .xlsx)"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "an old Office document (.doc, .xls)"),
    (b"{\\rtf", "an RTF document"),
    (b"\x1f\x8b", "a gzip archive"),
)


def _binary_kind(data: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None


@dataclass(frozen=True)
class _Text:
    text: str
    bom: bytes
    codec: str

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.codec)


def _decode(data: bytes, ext: str) -> _Text:
    kind = _binary_kind(data)
    if kind:
        raise InputError(f"This {ext} file is really {kind}, not a {ext} text file.")
    if data.startswith(codecs.BOM_UTF8):
        bom, codec, body = codecs.BOM_UTF8, "utf-8", data[3:]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        bom = data[:2]
        codec = "utf-16-le" if bom == codecs.BOM_UTF16_LE else "utf-16-be"
        body = data[2:]
    else:
        bom, codec, body = b"", "utf-8", data
    try:
        text = body.decode(codec)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"This {ext} file is not valid UTF-8 text (bad byte at position {exc.start + len(bom)})."
            " Save it as UTF-8 and upload it again."
        ) from None
    if "\x00" in text:
        raise InputError(f"This {ext} file contains binary data, not text.")
    return _Text(text, bom, codec)


# --------------------------------------------------------------------------------------------
# .txt

Finish = Callable[[list[str]], bytes]


def _txt(src: _Text, batch: _Batch) -> Finish:
    batch.add_text(src.text)
    return lambda rendered: src.encode(rendered[0])


# --------------------------------------------------------------------------------------------
# .md


_FRONT_MATTER = {"---": ("---", "..."), "+++": ("+++",)}
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


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

    lines = _LINE_RE.findall(text)
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


def _markdown(src: _Text, batch: _Batch) -> Finish:
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


# --------------------------------------------------------------------------------------------
# .srt

_TAGS_HEAD_RE = re.compile(r"^(?:\s*(?:<[^<>]*>|\{[^{}]*\}))*\s*")
_TAGS_TAIL_RE = re.compile(r"(?:\s*(?:<[^<>]*>|\{[^{}]*\}))*\s*$")
_EOL_RE = re.compile(r"\r\n|\r|\n")


def _is_cjk(ch: str) -> bool:
    cp = ord(ch)
    return (
        0x2E80 <= cp <= 0x9FFF
        or 0xF900 <= cp <= 0xFAFF
        or 0xFF00 <= cp <= 0xFFEF
        or 0x20000 <= cp <= 0x3FFFF
    )


def _join_lines(parts: list[str]) -> str:
    out = ""
    for part in parts:
        if out and not (_is_cjk(out[-1]) and _is_cjk(part[0])):
            out += " "
        out += part
    return out


def _wrap(text: str, k: int) -> list[str]:
    """Cut ``text`` into at most ``k`` non-empty lines of similar length."""
    if k <= 1 or not text:
        return [text]
    if any(ch.isspace() for ch in text):
        candidates = [i for i, ch in enumerate(text) if ch.isspace()]
    elif sum(_is_cjk(ch) for ch in text) * 2 >= len(text):
        candidates = [
            i for i in range(1, len(text)) if unicodedata.category(text[i])[0] not in "PM"
        ]
    else:
        return [text]
    lines, start = [], 0
    for j in range(1, k):
        target = start + (len(text) - start) / (k - j + 1)
        usable = [c for c in candidates if c > start]
        if not usable:
            break
        cut = min(usable, key=lambda c: abs(c - target))
        piece = text[start:cut].strip()
        if not piece:
            break
        lines.append(piece)
        start = cut
    rest = text[start:].strip()
    if rest:
        lines.append(rest)
    return lines


class _Cue:
    """One subtitle's text: translated as one or more units, re-assembled in ``finish``."""

    def __init__(self, content: str, batch: _Batch) -> None:
        self.content = content
        m = _EOL_RE.search(content)
        self.eol = m.group(0) if m else "\n"
        self.frames = []  # (leading tags, text, trailing tags) per line
        for line in _EOL_RE.split(content):
            head = _TAGS_HEAD_RE.match(line).end()
            tail = _TAGS_TAIL_RE.search(line, head).start()
            self.frames.append((line[:head], line[head:tail], line[tail:]))
        inner = [f[1] for f in self.frames if f[1]]
        self.dialogue = len(inner) > 1 and all(
            t.startswith(("-", "\u2013", "\u2014")) for t in inner
        )
        if self.dialogue:
            self.units = [batch.add_text(t) for t in inner]
        else:
            unit = batch.add_text(_join_lines(inner))
            self.units = [unit] if batch.docs[unit].segments else []

    def finish(self, rendered: list[str]) -> str:
        if not self.units:
            return self.content
        texts = iter(rendered[u] for u in self.units)
        if not self.dialogue:
            if rendered[self.units[0]] == _join_lines([f[1] for f in self.frames if f[1]]):
                return self.content  # unchanged: keep the original line breaks
            k = sum(1 for f in self.frames if f[1])
            texts = iter(_wrap(next(texts), k))
        out, pending = [], ""
        for pre, inner, post in self.frames:
            if not inner:
                out.append(pre + post)
                continue
            text = next(texts, None)
            if text is None:  # the translation needs fewer lines: keep this line's tags
                pending += pre + post
                continue
            out.append(pre + text + post)
        if pending:
            last = max(i for i, f in enumerate(self.frames[: len(out)]) if f[1])
            out[last] += pending
        return self.eol.join(out)


def _srt(src: _Text, batch: _Batch) -> Finish:
    import srt

    text = src.text
    try:
        subs = list(srt.parse(text))
    except srt.SRTParseError as exc:
        line = text.count("\n", 0, exc.expected_start) + 1
        snippet = exc.unmatched_content.strip()[:60]
        raise InputError(
            f"This .srt file is malformed at line {line}: {snippet!r} is not a subtitle block "
            "(index, then a timing like 00:00:01,000 --> 00:00:02,500, then text)."
        ) from None
    except ValueError as exc:
        raise InputError(f"This .srt file is malformed: {_first_line(exc)}") from None
    if not subs:
        raise InputError("This .srt file contains no subtitles (expected index, timing, text).")
    spans, cues = [], []
    for match in srt.SRT_REGEX.finditer(text):
        a, b = match.span(5)
        spans.append((a, b))
        cues.append(_Cue(text[a:b], batch) if text[a:b].strip() else None)

    def finish(rendered: list[str]) -> bytes:
        out, pos = [], 0
        for (a, b), cue in zip(spans, cues, strict=True):
            out.append(text[pos:a])
            out.append(cue.finish(rendered) if cue else text[a:b])
            pos = b
        out.append(text[pos:])
        return src.encode("".join(out))

    return finish


def _first_line(exc: Exception) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0][:300] if msg else type(exc).__name__


# --------------------------------------------------------------------------------------------
# .csv


@dataclass
class _Record:
    raw: str  # the record's text without its line ending
    ending: str
    row: list[str]


@dataclass
class _Table:
    dialect: type[csv.Dialect] | csv.Dialect
    records: list[_Record]
    header: list[str] | None
    header_index: int


def _sniff(text: str) -> type[csv.Dialect] | csv.Dialect:
    sample = text[:65536]
    try:
        sniffed = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel

    class Sniffed(sniffed):  # the sniffer says doublequote=False when it saw no quotes at all
        doublequote = True

    return Sniffed


def _read_csv(text: str) -> _Table:
    """Parse with the sniffed dialect and with the common ones (comma, semicolon, tab, pipe with
    double quotes); keep the consistent table with the most columns (the sniffed dialect wins
    ties, and only it may give a one-column table). The sniffer alone guesses wrong on small or
    quote-heavy files."""
    sniffed = _sniff(text)
    candidates = [sniffed] + [
        type("Common", (csv.excel,), {"delimiter": d})
        for d in ",;\t|"
        if (d, '"') != (sniffed.delimiter, sniffed.quotechar)
    ]
    first_line = next((line for line in text.splitlines() if line.strip()), "")
    single_column = not any(d in first_line for d in ",;\t|")
    best: _Table | None = None
    first_error: InputError | None = None
    for i, dialect in enumerate(candidates):
        try:
            table = _parse_csv(text, dialect)
        except InputError as exc:
            first_error = first_error or exc
            continue
        width = len(table.header or [])
        plausible = i == 0 or width >= 2 or single_column
        if plausible and (best is None or width > len(best.header or [])):
            best = table
    if best is None:
        assert first_error is not None
        raise first_error
    return best


def _parse_csv(text: str, dialect) -> _Table:
    lines = _LINE_RE.findall(text)
    reader = csv.reader(iter(lines), dialect, strict=True)
    records: list[_Record] = []
    consumed = 0
    try:
        for row in reader:
            raw = "".join(lines[consumed : reader.line_num])
            consumed = reader.line_num
            body = raw.rstrip("\r\n")
            records.append(_Record(body, raw[len(body) :], row))
    except csv.Error as exc:
        raise InputError(
            f"This .csv file is malformed near line {reader.line_num}: {_first_line(exc)}"
        ) from None
    if consumed != len(lines):
        raise InputError("This .csv file is malformed: it ends inside a quoted field.")
    header_index = next((i for i, r in enumerate(records) if r.row), -1)
    header = records[header_index].row if header_index >= 0 else None
    if header is not None:
        for i, rec in enumerate(records[header_index + 1 :], start=header_index + 2):
            if rec.row and len(rec.row) != len(header):
                raise InputError(
                    f"This .csv file is malformed: record {i} has {len(rec.row)} fields, "
                    f"the header has {len(header)}."
                )
    return _Table(dialect, records, header, header_index)


def _raw_fields(raw: str, dialect) -> list[str] | None:
    """Split one record's text into its fields' source text (quotes included), or None."""
    d, q, esc = dialect.delimiter, dialect.quotechar, dialect.escapechar
    quoting = dialect.quoting != csv.QUOTE_NONE and q
    fields, i, n = [], 0, len(raw)
    while True:
        start = j = i
        if dialect.skipinitialspace:
            while j < n and raw[j] == " ":
                j += 1
        if quoting and j < n and raw[j] == q:
            j += 1
            while True:
                if j >= n:
                    return None
                c = raw[j]
                doubled = c == q and dialect.doublequote and j + 1 < n and raw[j + 1] == q
                if doubled or (esc and c == esc):
                    j += 2
                elif c == q:
                    j += 1
                    break
                else:
                    j += 1
        while j < n and raw[j] != d:
            j += 2 if esc and raw[j] == esc else 1
        fields.append(raw[start : min(j, n)])
        if j >= n:
            return fields
        i = j + 1


def _encode_field(old_raw: str, value: str, dialect) -> str:
    d, q, esc = dialect.delimiter, dialect.quotechar, dialect.escapechar
    lead = old_raw[: len(old_raw) - len(old_raw.lstrip(" "))] if dialect.skipinitialspace else ""
    was_quoted = bool(q) and old_raw[len(lead) :].startswith(q)
    special = any(c in value for c in (d, "\r", "\n")) or (bool(q) and q in value)
    if dialect.quoting == csv.QUOTE_NONE or not q:
        if special and not esc:
            raise ValueError("cannot encode")
        if esc:
            escaped = {d, esc, "\r", "\n"} | ({q} if q else set())
            value = "".join(esc + c if c in escaped else c for c in value)
        return lead + value
    if was_quoted or special or dialect.quoting == csv.QUOTE_ALL:
        if dialect.doublequote:
            value = value.replace(q, q + q)
        elif esc:
            value = value.replace(esc, esc + esc).replace(q, esc + q)
        else:
            raise ValueError("cannot encode")
        return lead + q + value + q
    return lead + value


def _code_like(value: str) -> bool:
    """IDs, codes, dates, versions: no space and a digit (A123, INV-2024-01, 2024-01-01, v1.2)."""
    v = value.strip()
    return not any(c.isspace() for c in v) and any(c.isdigit() for c in v)


def _text_columns(table: _Table) -> list[int]:
    assert table.header is not None
    chosen = []
    for j in range(len(table.header)):
        for rec in table.records[table.header_index + 1 :]:
            if rec.row and is_translatable(rec.row[j]) and not _code_like(rec.row[j]):
                chosen.append(j)
                break
    return chosen


def _csv(src: _Text, batch: _Batch, columns: Sequence[str] | None) -> Finish:
    table = _read_csv(src.text)
    if table.header is None:
        raise InputError("This .csv file is empty.")
    if columns is None:
        chosen = _text_columns(table)
    else:
        unknown = [c for c in columns if c not in table.header]
        if unknown:
            raise InputError(
                f"Unknown column(s) {', '.join(map(repr, unknown))}. "
                f"The columns are: {', '.join(map(repr, table.header))}."
            )
        chosen = [j for j, name in enumerate(table.header) if name in set(columns)]
    plan: list[tuple[int, list[tuple[int, int]]]] = []  # record index -> [(column, unit)]
    for r, rec in enumerate(table.records[table.header_index + 1 :], start=table.header_index + 1):
        cells = [(j, batch.add_text(rec.row[j])) for j in chosen if rec.row and rec.row[j].strip()]
        if cells:
            plan.append((r, cells))

    def finish(rendered: list[str]) -> bytes:
        out = [rec.raw + rec.ending for rec in table.records]
        for r, cells in plan:
            rec = table.records[r]
            row = list(rec.row)
            for j, unit in cells:
                row[j] = rendered[unit]
            if row != rec.row:
                out[r] = _rewrite_record(rec, row, table.dialect) + rec.ending
        result = "".join(out)
        if not _same_rows(result, table, plan, rendered):
            result = _rewrite_all(table, plan, rendered)
        return src.encode(result)

    return finish


def _rewrite_record(rec: _Record, row: list[str], dialect) -> str:
    raws = _raw_fields(rec.raw, dialect)
    if raws is not None and len(raws) == len(rec.row):
        try:
            parts = [
                raw if new == old else _encode_field(raw, new, dialect)
                for raw, old, new in zip(raws, rec.row, row, strict=True)
            ]
            return dialect.delimiter.join(parts)
        except ValueError:
            pass
    buf = io.StringIO()
    csv.writer(buf, dialect, lineterminator="").writerow(row)
    return buf.getvalue()


def _expected_rows(table: _Table, plan, rendered: list[str]) -> list[list[str]]:
    rows = [list(rec.row) for rec in table.records]
    for r, cells in plan:
        for j, unit in cells:
            rows[r][j] = rendered[unit]
    return rows


def _same_rows(text: str, table: _Table, plan, rendered: list[str]) -> bool:
    try:
        got = list(csv.reader(iter(_LINE_RE.findall(text)), table.dialect, strict=True))
    except csv.Error:
        return False
    return got == _expected_rows(table, plan, rendered)


def _rewrite_all(table: _Table, plan, rendered: list[str]) -> str:
    """Fallback when the byte-preserving rewrite would not parse back: the csv module writes."""
    buf = io.StringIO()
    eol = next((rec.ending for rec in table.records if rec.ending), "\r\n")
    writer = csv.writer(buf, table.dialect, lineterminator=eol)
    for row in _expected_rows(table, plan, rendered):
        writer.writerow(row)
    return buf.getvalue()


# --------------------------------------------------------------------------------------------
# .docx

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
_TRANSPARENT = {_W + "rPr", _W + "lastRenderedPageBreak", _W + "softHyphen", _W + "proofErr"}
_TEXT_PARTS = re.compile(r"^/word/(document|header\d*|footer\d*|footnotes|endnotes)\.xml$")


def _docx(data: bytes, batch: _Batch, max_bytes: int) -> Finish:
    if not data.startswith(b"PK\x03\x04"):
        kind = _binary_kind(data)
        if kind and "old Office" in kind:
            raise InputError("This is an old Word .doc file. Save it as .docx and upload it again.")
        what = kind or "not a Word document"
        raise InputError(f"This .docx file is {what}; expected a Word (.docx) document.")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            inflated = sum(info.file_size for info in zf.infolist())
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise InputError(f"This .docx file is damaged: {_first_line(exc)}") from None
    if inflated > _ZIP_INFLATION_LIMIT * max(max_bytes, 1):
        raise InputTooLongError("This .docx file unpacks to too much data.")

    import docx
    from docx.opc.part import XmlPart
    from docx.oxml.parser import parse_xml
    from lxml import etree

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as exc:  # python-docx raises many types for foreign or broken packages
        raise InputError(
            f"This .docx file cannot be opened as a Word document: {_first_line(exc)}"
        ) from None

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

    spans: list[tuple[list, int]] = []
    for root in roots:
        for p in root.iter(_W + "p"):
            for nodes in _text_spans(p):
                text = "".join(t.text or "" for t in nodes)
                if is_translatable(text):
                    spans.append((nodes, batch.add_text(text)))

    def finish(rendered: list[str]) -> bytes:
        for nodes, unit in spans:
            first = nodes[0]
            first.text = rendered[unit]
            first.set(_XML_SPACE, "preserve")
            for t in nodes[1:]:
                t.text = ""
        for part, root in generic:
            part._blob = etree.tostring(
                root, xml_declaration=True, encoding="UTF-8", standalone=True
            )
        buf = io.BytesIO()
        document.save(buf)
        return buf.getvalue()

    return finish


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


def _text_spans(p) -> Iterable[list]:
    """Groups of consecutive ``w:t`` with the same container and formatting, uninterrupted."""
    from lxml import etree

    current: list = []
    parent, fmt = None, None
    for r in _runs(p):
        rpr = r.find(_W + "rPr")
        # lxml returns the same proxy for a node while a reference to it lives: compare with `is`
        r_parent, r_fmt = r.getparent(), etree.tostring(rpr) if rpr is not None else b""
        if current and (r_parent is not parent or r_fmt != fmt):
            yield current
            current = []
        parent, fmt = r_parent, r_fmt
        for child in r:
            if child.tag == _W + "t":
                current.append(child)
            elif child.tag not in _TRANSPARENT:
                if current:
                    yield current
                current = []
    if current:
        yield current
