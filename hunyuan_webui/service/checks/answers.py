"""Guards against answers that are not translations: the wrong language, a loop, the source again,
half a translation, an empty or cut-off answer, a lost number or address.

Real Hy-MT models sometimes answer in another language (English to Japanese in Hindi, a generic
prompt in Chinese), repeat a phrase until the token cap, hand the source back, stop half-way or
leave half of it untranslated. A student cannot tell that from a translation, and a cached bad
answer is served to the whole class. This module holds the checks, each a pure function of the
texts:

- :func:`judge_script`: while an answer streams, whether its first letters are in the target's
  own script (or, clearly, in another one: it is stopped at once);
- :func:`check_answer`: the whole answer, once it has ended, shown early or not: the source again
  (:mod:`.same` says what rightly stays the same: names, brands, terms, code, lists of them), the
  wrong language (the script where the target has its own; the project's detector where it
  shares one), half a translation (:mod:`.mixed`), and the numbers, addresses, code and
  placeholders it must keep (:mod:`.kept`);
- :func:`check_length`: an empty answer, or one cut off far short of its expected length;
- :func:`find_loop`: a repeating run at the end of the text (:mod:`.budget` gives the length cap).

:class:`Guards` is what the service holds: which guards are on, the detector, the retry prompt and
the event counts for ``/metrics``. What a segment does with them (hold, stop, retry, mark) is
:mod:`hunyuan_webui.service.checks.watch`.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from hunyuan_webui.detect import LanguageDetector
from hunyuan_webui.detect.scripts import HAN
from hunyuan_webui.service.checks.budget import ratio
from hunyuan_webui.service.checks.kept import ADDRESS, CODE, NUMBER, missing_item
from hunyuan_webui.service.checks.mixed import (
    half_translated,
    looks_chinese,
    uncopied,
    unquoted,
)
from hunyuan_webui.service.checks.same import normal, same_everywhere, translatable
from hunyuan_webui.service.checks.writing import (
    CHINESE,
    SCRIPTS,
    SHARED,
    close,
    decides_early,
    letters,
    unconverted,
)

# The guards, by the name their flag, warning and metric use.
LANGUAGE, COPY, LOOP, LENGTH = "language", "copy", "loop", "length"
HALF, EMPTY, TRUNCATED = "half", "empty", "truncated"
KINDS = (LANGUAGE, COPY, LOOP, LENGTH, HALF, EMPTY, TRUNCATED, NUMBER, ADDRESS, CODE)
WARNING_CODES = {LANGUAGE: "wrong_language", COPY: "copied_source", LOOP: "repetition_loop",
                 LENGTH: "too_long", HALF: "half_translated", EMPTY: "empty_answer",
                 TRUNCATED: "truncated", NUMBER: "number_changed", ADDRESS: "url_changed",
                 CODE: "code_changed"}
# What happened after a guard fired: a retry that passed was served, or the answer was marked.
SERVED, MARKED = "retry_served", "marked"
OUTCOMES = (SERVED, MARKED)

MIN_WEIGHT = 4  # letters (Han and kana count 2) below which an answer is not judged
MIXED_SHARE = 0.3  # the target's scripts carry at least this share of a mixed answer
RELEASE_WEIGHT = 6  # a streamed answer this far into the target's script is judged fine so far
REJECT_WEIGHT = 24  # ... and one this far with almost none of it is stopped at once
SOURCE_LETTERS = 10  # letters an answer needs before "it is the source language" counts
OTHER_LETTERS = 24  # ... and before "it is some third language" counts
OTHER_CONFIDENCE = 0.9
COPY_WORD_SHARE = 0.6
ALPHABETS = frozenset({"ru", "uk"})  # told apart by letters one alphabet lacks (і ї є / ы э ъ)
ALPHABET_CERTAIN = 0.99  # the detector's confidence when those letters decide
TRUNCATED_SHARE = 0.5  # an answer cut off below this share of its expected length
LOOP_MAX_UNIT = 64  # longest repeated unit looked for, in characters


@dataclass(frozen=True)
class Finding:
    """A guard fired on an answer: which one, the language the answer seems to be in, and what
    of the source it lost (a number, an address, code)."""

    kind: str
    detected: str | None = None
    missing: str | None = None

    def warning(self, segment: int, retried: bool) -> dict[str, Any]:
        """The API's per-segment ``warnings`` entry."""
        out = {"segment": segment, "code": WARNING_CODES[self.kind], "guard": self.kind,
               "detected": self.detected, "retried": retried}
        if self.missing is not None:
            out["missing"] = self.missing
        return out


def judge_script(text: str, target: str, source_text: str = "") -> bool | None:
    """While an answer streams: True once it is clearly in the target's script, False once it is
    clearly not (stop it), None while it cannot tell yet. Only for targets whose script the
    source does not share (see :func:`decides_early`)."""
    if source_text and same_everywhere(source_text) and normal(source_text).startswith(
            normal(text).rstrip()):
        return None  # code or a name kept as it is, so far: judged when it ends
    weights = letters(text)
    total = sum(weights.values())
    mine = sum(w for s, w in weights.items() if s in SCRIPTS.get(target, ()))
    if mine >= RELEASE_WEIGHT and mine >= MIXED_SHARE * total:
        return True
    if total >= REJECT_WEIGHT and mine < 0.1 * total:
        return False
    return None


def is_copy(answer: str, source_text: str, source: str, target: str,
            keep: tuple[str, ...] = ()) -> bool:
    """The source handed back: the same words, or (for a target in another script) mostly the
    source's words. What rightly stays the same (names, terms, code, numbers, lists of them:
    :mod:`.same`) is not judged."""
    words = translatable(source_text, keep)
    if not words or same_everywhere(source_text):
        return False
    if close(source, target):  # zh -> zh-Hant of shared characters, ms -> id: rightly alike
        return target in CHINESE and unconverted(answer, target)
    if normal(answer) == normal(source_text):
        return True
    if not decides_early(source, target):
        return False
    said = normal(answer).split()
    known = set(words)
    if len(said) < 2:
        return False
    return sum(w in known for w in said) >= COPY_WORD_SHARE * len(said)


def wrong_language(answer: str, source_text: str, source: str, target: str,
                   detector: LanguageDetector, keep: tuple[str, ...] = ()) -> str | None:
    """The language ``answer`` is in when it is, clearly, not ``target`` (None otherwise)."""
    if normal(answer) == normal(source_text) and (
            same_everywhere(source_text) or not translatable(source_text, keep)):
        return None  # code, a name, a number or a list of them, kept as it is
    answer = unquoted(answer)  # a title or a saying quoted as it was is no answer's language
    if decides_early(source, target):  # of another script: what it kept says nothing either
        answer = uncopied(answer, source_text)
    weights = letters(answer)
    total = sum(weights.values())
    if total < MIN_WEIGHT:
        return None  # too short to judge: "OK", "3.14", an emoji
    if sum(w for s, w in weights.items() if s in SCRIPTS[target]) < MIXED_SHARE * total:
        return detector.detect(answer).code or "und"
    if target == "ja" and looks_chinese(answer):
        return "zh"  # Han without one kana, and Chinese
    dominant = max(weights, key=weights.__getitem__)
    count = weights[dominant]
    if dominant not in SHARED or dominant == HAN or count < SOURCE_LETTERS:
        return None
    det = detector.detect(answer)
    if det.code in (None, target) or not det.reliable or (close(det.code, target) and not (
            det.confidence >= ALPHABET_CERTAIN and {det.code, target} <= ALPHABETS)):
        return None  # (Russian for Ukrainian and back: only when the alphabet says so)
    if (det.code == source and count >= SOURCE_LETTERS) or (
            det.confidence >= OTHER_CONFIDENCE and count >= OTHER_LETTERS):
        return det.code
    return None


def check_answer(answer: str, source_text: str, source: str, target: str,
                 detector: LanguageDetector, copy: bool = True, language: bool = True,
                 kept: bool = False, keep: tuple[str, ...] = ()) -> Finding | None:
    """A finished answer: a :class:`Finding` when it is a copy, in the wrong language, half a
    translation, or lost a number, an address or code of its source (``kept``). ``keep``: terms
    that rightly stay as they are (the glossary's)."""
    if copy and source != target and is_copy(answer, source_text, source, target, keep):
        return Finding(COPY, source)
    if language and target in SCRIPTS:
        wrong = wrong_language(answer, source_text, source, target, detector, keep)
        if wrong is not None:
            return Finding(LANGUAGE, None if wrong == "und" else wrong)
        half = half_translated(answer, source_text, source, target, keep)
        if half is not None:
            return Finding(HALF, half)
    if kept:
        lost = missing_item(source_text, answer, source, target)
        if lost is not None:
            return Finding(lost[0], missing=lost[1])
    return None


def check_length(answer: str, source_text: str, source: str, target: str,
                 finish_reason: str | None) -> Finding | None:
    """An empty answer to a source with letters, or one that stopped (not at its end: the token
    cap, the server) far short of its source's expected length."""
    if sum(letters(source_text).values()) < 2:
        return None
    if not any(ch.isalnum() for ch in answer):
        return Finding(EMPTY)
    expected = len(source_text.strip()) * ratio(source, target)
    if finish_reason not in (None, "stop") and len(answer.strip()) < TRUNCATED_SHARE * expected:
        return Finding(TRUNCATED)
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
    """Which guards are on, and what they need: the detector, the prompt family, the counts.

    ``language`` also covers half a translation; ``loop`` also an empty or cut-off answer;
    ``kept`` the numbers, addresses, code and placeholders an answer must keep."""

    family: str
    detector: LanguageDetector
    language: bool = True
    loop: bool = True
    copy: bool = True
    kept: bool = True
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
                     copy=getattr(settings, "copy_guard", True),
                     kept=getattr(settings, "kept_guard", True))
        return guards if guards.judges or guards.loop or guards.kept else None

    @property
    def judges(self) -> bool:
        """Whether an answer is held back until its first letters are judged (the language or
        copy guard)."""
        return self.language or self.copy

    def check(self, answer: str, segment: str, source: str, target: str,
              finish_reason: str | None, keep: tuple[str, ...] = ()) -> Finding | None:
        """The whole answer, once it has ended, by every guard that is on."""
        if self.loop:
            short = check_length(answer, segment, source, target, finish_reason)
            if short is not None:
                return short
        if not (self.judges or self.kept):
            return None
        return check_answer(answer, segment, source, target, self.detector, copy=self.copy,
                            language=self.language, kept=self.kept, keep=keep)
