"""No CSV the app writes holds a spreadsheet formula (issue 32, finding 5: a student name or a
question that starts with ``=``, ``+``, ``-`` or ``@`` was written into the transcript as it was).

Each CSV the app writes of its own (the class transcript, the page's history export, the
bilingual export) is read back with the ``csv`` module: a cell that would begin a formula begins
with a single quote instead, as OWASP recommends, and its quotes are the csv module's. A CSV being
translated keeps a source formula, but a translation never turns text into one. The class's own
transcript is fetched over HTTP from a room where a student named ``=HYPERLINK("x")`` asked.
"""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import pytest

from hunyuan_webui.files import bilingual, formulas, translate_file
from hunyuan_webui.service.rooms.transcript import render
from hunyuan_webui.web.page.store import export_csv

HOSTILE = ['=HYPERLINK("x")', "+1+2", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "＝1+1", "=cmd|' /C calc'!A0"]


def rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))


def test_a_cell_that_would_begin_a_formula_begins_with_a_quote():
    for cell in HOSTILE:
        assert formulas.neutral(cell) == "'" + cell
    for cell in ("Sam", "'=already text", "a=b", " =1", "", "5-3", "谢谢。"):
        assert formulas.neutral(cell) == cell
    assert formulas.neutral(7) == 7  # a number is written as a number
    buffer = io.StringIO()
    formulas.writer(buffer).writerows([HOSTILE, ["plain", 'say "hi"']])
    assert rows(buffer.getvalue()) == [["'" + c for c in HOSTILE], ["plain", 'say "hi"']]
    assert '"\'=HYPERLINK(""x"")"' in buffer.getvalue()  # its quotes doubled inside quotes


def test_the_transcript_history_and_bilingual_exports_hold_no_formula():
    events = [(1, {"type": "sentence", "lang": "en", "text": "=1+1", "t": 0}),
              (2, {"type": "translation", "sid": 1, "lang": "zh", "text": "@me"}),
              (3, {"type": "question", "lang": "en", "text": "-5 is less", "t": 0,
                   "name": '=HYPERLINK("x")', "translation": "+1"})]
    transcript = rows(render(events, "csv", "en"))
    assert transcript[0] == ["time", "kind", "from", "source_lang", "en", "zh"]
    assert [r[2:] for r in transcript[1:]] == [["", "en", "'=1+1", "'@me"],
                                               ["'=HYPERLINK(\"x\")", "en", "'-5 is less", ""]]
    history = rows(export_csv([["=A1", "@x", "en-zh", "en", "zh", "-1"]],
                              [["+x", "ok", "en-zh", "en", "zh", ""]]).decode("utf-8"))
    assert history[1][3:] == ["'+x", "ok", ""] and history[2][3:] == ["'=A1", "'@x", "'-1"]
    pairs = rows(bilingual.csv_bytes([("=1", "-1"), ("a", "b")], ["=en", "zh"]).decode("utf-8"))
    assert pairs == [["'=en", "zh"], ["'=1", "'-1"], ["a", "b"]]


def test_a_translated_csv_keeps_its_formulas_but_a_translation_makes_none():
    source = b"name,note\nAnna,=SUM(1;2)\nBen,minus two\nCarl,@home\n"
    table = {"minus two": "-2", "Anna": "Anna", "Ben": "Ben", "Carl": "Carl"}

    def translate(segments: list[str]) -> list[str]:
        return [table.get(s, s) for s in segments]

    result = translate_file("marks.csv", source, translate, csv_columns=["name", "note"])
    assert rows(result.data.decode()) == [["name", "note"], ["Anna", "=SUM(1;2)"],
                                          ["Ben", "'-2"], ["Carl", "@home"]]


# -- over HTTP: the class transcript ---------------------------------------------------------------
@pytest.mark.slow
def test_a_student_named_like_a_formula_shows_in_the_transcript_as_text(engine, demo_settings):
    import httpx
    from apphelpers import free_port
    from roomhelpers import Reader, close_all, wait_for

    from hunyuan_webui.app import Server, create_app
    from hunyuan_webui.service import Translator

    settings = replace(demo_settings, port=free_port(), log_level="warning")
    server = Server(create_app(settings, Translator(engine, engine.spec, settings)),
                    settings).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60, trust_env=False) as http:
            room = http.post("/class/api/rooms", json={"lang": "zh", "title": "Lesson"}).json()
            code, key = room["code"], room["key"]
            student = http.post(f"/class/api/rooms/{code}/join",
                                json={"lang": "en", "name": '=HYPERLINK("x")'}).json()["student"]
            teacher = Reader(server.url, code, key=key)
            asked = http.post(f"/class/api/rooms/{code}/questions",
                              json={"student": student, "text": "Where is the train station?"})
            assert asked.status_code == 200, asked.text
            wait_for(lambda: [e for e in teacher.logged if e["type"] == "question"])
            got = http.get(f"/class/api/rooms/{code}/transcript", params={"format": "csv"},
                           headers={"X-Class-Key": key})
            assert got.status_code == 200, got.text
            [question] = [r for r in rows(got.text)[1:] if r[1] == "question"]
            assert question[2] == "'=HYPERLINK(\"x\")"
            assert "Where is the train station?" in question and "火车站在哪里？" in question
            assert '"\'=HYPERLINK(""x"")"' in got.text
    finally:
        close_all()
        server.stop()
