"""Which scripts each language writes, and how much of a text is in which: what the language and
half-translation checks read.

Letters are counted as the detector counts them (:func:`hunyuan_webui.detect.scripts.census`: Han
and kana weigh 2, since one of them says about as much as two Latin letters).
"""

from __future__ import annotations

import functools

from hunyuan_webui.detect.scripts import (
    ARABIC,
    BENGALI,
    CYRILLIC,
    DEVANAGARI,
    GUJARATI,
    HAN,
    HANGUL,
    HEBREW,
    KANA,
    KHMER,
    LATIN,
    MONGOLIAN,
    MYANMAR,
    TAMIL,
    TELUGU,
    THAI,
    TIBETAN,
    census,
)

# The scripts an answer in each language is written in (names and numbers aside).
SCRIPTS: dict[str, frozenset[str]] = {
    **{code: frozenset({LATIN}) for code in ("en", "fr", "pt", "es", "tr", "it", "de", "vi",
                                             "ms", "id", "tl", "pl", "cs", "nl")},
    **{code: frozenset({CYRILLIC}) for code in ("ru", "uk", "kk")},
    "mn": frozenset({CYRILLIC, MONGOLIAN}),
    **{code: frozenset({ARABIC}) for code in ("ar", "fa", "ur", "ug")},
    **{code: frozenset({DEVANAGARI}) for code in ("hi", "mr")},
    **{code: frozenset({HAN}) for code in ("zh", "zh-Hant", "yue")},
    "ja": frozenset({KANA, HAN}), "ko": frozenset({HANGUL}), "th": frozenset({THAI}),
    "km": frozenset({KHMER}), "my": frozenset({MYANMAR}), "bo": frozenset({TIBETAN}),
    "gu": frozenset({GUJARATI}), "te": frozenset({TELUGU}), "ta": frozenset({TAMIL}),
    "bn": frozenset({BENGALI}), "he": frozenset({HEBREW}),
}
SHARED = frozenset({LATIN, CYRILLIC, ARABIC, DEVANAGARI, HAN})  # several languages write these
CASED = frozenset({LATIN, CYRILLIC})  # scripts with capitals: a name can be told from a word
CHINESE = frozenset({"zh", "zh-Hant", "yue"})
# Languages the detector cannot reliably tell apart in a sentence: never a mismatch between them.
CLOSE = (frozenset({"ms", "id"}), frozenset({"hi", "mr"}), frozenset({"ar", "fa", "ur"}),
         frozenset({"ru", "uk"}), CHINESE)


def letters(text: str) -> dict[str, int]:
    """The weighted letters of ``text`` per script."""
    counted = census(text)
    return counted[0] if counted else {}


def letters_in(text: str) -> int:
    """The letters of ``text``'s main script (Han and kana count 2)."""
    return max(letters(text).values(), default=0)


def target_share(text: str, target: str) -> tuple[float, int]:
    """The share of ``text``'s letter weight in ``target``'s scripts, and the total weight."""
    weights = letters(text)
    total = sum(weights.values())
    mine = sum(w for s, w in weights.items() if s in SCRIPTS.get(target, ()))
    return (mine / total if total else 1.0), total


def decides_early(source: str, target: str) -> bool:
    """Whether the script alone tells an answer in ``target`` from one in ``source`` (en->ja yes,
    en->fr no); Japanese shares Han with Chinese, so zh<->ja is judged on the whole answer."""
    mine, theirs = SCRIPTS.get(target), SCRIPTS.get(source)
    return bool(mine and theirs and not mine & theirs)


def close(a: str, b: str) -> bool:
    """The same language, or two the detector cannot tell apart (ms/id, ru/uk...)."""
    return a == b or any(a in group and b in group for group in CLOSE)


@functools.lru_cache(maxsize=8192)
def script_of(word: str) -> str | None:
    """The script most of ``word``'s letters are in."""
    weights = letters(word)
    return max(weights, key=weights.__getitem__) if weights else None


@functools.lru_cache(maxsize=1)
def _variants() -> tuple[frozenset[str], frozenset[str]]:
    """Characters only Simplified Chinese writes, and only Traditional (hanzidentifier's
    CC-CEDICT sets, as the detector reads them)."""
    from hanzidentifier import helpers

    shared = helpers.SHARED_CHARACTERS
    return (frozenset(helpers.SIMPLIFIED_CHARACTERS - shared),
            frozenset(helpers.TRADITIONAL_CHARACTERS - shared))


def unconverted(answer: str, target: str) -> bool:
    """A Chinese answer still in the other character set: Simplified-only characters in a
    Traditional (zh-Hant, yue) answer, Traditional-only ones in a Simplified one."""
    simplified, traditional = _variants()
    wrong = simplified if target in ("zh-Hant", "yue") else traditional
    return any(ch in wrong for ch in answer)
