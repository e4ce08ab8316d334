"""A class over HTTP: one sentence is translated once per language present (not per student),
students read it in their language, a student that was away catches up in order and without
duplicates, questions reach the teacher translated, and only the teacher's secret writes.

Every sentence here is one the demo model knows (assets/demo_phrases.tsv), so every translation
is exact: "Good morning." and "Thank you." in Chinese, Japanese and Arabic, for instance.
"""

from __future__ import annotations

import io
import time
from collections.abc import Iterator
from dataclasses import replace

import httpx
import pytest
from apphelpers import assert_json_error
from docx.oxml.ns import qn
from roomhelpers import ClassApp, Reader, class_server, wait_for

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.demo_model import load_phrases
from hunyuan_webui.service import Translator
from hunyuan_webui.service.rooms import RoomLimits

pytestmark = pytest.mark.slow
TABLE = {(p.source_lang, p.target_lang, p.source): p.target for p in load_phrases()}


@pytest.fixture
def app(engine, demo_settings) -> Iterator[ClassApp]:
    limits = RoomLimits(rooms=3, students=6, question_chars=40, questions_per_minute=2)
    with class_server(engine, demo_settings, limits) as running:  # no cache: every call counts
        yield running


def test_each_sentence_is_translated_once_per_language_not_per_student(app):
    code, key = app.open("en")
    students = {app.join(code, lang): lang for lang in ("zh", "zh", "ja", "ja", "ar", "en")}
    assert len(students) == 6
    readers = [Reader(app.url, code, student=s, lang=lang) for s, lang in students.items()]
    calls = len(app.engine.prompts)
    sids = app.say(code, key, "Good morning. Thank you.")
    assert len(sids) == 2
    for reader, lang in zip(readers, students.values(), strict=True):
        if lang == "en":  # the teacher's own language: the original, no translation
            wait_for(lambda r=reader: len([e for e in r.logged if e["type"] == "sentence"]) == 2)
            continue
        got = wait_for(lambda r=reader, lang=lang: len(r.translations(lang)) == 2
                       and r.translations(lang), what=f"{lang} translations")
        assert [got[sid] for sid in sids] == [TABLE[("en", lang, "Good morning.")],
                                              TABLE[("en", lang, "Thank you.")]]
        # A reader sees its own language only, never another's.
        assert {e["lang"] for e in reader.events if e["type"] in ("translation", "draft")} == {lang}
    # 2 sentences x 3 languages (zh, ja, ar), for 6 students.
    assert len(app.engine.prompts) - calls == 6
    stats = app.http.get(f"/class/api/rooms/{code}/stats", headers={"X-Class-Key": key}).json()
    assert (stats["sentences"], stats["translations"], stats["students"]) == (2, 6, 6)
    assert stats["languages"] == {"ar": 1, "en": 1, "ja": 2, "zh": 2}
    for reader in readers:
        reader.close()


def test_a_student_back_from_30s_away_catches_up_in_order_without_duplicates(app):
    code, key = app.open("en")
    student = app.join(code, "zh", "Li")
    reader = Reader(app.url, code, student=student, lang="zh")
    first = app.say(code, key, "Good morning.")
    wait_for(lambda: reader.translations("zh").get(first[0]) == "早上好。")
    reader.close()
    seen = reader.last
    # Away (a phone asleep): the teacher goes on.
    missed = app.say(code, key, "Please sit down.\n\nHow much does this cost?")
    wait_for(lambda: app.rooms.stats(code)["translations"] == 3, what="the missed translations")
    back = Reader(app.url, code, student=student, lang="zh", last_event_id=seen)
    wait_for(lambda: len(back.translations("zh")) == 2, what="catch-up")
    seqs = [e["seq"] for e in back.logged]
    assert seqs == sorted(seqs) and len(seqs) == len(set(seqs)) and min(seqs) > seen
    assert [back.translations("zh")[sid] for sid in missed] == ["请坐。", "这个多少钱？"]
    # The paste kept its layout: the second sentence starts a new paragraph.
    sentences = [e for e in back.logged if e["type"] == "sentence"]
    assert [e["lead"] for e in sentences] == ["", "\n\n"]
    back.close()


def test_a_question_reaches_the_teacher_translated_and_can_be_shown_to_the_room(app):
    code, key = app.open("zh")
    asker = app.join(code, "en", "Sam")
    teacher = Reader(app.url, code, key=key)
    r = app.http.post(f"/class/api/rooms/{code}/questions",
                      json={"student": asker, "text": "Where is the train station?"})
    assert r.status_code == 200, r.text
    question = wait_for(lambda: [e for e in teacher.logged if e["type"] == "question"])[0]
    assert (question["translation"], question["text"], question["name"]) == \
        ("火车站在哪里？", "Where is the train station?", "Sam")
    shown = app.http.post(f"/class/api/rooms/{code}/questions/{question['seq']}/show",
                          headers={"X-Class-Key": key})
    assert shown.status_code == 200, shown.text
    [sid] = shown.json()["sentences"]
    wait_for(lambda: any(e["type"] == "sentence" and e["seq"] == sid and e["kind"] == "question"
                         for e in teacher.logged))
    # Too long, too many: clear refusals.
    long = app.http.post(f"/class/api/rooms/{code}/questions", json={"student": asker,
                                                                    "text": "x" * 41})
    assert_json_error(long, 413)
    app.http.post(f"/class/api/rooms/{code}/questions", json={"student": asker, "text": "Hello"})
    assert_json_error(app.http.post(f"/class/api/rooms/{code}/questions",
                                    json={"student": asker, "text": "Hello"}), 429)
    teacher.close()


def test_only_the_teachers_secret_writes_and_limits_hold(app):
    code, key = app.open("zh")
    student = app.join(code, "en")
    for headers in ({}, {"X-Class-Key": "guess"}, {"X-Class-Key": student}):
        r = app.http.post(f"/class/api/rooms/{code}/sentences", json={"text": "你好"},
                          headers=headers)
        assert_json_error(r, 401)
        assert_json_error(app.http.get(f"/class/api/rooms/{code}/transcript", headers=headers),
                          401)
    assert_json_error(app.http.get(f"/class/api/rooms/{code}/events",
                                   params={"role": "teacher", "key": "guess"}), 401)
    assert_json_error(app.http.get(f"/class/api/rooms/{code}/events",
                                   params={"student": "nobody", "lang": "en"}), 401)
    assert_json_error(app.http.get("/class/api/rooms/000000"), 404, "room_not_found")
    # A seat is taken by a student whose stream is open: 6 in all (the first is student).
    readers = [Reader(app.url, code, student=student, lang="en")]
    for lang in ("fr", "ja", "ru", "ar"):
        readers.append(Reader(app.url, code, student=app.join(code, lang), lang=lang))
    late, last = app.join(code, "de"), app.join(code, "es")  # 5 seats taken: both may join
    readers.append(Reader(app.url, code, student=last, lang="es"))  # the 6th stream: a seat
    assert_json_error(app.http.get(f"/class/api/rooms/{code}/events",
                                   params={"student": late, "lang": "de"}), 429, "room_full")
    assert_json_error(app.http.post(f"/class/api/rooms/{code}/join", json={"lang": "de"}), 429,
                      "room_full")
    for reader in readers:
        reader.close()
    app.open("en"), app.open("en")  # 3 rooms in all: the limit
    assert_json_error(app.http.post("/class/api/rooms", json={"lang": "en"}), 429)
    # The pages themselves are plain and open.
    for path in ("/class", f"/class/{code}", f"/class/teach/{code}"):
        page = app.http.get(path)
        assert page.status_code == 200 and 'id="app"' in page.text
        assert "key" not in page.text.split('id="app"')[1].split(">")[0]
    qr = app.http.get(f"/class/api/rooms/{code}/qr.svg")
    assert qr.status_code == 200 and qr.text.startswith("<svg")


def test_a_room_with_nobody_in_it_expires(app):
    app.rooms.bus.ttl = 0.5
    code, _ = app.open("zh")
    assert app.http.get(f"/class/api/rooms/{code}").status_code == 200
    time.sleep(1.0)
    assert_json_error(app.http.get(f"/class/api/rooms/{code}"), 404, "room_not_found")


def test_the_transcript_is_multilingual_in_text_csv_markdown_and_word(app):
    """Every format holds the sentence and each language's translation; the CSV starts with the
    UTF-8 byte order mark (Excel's cue), and the Word document opens in python-docx with the
    sentence, then each language's translation, on one row (Arabic right to left)."""
    import docx

    code, key = app.open("en")
    readers = [Reader(app.url, code, student=app.join(code, lang), lang=lang)
               for lang in ("zh", "fr", "ar")]
    app.say(code, key, "Good morning.")
    wait_for(lambda: app.rooms.stats(code)["translations"] == 3)
    expected = {"en": "Good morning.", "zh": "早上好。", "fr": "Bonjour.",
                "ar": TABLE[("en", "ar", "Good morning.")]}
    for fmt in ("txt", "csv", "md"):
        r = app.http.get(f"/class/api/rooms/{code}/transcript", params={"format": fmt},
                         headers={"X-Class-Key": key})
        assert r.status_code == 200, r.text
        assert all(text in r.text for text in expected.values())
        assert f"class-{code}.{fmt}" in r.headers["content-disposition"]
    csv_bytes = app.http.get(f"/class/api/rooms/{code}/transcript", params={"format": "csv"},
                             headers={"X-Class-Key": key}).content
    assert csv_bytes.startswith(b"\xef\xbb\xbf")  # the BOM, once
    assert csv_bytes.decode("utf-8-sig").splitlines()[0] == "time,kind,from,source_lang,en,ar,fr,zh"
    word = app.http.get(f"/class/api/rooms/{code}/transcript", params={"format": "docx"},
                        headers={"X-Class-Key": key})
    assert word.status_code == 200
    assert word.headers["content-type"].startswith("application/vnd.openxmlformats")
    assert f"class-{code}.docx" in word.headers["content-disposition"]
    document = docx.Document(io.BytesIO(word.content))
    [table] = document.tables
    header = [c.text for c in table.rows[0].cells]
    assert header == ["Time", "", "English (en)", "Arabic (ar)", "French (fr)", "Chinese (zh)"]
    row = [c.text for c in table.rows[1].cells]
    assert row[2:] == [expected["en"], expected["ar"], expected["fr"], expected["zh"]]
    arabic = table.rows[1].cells[3].paragraphs[0]._p
    assert arabic.pPr is not None and arabic.pPr.find(qn("w:bidi")) is not None
    assert document.paragraphs[0].text == "Lesson 1"
    for reader in readers:
        reader.close()


@pytest.mark.parametrize("open_page", [False, True])
def test_with_api_keys_a_class_follows_the_page(engine, demo_settings, open_page):
    from apphelpers import free_port

    settings = replace(demo_settings, port=free_port(), log_level="warning", api_keys="k1",
                       open_page=open_page)
    server = Server(create_app(settings, Translator(engine, engine.spec, settings)),
                    settings).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30, trust_env=False) as c:
            for path in ("/class", "/class/api/languages"):
                if open_page:  # anyone who can reach the app, as the page
                    assert c.get(path).status_code == 200
                else:
                    assert_json_error(c.get(path), 401, "unauthorized")
                assert c.get(path, headers={"Authorization": "Bearer k1"}).status_code == 200
    finally:
        server.stop()


def test_the_page_links_to_starting_a_class(app):
    """The page's header offers a class in the page's language; the link (relative, so it works
    under a proxy's prefix too) opens the class's start page."""
    config = app.http.get("/config").text
    assert "[🎓 Start a class](class)" in config and "[🎓 开始上课](class)" in config
    start = app.http.get("/class")
    assert start.status_code == 200 and "text/html" in start.headers["content-type"]
