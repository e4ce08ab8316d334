"""Layout-preserving segmentation: cut a text into the sentences the model translates.

Hunyuan-MT translates best one sentence at a time (whole documents make it merge or drop
sentences), so every long text goes through :func:`split_document`. It returns a
:class:`Document`: a sequence of :class:`Piece` objects that, joined, give back the input byte for
byte. Pieces with ``translate=False`` are layout and are never sent to the model: line breaks and
blank lines, indentation, trailing spaces, list markers (``- ``, ``* ``, ``1. ``, ``• ``,
``（1）``, ``一、`` ...), the whitespace between sentences, and "sentences" with nothing to
translate (only digits, punctuation, emoji or a URL). :meth:`Document.render` puts translations
back in place of the translatable pieces.

Library: sentence boundaries inside a line come from **sentencex** (Wikimedia; Rust core, ~300
languages through fallback chains, Unicode ``STerm``/``ATerm`` terminators for every script plus
per-language abbreviation lists). On our 38-language sample set (``docs/SEGMENTATION.md``) it
scored best of sentencex, pysbd, blingfire and ICU's BreakIterator, is lossless (its pieces
concatenate to the input, which pysbd and blingfire do not guarantee), and is the fastest. What
it lacks is filled in by small, script-scoped supplements, each measured on the same samples:

- Tibetan: a shad (``།`` ``༎`` ...) followed by a space ends a sentence;
- Khmer: ``។`` / ``៕`` end a sentence;
- Thai: a space between two Thai words ends a sentence (Thai has no full stop), except before a
  few conjunctions (แต่, และ, หรือ ...) and after ``ๆ``/``ฯ``, where the space is inside a
  sentence;
- Burmese: ``၊`` is a comma, not a sentence end (sentencex treats it as one);
- Japanese: ``「…。」と言った`` stays one sentence (no split before the quoting particle);
- everywhere: an emoji or symbol glued to a sentence end (``干得好！👍``) stays with that sentence.

A sentence longer than ``max_segment_chars`` is cut further: at the last clause punctuation that
fits (``，`` ``、`` ``;`` ``,`` ...), else at the last space, else at a word-internal soft break
(Tibetan tsheg, zero-width space), else hard (never inside a combining sequence).

Line breaks are always layout: a sentence never spans two lines, so hard-wrapped prose is
translated line by line (the line structure of the file is kept exactly).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sentencex

from hunyuan_webui import languages

__all__ = ["Document", "Piece", "split_document", "is_translatable"]

DEFAULT_MAX_SEGMENT_CHARS = 1000
# sentencex language for ``lang=None``: English abbreviation rules plus the global terminator set,
# which already splits CJK (。！？), Devanagari (।), Arabic (؟ ۔), Burmese (။) ...
_DEFAULT_SX_LANG = "en"


@dataclass(frozen=True)
class Piece:
    text: str
    translate: bool  # False = layout kept verbatim (whitespace, blank lines, markers, numbering)


@dataclass(frozen=True)
class Document:
    pieces: tuple[Piece, ...]

    @property
    def segments(self) -> list[str]:
        """The texts of the translatable pieces, in order (duplicates included)."""
        return [p.text for p in self.pieces if p.translate]

    def render(self, translations: Sequence[str], target: str | None = None) -> str:
        """The document with each translatable piece replaced by its translation, in order,
        spaced as ``target`` writes (as the streamed text is, :mod:`~.service.translate.sentences`): a space
        between translations whose sources touched ("谢谢。请坐。" into English), none after a
        full-width stop ("Thank you. Sit down." into Chinese). No target: the layout as it was."""
        if len(translations) != (n := len(self.segments)):
            raise ValueError(f"expected {n} translations, got {len(translations)}")
        gap, it, out = languages.sentence_gap(target) if target else "", iter(translations), []
        last, pieces = None, self.pieces  # last: the translation just put in, if layout follows
        for at, p in enumerate(pieces):
            if p.translate:
                if last is not None:
                    out.append(gap)
                last = next(it)
                out.append(last)
                continue
            between = last is not None and at + 1 < len(pieces) and pieces[at + 1].translate
            if not (between and target and languages.closes_up(target, last, p.text)):
                out.append(p.text)
            last = None
        return "".join(out)

    @property
    def text(self) -> str:
        """The original text."""
        return "".join(p.text for p in self.pieces)


# --------------------------------------------------------------------------------------------
# What counts as translatable

_URL_RE = re.compile(
    r"(?:[a-zA-Z][a-zA-Z0-9+.-]*://|www\.|mailto:)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.UNICODE
)


def most_tokens(text: str) -> int:
    """An upper bound on the tokens of ``text`` for a byte-level BPE tokenizer (Hunyuan's): every
    token is at least one UTF-8 byte. Not the character count: a rare CJK character is three
    byte tokens, an astral one four, so 4,000 Chinese characters may be 8,000 tokens or more."""
    return len(text.encode("utf-8", errors="surrogatepass"))


def is_translatable(text: str) -> bool:
    """True when ``text`` has a letter outside URLs and e-mail addresses.

    Digits, punctuation, symbols, emoji and bare URLs are copied, not translated.
    """
    if any(mark in text for mark in ("://", "www.", "@", "mailto:")):
        text = _URL_RE.sub(" ", text)
    return any(ch.isalpha() for ch in text)


# --------------------------------------------------------------------------------------------
# Line layout: indentation and list markers

_MARKER_RE = re.compile(
    r"""
    \s*
    (?:
        (?: [-*+•‣◦▪▫●○■□◆◇►▸▹➢➤→✓✔☐☑·–—] \s+ )             # bullets, dialogue dashes
      | (?: \#{1,6} \s+ )                                     # headings
      | (?: >+ \s* )                                          # quoting
      | (?: \[ [\ xX] \] \s+ )                                # checkboxes
      | (?: \d{1,3} (?: \.\d{1,3} )* [.)] \s+ )               # 1.  1)  1.2.
      | (?: [A-Za-z] \) \s+ )                                 # a)
      | (?: (?: [IVX]{1,5} | [ivx]{1,5} ) \. \s+ )            # IV.
      | (?: [(（] \s* (?: \d{1,3} | [A-Za-z] | [ivxIVX]{1,5} | [一二三四五六七八九十百]{1,3} )
            \s* [)）] \s* )                                   # (1) （一） (a)
      | (?: (?: [一二三四五六七八九十百]{1,3} | \d{1,3} | [０-９]{1,3} ) [、．] \s* )  # 一、 1、
      | (?: [\u2460-\u2473\u2776-\u2793] \s* )                # ① ❶ ➀
    )*
    """,
    re.VERBOSE,
)


# Leading/trailing characters of a sentence that stay outside the segment.
def _is_edge_char(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch) == "Cf"


# --------------------------------------------------------------------------------------------
# Sentence splitting inside one line

_THAI_LETTER = "\u0e01-\u0e2e\u0e30-\u0e45\u0e47-\u0e4e"  # without ฯ (0e2f) and ๆ (0e46)
_THAI_ANY = "\u0e01-\u0e4e"
# A space before these words is inside a sentence (but, and, or, which, because, by, so, that,
# such as, is/namely, also, then).
_THAI_CONTINUATIONS = (
    "แต่",
    "และ",
    "หรือ",
    "ซึ่ง",
    "เพราะ",
    "โดย",
    "จึง",
    "ที่",
    "เช่น",
    "คือ",
    "ก็",
    "แล้ว",
)
_SUPPLEMENT_RE = re.compile(
    r"(?P<bo>[\u0f0d-\u0f12\u0f14]+)(?=\s)"  # Tibetan shad + space
    r"|(?P<km>[\u17d4\u17d5]+)"  # Khmer khan / bariyoosan
    rf"|(?<=[{_THAI_LETTER}])(?P<th>\s+)(?=[{_THAI_ANY}])"  # space between Thai words
)
_BURMESE_COMMA = "\u104a"  # ၊
_JA_CLOSERS = ("」", "』")
_JA_QUOTE_PARTICLES = ("と", "って")


def _sx_lang(lang: str | None) -> str:
    if lang is None or lang.strip().lower() in ("", languages.AUTO):
        return _DEFAULT_SX_LANG
    return languages.normalize(lang).lower()


def _library_sentences(text: str, sx_lang: str) -> list[str]:
    """sentencex boundaries, with the Burmese and Japanese corrections. Always lossless."""
    try:
        found = sentencex.get_sentence_boundaries(sx_lang, text)
    except Exception:  # e.g. lone surrogates cannot cross into Rust: keep the line whole
        return [text]
    parts = [b["text"] for b in found]
    if "".join(parts) != text:
        return [text]
    merged: list[str] = []
    joined_prev = False
    for i, part in enumerate(parts):
        if merged and (joined_prev or _ja_quote_continues(merged[-1], part)):
            merged[-1] += part
        else:
            merged.append(part)
        joined_prev = found[i].get("boundary_symbol") == _BURMESE_COMMA
    return merged


def _ja_quote_continues(prev: str, nxt: str) -> bool:
    return prev.endswith(_JA_CLOSERS) and nxt.startswith(_JA_QUOTE_PARTICLES)


def _supplement(text: str) -> list[str]:
    """Split one library sentence at the script-specific boundaries sentencex does not know."""
    cuts: list[int] = []
    for m in _SUPPLEMENT_RE.finditer(text):
        if m.group("th") is not None:
            if text.startswith(_THAI_CONTINUATIONS, m.end()):
                continue
            cuts.append(m.start())
        else:
            cuts.append(m.end())
    if not cuts:
        return [text]
    out, prev = [], 0
    for c in cuts:
        if 0 < c < len(text) and c > prev:
            out.append(text[prev:c])
            prev = c
    out.append(text[prev:])
    return out


def _sentences(text: str, sx_lang: str) -> list[str]:
    out: list[str] = []
    for sentence in (s for lib in _library_sentences(text, sx_lang) for s in _supplement(lib)):
        # An emoji or symbol written right after a sentence end ("干得好！👍") belongs to it.
        if out and not _is_edge_char(out[-1][-1]) and not is_translatable(sentence):
            out[-1] += sentence
        else:
            out.append(sentence)
    return out


# --------------------------------------------------------------------------------------------
# Over-long segments

_CLAUSE_ANY = set("，；：、。！？།༎၊،؛")  # cut after these wherever they are
_CLAUSE_SPACED = set(",;:.!?)]}\u2014\u2013")  # cut after these when a space follows
_SOFT_BREAKS = set("\u0f0b\u200b")  # Tibetan tsheg, zero-width space: cut after


def _is_cluster_tail(ch: str) -> bool:
    """Characters that must stay with the previous one (marks, joiners, selectors, modifiers)."""
    cp = ord(ch)
    return (
        unicodedata.category(ch)[0] == "M"
        or ch in "\u200c\u200d"
        or 0xFE00 <= cp <= 0xFE0F
        or 0x1F3FB <= cp <= 0x1F3FF
        or 0xE0020 <= cp <= 0xE007F
        or 0xE0100 <= cp <= 0xE01EF
    )


def _find_cut(s: str, limit: int) -> int:
    """Where to end the first chunk of ``s`` (0 < cut <= limit < len(s))."""
    floor = max(1, limit // 4)  # don't make a tiny first chunk when a later cut exists
    for i in range(limit - 1, floor - 2, -1):
        ch = s[i]
        if ch in _CLAUSE_ANY or (ch in _CLAUSE_SPACED and s[i + 1].isspace()):
            return i + 1
    for i in range(limit, 0, -1):
        if s[i].isspace():
            return i
    for i in range(limit - 1, floor - 2, -1):
        if s[i] in _SOFT_BREAKS:
            return i + 1
    cut = limit
    while cut > 1 and _is_cluster_tail(s[cut]):
        cut -= 1
    return cut


def _split_long(core: str, limit: int) -> Iterable[Piece]:
    s = core
    while len(s) > limit:
        cut = _find_cut(s, limit)
        head, rest = s[:cut], s[cut:]
        head_core = head.rstrip()
        rest_core = rest.lstrip()
        yield from _classified(head_core)
        gap = head[len(head_core) :] + rest[: len(rest) - len(rest_core)]
        if gap:
            yield Piece(gap, False)
        s = rest_core
    if s:
        yield from _classified(s)


def _classified(text: str) -> Iterable[Piece]:
    if text:
        yield Piece(text, is_translatable(text))


# --------------------------------------------------------------------------------------------
# The document


class _Builder:
    def __init__(self) -> None:
        self.pieces: list[Piece] = []

    def add(self, piece: Piece) -> None:
        if not piece.text:
            return
        if not piece.translate and self.pieces and not self.pieces[-1].translate:
            self.pieces[-1] = Piece(self.pieces[-1].text + piece.text, False)
        else:
            self.pieces.append(piece)

    def verbatim(self, text: str) -> None:
        self.add(Piece(text, False))


def _add_sentence(b: _Builder, sentence: str, limit: int) -> None:
    start, end = 0, len(sentence)
    while start < end and _is_edge_char(sentence[start]):
        start += 1
    while end > start and _is_edge_char(sentence[end - 1]):
        end -= 1
    b.verbatim(sentence[:start])
    core = sentence[start:end]
    if core:
        if not is_translatable(core):
            b.verbatim(core)
        elif len(core) <= limit:
            b.add(Piece(core, True))
        else:
            for piece in _split_long(core, limit):
                b.add(piece)
    b.verbatim(sentence[end:])


def split_document(
    text: str, lang: str | None = None, max_segment_chars: int = DEFAULT_MAX_SEGMENT_CHARS
) -> Document:
    """Cut ``text`` into layout pieces and sentence segments.

    ``lang`` is the source language code (any spelling :func:`languages.normalize` accepts) or
    None/"auto" when unknown. ``split_document(t).render(split_document(t).segments) == t`` for
    every string ``t``; every segment is non-empty, has no line break and no leading or trailing
    whitespace, contains a letter, and is at most ``max_segment_chars`` long.
    """
    if max_segment_chars < 1:
        raise ValueError("max_segment_chars must be at least 1")
    sx_lang = _sx_lang(lang)
    b = _Builder()
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
        ending = line[len(body) :]
        marker = _MARKER_RE.match(body)
        lead = marker.end() if marker else 0
        b.verbatim(body[:lead])
        content = body[lead:]
        if content.strip():
            for sentence in _sentences(content, sx_lang):
                _add_sentence(b, sentence, max_segment_chars)
        else:
            b.verbatim(content)
        b.verbatim(ending)
    return Document(tuple(b.pieces))


def whole_document(text: str) -> Document:
    """Structured data is translated whole: only the blank lines around it stay layout."""
    core = text.strip()
    if not core:
        return Document((Piece(text, False),))
    start = text.index(core)
    pieces = [Piece(text[:start], False), Piece(core, True),
              Piece(text[start + len(core):], False)]
    return Document(tuple(p for p in pieces if p.text))


def line_document(text: str) -> Document:
    """Paragraph modes translate whole lines: indentation and line ends stay layout."""
    pieces: list[Piece] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        core = body.strip()
        if not core or not is_translatable(core):
            pieces.append(Piece(line, False))
            continue
        start = body.index(core)
        for part, translate in ((body[:start], False), (core, True),
                                (body[start + len(core):] + line[len(body):], False)):
            if part:
                pieces.append(Piece(part, translate))
    return Document(tuple(pieces))
