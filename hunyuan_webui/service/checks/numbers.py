"""Whether an answer keeps its source's numbers: each digit group, by value, in a form the target
writes.

A number of the source is kept when the answer has a number of the same value, however it is
written:

- in any script's digits (full-width ３, Arabic-Indic ٣, Persian ۳, Devanagari ३, Thai ๓...),
  with the target's separators (1,000.5 / 1.000,5 / 1 000,5 / 1'000.5 / 1,00,000): a token's
  separators are read both as grouping and, the last one, as the decimal mark;
- with a scale word ("3 million" = "300万" = "3 millions"; the words come from CLDR's rules);
- spelled out in the target (三, 十二, trois, drei, 세, три: **unicode-rbnf**'s CLDR spell-out
  rules, cardinals and ordinals), as Chinese digits one by one (二〇二四), or in Roman numerals
  (XXIe siècle);
- a clock hour may move by twelve ("3 pm" -> "15 Uhr").

Dates are judged with care: a date's month may come back as the target's name of that month
(**Babel**'s CLDR month names: "3月15日" -> "March 15", "15/03/2024" -> "15 mars 2024"), a
two-digit year as four digits. What the source does not have (a month name turned into "3月")
never counts against an answer.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from decimal import Decimal
from typing import Any

from hunyuan_webui.service.checks.same import CODE_SPAN, EMAIL, PLACEHOLDER, URL

# Digits of any script with the separators numbers are written with (a space only before a
# group of three: "1 000", not "3 4").
_TOKEN = re.compile(r"\d+(?:(?:[.,'\u2019\u066b\u066c]|[ \u00a0\u202f](?=\d{3}(?!\d)))\d+)*")
_CJK_DIGITS = "〇零一二三四五六七八九"
_CJK_RUN = re.compile(f"[{_CJK_DIGITS}]{{3,}}")
_CJK_SCALE = {"十": 10, "百": 100, "千": 1000, "万": 10**4, "萬": 10**4, "亿": 10**8, "億": 10**8,
              "천": 1000, "만": 10**4, "억": 10**8}
_CLOCK = re.compile(r"\s*([ap])\.?\s?m\b\.?", re.IGNORECASE)
_DATES = (
    re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)"),  # 2024-03-15
    re.compile(r"(?<!\d)(\d{1,2})[/.](\d{1,2})[/.](\d{2}|\d{4})(?!\d)"),  # 15/03/2024, 3/15/24
)
_MONTH_MARK = re.compile(r"(?<!\d)(\d{1,2})\s?(?:月|월)")  # 3月 3월
_RBNF = {"zh-Hant": "zh_Hant", "tl": "fil"}
_BABEL = {"zh-Hant": "zh_Hant", "tl": "fil"}
ROUND_LIMIT = 1000  # numbers up to this are looked for spelled out too


def ascii_digits(text: str) -> str:
    """``text`` with every script's decimal digits as 0-9."""
    return "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() else ch for ch in text)


def values(token: str) -> set[Decimal]:
    """What a digit token may mean: its digits with every separator read as grouping, and with
    the last one read as the decimal mark ("1.000,5" -> 10005 and 1000.5; "3.14" -> 314, 3.14)."""
    groups = re.split(r"[^0-9]+", ascii_digits(token))
    groups = [g for g in groups if g]
    out = {Decimal("".join(groups))}
    if len(groups) > 1:
        out.add(Decimal("".join(groups[:-1]) + "." + groups[-1]))
    return {v.normalize() for v in out}


@functools.lru_cache(maxsize=64)
def _speller(lang: str) -> Any:
    try:
        from unicode_rbnf import RbnfEngine
        return RbnfEngine.for_language(_RBNF.get(lang, lang))
    except Exception:  # a language CLDR has no spell-out rules for: digits only
        return None


@functools.lru_cache(maxsize=8192)
def spelled(value: int, lang: str) -> tuple[str, ...]:
    """``value`` written out in ``lang`` (cardinals, ordinals; every gender and case CLDR has)."""
    speller = _speller(lang)
    if speller is None:
        return ()
    from unicode_rbnf import FormatPurpose

    out: set[str] = set()
    for purpose in (FormatPurpose.CARDINAL, FormatPurpose.ORDINAL):
        try:
            result = speller.format_number(value, purpose=purpose)
        except Exception:  # noqa: BLE001 - a rule set that cannot say this number
            continue
        out.update(t.casefold() for name, t in result.text_by_ruleset.items()
                   if "financial" not in name and t)
    return tuple(sorted(out, key=len, reverse=True))


@functools.lru_cache(maxsize=64)
def scale_words(lang: str) -> tuple[tuple[str, int], ...]:
    """The target's words for thousand, ten thousand, million, hundred million and billion
    ("million", "Million", "万", "만"...), from its spelled-out powers of ten."""
    out: dict[str, int] = {}
    for power in (3, 4, 6, 8, 9, 12):
        for text in spelled(10**power, lang):
            words = text.split()
            word = words[-1] if len(words) > 1 else text[-1:] if len(text) <= 3 else ""
            if len(word) >= 1 and not word.isdigit():
                out.setdefault(word, 10**power)
    for mark, value in _CJK_SCALE.items():
        if value >= 1000:
            out.setdefault(mark, value)
    return tuple(sorted(out.items(), key=lambda kv: -len(kv[0])))


def _scaled(text: str, end: int, lang: str) -> int | None:
    """The scale word right after a number (at ``end``), as its factor."""
    after = text[end:end + 24].lstrip(" \u00a0").casefold()
    for word, factor in scale_words(lang):
        if after.startswith(word.casefold()):
            return factor
    return None


def _dates(text: str) -> list[tuple[int, int, tuple[int, ...]]]:
    """Numeric dates in ``text`` (digits already ASCII): their span and the groups that may be the
    month (both first ones where day and month cannot be told apart)."""
    out: list[tuple[int, int, tuple[int, ...]]] = []
    for pattern, month_groups in ((_DATES[0], (2,)), (_DATES[1], (1, 2))):
        for match in pattern.finditer(text):
            if not any(s < match.end() and match.start() < e for s, e, _ in out):
                out.append((match.start(), match.end(), tuple(
                    match.start(g) for g in month_groups if 1 <= int(match.group(g)) <= 12)))
    return out


def numbers_in(text: str, lang: str) -> list[tuple[str, set[Decimal], int, int]]:
    """Each number of ``text``: its text, what it may mean (scale words and clock hours
    included), and where it is. A numeric date counts as its day, month and year."""
    plain = ascii_digits(text)  # one character for one: the positions are the same
    dates = _dates(plain)
    out = []
    for start, end, _ in dates:
        for part in re.finditer(r"\d+", plain[start:end]):
            out.append((part.group(), values(part.group()), start + part.start(),
                        start + part.end()))
    for match in _TOKEN.finditer(plain):
        if any(s < match.end() and match.start() < e for s, e, _ in dates):
            continue
        found = values(match.group())
        factor = _scaled(text, match.end(), lang)
        if factor:
            found |= {(v * factor).normalize() for v in found}
        clock = _CLOCK.match(plain, match.end())
        if clock and len(found) == 1 and next(iter(found)) <= 12:
            hour = int(next(iter(found)))
            found.add(Decimal(hour % 12 + (12 if clock.group(1).lower() == "p" else 0)))
        out.append((match.group(), found, match.start(), match.end()))
    return sorted(out, key=lambda item: item[2])


_CJK_VALUE = str.maketrans({**{ch: str(i) for i, ch in enumerate(_CJK_DIGITS[1:])}, "〇": "0"})


def _cjk_runs(text: str) -> set[Decimal]:
    """Chinese digits written one by one: 二〇二四 -> 2024."""
    return {Decimal(run.translate(_CJK_VALUE)) for run in _CJK_RUN.findall(text)}


def roman(value: int) -> str:
    out = ""
    for number, letters in ((1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"),
                            (90, "XC"), (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"),
                            (4, "IV"), (1, "I")):
        while value >= number:
            out, value = out + letters, value - number
    return out


@functools.lru_cache(maxsize=64)
def month_names(lang: str, month: int) -> tuple[str, ...]:
    """The target's names of ``month`` (wide and abbreviated, as written in a date and alone)."""
    try:
        from babel.dates import get_month_names
        names = {get_month_names(width, context, locale=_BABEL.get(lang, lang))[month]
                 for width in ("wide", "abbreviated") for context in ("format", "stand-alone")}
    except Exception:  # a locale CLDR lacks: a month may be written any way
        return ("",)
    return tuple(sorted({n.casefold().rstrip(".") for n in names if n}, key=len, reverse=True))


class Answer:
    """An answer read once for the numbers it may hold."""

    def __init__(self, text: str, lang: str) -> None:
        self.text, self.lang = text, lang
        self.folded = ascii_digits(text).casefold()
        self.values: set[Decimal] = set()
        for _, found, _, _ in numbers_in(text, lang):
            self.values |= found
        self.values |= _cjk_runs(text)
        self.spaced = lang not in ("zh", "zh-Hant", "yue", "ja", "th", "km", "my", "bo")

    def says(self, word: str) -> bool:
        if not word:
            return True
        if not self.spaced:
            return word in self.folded
        return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", self.folded) is not None

    def has(self, found: set[Decimal]) -> bool:
        if found & self.values:
            return True
        for value in found:
            if value != value.to_integral_value() or not 0 <= value <= 10**12:
                continue
            number = int(value)
            if (number <= ROUND_LIMIT or number % 1000 == 0) and any(
                    self.says(w) for w in spelled(number, self.lang)):
                return True
            if 0 < number < 4000 and re.search(rf"\b{roman(number)}", self.text):
                return True
        return False


def _months(source: str) -> dict[int, int]:
    """Where the source's dates put a month (by the number's start), and which month it is."""
    text = ascii_digits(source)
    months = {at: int(text[at:at + 2].rstrip("/.-")) for _, _, starts in _dates(text)
              for at in starts}
    for match in _MONTH_MARK.finditer(text):
        if 1 <= int(match.group(1)) <= 12:
            months[match.start(1)] = int(match.group(1))
    return months


def _two_digit_years(source: str) -> set[int]:
    text = ascii_digits(source)
    return {m.start(3) for m in _DATES[1].finditer(text) if len(m.group(3)) == 2}


def blank_kept(text: str) -> str:
    """``text`` without what the other checks of kept items look at (addresses, code)."""
    for pattern in (URL, EMAIL, CODE_SPAN, PLACEHOLDER):
        text = pattern.sub(lambda m: " " * len(m.group()), text)
    return text


def missing_numbers(source_text: str, answer_text: str, target: str, source: str = "") -> list[str]:
    """The source's numbers that the answer does not have in any form of the same value."""
    if not any(ch.isdecimal() for ch in source_text):
        return []  # most sentences: nothing to look for
    source_text, answer_text = blank_kept(source_text), blank_kept(answer_text)
    answer = Answer(answer_text, target)
    months = _months(source_text)
    short_years = _two_digit_years(source_text)
    missing = []
    for token, found, start, _ in numbers_in(source_text, source or target):
        if start in short_years:
            year = int(next(iter(values(token))))
            found = found | {Decimal(2000 + year), Decimal(1900 + year)}
        if answer.has(found):
            continue
        if start in months and any(answer.says(name) for name in
                                   month_names(target, months[start])):
            continue
        missing.append(token)
    return missing
