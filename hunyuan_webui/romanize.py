"""Romanization of a translation, for learners: pinyin under Chinese, Latin letters under the
scripts where a well-kept library gives a faithful reading.

- ``pypinyin`` (MIT) for Simplified and Traditional Chinese, with tone marks and words segmented
  the way pinyin is written.
- ``anyascii`` (ISC, table-driven, no dependencies) for the Cyrillic languages (Russian,
  Ukrainian, Kazakh, Mongolian) and for Uyghur, whose Arabic script writes every vowel: letter
  for letter, the reading is the word.

Other scripts of the 38 return ``None``, because no reading is better than a misleading one:
Arabic, Persian, Urdu and Hebrew leave short vowels unwritten (a letter-for-letter reading drops
them), Japanese kanji would come out as Chinese pinyin (the romaji libraries are GPL or need a
~250 MB dictionary), Hangul and the Indic scripts need pronunciation rules a table does not
apply. The libraries are imported on first use, so a server that never romanizes does not load
their tables.
"""

from __future__ import annotations

import re

_BEFORE_PUNCTUATION = re.compile(r"\s+([，。！？、；：,.!?;:)）」』])")

PINYIN = frozenset({"zh", "zh-Hant"})
LETTER_FOR_LETTER = frozenset({"ru", "uk", "kk", "mn", "ug"})
ROMANIZED = PINYIN | LETTER_FOR_LETTER


def supports(code: str) -> bool:
    return code in ROMANIZED


def romanize(text: str, code: str) -> str | None:
    if code in LETTER_FOR_LETTER:
        from anyascii import anyascii

        return anyascii(text)
    if code not in PINYIN:
        return None
    from pypinyin import Style, lazy_pinyin

    # Non-Chinese runs (digits, Latin words, punctuation) come back unchanged, in place.
    words = [w.strip() for w in lazy_pinyin(text, style=Style.TONE, errors="default")]
    return _BEFORE_PUNCTUATION.sub(r"\1", " ".join(w for w in words if w))
