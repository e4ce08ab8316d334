"""The class pages' words, one table per language: ``static/i18n/<code>.json``.

Every string the join, student, captions and teacher pages show, keyed alike in each of the
languages (``languages.CODES``), so that a person who reads a language corrects all of its words
in one file. ``en.json`` is the reference: every other table has exactly its keys and the same
``{placeholders}`` in each string (``tests/fast/test_class_text.py`` fails otherwise). The pages
fetch the table of their reader's language (class-common.js); nothing is translated at run time.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from hunyuan_webui import languages

FOLDER = Path(__file__).resolve().parent / "static" / "i18n"
CODES = frozenset(languages.CODES)
REFERENCE = "en"
PLACEHOLDER = re.compile(r"\{(\w+)\}")

# The BCP 47 tag a page writes in ``lang`` for a language, where its bare code would leave the
# browser guessing the script (fonts, line breaking and voices follow it).
TAGS = {"zh": "zh-Hans", "zh-Hant": "zh-Hant", "yue": "yue-Hant", "mn": "mn-Cyrl",
        "ug": "ug-Arab", "kk": "kk-Cyrl"}


def tag(code: str) -> str:
    return TAGS.get(code, code)


def raw(code: str) -> bytes:
    """The table as it is stored (what the page fetches)."""
    if code not in CODES:
        raise KeyError(code)
    return (FOLDER / f"{code}.json").read_bytes()


@cache
def table(code: str) -> dict[str, str]:
    return json.loads(raw(code))


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))
