"""A class served by two app processes sharing one redis-server (as behind a load balancer): the
teacher on one, the students on the other. Each sentence is still translated once per language
(the claim is in Redis), the students read it live, a question goes back across, and a student
that reconnects to the other process catches up from the shared log."""

from __future__ import annotations

import httpx
import pytest
from apphelpers import app_process
from redis_server import redis_server, requires_redis_server
from roomhelpers import Reader, close_all, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.redis, requires_redis_server]


def test_teacher_on_one_process_students_on_another(demo_dir):
    with redis_server() as redis_url, \
            app_process("--redis-url", redis_url, "--cache-size", "0") as one, \
            app_process("--redis-url", redis_url, "--cache-size", "0") as two:
        a = httpx.Client(base_url=one.url, timeout=60, trust_env=False)
        b = httpx.Client(base_url=two.url, timeout=60, trust_env=False)
        room = a.post("/class/api/rooms", json={"lang": "en"}).json()
        code, key = room["code"], room["key"]
        assert b.get(f"/class/api/rooms/{code}").json()["lang"] == "en"
        students = {b.post(f"/class/api/rooms/{code}/join", json={"lang": lang}).json()["student"]:
                    lang for lang in ("zh", "zh", "fr", "ru")}
        try:
            readers = {s: Reader(two.url, code, student=s, lang=lang)
                       for s, lang in students.items()}
            teacher = Reader(one.url, code, key=key)
            r = a.post(f"/class/api/rooms/{code}/sentences", json={"text": "Good morning."},
                       headers={"X-Class-Key": key})
            assert r.status_code == 200, r.text
            [sid] = r.json()["sentences"]
            expected = {"zh": "早上好。", "fr": "Bonjour.", "ru": "Доброе утро."}
            for s, reader in readers.items():
                lang = students[s]
                wait_for(lambda r=reader, lang=lang: r.translations(lang).get(sid),
                         what=f"{lang} on the other process")
                assert reader.translations(students[s]) == {sid: expected[students[s]]}
            stats = a.get(f"/class/api/rooms/{code}/stats", headers={"X-Class-Key": key}).json()
            assert (stats["translations"], stats["students"]) == (3, 4)  # not 4: zh once

            asker = next(iter(students))
            q = b.post(f"/class/api/rooms/{code}/questions",
                       json={"student": asker, "text": "谢谢你的帮助。"})
            assert q.status_code == 200, q.text
            question = wait_for(lambda: [e for e in teacher.logged if e["type"] == "question"])
            assert question[0]["translation"] == "Thank you for your help."

            # A student away, then back on the teacher's process: the log is shared.
            away = readers.pop(asker)
            away.close()
            a.post(f"/class/api/rooms/{code}/sentences", json={"text": "Thank you."},
                   headers={"X-Class-Key": key})
            back = Reader(one.url, code, student=asker, lang="zh", last_event_id=away.last)
            got = wait_for(lambda: back.translations("zh"), what="the catch-up")
            assert list(got.values()) == ["谢谢。"]
            assert all(e["seq"] > away.last for e in back.logged)
        finally:
            close_all()
            a.close()
            b.close()
