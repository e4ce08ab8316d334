"""What rightly stays the same in a translation, so that no guard calls it a copy.

Names, brands, product names and terms, numbers, code, web and e-mail addresses, placeholders
and the glossary's terms come back as they are; so do lists made only of them ("Taxi, Hotel,
Restaurant, Bank", "Menu: Pizza, Pasta, Tiramisu"). :func:`translatable` keeps the words of a
text that a translation should change, and the copy guard (:func:`is_copy`) and the language
guard judge only those: a source with none of them is not judged at all.

A word stays when its item (the text between list separators: commas, colons, slashes, brackets,
line breaks) is a name: at most four words, every one capitalised, in capitals, mixed case or
with a digit ("GitHub Actions", "iPhone 15", "New York"). Where a script has no capitals (Han,
Arabic, Thai...), a name cannot be told from a word, and only a text too short to judge stays.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from hunyuan_webui.detect.scripts import HAN, KANA, KHMER, MYANMAR, THAI, TIBETAN, census

UNSPACED = frozenset({HAN, KANA, THAI, KHMER, MYANMAR, TIBETAN})  # a "word" is a phrase
WORD = re.compile(r"\w+", re.UNICODE)
# Web and e-mail addresses, inline code and placeholders: kept as they are in every language.
URL = re.compile(r"(?:https?://|ftp://|www\.)[^\s<>\"'`\u3000-\u9fff\uac00-\ud7af\uff01-\uff5e]+",
                 re.IGNORECASE)
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
PLACEHOLDER = re.compile(
    r"\{\{\s*[\w.\-]+\s*\}\}"  # {{ name }}
    r"|\$\{[\w.\-]+\}"  # ${name}
    r"|\{[\w.\-]*(?::[^{}\s]*)?\}"  # {0} {} {name} {price:.2f}
    r"|(?<![\w%])%(?:\d+\$)?(?:\(\w+\))?[-+ #0]?\d*(?:\.\d+)?[sdifxXeEgGcu@]"  # %s %1$d %(n)s
    r"|<\d+/?>|</\d+>")  # <0> </0> (numbered tags of i18n strings)
NUMBER = re.compile(r"\d+(?:[.,:'/\-\u066b\u066c\u00a0\u202f ]?\d+)*")
# What separates the items of a list, a menu or a heading from its title.
_ITEMS = re.compile(r"[,;:/|•·、，；：()\[\]（）【】「」『』\n]+|\s[-–—&+]\s|\s(?:and|or|und|et|y|e)\s")
_CODE_MARKS = re.compile(r"[(){}\[\]<>=;_/\\$#@`|]")


def blank(text: str, keep: Iterable[str] = ()) -> str:
    """``text`` with addresses, code, placeholders, numbers and ``keep`` (terms) made list
    separators."""
    for pattern in (URL, EMAIL, CODE_SPAN, PLACEHOLDER):
        text = pattern.sub(" | ", text)
    for term in sorted((t for t in keep if t.strip()), key=len, reverse=True):
        text = re.sub(re.escape(term), " | ", text, flags=re.IGNORECASE)
    return NUMBER.sub(" | ", text)


def name_like(word: str) -> bool:
    return word[0].isupper() or any(ch.isdigit() for ch in word) or any(
        ch.isupper() for ch in word[1:])


# Lower-case words inside names ("Rio de Janeiro", "Bank of America", "Ludwig van Beethoven").
PARTICLES = frozenset({"de", "da", "do", "dos", "das", "del", "della", "di", "du", "des", "la",
                       "le", "van", "von", "der", "den", "of", "the", "y", "e", "al", "el", "bin",
                       "ibn", "zu", "af", "av"})


def _is_name(words: list[str]) -> bool:
    """An item made only of a name, a brand or a term (no word of it is lower-case, but for the
    particles inside names)."""
    return (len(words) <= 5 and name_like(words[0]) and name_like(words[-1])
            and all(name_like(w) or w in PARTICLES for w in words))


@functools.lru_cache(maxsize=4096)
def _translatable(text: str, keep: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for item in _ITEMS.split(blank(text, keep)):
        words = [w for w in WORD.findall(item) if any(ch.isalpha() for ch in w)]
        if words and not _is_name(words):
            out.extend(w.casefold() for w in words)
    return tuple(out)


def translatable(text: str, keep: Iterable[str] = ()) -> tuple[str, ...]:
    """The words of ``text`` that a translation should change (case-folded), in order."""
    return _translatable(text, tuple(keep))


def normal(text: str) -> str:
    """The words of ``text``, case-folded, one space between them (punctuation dropped)."""
    return " ".join(WORD.findall(text.casefold()))


@functools.lru_cache(maxsize=4096)
def same_everywhere(text: str) -> bool:
    """Text that stays as it is in every language: too short to judge, one word, a number, code,
    a name ("New York", "GitHub Actions") or a list of them."""
    stripped = text.strip()
    counted = census(stripped)
    weights = counted[0] if counted else {}
    if sum(weights.values()) < 6:
        return True
    if not UNSPACED & set(weights) and len(normal(stripped).split()) < 2:
        return True  # one word; a Chinese or Thai "word" is a whole phrase
    if len(_CODE_MARKS.findall(stripped)) >= 2:
        return True  # code
    return not translatable(stripped)
