"""Romanization of a translation, for learners: pinyin under Chinese output.

Only where a well-kept library does it well: ``pypinyin`` (MIT) for Simplified and Traditional
Chinese, with tone marks and words segmented the way pinyin is written. Other scripts of the 38
return ``None`` (no reading is better than a misleading one). ``pypinyin`` is imported on first
use, so a server that never romanizes does not load its dictionaries.
"""

from __future__ import annotations

import re

_BEFORE_PUNCTUATION = re.compile(r"\s+([，。！？、；：,.!?;:)）」』])")

ROMANIZED = frozenset({"zh", "zh-Hant"})


def supports(code: str) -> bool:
    return code in ROMANIZED


def romanize(text: str, code: str) -> str | None:
    if code not in ROMANIZED:
        return None
    from pypinyin import Style, lazy_pinyin

    # Non-Chinese runs (digits, Latin words, punctuation) come back unchanged, in place.
    words = [w.strip() for w in lazy_pinyin(text, style=Style.TONE, errors="default")]
    return _BEFORE_PUNCTUATION.sub(r"\1", " ".join(w for w in words if w))
