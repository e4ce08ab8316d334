"""The class pages' words: a table per language, every language complete.

The pages fetch ``static/i18n/<code>.json`` (``web/words/class/``) for their reader's language. A string missing in any
language, a ``{placeholder}`` lost in a translation, a table left in English, or a key a page's
script uses that the tables lack: each fails here, before a student sees a raw key.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hunyuan_webui import languages
from hunyuan_webui.web import words
from hunyuan_webui.web.classroom import text

STATIC = Path(text.__file__).resolve().parent / "static"
ENGLISH = text.table("en")


def test_every_language_has_a_table():
    """Each table's keys and placeholders: tests/fast/test_words.py."""
    assert sorted(words.codes("class")) == sorted(languages.CODES)


@pytest.mark.parametrize("code", [c for c in languages.CODES if c != "en"])
def test_no_table_is_left_in_english(code):
    """A copy of the English string is a missed translation, except for the few words that are
    spelled alike (French "Questions", "Pause")."""
    same = [k for k, v in text.table(code).items() if v == ENGLISH[k]]
    assert len(same) <= 3, (code, same)


def used_keys() -> set[str]:
    """Every key the pages' scripts ask for: T("key") and the refusals they word."""
    keys: set[str] = set()
    for script in STATIC.glob("class*.js"):
        source = script.read_text(encoding="utf-8")
        keys |= set(re.findall(r'\bT\("(\w+)"', source))
        if (worded := re.search(r"const WORDED = \{(.*?)\};", source, re.S)):
            keys |= set(re.findall(r':\s*"(\w+)"', worded.group(1)))
    return keys


def test_every_key_the_pages_use_is_in_the_tables():
    used = used_keys()
    assert len(used) > 60  # the scan finds the pages' words
    assert used - set(ENGLISH) == set()


def test_right_to_left_languages_are_marked_so():
    assert {c for c in languages.CODES if languages.is_rtl(c)} == {"ar", "fa", "ur", "he", "ug"}
    assert text.tag("ug") == "ug-Arab" and text.tag("zh") == "zh-Hans" and text.tag("fr") == "fr"


def test_the_pages_fetch_their_words_and_scripts_and_say_when_the_demo_runs():
    from types import SimpleNamespace

    from fastapi import FastAPI
    from fastapi.testclient import TestClient

    from hunyuan_webui.service.rooms import Rooms
    from hunyuan_webui.settings import Settings
    from hunyuan_webui.web.classroom import routes

    demo = SimpleNamespace(spec=SimpleNamespace(demo=True))
    app = FastAPI()
    routes.mount(app, Rooms(translator=demo), Settings())  # type: ignore
    with TestClient(app) as client:
        page = client.get("/class/123456").text
        assert 'data-view="student"' in page and 'data-demo="1"' in page
        assert page.index("/class/static/class-common.js") < \
            page.index("/class/static/class-student.js")
        for name in ("class-common.js", "class-start.js", "class-student.js",
                     "class-teacher.js", "class.css"):
            assert client.get(f"/class/static/{name}").status_code == 200, name
        words = client.get("/class/static/i18n/ug.json")
        assert words.status_code == 200 and words.json() == text.table("ug")
        assert words.headers["content-type"].startswith("application/json")
        for bad in ("xx.json", "ar.txt", "..%2Fen.json", "en"):
            assert client.get(f"/class/static/i18n/{bad}").status_code == 404, bad
        langs = {lang["code"]: lang for lang in client.get("/class/api/languages").json()}
        assert langs["ar"]["rtl"] and langs["mn"]["tag"] == "mn-Cyrl" and not langs["fr"]["rtl"]
