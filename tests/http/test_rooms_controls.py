"""The teacher's controls over HTTP, with the teacher's key as for sentences: end the class (the
students' streams get ``ended`` and end; the transcript stays downloadable), lock and unlock it
(a new join gets 403 ``room_locked``), pause and resume sending (409 ``room_paused``), clear the
students' screens, and remove a student (its stream ends; that id cannot join, stream or ask
again). A mistyped code is a 404 ``room_not_found`` everywhere a code is taken.

Sentences are demo phrases, so every translation is exact.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from apphelpers import assert_json_error
from roomhelpers import ClassApp, Reader, class_server, wait_for

from hunyuan_webui.demo_model import load_phrases
from hunyuan_webui.service.rooms import RoomLimits

pytestmark = pytest.mark.slow
TABLE = {(p.source_lang, p.target_lang, p.source): p.target for p in load_phrases()}


@pytest.fixture
def app(engine, demo_settings) -> Iterator[ClassApp]:
    with class_server(engine, demo_settings, RoomLimits()) as running:
        yield running


def kinds(reader: Reader) -> list[str]:
    return [e["type"] for e in reader.events if e["type"] not in ("stats", "draft")]


def test_each_control_needs_the_teachers_key(app):
    code, key = app.open("en")
    student = app.join(code, "fr")
    for method, action in [("POST", a) for a in ("end", "lock", "unlock", "pause", "resume",
                                                 "clear")] + [("GET", "students"),
                                                              ("DELETE", f"students/{student}")]:
        for wrong in ("", "guess", student):
            assert_json_error(app.teacher(method, code, wrong, action), 401, "unauthorized")
        assert_json_error(app.teacher(method, "000001", key, action), 404, "room_not_found")
    assert app.teacher("GET", code, key, "students").json()[0]["student"] == student


def test_end_the_class(app):
    code, key = app.open("en")
    fr = Reader(app.url, code, student=app.join(code, "fr"), lang="fr")
    teacher = Reader(app.url, code, key=key)
    [sid] = app.say(code, key, "Good morning.")
    wait_for(lambda: fr.translations("fr") == {sid: "Bonjour."})
    ended = app.teacher("POST", code, key, "end")
    assert ended.status_code == 200 and ended.json() == {"code": code, "locked": False,
                                                          "paused": False, "ended": True}
    for reader in (fr, teacher):
        wait_for(lambda r=reader: r.ended, what="the stream to end")
        assert kinds(reader)[-1] == "ended"
    assert_json_error(app.http.post(f"/class/api/rooms/{code}/join", json={"lang": "ja"}), 410,
                      "room_ended")
    assert_json_error(app.http.post(f"/class/api/rooms/{code}/sentences", json={"text": "Hi."},
                                    headers={"X-Class-Key": key}), 410, "room_ended")
    assert app.http.get(f"/class/api/rooms/{code}").json()["ended"] is True
    # A page that comes back reads what it missed, the end, and the stream ends again.
    back = Reader(app.url, code, student=fr.params["student"], lang="fr", last_event_id=fr.last)
    wait_for(lambda: back.ended)
    assert kinds(back) == ["ended"]
    # The transcript stays the teacher's.
    transcript = app.http.get(f"/class/api/rooms/{code}/transcript",
                              headers={"X-Class-Key": key})
    assert transcript.status_code == 200 and "Bonjour." in transcript.text


def test_lock_and_unlock(app):
    code, key = app.open("en")
    sam = app.join(code, "fr", "Sam")
    assert app.teacher("POST", code, key, "lock").json()["locked"] is True
    message = assert_json_error(app.http.post(f"/class/api/rooms/{code}/join",
                                              json={"lang": "ja"}), 403, "room_locked")
    assert "closed this class to new students" in message
    assert app.http.get(f"/class/api/rooms/{code}").json()["locked"] is True
    again = app.http.post(f"/class/api/rooms/{code}/join", json={"lang": "fr", "student": sam})
    assert again.status_code == 200 and again.json()["student"] == sam  # one already in
    assert app.teacher("POST", code, key, "unlock").json()["locked"] is False
    assert app.join(code, "ja")


def test_pause_resume_and_clear(app):
    code, key = app.open("en")
    zh = Reader(app.url, code, student=app.join(code, "zh"), lang="zh")
    app.say(code, key, "Good morning.")
    assert app.teacher("POST", code, key, "pause").json()["paused"] is True
    assert_json_error(app.http.post(f"/class/api/rooms/{code}/sentences",
                                    json={"text": "Thank you."}, headers={"X-Class-Key": key}),
                      409, "room_paused")
    app.teacher("POST", code, key, "resume")
    app.teacher("POST", code, key, "clear")
    [after] = app.say(code, key, "Thank you.")
    wait_for(lambda: len(zh.translations("zh")) == 2)
    assert [k for k in kinds(zh) if k != "translation"] == ["sentence", "paused", "resumed",
                                                            "clear", "sentence"]
    # A language that arrives after the clear catches up on what came after it only.
    ja = Reader(app.url, code, student=app.join(code, "ja"), lang="ja")
    wait_for(lambda: ja.translations("ja"))
    assert ja.translations("ja") == {after: TABLE[("en", "ja", "Thank you.")]}


def test_remove_a_student(app):
    code, key = app.open("en")
    kim, ana = app.join(code, "fr", "Kim"), app.join(code, "fr", "Ana")
    kims, anas = (Reader(app.url, code, student=s, lang="fr") for s in (kim, ana))
    teacher = Reader(app.url, code, key=key)
    removed = app.teacher("DELETE", code, key, f"students/{kim}")
    assert removed.status_code == 200 and removed.json()["removed"] is True
    wait_for(lambda: kims.ended, what="the removed student's stream to end")
    assert kinds(kims)[-1] == "removed"
    wait_for(lambda: "removed" in kinds(teacher))
    [sid] = app.say(code, key, "Good morning.")
    wait_for(lambda: anas.translations("fr") == {sid: "Bonjour."})
    assert "removed" not in kinds(anas) and not anas.ended  # another student's business
    for refused in (app.http.post(f"/class/api/rooms/{code}/join",
                                  json={"lang": "fr", "student": kim}),
                    app.http.get(f"/class/api/rooms/{code}/events",
                                 params={"student": kim, "lang": "fr"}),
                    app.http.post(f"/class/api/rooms/{code}/questions",
                                  json={"student": kim, "text": "Why?"})):
        assert_json_error(refused, 403, "student_removed")
    roster = {s["student"]: s for s in app.teacher("GET", code, key, "students").json()}
    assert roster[kim]["removed"] and roster[ana]["present"] and roster[ana]["name"] == "Ana"
    assert_json_error(app.teacher("DELETE", code, key, "students/nobody"), 404,
                      "student_not_found")


def test_a_mistyped_code_is_room_not_found_everywhere(app):
    for method, path, body in (("GET", "/class/api/rooms/123456", None),
                               ("GET", "/class/api/rooms/12-34-56/qr.svg", None),
                               ("POST", "/class/api/rooms/123456/join", {"lang": "fr"}),
                               ("GET", "/class/api/rooms/123456/events?student=x&lang=fr", None),
                               ("POST", "/class/api/rooms/123456/questions",
                                {"student": "x", "text": "Hi"})):
        message = assert_json_error(app.http.request(method, path, json=body), 404,
                                    "room_not_found")
        assert "No class has this code" in message
