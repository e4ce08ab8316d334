"""Steps 1 and 2 of detection: which writing systems a text uses, and the scripts that settle it.

**Script census.** Every letter (and combining mark) is assigned to a writing system by its code
point, after web and e-mail addresses are blanked out. Text with no letters at all (empty, digits,
emoji, punctuation) or with many control / unassigned / private-use / replacement characters
(binary junk decoded as text) has nothing to detect. Han and kana count double, because one of them
carries about as much as two Latin letters, so "我用iPhone拍照" is Chinese, not English.

**Scripts that settle it alone**: a script only one language of the table is written in
(:attr:`Language.scripts <hunyuan_webui.languages.Language.scripts>`) names it: Hangul -> ko, Thai
-> th, Khmer -> km, Myanmar -> my, Tibetan -> bo, Gujarati -> gu, Telugu -> te, Tamil -> ta,
Bengali -> bn, Hebrew -> he, traditional Mongolian script -> mn, and kana -> ja
(:func:`script_only`). A script no language of the table uses (Greek, Georgian...) detects
nothing. The scripts several languages share are :func:`langid_groups`, left to the later steps
(py3langid among them; Han to :mod:`.chinese`; Uyghur has a rule of its own, :mod:`.alphabets`).
A language of a script no row used before needs that script's code points in :data:`RANGES`.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata

from hunyuan_webui import languages
from hunyuan_webui.languages import (
    ARABIC,
    BENGALI,
    CYRILLIC,
    DEVANAGARI,
    GREEK,
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
)

OTHER = "Other"

#: Share of junk characters (controls, unassigned, private use, U+FFFD) that makes text junk.
JUNK_RATIO = 0.1

# (first, last, script), sorted; a letter outside every range is OTHER.
RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, LATIN), (0x0250, 0x02AF, LATIN),
    (0x0370, 0x03FF, GREEK),
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
    (0x1F00, 0x1FFF, GREEK),
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
_STARTS = tuple(r[0] for r in RANGES)

# Han and kana carry more per character than alphabetic letters.
_WEIGHT = {HAN: 2, KANA: 2}

#: Languages told apart within their script by a rule of their own, not by py3langid
#: (:func:`hunyuan_webui.detect.alphabets.looks_uyghur`).
RULED = frozenset({"ug"})


def script_only() -> dict[str, str]:
    """Scripts that only one language of the table is written in, and that language."""
    return _groups(languages.table())[0]


def langid_groups() -> dict[str, tuple[str, ...]]:
    """Scripts several languages share (Han aside: :mod:`.chinese`), and which of them
    py3langid chooses among (those written first in it, without a rule of their own)."""
    return _groups(languages.table())[1]


def langid_codes() -> tuple[str, ...]:
    """Every code py3langid is restricted to (its codes are ours for all of them)."""
    return tuple(c for group in langid_groups().values() for c in group)


def known(script: str) -> bool:
    """Whether some language of the table is written in ``script``."""
    return script in languages.table().script_users


@functools.lru_cache(maxsize=4)
def _groups(table: languages.Table) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    users = table.script_users
    only = {script: codes[0] for script, codes in users.items() if len(codes) == 1}
    groups: dict[str, list[str]] = {}
    for lang in table.rows:
        first = lang.scripts[0]
        if first != HAN and len(users[first]) > 1 and lang.code not in RULED:
            groups.setdefault(first, []).append(lang.code)
    return only, {script: tuple(codes) for script, codes in groups.items()}


_JUNK_CATEGORIES = frozenset({"Cc", "Cs", "Co", "Cn"})
# Addresses say nothing about the language around them.
_NOISE = re.compile(r"(?:https?://|www\.)\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+", re.IGNORECASE)


def blank_addresses(text: str) -> str:
    """``text`` with web and e-mail addresses replaced by a space."""
    return _NOISE.sub(" ", text)


def _script(ch: str) -> str:
    i = bisect.bisect_right(_STARTS, ord(ch)) - 1
    if i >= 0:
        first, last, script = RANGES[i]
        if first <= ord(ch) <= last:
            return script
    return OTHER


def census(text: str) -> tuple[dict[str, int], list[str | None]] | None:
    """The weighted letter count per script, and each character's script (None for spaces, junk
    and what is not a letter); None when there are no letters or too much junk."""
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
    if sum(weights.values()) == 0 or junk > JUNK_RATIO * visible:
        return None
    return weights, scripts


def looks_japanese(text: str) -> bool:
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
