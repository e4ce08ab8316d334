"""Every word the pages show a visitor, one table per surface and language:
``words/<surface>/<code>.json``.

The surfaces:

- ``page``: the translator's page, in English and Chinese. Its labels go to ``gr.I18n`` (the
  browser's language picks), and its listeners' messages are picked per visitor from the request's
  ``Accept-Language`` (:mod:`hunyuan_webui.web.page.text`): one table holds both.
- ``class``: the join, student, captions and teacher pages, in every language of the model
  (``languages.CODES``); the pages fetch their reader's table (``class-common.js``).
- ``speech``: the microphone, the students' draft line and the captions (``window.HYLiveWords``).
- ``server``: what the server says that the translator's page shows: the status line's device and
  precision, the banners, and the service's English notices and refusals, which the page reads in
  its language (:mod:`hunyuan_webui.web.page.wording`; a ``sentence.*`` entry in English is the
  service's template, and a translation may leave out a detail the English has, such as a parser's
  ``{why}``).

One rule for all of them: English is the reference; every other table of a surface has exactly its
keys, with the same ``{placeholders}`` (``tests/fast/test_words.py``; a ``sentence.*`` of the
``server`` surface may leave one out), so a person who reads a language corrects all of its words
in one file, and a language without a table of a surface reads it in English. Nothing is
machine-translated at run time: the tables are the words.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

FOLDER = Path(__file__).resolve().parent
REFERENCE = "en"
SURFACES = ("page", "class", "speech", "server")
PLACEHOLDER = re.compile(r"\{(\w+)[^{}]*\}")  # {name}, {name:.0%}


@cache
def codes(surface: str) -> tuple[str, ...]:
    """The languages ``surface`` has a table in."""
    return tuple(sorted(path.stem for path in (FOLDER / surface).glob("*.json")))


def raw(surface: str, code: str) -> bytes:
    """A table as it is stored (what a page fetches); KeyError for a language it lacks."""
    if surface not in SURFACES or code not in codes(surface):
        raise KeyError(f"{surface}/{code}")
    return (FOLDER / surface / f"{code}.json").read_bytes()


@cache
def table(surface: str, code: str) -> dict[str, str]:
    """``surface``'s words in ``code``, or in English where it has no table of that language."""
    return json.loads(raw(surface, code if code in codes(surface) else REFERENCE))


def tables(surface: str) -> dict[str, dict[str, str]]:
    return {code: table(surface, code) for code in codes(surface)}


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))
