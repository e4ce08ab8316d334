"""The rooms' service on a fake engine that can be taken down and crashed on purpose (no model,
no server): no sentence is lost to an engine restart, the teacher's controls, seats, and the
limits per address and per teacher.

``CrashingEngine`` (fakes.py) answers each prompt with its last line upper-cased, a character at a
time; ``crash()`` ends every stream in flight with the error the child-process engine gives a
killed process and refuses new work as "restarting" until ``recover()``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from fakes import CrashingEngine
from roomhelpers import events_of, seated, translations, wait_for

from hunyuan_webui import models
from hunyuan_webui.engine import EngineState
from hunyuan_webui.errors import AuthError, NotReadyError, RateLimitError
from hunyuan_webui.service import Translator
from hunyuan_webui.service.rooms import RoomLimits, Rooms
from hunyuan_webui.service.rooms import errors as room_errors
from hunyuan_webui.service.rooms import gate as gate_mod
from hunyuan_webui.settings import Settings


@pytest.fixture
def engine() -> CrashingEngine:
    return CrashingEngine()


def make_rooms(engine: CrashingEngine, **limits: Any) -> Rooms:
    spec = models.resolve("tencent/Hunyuan-MT-7B")
    translator = Translator(engine, spec, Settings(cache_size=0, guards=False))
    return Rooms(translator, limits=RoomLimits(**limits))


# -- no sentence lost ---------------------------------------------------------------------------
def test_sentences_sent_while_the_engine_restarts_are_delayed_then_translated(engine):
    rooms = make_rooms(engine)
    code, key = rooms.create("en").values()
    for lang in ("zh", "fr"):
        seated(rooms, code, lang)
    first = rooms.send(code, key, "One.")
    assert first["delayed"] == []
    wait_for(lambda: len(translations(rooms, code, "zh")) == 1)
    engine.crash()
    sent = rooms.send(code, key, "Two. Three.")
    assert sent["delayed"] == ["fr", "zh"]  # the teacher is told: they come later
    delayed = wait_for(lambda: len(events_of(rooms, code, "delayed")) == 4 and events_of(rooms, code, "delayed"))
    assert {(e["sid"], e["lang"]) for e in delayed} == {(s, lang) for s in sent["sentences"]
                                                        for lang in ("zh", "fr")}
    assert all(e["code"] == "translation_delayed" and e["reason"] for e in delayed)
    time.sleep(0.5)
    assert len(translations(rooms, code, "fr")) == 1  # nothing while the engine is away
    engine.recover()
    for lang in ("zh", "fr"):
        got = wait_for(lambda lang=lang: len(translations(rooms, code, lang)) == 3
                       and translations(rooms, code, lang), timeout=10)
        assert [got[s] for s in sent["sentences"]] == ["TWO.", "THREE."]
    # A language that arrives after gets them too, once each.
    seated(rooms, code, "ja")
    got = wait_for(lambda: len(translations(rooms, code, "ja")) == 3 and
                   translations(rooms, code, "ja"), timeout=10)
    assert sorted(got.values()) == ["ONE.", "THREE.", "TWO."]
    time.sleep(0.5)
    assert len([e for e in events_of(rooms, code, "translation") if e["lang"] == "ja"]) == 3


def test_translations_cut_by_a_killed_engine_come_once_it_is_back(engine):
    engine.delay = 0.05  # slow enough to be killed mid-sentence
    rooms = make_rooms(engine)
    code, key = rooms.create("en").values()
    for lang in ("zh", "fr", "ar"):
        seated(rooms, code, lang)
    sids = rooms.send(code, key, "A long first sentence. A second one. A third one.")["sentences"]
    wait_for(lambda: engine.calls >= 3)
    time.sleep(0.1)
    engine.crash()
    wait_for(lambda: len(events_of(rooms, code, "delayed")) >= 3, what="delayed events")
    engine.recover()
    for lang in ("zh", "fr", "ar"):
        got = wait_for(lambda lang=lang: len(translations(rooms, code, lang)) == 3
                       and translations(rooms, code, lang), timeout=20)
        assert [got[s] for s in sids] == ["A LONG FIRST SENTENCE.", "A SECOND ONE.",
                                          "A THIRD ONE."]
    assert not [e for e in events_of(rooms, code, "translation") if "error" in e]


def test_an_engine_gone_for_good_refuses_the_send_and_logs_nothing(engine):
    rooms = make_rooms(engine)
    code, key = rooms.create("en").values()
    seated(rooms, code, "zh")
    engine.crash(then=EngineState.FAILED)
    with pytest.raises(NotReadyError, match="has stopped"):
        rooms.send(code, key, "Hello.")
    assert rooms.history(code) == []


# -- the teacher's controls ------------------------------------------------------------------------
def test_end_lock_pause_clear_and_remove(engine):
    rooms = make_rooms(engine)
    code, key = rooms.create("en").values()
    sam = seated(rooms, code, "fr")
    assert rooms.lock(code, key)["locked"]
    with pytest.raises(room_errors.RoomLockedError):
        rooms.join(code, "zh")
    assert rooms.join(code, "fr", student=sam) == sam  # one already in comes back
    rooms.lock(code, key, False)
    kim = seated(rooms, code, "zh")
    rooms.pause(code, key)
    with pytest.raises(room_errors.RoomPausedError):
        rooms.send(code, key, "Hello.")
    rooms.pause(code, key, False)
    rooms.send(code, key, "Before. Clear.")
    wait_for(lambda: len(translations(rooms, code, "zh")) == 2)
    rooms.clear(code, key)
    rooms.send(code, key, "After.")
    seated(rooms, code, "ja")  # a late language catches up on what came after the clear only
    wait_for(lambda: translations(rooms, code, "ja"))
    time.sleep(0.3)
    assert list(translations(rooms, code, "ja").values()) == ["AFTER."]
    rooms.remove(code, key, kim)
    for action in (lambda: rooms.join(code, "zh", student=kim),
                   lambda: rooms.connect(code, kim, "zh"),
                   lambda: rooms.ask(code, kim, "Why?")):
        with pytest.raises(room_errors.StudentRemovedError):
            action()
    with pytest.raises(room_errors.StudentNotFoundError):
        rooms.remove(code, key, "nobody")
    assert [s["removed"] for s in rooms.roster(code, key) if s["student"] == kim] == [True]
    assert rooms.end(code, key)["ended"]
    for refused in (lambda: rooms.join(code, "zh"), lambda: rooms.send(code, key, "More."),
                    lambda: rooms.lock(code, key)):
        with pytest.raises(room_errors.RoomEndedError):
            refused()
    kinds = [e["type"] for _, e in rooms.history(code) if e["type"] not in (
        "sentence", "translation")]
    assert kinds == ["locked", "unlocked", "paused", "resumed", "clear", "removed", "ended"]
    assert rooms.public(code)["ended"] and rooms.history(code)  # the transcript stays
    with pytest.raises(AuthError):
        rooms.end(code, "not-the-key")


# -- seats and limits ------------------------------------------------------------------------------
def test_joins_that_never_connect_take_no_seat(engine):
    rooms = make_rooms(engine, students=3, join_grace=0.5, pending_per_address=20)
    code, _ = rooms.create("en").values()
    fakes = 0
    for _ in range(150):
        try:
            rooms.join(code, "fr", address="10.6.6.6")
            fakes += 1
        except RateLimitError:
            pass
    assert fakes == 20  # joins waiting for their streams, from one address
    real = [seated(rooms, code, lang, address=f"10.0.0.{i}") for i, lang in
            enumerate(("zh", "ja", "ar"))]
    assert len(rooms.present(code)) == 3 and all(s in rooms.present(code) for s in real)
    with pytest.raises(room_errors.RoomFullError):
        rooms.join(code, "de", address="10.0.0.9")
    time.sleep(0.6)  # the waiting joins are forgotten after the grace
    with pytest.raises(room_errors.RoomFullError):  # still full: the seats are real students'
        rooms.join(code, "de", address="10.6.6.6")
    assert rooms.stats(code)["joining"] == 20
    rooms.bus.see(code, real[0], {"seen": 0.0})  # a seat freed: that phone went away
    rooms.join(code, "de", address="10.6.6.6")
    assert rooms.stats(code)["joining"] == 1  # the 20 stale ones were forgotten


def test_classes_per_teacher_and_per_minute(engine):
    rooms = make_rooms(engine, rooms_per_teacher=3, creates_per_minute=5)
    made = [rooms.create("en", owner="addr:10.0.0.1") for _ in range(3)]
    with pytest.raises(room_errors.TooManyRoomsError, match="3 classes open"):
        rooms.create("en", owner="addr:10.0.0.1")
    rooms.end(made[0]["code"], made[0]["key"])  # an ended class is not open
    rooms.create("en", owner="addr:10.0.0.1")
    assert rooms.create("en", owner="user:ana")  # another teacher
    for room in made[1:]:
        rooms.end(room["code"], room["key"])
    with pytest.raises(room_errors.TooManyRoomsError, match="in a minute"):
        for _ in range(3):
            rooms.create("en", owner="addr:10.0.0.1")
    assert rooms.create("zh")["code"]  # the server's own (--class) is not limited


def test_wrong_codes_make_an_address_wait_longer_and_longer(engine, monkeypatch):
    monkeypatch.setattr(gate_mod, "BLOCK_FIRST_S", 0.1)
    rooms = make_rooms(engine, wrong_codes_per_minute=3)
    code, key = rooms.create("en").values()
    for wrong in ("111111", "222222", "333333"):
        with pytest.raises(room_errors.RoomNotFoundError):
            rooms.public(wrong, "10.6.6.6")
    waits = []
    for _ in range(3):
        with pytest.raises(room_errors.WrongCodesError) as refused:
            rooms.public("444444", "10.6.6.6")
        waits.append(refused.value.retry_after)
        with pytest.raises(room_errors.WrongCodesError):  # while it waits: even a right code
            rooms.join(code, "fr", address="10.6.6.6")
        assert rooms.teacher(code, key, "10.6.6.6")  # but the teacher's key opens its room
        time.sleep(refused.value.retry_after + 0.05)
    assert waits == pytest.approx([0.1, 0.2, 0.4], abs=0.03)
    assert rooms.join(code, "fr", address="10.0.0.2")  # another address is not affected
    rooms.public(code, "10.6.6.6")  # the wait is over: a right code answers


def test_a_room_nobody_used_expires_in_minutes_a_used_one_in_hours(engine):
    rooms = make_rooms(engine, empty_ttl=0.3, idle_ttl=30)
    unused = rooms.create("en")["code"]
    used, key = rooms.create("en").values()
    rooms.send(used, key, "Hello.")
    time.sleep(0.5)
    with pytest.raises(room_errors.RoomNotFoundError):
        rooms.public(unused)
    assert rooms.public(used)["code"] == used
    assert rooms.bus.room_count() == 1
