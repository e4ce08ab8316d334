"""Which scripts each language writes, and how much of a text is in which: what the language and
half-translation checks read.

Letters are counted as the detector counts them (:func:`hunyuan_webui.detect.scripts.census`: Han
and kana weigh 2, since one of them says about as much as two Latin letters).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Set
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.detect.scripts import CYRILLIC, LATIN, census


@functools.lru_cache(maxsize=16)
def _of(compute: Callable[[languages.Table], Any], table: languages.Table) -> Any:
    return compute(table)


class _TableSet(Set[str]):
    """A set read from the language table in use (each language's row), built once per table."""

    def __init__(self, compute: Callable[[languages.Table], frozenset[str]]) -> None:
        self._compute = compute

    def _now(self) -> frozenset[str]:
        return _of(self._compute, languages.table())

    def __contains__(self, item: object) -> bool:
        return item in self._now()

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())

    @classmethod
    def _from_iterable(cls, it: Any) -> frozenset[str]:
        return frozenset(it)


class _TableScripts(Mapping[str, frozenset[str]]):
    """Each language's scripts, read from its row (Language.scripts) in the table in use."""

    @staticmethod
    def _compute(table: languages.Table) -> dict[str, frozenset[str]]:
        return {lang.code: frozenset(lang.scripts) for lang in table.rows}

    def _now(self) -> dict[str, frozenset[str]]:
        return _of(self._compute, languages.table())

    def __getitem__(self, code: str) -> frozenset[str]:
        return self._now()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._now())

    def __len__(self) -> int:
        return len(self._now())


# The scripts an answer in each language is written in (names and numbers aside): its row's.
SCRIPTS: Mapping[str, frozenset[str]] = _TableScripts()
# Scripts several languages write (Latin, Cyrillic, Arabic, Devanagari, Han).
SHARED: Set[str] = _TableSet(
    lambda t: frozenset(s for s, users in t.script_users.items() if len(users) > 1))
# Scripts of the languages written without spaces: there a "word" is a phrase.
UNSPACED: Set[str] = _TableSet(
    lambda t: frozenset(s for lang in t.rows if lang.spaceless for s in lang.scripts))
CHINESE: Set[str] = _TableSet(lambda t: t.chinese)
CASED = frozenset({LATIN, CYRILLIC})  # scripts with capitals: a name can be told from a word
CHINESE = frozenset({"zh", "zh-Hant", "yue"})
# Languages the detector cannot reliably tell apart in a sentence: never a mismatch between them.
CLOSE = (frozenset({"ms", "id"}), frozenset({"hi", "mr"}), frozenset({"ar", "fa", "ur"}),
         frozenset({"ru", "uk"}), frozenset({"zh", "zh-Hant", "yue"}))


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
