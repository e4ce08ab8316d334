"""A class through the failures it meets, on a real ``app.py --demo`` process, with other clients
served meanwhile (one translating on ``/v1/translate`` in a loop, one asking ``/health``):

- ``kill -9`` of the engine process (the app runs the engine in a child process) while the
  teacher sends 30 sentences: every sentence the students saw gets its translation, in every
  language present, within 30 s of the engine being ready again; the students read "delayed"
  meanwhile rather than nothing, and a student who joins afterwards gets them all too;
- Redis stopped for 10 s during a class, then started again empty (as a restart without
  persistence is): the teacher's sends get 503 with words and ``Retry-After`` (never 500), and
  the room exists afterwards, its students still reading and able to continue.

The teacher speaks Chinese; the students read English, French and Japanese: the demo knows the
class's two sentences in each, so every translation is exact.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from apphelpers import app_process
from redis_server import RedisServer, requires_redis_server
from roomhelpers import Reader, close_all, wait_for

from hunyuan_webui.demo_model import load_phrases

pytestmark = pytest.mark.slow
SENTENCES = ("早上好。", "请打开书。")
LANGS = ("en", "fr", "ja")
TABLE = {(p.source_lang, p.target_lang, p.source): p.target for p in load_phrases()}
CATCH_UP_S = 30.0  # after the engine is ready again


class OtherClients:
    """Clients beside the class: one translating a demo phrase in a loop, one asking /health.
    Their answers are counted; none may be a 500."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.statuses: list[int] = []
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._translate, daemon=True),
                         threading.Thread(target=self._health, daemon=True)]

    def __enter__(self) -> OtherClients:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(30)

    def _translate(self) -> None:
        body = {"text": "Thank you.", "source_lang": "en", "target_lang": "zh"}
        with httpx.Client(base_url=self.url, timeout=60, trust_env=False) as c:
            while not self._stop.wait(0.2):
                with contextlib.suppress(httpx.HTTPError):
                    self.statuses.append(c.post("/v1/translate", json=body).status_code)

    def _health(self) -> None:
        with httpx.Client(base_url=self.url, timeout=30, trust_env=False) as c:
            while not self._stop.wait(0.2):
                with contextlib.suppress(httpx.HTTPError):
                    self.statuses.append(c.get("/health").status_code)


class Class:
    """A teacher (zh) and one student per language of LANGS, each on its own stream."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(base_url=url, timeout=60, trust_env=False)
        room = self.http.post("/class/api/rooms", json={"lang": "zh"}).json()
        self.code, self.key = room["code"], room["key"]
        self.students = {lang: self.join(lang) for lang in LANGS}
        self.readers = {lang: Reader(url, self.code, student=s, lang=lang)
                        for lang, s in self.students.items()}

    def join(self, lang: str) -> str:
        r = self.http.post(f"/class/api/rooms/{self.code}/join", json={"lang": lang})
        assert r.status_code == 200, r.text
        return r.json()["student"]

    def send(self, text: str) -> httpx.Response:
        return self.http.post(f"/class/api/rooms/{self.code}/sentences", json={"text": text},
                              headers={"X-Class-Key": self.key})

    def missing(self, reader: Reader, lang: str) -> list[int]:
        """The sentences this reader saw without their (exact) translation yet."""
        got = reader.translations(lang)
        return [e["seq"] for e in reader.logged if e["type"] == "sentence"
                and got.get(e["seq"]) != TABLE[("zh", lang, e["text"])]]


@pytest.fixture
def cls() -> Iterator[None]:
    yield
    close_all()


def _engine_pid(url: str) -> int:
    return httpx.get(f"{url}/ready", timeout=10, trust_env=False).json()["extra"]["process"]


def test_kill_9_of_the_engine_while_the_teacher_sends_30_sentences(demo_dir, cls):
    with app_process("--engine", "process", "--cache-size", "0") as server, \
            OtherClients(server.url) as others:
        room = Class(server.url)
        engine = _engine_pid(server.url)
        answers: list[int] = []
        for i in range(30):
            if i == 8:
                os.kill(engine, signal.SIGKILL)
            r = room.send(SENTENCES[i % 2])
            answers.append(r.status_code)
            assert r.status_code in (200, 503), r.text  # refused with words, or logged
            time.sleep(0.25)
        wait_for(lambda: httpx.get(f"{server.url}/ready", timeout=10,
                                   trust_env=False).status_code == 200, 120, "the engine ready")
        ready_at = time.monotonic()
        assert _engine_pid(server.url) != engine
        for lang, reader in room.readers.items():
            wait_for(lambda r=reader, lang=lang: r.logged and not room.missing(r, lang),
                     CATCH_UP_S, f"every {lang} translation")
        took = time.monotonic() - ready_at
        seen = {lang: [e for e in r.logged if e["type"] == "sentence"]
                for lang, r in room.readers.items()}
        delayed = {lang: {e["sid"] for e in r.logged if e["type"] == "delayed"}
                   for lang, r in room.readers.items()}
        print(f"\nsends: {answers.count(200)} logged, {answers.count(503)} refused; "
              f"sentences seen {[len(s) for s in seen.values()]}, delayed "
              f"{[len(d) for d in delayed.values()]}; all translated {took:.1f}s after ready")
        assert all(len(s) == answers.count(200) for s in seen.values())
        assert all(delayed.values()), "no student was told of a delay"
        # A student who joins now gets every one of them too.
        late = Reader(server.url, room.code, student=room.join("fr"), lang="fr")
        wait_for(lambda: late.logged and not room.missing(late, "fr"), CATCH_UP_S, "late")
        assert 500 not in others.statuses


@requires_redis_server
@pytest.mark.redis
def test_redis_stopped_for_10s_during_a_class_then_back_empty(demo_dir, cls):
    with RedisServer() as redis, \
            app_process("--redis-url", redis.url, "--cache-size", "0") as server, \
            OtherClients(server.url) as others:
        room = Class(server.url)
        before = [room.send(text).status_code for text in SENTENCES]
        assert before == [200, 200]
        for lang, reader in room.readers.items():
            wait_for(lambda r=reader, lang=lang: len(r.translations(lang)) == 2
                     and not room.missing(r, lang), 60, f"{lang} before")
        last = {lang: r.last for lang, r in room.readers.items()}

        redis.stop()
        refused: list[httpx.Response] = []
        started = time.monotonic()
        while time.monotonic() - started < 10:
            refused.append(room.send("早上好。"))
            time.sleep(0.5)
        redis.start()  # empty: no persistence
        statuses = {r.status_code for r in refused}
        assert statuses == {503}, statuses
        body: dict[str, Any] = refused[0].json()["error"]
        assert body["code"] == "store_unavailable" and "Redis" in body["message"]
        assert int(refused[0].headers["retry-after"]) >= 1

        # The room exists afterwards; its students go on where they were.
        info = wait_for(lambda: (r := room.http.get(f"/class/api/rooms/{room.code}")
                                 ).status_code == 200 and r, 30, "the room back")
        assert info.json()["lang"] == "zh"
        after = wait_for(lambda: (r := room.send("请打开书。")).status_code == 200 and r, 30)
        [sid] = after.json()["sentences"]
        assert sid == max(last.values()) + 1  # the numbering went on: nothing read twice
        for lang, reader in room.readers.items():
            wait_for(lambda r=reader, lang=lang: r.translations(lang).get(sid)
                     == TABLE[("zh", lang, "请打开书。")], 60, f"{lang} after")
            seqs = [e["seq"] for e in reader.logged]
            assert seqs == sorted(set(seqs))  # in order, once
        # A student back from the outage catches up; a new one joins.
        away = room.readers["fr"]
        away.close()
        back = Reader(server.url, room.code, student=room.students["fr"], lang="fr",
                      last_event_id=last["fr"])
        wait_for(lambda: back.translations("fr").get(sid) == TABLE[("zh", "fr", "请打开书。")],
                 60, "the catch-up")
        assert all(e["seq"] > last["fr"] for e in back.logged)
        new = Reader(server.url, room.code, student=room.join("ja"), lang="ja")
        wait_for(lambda: not room.missing(new, "ja") and new.logged, 60, "a new student")
        assert 500 not in others.statuses
