"""Source-language detection for the "auto" source option.

The model does no language detection, so the app must, and it may only ever answer one of the
38 codes of :mod:`hunyuan_webui.languages` (or ``None`` when nothing fits).

How it works, in three steps:

1. **Script census.** Every letter (and combining mark) is assigned to a writing system by its
   code point, after web and e-mail addresses are blanked out. Text with no letters at all (empty,
   digits, emoji, punctuation) or with many control / unassigned / private-use / replacement
   characters (binary junk decoded as text) gives ``Detection(None, 0.0, False, ())``. Han and kana count double, because one of them carries about as
   much as two Latin letters, so "我用iPhone拍照" is Chinese, not English. The confidence of the
   answer is the dominant script's share of the letters times the confidence within that script.
2. **Scripts that settle it alone**: Hangul -> ko, Thai -> th, Khmer -> km, Myanmar -> my,
   Tibetan -> bo, Gujarati -> gu, Telugu -> te, Tamil -> ta, Bengali -> bn, Hebrew -> he, traditional
   Mongolian script -> mn, and kana -> ja. Scripts none of the 38 use (Greek, Georgian...) give
   ``None``.
3. **Scripts shared by several of our languages:**

   * Latin (en fr pt es tr it de vi ms id tl pl cs nl), Cyrillic (ru uk kk mn), Arabic (ar fa ur)
     and Devanagari (hi mr) go to **py3langid** (the maintained fork of langid.py, a naive Bayes
     model over byte n-grams that ships inside the wheel), restricted once to those 23 languages
     and then to the candidates of the text's script, so it never answers a language outside our
     table.
   * For Cyrillic, what the alphabets allow is then weighed in: Russian has no і ї є ґ, Ukrainian
     no ы э ъ ё, Mongolian none of Kazakh's ә ғ қ ң ұ һ і, Kazakh no ї є ґ; and Kazakh text
     without any of its own letters is improbable beyond a few words.
   * Uyghur is written in the Arabic script. Its alphabet marks every vowel with letters that
     Arabic, Persian and Urdu never use (ۆ ۇ ۈ ې ڭ ە), writes "i" as ى inside words (Arabic has ى
     only at the end of a word, Persian and Urdu use ی) and starts every vowel-initial word with ئ.
     A text where such signs make up a few percent of the letters is ``ug``; otherwise py3langid
     chooses among ar / fa / ur.
   * Han without (much) kana is Chinese: **canto-filter** (CanCLID's Cantonese/Mandarin judge:
     regexes of Cantonese-only characters and words such as 嘅 咗 唔係 佢 啲 冇 嘢 喺, with
     Mandarin exceptions such as 關係) picks ``yue``; otherwise **hanzidentifier**'s CC-CEDICT
     character sets count Traditional-only (們 這 說) against Simplified-only (们 这 说) characters
     to pick ``zh-Hant`` or ``zh``. Text made only of characters that both systems share ("你好")
     is ``zh`` with a lower confidence.

Why py3langid: ``scripts/compare_detectors.py`` ran lingua-language-detector (high and low
accuracy), py3langid, pycld2, cld3-py and langdetect on the hand-written short sentences of
``tests/data/detect_samples.tsv`` (results and the decision in ``docs/LANGUAGE_DETECTION.md``).
Inside this pipeline py3langid made the fewest mistakes on the languages that share a script
(ms/id, ru/uk/kk/mn, ar/fa/ur, hi/mr), for about 60 MB of memory (numpy aside) and well under
a millisecond a sentence; lingua's high-accuracy mode was a little less accurate here and needs
about 550 MB, its low-accuracy mode (about 50 MB) clearly less accurate. No library knows zh-Hant vs yue, or Uyghur, so
those rules are ours whatever the library.

Detection takes well under a millisecond for a sentence once warm (loading takes ~0.6 s, done on
the first call or by :meth:`LanguageDetector.warm_up`). Only the first :data:`MAX_CHARS`
characters are examined. :class:`LanguageDetector` is thread-safe: the models are loaded once
under a lock and only read afterwards.
"""

from __future__ import annotations

import bisect
import re
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hunyuan_webui.languages import CODES

__all__ = ["Detection", "LanguageDetector", "DEFAULT_THRESHOLD", "MIN_RELIABLE_LETTERS",
           "NOTHING", "default_detector", "detect"]

#: Below this confidence a detection is not ``reliable`` (the UI should ask the user to pick).
DEFAULT_THRESHOLD = 0.5
#: How many letters of the dominant script a detection needs to be ``reliable`` (Han and kana
#: count 2): a script of its own settles it at once, a Chinese character or two tells Simplified
#: from Traditional, but telling apart languages that share an alphabet needs a few words.
MIN_RELIABLE_LETTERS = {"script": 1, "chinese": 4, "statistics": 10}
#: Only this many leading characters are examined: enough for any language, and bounded time.
MAX_CHARS = 2000
#: Share of junk characters (controls, unassigned, private use, U+FFFD) that makes text junk.
JUNK_RATIO = 0.1

# --- scripts -------------------------------------------------------------------------------------

LATIN, CYRILLIC, ARABIC, DEVANAGARI = "Latin", "Cyrillic", "Arabic", "Devanagari"
HAN, KANA, HANGUL = "Han", "Kana", "Hangul"
THAI, KHMER, MYANMAR, TIBETAN = "Thai", "Khmer", "Myanmar", "Tibetan"
GUJARATI, TELUGU, TAMIL, BENGALI = "Gujarati", "Telugu", "Tamil", "Bengali"
HEBREW, MONGOLIAN = "Hebrew", "Mongolian"
OTHER = "Other"

# (first, last, script), sorted; a letter outside every range is OTHER.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, LATIN), (0x0250, 0x02AF, LATIN),
    (0x0400, 0x052F, CYRILLIC),
    (0x0590, 0x05FF, HEBREW),
    (0x0600, 0x06FF, ARABIC), (0x0750, 0x077F, ARABIC), (0x08A0, 0x08FF, ARABIC),
    (0x0900, 0x097F, DEVANAGARI),
    (0x0980, 0x09FF, BENGALI),
    (0x0A80, 0x0AFF, GUJARATI),
    (0x0B80, 0x0BFF, TAMIL),
    (0x0C00, 0x0C7F, TELUGU),
    (0x0E00, 0x0E7F, THAI),
    (0x0F00, 0x0FFF, TIBETAN),
    (0x1000, 0x109F, MYANMAR),
    (0x1100, 0x11FF, HANGUL),
    (0x1780, 0x17FF, KHMER),
    (0x1800, 0x18AF, MONGOLIAN),
    (0x19E0, 0x19FF, KHMER),
    (0x1C80, 0x1C8F, CYRILLIC),
    (0x1E00, 0x1EFF, LATIN),
    (0x2C60, 0x2C7F, LATIN),
    (0x2DE0, 0x2DFF, CYRILLIC),
    (0x3005, 0x3005, KANA),  # 々, the Japanese iteration mark
    (0x3040, 0x30FF, KANA),
    (0x3130, 0x318F, HANGUL),
    (0x31F0, 0x31FF, KANA),
    (0x3400, 0x4DBF, HAN),
    (0x4E00, 0x9FFF, HAN),
    (0xA640, 0xA69F, CYRILLIC),
    (0xA720, 0xA7FF, LATIN),
    (0xA8E0, 0xA8FF, DEVANAGARI),
    (0xA960, 0xA97F, HANGUL),
    (0xA9E0, 0xA9FF, MYANMAR),
    (0xAA60, 0xAA7F, MYANMAR),
    (0xAC00, 0xD7FF, HANGUL),
    (0xF900, 0xFAFF, HAN),
    (0xFB1D, 0xFB4F, HEBREW),
    (0xFB50, 0xFDFF, ARABIC),
    (0xFE70, 0xFEFF, ARABIC),
    (0xFF21, 0xFF5A, LATIN),
    (0xFF66, 0xFF9F, KANA),
    (0xFFA0, 0xFFDC, HANGUL),
    (0x20000, 0x3134F, HAN),
)
_STARTS = tuple(r[0] for r in _RANGES)

# Han and kana carry more per character than alphabetic letters.
_WEIGHT = {HAN: 2, KANA: 2}

# Scripts that only one of our languages uses.
_SCRIPT_ONLY = {
    HANGUL: "ko", THAI: "th", KHMER: "km", MYANMAR: "my", TIBETAN: "bo", GUJARATI: "gu",
    TELUGU: "te", TAMIL: "ta", BENGALI: "bn", HEBREW: "he", MONGOLIAN: "mn", KANA: "ja",
}

# Scripts several of our languages share, and which of them py3langid chooses among.
_LANGID_GROUPS: dict[str, tuple[str, ...]] = {
    LATIN: ("en", "fr", "pt", "es", "tr", "it", "de", "vi", "ms", "id", "tl", "pl", "cs", "nl"),
    CYRILLIC: ("ru", "uk", "kk", "mn"),
    ARABIC: ("ar", "fa", "ur"),
    DEVANAGARI: ("hi", "mr"),
}
#: Every code py3langid is restricted to (23 languages; its codes are ours for all of them).
LANGID_CODES: tuple[str, ...] = tuple(c for group in _LANGID_GROUPS.values() for c in group)

# Letters of the Uyghur Arabic alphabet that Arabic, Persian and Urdu do not use:
# ۆ (o), ۇ (u), ۈ (ü), ې (é), ڭ (ng), ە (e).
UYGHUR_LETTERS = frozenset("ۆۇۈېڭە")
ALEF_MAKSURA = "\u0649"  # ى: Uyghur "i" anywhere in a word, Arabic only at a word's end
YEH_HAMZA = "\u0626"  # ئ: Uyghur's mark of a word that starts with a vowel
UYGHUR_MIN_SHARE = 0.03

# Letters that each of our Cyrillic alphabets lacks: a text that uses them (more than in passing,
# like a quoted name: at least FOREIGN_LETTER_SHARE of its letters) is not in that language.
CYRILLIC_FOREIGN: dict[str, frozenset[str]] = {
    "ru": frozenset("іїєґәғқңөұүһ"),
    "uk": frozenset("ыэъёәғқңөұүһ"),
    "kk": frozenset("їєґ"),
    "mn": frozenset("іїєґәғқңұһ"),
}
# Kazakh's own letters (і ә қ ң ғ ұ ү ө һ) make up about a seventh of Kazakh text, so the odds
# of a Kazakh text of n letters having none of them are about (1 - 0.12) ** n, conservatively.
FOREIGN_LETTER_SHARE = 0.05
KAZAKH_LETTERS = frozenset("әғқңөұүһі")
KAZAKH_LETTER_SHARE = 0.12

_VALID = frozenset(CODES)
_JUNK_CATEGORIES = frozenset({"Cc", "Cs", "Co", "Cn"})
# Addresses say nothing about the language around them.
_NOISE = re.compile(r"(?:https?://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)


@dataclass(frozen=True)
class Detection:
    """What :meth:`LanguageDetector.detect` found."""

    code: str | None
    """One of :data:`hunyuan_webui.languages.CODES`, or ``None`` if nothing fits."""
    confidence: float
    """0..1."""
    reliable: bool
    """Confidence at least the threshold, the text long enough to trust it (see
    :data:`MIN_RELIABLE_LETTERS`) and, for Chinese, a character that tells zh from zh-Hant."""
    candidates: tuple[tuple[str, float], ...]
    """Up to three ``(code, confidence)``, best first; the first is ``code``."""


#: The answer for text with nothing to detect.
NOTHING = Detection(None, 0.0, False, ())


def _script(ch: str) -> str:
    i = bisect.bisect_right(_STARTS, ord(ch)) - 1
    if i >= 0:
        first, last, script = _RANGES[i]
        if first <= ord(ch) <= last:
            return script
    return OTHER


def _in_word(ch: str) -> bool:
    """A letter, a combining mark (harakat, matras) or a zero-width (non-)joiner."""
    return ch.isalpha() or ch in "\u200c\u200d" or unicodedata.category(ch)[0] == "M"


def _cyrillic_alphabets(text: str, ranked: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Weigh py3langid's Cyrillic answer with what the four alphabets allow.

    A language whose alphabet lacks letters the text uses (at least 5 % of its letters) drops
    to a twentieth; Kazakh drops to ``(1 - KAZAKH_LETTER_SHARE) ** n`` when none of its own
    letters appear among n letters. Then renormalized.
    """
    lowered = text.lower()
    letters = [ch for ch in lowered if ch.isalpha()]
    present = set(letters)
    weighed = []
    for code, p in ranked:
        foreign = sum(ch in CYRILLIC_FOREIGN[code] for ch in letters)
        if foreign and foreign >= FOREIGN_LETTER_SHARE * len(letters):
            p *= 0.05
        if code == "kk" and not present & KAZAKH_LETTERS:
            p *= (1 - KAZAKH_LETTER_SHARE) ** len(letters)
        weighed.append((code, p))
    norm = sum(p for _, p in weighed) or 1.0
    return sorted(((c, p / norm) for c, p in weighed), key=lambda item: item[1], reverse=True)


class LanguageDetector:
    """Detects which of the 38 languages a text is in. Build once, share freely.

    ``threshold`` is the confidence at or above which a detection is ``reliable``.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD) -> None:
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold must be within 0..1, got {threshold!r}")
        self.threshold = threshold
        self._lock = threading.Lock()
        self._langid: Any = None
        self._trad_only: frozenset[str] = frozenset()
        self._simp_only: frozenset[str] = frozenset()
        self._judge_cantonese: Any = None
        self._ready = False

    # --- building -------------------------------------------------------------------------------

    def warm_up(self) -> LanguageDetector:
        """Load the models now instead of on the first :meth:`detect` (idempotent, ~0.6 s)."""
        if self._ready:
            return self
        with self._lock:
            if self._ready:
                return self
            from cantofilter import judge
            from hanzidentifier import helpers
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            full = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
            full.set_languages(LANGID_CODES)
            # A fresh identifier over the restricted arrays lets the full model (~40 MB) go.
            self._langid = LanguageIdentifier(
                full.nb_ptc, full.nb_pc, full.nb_classes, full.tk_nextmove, full.tk_output,
                norm_probs=True, tk_row=full.tk_row)
            self._trad_only = frozenset(helpers.TRADITIONAL_CHARACTERS - helpers.SHARED_CHARACTERS)
            self._simp_only = frozenset(helpers.SIMPLIFIED_CHARACTERS - helpers.SHARED_CHARACTERS)
            self._judge_cantonese = judge
            self._ready = True
        return self

    # --- detecting ------------------------------------------------------------------------------

    def detect(self, text: str) -> Detection:
        """The language of ``text``; ``code`` is ``None`` when there is nothing to detect."""
        if not isinstance(text, str):
            raise TypeError(f"text must be str, not {type(text).__name__}")
        text = _NOISE.sub(" ", text[:MAX_CHARS])
        weights: dict[str, int] = {}
        scripts: list[str | None] = []
        junk = visible = 0
        for ch in text:
            if ch.isspace():
                scripts.append(None)
                continue
            visible += 1
            category = unicodedata.category(ch)
            if category in _JUNK_CATEGORIES or ch == "\ufffd":
                junk += 1
                scripts.append(None)
            elif category[0] == "L" or (category[0] == "M" and _script(ch) != OTHER):
                script = _script(ch)  # marks outside our scripts: emoji variation selectors...
                weights[script] = weights.get(script, 0) + _WEIGHT.get(script, 1)
                scripts.append(script)
            else:
                scripts.append(None)
        total = sum(weights.values())
        if total == 0 or junk > JUNK_RATIO * visible:
            return NOTHING

        # Han and kana together are the CJK group: Japanese mixes them.
        if KANA in weights and HAN in weights:
            weights[KANA] += weights.pop(HAN)
        dominant = max(weights, key=weights.__getitem__)
        letters = weights[dominant]
        share = letters / total
        if dominant == OTHER:
            return NOTHING

        self.warm_up()
        if dominant == KANA and not self._looks_japanese(text):
            dominant = HAN
        needed = MIN_RELIABLE_LETTERS["script"]
        decisive = True
        if dominant in _SCRIPT_ONLY:
            ranked = [(_SCRIPT_ONLY[dominant], 1.0)]
        elif dominant == HAN:
            # Only characters both systems share ("你好"): Chinese for sure, which one a guess.
            ranked, decisive = self._chinese(text)
            needed = MIN_RELIABLE_LETTERS["chinese"]
        else:
            only = "".join(ch if s is None or s == dominant else " " for ch, s in zip(text, scripts))
            if dominant == ARABIC and self._looks_uyghur(only):
                ranked = [("ug", 1.0)]
            else:
                ranked = self._langid_rank(only, _LANGID_GROUPS[dominant])
                needed = MIN_RELIABLE_LETTERS["statistics"]
                if dominant == CYRILLIC:
                    ranked = _cyrillic_alphabets(only, ranked)
        candidates = tuple((code, round(p * share, 4)) for code, p in ranked
                           if p > 0 and code in _VALID)[:3]
        if not candidates:
            return NOTHING
        code, confidence = candidates[0]
        reliable = decisive and confidence >= self.threshold and letters >= needed
        return Detection(code, confidence, reliable, candidates)

    @staticmethod
    def _looks_japanese(text: str) -> bool:
        """Kana beside Han: Japanese with two kana or more, or with a fifth of the CJK characters.

        A lone kana in longer Chinese text (a cute "の" in a slogan) does not make it Japanese.
        """
        kana = han = 0
        for ch in text:
            script = _script(ch)
            if script == KANA:
                kana += 1
            elif script == HAN:
                han += 1
        return kana >= 2 or kana >= 0.2 * (kana + han)

    @staticmethod
    def _looks_uyghur(text: str) -> bool:
        """Uyghur-only letters, ى inside a word, ئ opening one: a few percent of the letters.

        ى inside words alone is not enough (some Persian text is typed with ى for every ی), so
        without a Uyghur-only letter it takes both ى inside a word and ئ opening one.
        """
        letters = own = medial = initial = 0
        padded = f" {text} "
        for i in range(1, len(padded) - 1):
            ch = padded[i]
            if not ch.isalpha():
                continue
            letters += 1
            if ch in UYGHUR_LETTERS:
                own += 1
            elif ch == ALEF_MAKSURA and _in_word(padded[i + 1]):
                medial += 1
            elif ch == YEH_HAMZA and not _in_word(padded[i - 1]):
                initial += 1
        marked = own + medial + initial
        return (own > 0 or (medial > 0 and initial > 0)) and marked >= UYGHUR_MIN_SHARE * letters

    def _chinese(self, text: str) -> tuple[list[tuple[str, float]], bool]:
        """Ranked yue / zh-Hant / zh, and whether any character told them apart."""
        trad = sum(ch in self._trad_only for ch in text)
        simp = sum(ch in self._simp_only for ch in text)
        distinct = trad + simp
        if distinct:
            # 1 telling character -> 0.8, 2 -> 0.9, 3 -> 0.95 ... times how one-sided they are.
            certainty = 1.0 - 0.2 * 0.5 ** (distinct - 1)
            p_trad = certainty * trad / distinct + (1 - certainty) / 2
        else:
            p_trad = 0.3  # only shared characters ("你好"): Simplified is far more common
        # "mixed" = Cantonese-only words beside Mandarin-only ones (們 這 還是): as often a false
        # Cantonese match in Mandarin ("八點會議") as real mixing, so yue comes second.
        verdict = str(self._judge_cantonese(text))
        p_yue = {"cantonese": 0.95, "mixed": 0.45}.get(verdict, 0.0)
        rest = 1.0 - p_yue
        # Written Cantonese is nearly always Traditional; Mandarin is either.
        ranked = [("yue", p_yue), ("zh-Hant", rest * p_trad), ("zh", rest * (1 - p_trad))]
        if not p_yue:
            ranked[0] = ("yue", 0.01 if trad else 0.0)
        ranked.sort(key=lambda item: item[1], reverse=True)
        return ranked, bool(distinct or p_yue)

    def _langid_rank(self, text: str, group: Iterable[str]) -> list[tuple[str, float]]:
        allowed = set(group)
        values = {code: p for code, p in self._langid.rank(text) if code in allowed}
        norm = sum(values.values())
        if norm <= 0:
            return []
        return sorted(((c, v / norm) for c, v in values.items()), key=lambda i: i[1], reverse=True)


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
