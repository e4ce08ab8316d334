"""Guards against answers that are not translations: the wrong language, a loop, the source again.

Real Hy-MT models sometimes answer in another language (English to Japanese in Hindi, a generic
prompt in Chinese), repeat a phrase until the token cap, or hand the source back. A student cannot
tell that from a translation, and a cached bad answer is served to the whole class. This module
holds the checks, each a pure function of the texts:

- :func:`judge_script` / :func:`check_answer`: is the answer in the target language? The script
  decides at once where the target has a script of its own; for a script the target shares
  (Latin, Cyrillic, Arabic, Devanagari) the project's detector must say, reliably, that it is
  another language (the source's, most often). Texts too short or too mixed to judge, and names,
  numbers and code (the same in every language), are let through.
- copied source: the answer is the source again, or mostly its words for a target in another
  script;
- :func:`find_loop`: a repeating run at the end of the text (:mod:`.budget` gives the length cap).

:class:`Guards` is what the service holds: which guards are on, the detector, the retry prompt and
the event counts for ``/metrics``. What a segment does with them (hold, stop, retry, mark) is
:mod:`hunyuan_webui.service.checks.watch`.
"""

from __future__ import annotations

import functools
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.detect import LanguageDetector
from hunyuan_webui.detect.scripts import HAN, KANA, census

# The guards, by the name their flag, warning and metric use.
LANGUAGE, COPY, LOOP, LENGTH = "language", "copy", "loop", "length"
KINDS = (LANGUAGE, COPY, LOOP, LENGTH)
WARNING_CODES = {LANGUAGE: "wrong_language", COPY: "copied_source", LOOP: "repetition_loop",
                 LENGTH: "too_long"}
# What happened after a guard fired: a retry that passed was served, or the answer was marked.
SERVED, MARKED = "retry_served", "marked"
OUTCOMES = (SERVED, MARKED)

# The scripts an answer in each language is written in are its row's (Language.scripts).


def scripts_of(code: str) -> frozenset[str]:
    """The scripts an answer in ``code`` is written in (names and numbers aside); none for a
    code the table does not hold."""
    return _scripts(languages.table()).get(code, frozenset())


def unspaced_scripts() -> frozenset[str]:
    """The scripts of languages written without spaces: there a "word" is a phrase."""
    return _spacing(languages.table())[0]


def shared_scripts() -> frozenset[str]:
    """The scripts several languages write (Latin, Cyrillic, Arabic, Devanagari, Han)."""
    return _spacing(languages.table())[1]


@functools.lru_cache(maxsize=4)
def _scripts(table: languages.Table) -> dict[str, frozenset[str]]:
    return {lang.code: frozenset(lang.scripts) for lang in table.rows}


@functools.lru_cache(maxsize=4)
def _spacing(table: languages.Table) -> tuple[frozenset[str], frozenset[str]]:
    unspaced = frozenset(s for lang in table.rows if lang.spaceless for s in lang.scripts)
    shared = frozenset(s for s, users in table.script_users.items() if len(users) > 1)
    return unspaced, shared


# Languages the detector cannot reliably tell apart in a sentence: never a mismatch between them.
CLOSE = (frozenset({"ms", "id"}), frozenset({"hi", "mr"}), frozenset({"ar", "fa", "ur"}),
         frozenset({"ru", "uk"}), frozenset({"zh", "zh-Hant", "yue"}))

MIN_WEIGHT = 4  # letters (Han and kana count 2) below which an answer is not judged
MIXED_SHARE = 0.3  # the target's scripts carry at least this share of a mixed answer
RELEASE_WEIGHT = 6  # a streamed answer this far into the target's script is shown at once
REJECT_WEIGHT = 24  # ... and one this far with almost none of it is stopped at once
SHARED_RELEASE_LETTERS = 20  # letters judged before an answer in a shared script is shown
SOURCE_LETTERS = 10  # letters an answer needs before "it is the source language" counts
OTHER_LETTERS = 30  # ... and before "it is some third language" counts
OTHER_CONFIDENCE = 0.9
COPY_WORD_SHARE = 0.6
LOOP_MAX_UNIT = 64  # longest repeated unit looked for, in characters
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class Finding:
    """A guard fired on an answer: which one, and the language the answer seems to be in."""

    kind: str
    detected: str | None = None

    def warning(self, segment: int, retried: bool) -> dict[str, Any]:
        """The API's per-segment ``warnings`` entry."""
        return {"segment": segment, "code": WARNING_CODES[self.kind], "guard": self.kind,
                "detected": self.detected, "retried": retried}


def letters(text: str) -> dict[str, int]:
    counted = census(text)
    return counted[0] if counted else {}


def letters_in(text: str) -> int:
    """The letters of ``text``'s main script (Han and kana count 2)."""
    return max(letters(text).values(), default=0)


def target_share(text: str, target: str) -> tuple[float, int]:
    """The share of ``text``'s letter weight in ``target``'s scripts, and the total weight."""
    weights = letters(text)
    total = sum(weights.values())
    mine = sum(w for s, w in weights.items() if s in scripts_of(target))
    return (mine / total if total else 1.0), total


def judge_script(text: str, target: str, source_text: str = "") -> bool | None:
    """While an answer streams: True once it is clearly in the target's script (it may be shown),
    False once it is clearly not (stop it), None while it cannot tell yet. Only for targets whose
    script the source does not share (see :func:`decides_early`)."""
    if source_text and same_everywhere(source_text) and _normal(source_text).startswith(
            _normal(text).rstrip()):
        return None  # code or a name kept as it is, so far: judged when it ends
    weights = letters(text)
    total = sum(weights.values())
    mine = sum(w for s, w in weights.items() if s in scripts_of(target))
    if mine >= RELEASE_WEIGHT and mine >= MIXED_SHARE * total:
        return True
    if total >= REJECT_WEIGHT and mine < 0.1 * total:
        return False
    return None


def judge_shared(text: str, source_text: str, source: str, target: str,
                 detector: LanguageDetector) -> bool | None:
    """While an answer streams in a script the source shares (en->fr): True once it has enough
    letters and is neither the beginning of the source again nor, reliably, the source language
    (it may be shown); None while it cannot tell (it is judged whole when it ends)."""
    if letters_in(text) < SHARED_RELEASE_LETTERS:
        return None
    if _normal(source_text).startswith(_normal(text).rstrip()):
        return None
    det = detector.detect(text)
    if det.reliable and det.code == source and not _close(source, target):
        return None
    return True


def decides_early(source: str, target: str) -> bool:
    """Whether the script alone tells an answer in ``target`` from one in ``source`` (en->ja yes,
    en->fr no); Japanese shares Han with Chinese, so zh<->ja is judged on the whole answer."""
    mine, theirs = scripts_of(target), scripts_of(source)
    return bool(mine and theirs and not mine & theirs)


def _normal(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold()))


_CODE = re.compile(r"[(){}\[\]<>=;_/\\$#@`|]")
_NAME = re.compile(r"^(?:[A-Z0-9][\w.'&-]*\s*)+$")


@functools.lru_cache(maxsize=4096)
def same_everywhere(text: str) -> bool:
    """Text that stays as it is in every language: one word, a number, code, a proper name
    ("New York", "GitHub Actions")."""
    stripped = text.strip()
    weights = letters(stripped)
    if sum(weights.values()) < 6:
        return True
    if not unspaced_scripts() & set(weights) and len(_normal(stripped).split()) < 2:
        return True  # one word; a Chinese or Thai "word" is a whole phrase
    return len(_CODE.findall(stripped)) >= 2 or bool(_NAME.match(stripped.rstrip(".!?")))


def is_copy(answer: str, source_text: str, source: str, target: str) -> bool:
    """The source handed back: the same words, or (for a target in another script) mostly the
    source's words. Code, names and single words may stay as they are (:func:`same_everywhere`)."""
    if same_everywhere(source_text):
        return False
    if _normal(answer) == _normal(source_text):
        return True
    if not decides_early(source, target):
        return False
    said = _normal(answer).split()
    known = set(_normal(source_text).split())
    if not said or len(said) < 2:
        return False
    return sum(w in known for w in said) >= COPY_WORD_SHARE * len(said)


def _close(a: str, b: str) -> bool:
    return a == b or any(a in group and b in group for group in CLOSE)


def check_answer(answer: str, source_text: str, source: str, target: str,
                 detector: LanguageDetector, copy: bool = True,
                 language: bool = True) -> Finding | None:
    """A finished answer: a :class:`Finding` when it is a copy or in the wrong language."""
    if copy and source != target and is_copy(answer, source_text, source, target):
        return Finding(COPY, source)
    if not language or not scripts_of(target):
        return None
    if _normal(answer) == _normal(source_text) and same_everywhere(source_text):
        return None  # code, a name or a number, kept as it is
    weights = letters(answer)
    total = sum(weights.values())
    if total < MIN_WEIGHT:
        return None  # too short to judge: "OK", "3.14", an emoji
    if sum(w for s, w in weights.items() if s in scripts_of(target)) < MIXED_SHARE * total:
        return Finding(LANGUAGE, detector.detect(answer).code)
    if target == "ja" and KANA not in weights and weights.get(HAN, 0) >= 12:
        return Finding(LANGUAGE, "zh")  # a whole sentence of Han without one kana is Chinese
    dominant = max(weights, key=weights.__getitem__)
    count = weights[dominant]
    if dominant not in shared_scripts() or dominant == HAN or count < SOURCE_LETTERS:
        return None
    det = detector.detect(answer)
    if det.code is None or not det.reliable or _close(det.code, target):
        return None
    if (det.code == source and count >= SOURCE_LETTERS) or (
            det.confidence >= OTHER_CONFIDENCE and count >= OTHER_LETTERS):
        return Finding(LANGUAGE, det.code)
    return None


def _runs_needed(unit: str) -> int:
    if len(unit) < 4:
        return 16 if any(ch.isalnum() for ch in unit) else 32
    return 6 if len(unit) < 8 else 3


def find_loop(text: str, allow: int = 0) -> int | None:
    """Where to cut ``text`` if it ends in a repeating run: after the run's first copy (None when
    it does not). ``allow``: a run shorter than this many characters is let through (the source
    itself repeats)."""
    n = len(text)
    last = text[-1:]
    for p in range(1, min(LOOP_MAX_UNIT, n // 3) + 1):
        if text[n - 1 - p] != last:  # cheap first: a run of period p repeats the last character
            continue
        unit = text[n - p:]
        need = p * _runs_needed(unit)
        if need > n:
            continue
        tail = text[n - need:]
        if tail[p:] != tail[:-p] or _smaller_period(unit):
            continue
        start = n - need
        while start > 0 and text[start - 1] == text[start - 1 + p]:
            start -= 1
        if n - start < allow:
            continue
        cut = start + p
        space = text.rfind(" ", start + 1, cut)  # end the kept copy at a word's end
        return space if space > start else cut
    return None


def _smaller_period(unit: str) -> bool:
    """Whether ``unit`` is itself a repetition ("!!!!", "abab"): its run is found at that size."""
    return any(len(unit) % q == 0 and unit == unit[:q] * (len(unit) // q)
               for q in range(1, len(unit) // 2 + 1))


@functools.lru_cache(maxsize=4096)
def repeats_itself(text: str) -> bool:
    """Whether a source has a repeating run of its own (哈哈哈哈, "no no no no")."""
    n = len(text)
    for p in range(1, min(8, n // 4) + 1):
        for end in range(4 * p, n + 1):
            chunk = text[end - 4 * p:end]
            if chunk[p:] == chunk[:-p] and chunk.strip():
                return True
    return False


@dataclass
class GuardCounts:
    """Guard events by (kind, outcome, pair), for ``hymt_guard_events_total``."""

    _counts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, kind: str, outcome: str, pair: str) -> None:
        assert kind in KINDS and outcome in OUTCOMES
        with self._lock:
            self._counts[(kind, outcome, pair)] += 1

    def items(self) -> list[tuple[tuple[str, str, str], int]]:
        with self._lock:
            return sorted(self._counts.items())

    def total(self, kind: str | None = None) -> int:
        return sum(n for (k, _, _), n in self.items() if kind is None or k == kind)


@dataclass
class Guards:
    """Which guards are on, and what they need: the detector, the prompt family, the counts."""

    family: str
    detector: LanguageDetector
    language: bool = True
    loop: bool = True
    copy: bool = True
    counts: GuardCounts = field(default_factory=GuardCounts)

    @classmethod
    def from_settings(cls, settings: Any, family: str,
                      detector: LanguageDetector) -> Guards | None:
        """None when every guard is off (the plain path, with nothing held back)."""
        if not getattr(settings, "guards", True):
            return None
        guards = cls(family=family, detector=detector,
                     language=getattr(settings, "language_guard", True),
                     loop=getattr(settings, "loop_guard", True),
                     copy=getattr(settings, "copy_guard", True))
        return guards if guards.language or guards.loop or guards.copy else None

    @property
    def judges(self) -> bool:
        """Whether an answer is held back until it is judged (the language or copy guard)."""
        return self.language or self.copy
