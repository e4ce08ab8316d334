"""Rooms in a real redis-server (no model: the fake engine of test_rooms_service) through an
outage: while Redis is away every call is a ``StoreUnavailableError`` (a 503 with
``Retry-After``), never a bare Redis error; when it comes back empty (a restart without
persistence) the room is written back from the process's copy with its numbering, its students
and its counters, once however many processes race to do it; and a translation finished during
the outage is logged when Redis is back."""

from __future__ import annotations

import threading
import time

import pytest
from fakes import CrashingEngine
from redis_server import RedisServer, requires_redis_server
from roomhelpers import seated, translations, wait_for

from hunyuan_webui import models
from hunyuan_webui.service import Translator
from hunyuan_webui.service.rooms import RoomLimits, Rooms, StoreUnavailableError
from hunyuan_webui.service.rooms.store.redis_bus import RedisBus
from hunyuan_webui.settings import Settings

pytestmark = [pytest.mark.redis, requires_redis_server]


def redis_rooms(url: str, engine: CrashingEngine) -> Rooms:
    translator = Translator(engine, models.resolve("tencent/Hunyuan-MT-7B"),
                            Settings(cache_size=0, guards=False))
    limits = RoomLimits()
    return Rooms(translator, RedisBus(url, limits.idle_ttl, limits.empty_ttl), limits)


def test_a_room_lives_through_redis_restarting_empty():
    engine = CrashingEngine()
    with RedisServer() as server:
        rooms = redis_rooms(server.url, engine)
        # Two more processes behind the same Redis: one read the whole log, one only the room.
        third, other = redis_rooms(server.url, engine), redis_rooms(server.url, engine)
        code, key = rooms.create("en", "Lesson").values()
        students = [seated(rooms, code, lang) for lang in ("zh", "fr")]
        sids = rooms.send(code, key, "One. Two.")["sentences"]
        wait_for(lambda: len(translations(rooms, code, "fr")) == 2
                 and len(translations(rooms, code, "zh")) == 2)
        before = rooms.history(code)  # the log complete: both languages' translations in it
        other.public(code)
        third.public(code), third.history(code)

        server.stop()
        for call in (lambda: rooms.send(code, key, "Three."), lambda: rooms.public(code),
                     lambda: rooms.join(code, "ja"), lambda: rooms.create("en")):
            with pytest.raises(StoreUnavailableError) as refused:
                call()
            assert refused.value.http_status == 503 and refused.value.retry_after > 0
        server.start()  # empty: no persistence

        # The process that never read the whole log leaves it to one that did (a 503 meanwhile).
        with pytest.raises(StoreUnavailableError, match="being brought back"):
            other.public(code)
        # Two that did find the room gone at once: it is written back once.
        barrier = threading.Barrier(2)
        found = []

        def look(r: Rooms) -> None:
            barrier.wait(5)
            found.append(r.public(code)["title"])

        threads = [threading.Thread(target=look, args=(r,)) for r in (rooms, third)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(10)
        assert found == ["Lesson", "Lesson"]
        assert other.public(code)["title"] == "Lesson"
        assert rooms.history(code) == before  # the same events under the same numbers
        assert set(rooms.present(code)) == set(students)
        assert rooms.stats(code)["sentences"] == 2
        more = rooms.send(code, key, "Three.")["sentences"]
        assert more == [len(before) + 1]
        got = wait_for(lambda: len(translations(rooms, code, "zh")) == 3
                       and translations(rooms, code, "zh"))
        assert [got[s] for s in sids + more] == ["ONE.", "TWO.", "THREE."]


def test_a_translation_finished_while_redis_is_away_is_logged_when_it_is_back():
    engine = CrashingEngine(delay=0.05)  # typed in 1.5 s
    with RedisServer() as server:
        rooms = redis_rooms(server.url, engine)
        code, key = rooms.create("en").values()
        seated(rooms, code, "zh")
        [sid] = rooms.send(code, key, "A sentence that takes a while.")["sentences"]
        wait_for(lambda: engine.calls == 1)
        server.stop()
        wait_for(lambda: engine.finished() == 1)  # it ends meanwhile: its event waits in the process
        time.sleep(0.5)  # and its publication has been tried
        server.start()
        got = wait_for(lambda: translations(rooms, code, "zh"), timeout=20)
        assert got == {sid: "A SENTENCE THAT TAKES A WHILE."}
        assert [seq for seq, e in rooms.history(code) if e["type"] == "sentence"] == [sid]
