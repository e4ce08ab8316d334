"""Where a long text is cut into parts: paragraph, then sentence, then word boundaries.

The server's limits (``--max-input-chars``, ``--max-input-tokens``) bound one request; a student
who pastes a long article should get it translated, not a limit to work around.
:func:`split_parts` cuts the text into parts within both limits that concatenate back to it, and
:func:`separator` says what joins one part's translation to the next. The operation that
translates the parts one after another is :mod:`hunyuan_webui.service.door.longtext`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hunyuan_webui import languages
from hunyuan_webui.segment import most_tokens

# A sentence ends after these (kept with the sentence), a word after whitespace.
_SENTENCE = re.compile(r"(?<=[.!?。！？…;；])\s*")
_WORD = re.compile(r"(?<=\s)")


def split_parts(text: str, max_chars: int, max_input_tokens: int,
                count_tokens: Callable[[str], int]) -> list[str]:
    """Parts that concatenate back to ``text``, each within both limits."""
    def fits(piece: str) -> bool:
        return len(piece) <= max_chars and (most_tokens(piece) <= max_input_tokens
                                             or count_tokens(piece) <= max_input_tokens)

    if fits(text):
        return [text]
    parts: list[str] = []
    current = ""
    for piece in _pieces(text, fits):
        if current and not fits(current + piece):
            parts.append(current)
            current = ""
        current += piece
    if current:
        parts.append(current)
    return parts


def _pieces(text: str, fits: Callable[[str], bool]) -> list[str]:
    """Paragraphs (with their newlines), each cut into smaller pieces until every piece fits."""
    out: list[str] = []
    for paragraph in re.split(r"(?<=\n)", text):
        if fits(paragraph):
            out.append(paragraph)
            continue
        for sentence in _cut(paragraph, _SENTENCE):
            if fits(sentence):
                out.append(sentence)
                continue
            for word in _cut(sentence, _WORD):
                out.extend([word] if fits(word) else _halves(word, fits))
    return [p for p in out if p]


def _cut(text: str, pattern: re.Pattern[str]) -> list[str]:
    pieces, start = [], 0
    for match in pattern.finditer(text):
        if match.end() > start:
            pieces.append(text[start:match.end()])
            start = match.end()
    pieces.append(text[start:])
    return [p for p in pieces if p]


def _halves(text: str, fits: Callable[[str], bool]) -> list[str]:
    """A run without spaces or sentence ends (a long Chinese line, a URL) cut in halves."""
    if fits(text) or len(text) <= 1:
        return [text]
    middle = len(text) // 2
    return _halves(text[:middle], fits) + _halves(text[middle:], fits)


def separator(part: str, translation: str, target: str, last: bool) -> str:
    """What joins a part's translation to the next: the part's own trailing whitespace (unless
    the translation kept it, as the segmenter keeps layout), or a space between sentences of a
    language written with spaces."""
    trail = part[len(part.rstrip()):]
    if trail:
        return "" if translation.endswith(trail) else trail
    return "" if last else languages.sentence_gap(target)
