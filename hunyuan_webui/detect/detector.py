"""The detector: the steps of :mod:`hunyuan_webui.detect` put together, and what it answers.

:meth:`LanguageDetector.detect` takes the census of :mod:`.scripts`, lets a script that settles it
answer, and otherwise hands the text to the rules for its script: :mod:`.chinese` for Han,
:mod:`.alphabets` for Uyghur and the Cyrillic alphabets, :mod:`.statistical` for the rest. The
confidence of the answer is the dominant script's share of the letters times the confidence within
that script; whether it is ``reliable`` also depends on how many letters were seen.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from hunyuan_webui import languages
from hunyuan_webui.detect.alphabets import cyrillic_alphabets, looks_uyghur
from hunyuan_webui.detect.chinese import ChineseVariants
from hunyuan_webui.detect.scripts import (
    ARABIC,
    CYRILLIC,
    HAN,
    KANA,
    blank_addresses,
    census,
    known,
    langid_groups,
    looks_japanese,
    script_only,
)
from hunyuan_webui.detect.statistical import RestrictedLangid

#: Below this confidence a detection is not ``reliable`` (the UI should ask the user to pick).
DEFAULT_THRESHOLD = 0.5
#: How many letters of the dominant script a detection needs to be ``reliable`` (Han and kana
#: count 2): a script of its own settles it at once, a Chinese character or two tells Simplified
#: from Traditional, but telling apart languages that share an alphabet needs a few words.
MIN_RELIABLE_LETTERS = {"script": 1, "chinese": 4, "statistics": 10}
#: Only this many leading characters are examined: enough for any language, and bounded time.
MAX_CHARS = 2000


@dataclass(frozen=True)
class Detection:
    """What :meth:`LanguageDetector.detect` found."""

    code: str | None
    """A code of the language table (:mod:`hunyuan_webui.languages`), or ``None`` if nothing
    fits."""
    confidence: float
    """0..1."""
    reliable: bool
    """Confidence at least the threshold, the text long enough to trust it (see
    :data:`MIN_RELIABLE_LETTERS`) and, for Chinese, a character that tells zh from zh-Hant."""
    candidates: tuple[tuple[str, float], ...]
    """Up to three ``(code, confidence)``, best first; the first is ``code``."""


#: The answer for text with nothing to detect.
NOTHING = Detection(None, 0.0, False, ())


class LanguageDetector:
    """Detects which language of the table a text is in. Build once, share freely (a detector
    reads the table in use when it first detects).

    ``threshold`` is the confidence at or above which a detection is ``reliable``.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be within 0..1, got {threshold!r}")
        self.threshold = threshold
        self._lock = threading.Lock()
        self._langid: RestrictedLangid | None = None
        self._chinese: ChineseVariants | None = None
        self._ready = False

    # --- building -------------------------------------------------------------------------------

    def warm_up(self) -> LanguageDetector:
        """Load the models now instead of on the first :meth:`detect` (idempotent, ~0.6 s)."""
        if self._ready:
            return self
        with self._lock:
            if self._ready:
                return self
            self._langid = RestrictedLangid()
            self._chinese = ChineseVariants()
            self._ready = True
        return self

    # --- detecting ------------------------------------------------------------------------------

    def detect(self, text: str) -> Detection:
        """The language of ``text``; ``code`` is ``None`` when there is nothing to detect."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        text = blank_addresses(text[:MAX_CHARS])
        counted = census(text)
        if counted is None:
            return NOTHING
        weights, scripts = counted
        total = sum(weights.values())

        # Han and kana together are the CJK group: Japanese mixes them.
        if KANA in weights and HAN in weights:
            weights[KANA] += weights.pop(HAN)
        dominant = max(weights, key=weights.__getitem__)
        letters = weights[dominant]
        share = letters / total
        if not known(dominant):  # Other, or a script no language of the table uses
            return NOTHING

        self.warm_up()
        if dominant == KANA and not looks_japanese(text):
            dominant = HAN
        ranked, decisive, needed = self._rank(text, dominant, scripts)
        valid = languages.table().by_code
        candidates = tuple((code, round(p * share, 4)) for code, p in ranked
                           if p > 0 and code in valid)[:3]
        if not candidates:
            return NOTHING
        code, confidence = candidates[0]
        reliable = decisive and confidence >= self.threshold and letters >= needed
        return Detection(code, confidence, reliable, candidates)

    def _rank(self, text: str, dominant: str,
              scripts: list[str | None]) -> tuple[list[tuple[str, float]], bool, int]:
        """Ranked codes for text whose dominant script is ``dominant``, whether anything told
        them apart, and the letters a reliable answer needs."""
        assert self._langid is not None and self._chinese is not None  # warmed up
        only = script_only()
        if dominant in only:
            return [(only[dominant], 1.0)], True, MIN_RELIABLE_LETTERS["script"]
        if dominant == HAN:
            # Only characters both systems share ("你好"): Chinese for sure, which one a guess.
            ranked, decisive = self._chinese.rank(text)
            return ranked, decisive, MIN_RELIABLE_LETTERS["chinese"]
        alone = "".join(ch if s is None or s == dominant else " " for ch, s in zip(text, scripts))
        if dominant == ARABIC and looks_uyghur(alone):
            return [("ug", 1.0)], True, MIN_RELIABLE_LETTERS["script"]
        ranked = self._langid.rank(alone, langid_groups().get(dominant, ()))
        if dominant == CYRILLIC:
            ranked = cyrillic_alphabets(alone, ranked)
        return ranked, True, MIN_RELIABLE_LETTERS["statistics"]


_default: LanguageDetector | None = None
_default_lock = threading.Lock()


def default_detector() -> LanguageDetector:
    """The process-wide detector with default settings (built on first use)."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = LanguageDetector()
    return _default


def detect(text: str) -> Detection:
    """Shorthand for ``default_detector().detect(text)``."""
    return default_detector().detect(text)
