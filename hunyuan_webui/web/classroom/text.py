"""The class pages' words: the ``class`` tables of :mod:`hunyuan_webui.web.words`, one per
language of the model (``languages.CODES``), fetched by the pages for their reader's language
(class-common.js), and the ``lang`` tag a page writes for each language.
"""

from __future__ import annotations

from hunyuan_webui import languages
from hunyuan_webui.web import words

CODES = frozenset(languages.CODES)
REFERENCE = words.REFERENCE
PLACEHOLDER, placeholders = words.PLACEHOLDER, words.placeholders

# The BCP 47 tag a page writes in ``lang`` for a language, where its bare code would leave the
# browser guessing the script (fonts, line breaking and voices follow it).
TAGS = {"zh": "zh-Hans", "zh-Hant": "zh-Hant", "yue": "yue-Hant", "mn": "mn-Cyrl",
        "ug": "ug-Arab", "kk": "kk-Cyrl"}


def tag(code: str) -> str:
    return TAGS.get(code, code)


def raw(code: str) -> bytes:
    """The table as it is stored (what the page fetches)."""
    return words.raw("class", code)


def table(code: str) -> dict[str, str]:
    return words.table("class", code)
