"""Source-language detection for the "auto" source option.

The model does no language detection, so the app must, and it may only ever answer one of the
codes of the language table, :mod:`hunyuan_webui.languages` (or ``None`` when nothing fits).

How it works, in three steps:

1. **Script census** (:mod:`.scripts`): every letter is assigned to a writing system; text with no
   letters, or junk, gives ``Detection(None, 0.0, False, ())``.
2. **Scripts that settle it alone** (:mod:`.scripts`): Hangul is Korean, Thai is Thai, kana is
   Japanese...
3. **Scripts shared by several of our languages**: Latin, Cyrillic, Arabic and Devanagari go to
   py3langid (:mod:`.statistical`), then to our own rules about what each alphabet allows
   (:mod:`.alphabets`: Uyghur, Russian / Ukrainian / Kazakh / Mongolian); Han goes to the
   Chinese-variant rules (:mod:`.chinese`: yue, zh-Hant, zh).

:mod:`.detector` puts them together. Detection takes well under a millisecond for a sentence once
warm (loading takes ~0.6 s, done on the first call or by :meth:`LanguageDetector.warm_up`). Only
the first :data:`MAX_CHARS` characters are examined. :class:`LanguageDetector` is thread-safe: the
models are loaded once under a lock and only read afterwards.
"""

from hunyuan_webui.detect.alphabets import (
    ALEF_MAKSURA,
    CYRILLIC_FOREIGN,
    FOREIGN_LETTER_SHARE,
    KAZAKH_LETTER_SHARE,
    KAZAKH_LETTERS,
    UYGHUR_LETTERS,
    UYGHUR_MIN_SHARE,
    YEH_HAMZA,
)
from hunyuan_webui.detect.detector import (
    DEFAULT_THRESHOLD,
    MAX_CHARS,
    MIN_RELIABLE_LETTERS,
    NOTHING,
    Detection,
    LanguageDetector,
    default_detector,
    detect,
)
from hunyuan_webui.detect.scripts import JUNK_RATIO, langid_codes

__all__ = ["Detection", "LanguageDetector", "DEFAULT_THRESHOLD", "MIN_RELIABLE_LETTERS",
           "NOTHING", "default_detector", "detect", "ALEF_MAKSURA", "CYRILLIC_FOREIGN",
           "FOREIGN_LETTER_SHARE", "JUNK_RATIO", "KAZAKH_LETTERS", "KAZAKH_LETTER_SHARE",
           "langid_codes", "MAX_CHARS", "UYGHUR_LETTERS", "UYGHUR_MIN_SHARE", "YEH_HAMZA"]
