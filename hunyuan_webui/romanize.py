"""Romanization of a translation, for learners: pinyin under Chinese, Latin letters under the
scripts where a well-kept library gives a faithful reading.

- ``pypinyin`` (MIT) for Simplified and Traditional Chinese, with tone marks and words segmented
  the way pinyin is written.
- ``anyascii`` (ISC, table-driven, no dependencies) for the Cyrillic languages (Russian,
  Ukrainian, Kazakh, Mongolian) and for Uyghur, whose Arabic script writes every vowel: letter
  for letter, the reading is the word.

Which reading a language gets is its row's (:attr:`Language.romanization
<hunyuan_webui.languages.Language.romanization>`). The others return ``None``, because no reading
is better than a misleading one:
Arabic, Persian, Urdu and Hebrew leave short vowels unwritten (a letter-for-letter reading drops
them), Japanese kanji would come out as Chinese pinyin (the romaji libraries are GPL or need a
~250 MB dictionary), Hangul and the Indic scripts need pronunciation rules a table does not
apply. The libraries are imported on first use, so a server that never romanizes does not load
their tables.
"""

from __future__ import annotations

import re

from hunyuan_webui import languages

_BEFORE_PUNCTUATION = re.compile(r"\s+([，。！？、；：,.!?;:)）」』])")


def reading(code: str) -> str:
    """The romanisation ``code`` gets: :data:`~hunyuan_webui.languages.PINYIN`,
    :data:`~hunyuan_webui.languages.LETTERS`, or "" (none)."""
    row = languages.table().by_code.get(code)
    return row.romanization if row is not None else ""


def supports(code: str) -> bool:
    return bool(reading(code))


def romanize(text: str, code: str) -> str | None:
    kind = reading(code)
    if kind == languages.LETTERS:
        from anyascii import anyascii

        return anyascii(text)
    if kind != languages.PINYIN:
        return None
    from pypinyin import Style, lazy_pinyin

    # Non-Chinese runs (digits, Latin words, punctuation) come back unchanged, in place.
    words = [w.strip() for w in lazy_pinyin(text, style=Style.TONE, errors="default")]
    return _BEFORE_PUNCTUATION.sub(r"\1", " ".join(w for w in words if w))
