"""What every format shares: the one batch of segments, file names and sizes, decoding text."""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.errors import EngineError, InputError
from hunyuan_webui.segment import DEFAULT_MAX_SEGMENT_CHARS, Document, split_document

TranslateFn = Callable[[list[str]], list[str]]
SUPPORTED = {".txt", ".md", ".srt", ".docx", ".csv", ".html", ".htm", ".pptx", ".xlsx", ".pdf"}
# One line with its ending (any of \r\n, \r, \n), or a last line without one.
LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
SUPPORTED |= {".odt", ".odp", ".ods", ".epub"}  # OpenDocument and EPUB (odf.py, epub.py)


# --------------------------------------------------------------------------------------------
# The batch: every segment of the file, deduplicated, in one call


class Batch:
    def __init__(self, lang: str | None, max_chars: int = DEFAULT_MAX_SEGMENT_CHARS,
                 target: str | None = None) -> None:
        self.lang = lang
        self.target = target  # the language the file goes into: how its sentences are spaced
        # A bilingual copy for learners: each paragraph followed by its translation (bilingual.py)
        self.bilingual = False
        self.side_by_side = False  # ...and beside it, in a two-column table (columns.py)
        self.max_chars = max_chars
        self.docs: list[Document] = []
        self.sent = 0
        self.headings: set[str] = set()  # segments of a table's header row: not the file's prose
        self.closers: list[Callable[[], None]] = []  # what lets a reader's memory go at once
        self.notes: list[str] = []  # what the reader tells the user (a PDF's scanned pages)

    def mark_headings(self, text: str) -> None:
        """``text`` heads a table (a spreadsheet's first row): it is translated, but it does not
        tell which language the file is written in (:meth:`content`)."""
        self.headings.update(split_document(text, self.lang, self.max_chars).segments)

    def content(self) -> list[str]:
        """The distinct segments that tell the file's language: all but the headings (unless
        there is nothing else)."""
        unique = self.unique()
        return [s for s in unique if s not in self.headings] or unique

    def add_text(self, text: str) -> int:
        return self.add(split_document(text, self.lang, self.max_chars))

    def add(self, doc: Document) -> int:
        self.docs.append(doc)
        return len(self.docs) - 1

    def unique(self) -> list[str]:
        """The file's distinct segments, in order of first appearance."""
        return list(dict.fromkeys(s for d in self.docs for s in d.segments))

    def run(self, translate: TranslateFn) -> list[str]:
        unique = self.unique()
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
        table = {src: one_line(dst) for src, dst in zip(unique, result, strict=True)}
        return [d.render([table[s] for s in d.segments], self.target) for d in self.docs]


_BREAKS_RE = re.compile(r"\s*[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+\s*")


def one_line(text: str) -> str:
    """A segment never holds a line break, so neither may its translation (it would break the
    structure of an SRT cue, a Markdown heading or a table row)."""
    return _BREAKS_RE.sub(" ", text).strip()


# --------------------------------------------------------------------------------------------
# Spans of one paragraph translated apart (.docx, .pptx): the spaces their source did not write

# Scripts written without spaces between words or sentences: Han, kana, Hangul punctuation, Thai,
# Lao, Khmer, Myanmar, Tibetan, and the CJK punctuation and full-width forms.
_UNSPACED_RE = re.compile(
    "[\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u2e80-\u2fdf\u3000-\u30ff"
    "\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"
    "\U00020000-\U0003ffff]")
_NO_SPACE_BEFORE = set(",.;:!?)]}%\u2019\u201d\u2026\u3001\u3002\uff0c\uff01\uff1f\uff1a\uff1b\uff09")
_NO_SPACE_AFTER = set("([{\u2018\u201c\uff08")


def space_spans(spans: Sequence[tuple[str, str, bool]], gap: str) -> list[str]:
    """The outputs of a paragraph's spans, ``(source, output, touches)`` in order (``touches``:
    nothing but a change of formatting stands between the span and the one before it), with
    ``gap`` put in front of a span where its source touched the previous one in a script that
    writes no spaces (``谢谢你的帮助。`` in bold, then ``今天天气很好。``) and the translations
    would touch: "…help.The weather…". A word split by formatting in a spaced script
    (``Hel**lo**``) stays joined, and no space goes before a closing mark or after an opening one.
    """
    out = [output for _, output, _ in spans]
    if not gap:
        return out
    for i in range(1, len(spans)):
        before, after = spans[i - 1][0], spans[i][0]
        if not spans[i][2] or not before or not after or not out[i - 1] or not out[i]:
            continue
        if before[-1].isspace() or after[0].isspace():
            continue  # the source's own spacing, kept by the spans' texts
        if not (_UNSPACED_RE.match(before[-1]) or _UNSPACED_RE.match(after[0])):
            continue
        left, right = out[i - 1][-1], out[i][0]
        if left.isspace() or right.isspace() or right in _NO_SPACE_BEFORE \
                or left in _NO_SPACE_AFTER or _UNSPACED_RE.match(left) \
                or _UNSPACED_RE.match(right):
            continue
        out[i] = gap + out[i]
    return out


# --------------------------------------------------------------------------------------------
# Names, sizes, encodings


def extension(filename: str) -> str:
    name = re.split(r"[\\/]", filename or "")[-1]
    dot = name.rfind(".")
    ext = name[dot:].lower() if dot > 0 else ""
    if ext not in SUPPORTED:
        shown = f"'{ext}'" if ext else "without an extension"
        raise InputError(
            f"Files {shown} are not supported. Upload one of: {', '.join(sorted(SUPPORTED))}."
        )
    return ext


def output_name(filename: str, target: str) -> str:
    name = re.split(r"[\\/]", filename)[-1]
    dot = name.rfind(".")
    return f"{name[:dot]}.{target}{name[dot:]}"


def size(n: int) -> str:
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


def binary_kind(data: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return None


@dataclass(frozen=True)
class Text:
    text: str
    bom: bytes
    codec: str

    def encode(self, text: str) -> bytes:
        return self.bom + text.encode(self.codec)


def decode(data: bytes, ext: str) -> Text:
    kind = binary_kind(data)
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
    return Text(text, bom, codec)


# --------------------------------------------------------------------------------------------
# .txt

Finish = Callable[[list[str]], bytes]


def txt_file(src: Text, batch: Batch) -> Finish:
    batch.add_text(src.text)
    return lambda rendered: src.encode(rendered[0])



def first_line(exc: Exception) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0][:300] if msg else type(exc).__name__


def spaced_rewrites(spans: Sequence[tuple[Any, str, bool, int | None]], rendered: Sequence[str],
                    target: str | None) -> Iterator[tuple[Any, str]]:
    """A paragraph's spans ``(nodes, source, touches, unit)`` to write back, with their new text:
    the translated ones (``rendered[unit]``) and those whose spacing changed for ``target``
    (:func:`space_spans`, :func:`close_up_spans`); any other span is left as it was."""
    gap = languages.sentence_gap(target) if target else ""
    texts = space_spans([(text, text if unit is None else rendered[unit], touches)
                         for _, text, touches, unit in spans], gap)
    texts = close_up_spans(texts, [(touches, unit is not None) for _, _, touches, unit in spans],
                           target)
    for (nodes, text, _, unit), new in zip(spans, texts, strict=True):
        if unit is not None or new != text:
            yield nodes, new


def close_up_spans(texts: Sequence[str], kinds: Sequence[tuple[bool, bool]],
                   target: str | None) -> list[str]:
    """Into Chinese or Japanese, no space after a full stop between the sentences of two spans,
    as within one (``Document.render``): "**Thank you.** Please sit down." is "**谢谢。**请坐。".
    ``kinds``: per span, whether it touches the one before and whether it was translated. The
    spacing may lie at the end of the first, in spans of spaces between, or at the start of the
    next."""
    space_chars = languages.HORIZONTAL_SPACE
    out, last = list(texts), None  # last: the translated span with text before this one
    for i, text in enumerate(out):
        touches, translated = kinds[i]
        if not touches:
            last = None
        if not text.strip(space_chars):
            continue  # spaces only: kept or dropped with what follows
        if last is not None and translated and target:
            core = out[last].rstrip(space_chars)
            lead = text[:len(text) - len(text.lstrip(space_chars))]
            space = out[last][len(core):] + "".join(out[last + 1:i]) + lead
            if languages.closes_up(target, core, space):
                out[last + 1:i] = [""] * (i - last - 1)
                out[last], out[i] = core, text[len(lead):]
        last = i if translated else None
    return out
