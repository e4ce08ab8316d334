"""The teacher speaks over the real WebSocket (uvicorn, the `websockets` client), with the demo
recogniser and the demo translation model: what is said becomes the room's sentence and every
student's translation; a connection that drops mid-utterance resumes with no sentence lost or
doubled; silence and noise post nothing; a second tab is refused with words; the teacher fixes a
sentence and every phone gets the fix; the captions page and its files are served."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator

import httpx
import numpy as np
import pytest
from apphelpers import RunningApp
from mic import Mic, frames, noise, silence, wav_samples
from roomhelpers import Reader, close_all
from test_speech_http import open_class, serving

from hunyuan_webui.demo.asr import ensure_demo_asr
from hunyuan_webui.demo.voices import speak
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.speech_choice import build_speech

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def speech() -> Iterator[Speech]:
    loaded = build_speech(Settings(asr_model=str(ensure_demo_asr()), demo=True))
    assert loaded.wait_ready(120).state == "ready"
    yield loaded
    loaded.close()


@pytest.fixture(scope="module")
def served(engine, speech: Speech) -> Iterator[RunningApp]:
    with serving(engine, speech) as app:
        # Every test opens its classes from 127.0.0.1: more than one teacher may (rooms' gate).
        rooms = app.server.server.config.app.state.rooms
        rooms.gate.limits = dataclasses.replace(rooms.limits, rooms_per_teacher=1000,
                                                creates_per_minute=1000)
        yield app


def ws(app: RunningApp) -> str:
    return app.url.replace("http://", "ws://")


def phrase(text: str, lang: str) -> np.ndarray:
    return np.concatenate([silence(0.5), wav_samples(speak(text, lang)), silence(1.5)])


def join(client: httpx.Client, code: str, lang: str) -> str:
    return client.post(f"/class/api/rooms/{code}/join", json={"lang": lang}).json()["student"]


def logged(reader: Reader, kind: str) -> list[dict]:
    return [e for e in reader.logged if e["type"] == kind]


def wait(condition, timeout: float = 90, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.05)


def test_spoken_sentence_reaches_every_phone_with_a_draft_first(served: RunningApp) -> None:
    with served.client() as client:
        code, key = open_class(client, "zh")
        readers = {lang: Reader(served.url, code, student=join(client, code, lang), lang=lang)
                   for lang in ("en", "fr")}
        teacher = Reader(served.url, code, key=key)
        mic = Mic(ws(served), code, key)
        assert mic.connect() == {"type": "ready", "session": mic.session, "next": 0,
                                 "lang": "zh"}
        mic.send(frames(phrase("早上好。", "zh")), pace=0.01)
        final = mic.wait_for("final", 90)[0]
        assert final["text"] == "早上好。" and len(final["sentences"]) == 1
        sid = final["sentences"][0]
        wait(lambda: all(r.translations(lang).get(sid) for lang, r in readers.items()),
             what="translations")
        assert readers["en"].translations("en")[sid] == "Good morning."
        assert readers["fr"].translations("fr")[sid] == "Bonjour."
        for reader in (*readers.values(), teacher):  # the words as spoken, then the end
            drafts = [e for e in reader.events if e["type"] == "speech_draft"]
            assert drafts and drafts[-1]["done"] and drafts[-1]["sentences"] == [sid]
            assert all(d["source"] for d in drafts if d["lang"] == "zh")
        mic.stop()
        assert mic.closed is not None and mic.closed[0] == 1000
        transcript = client.get(f"/class/api/rooms/{code}/transcript",
                                headers={"X-Class-Key": key}).text
        assert "早上好。" in transcript and "Good morning." in transcript
    close_all()


def test_a_drop_mid_utterance_resumes_with_nothing_lost_or_doubled(served: RunningApp) -> None:
    with served.client() as client:
        code, key = open_class(client, "en")
        reader = Reader(served.url, code, student=join(client, code, "zh"), lang="zh")
        chunks = frames(np.concatenate([phrase("Good morning.", "en"),
                                        phrase("Thank you for your help.", "en")]))
        mic = Mic(ws(served), code, key)
        mic.connect()
        half = len(chunks) // 3  # in the middle of "Good morning."
        mic.send(chunks[:half], pace=0.01)
        mic.drop()  # the Wi-Fi goes; frames sent meanwhile are kept by the page
        mic.send(chunks[half:half + 5])
        again = mic.connect()  # the same session: the server says where it is
        assert again["type"] == "ready" and again["session"] == mic.session
        # What it had read before the drop (on a busy machine, not every frame sent before
        # it); the page resends from there.
        assert 0 <= again["next"] <= half + 5
        mic.send(chunks[half + 5:], pace=0.01)
        mic.wait_for("final", 90, count=2)
        mic.resend(0, chunks[:half])  # a confused page resending old frames: ignored
        mic.stop()
        finals = [m for m in mic.messages if m["type"] == "final" and m["text"]]
        assert [f["text"] for f in finals] == ["Good morning.", "Thank you for your help."]
        wait(lambda: len(logged(reader, "translation")) == 2, what="two translations")
        assert [e["text"] for e in logged(reader, "sentence")] == ["Good morning.",
                                                                   "Thank you for your help."]
        assert sorted(reader.translations("zh").values()) == sorted(["早上好。", "谢谢你的帮助。"])
    close_all()


@pytest.mark.parametrize("sound", ["silence", "noise"])
def test_half_a_minute_of_silence_or_noise_posts_nothing(served: RunningApp, sound: str) -> None:
    with served.client() as client:
        code, key = open_class(client, "zh")
        mic = Mic(ws(served), code, key)
        mic.connect()
        audio = silence(30) if sound == "silence" else noise(30, level=0.2)
        mic.send(frames(audio))  # faster than real time
        mic.stop(180)
        assert not [m for m in mic.messages if m["type"] == "final" and m["text"]]
        stats = client.get(f"/class/api/rooms/{code}/stats", headers={"X-Class-Key": key}).json()
        assert stats["sentences"] == 0


def test_one_microphone_per_class_a_second_tab_is_told_why(served: RunningApp) -> None:
    with served.client() as client:
        code, key = open_class(client, "zh")
        first = Mic(ws(served), code, key)
        first.connect()
        first.send(frames(silence(1.0)), pace=0.02)
        second = Mic(ws(served), code, key)
        refused = second.connect()
        assert refused["type"] == "error" and refused["code"] == "speaker_busy"
        assert "one microphone at a time" in refused["message"]
        wait(lambda: second.closed is not None, 10, "the refusal's close")
        assert second.closed[0] == 4409
        first.stop()
        third = Mic(ws(served), code, key)  # once the first is off, another tab may speak
        assert third.connect()["type"] == "ready"
        third.stop()


@pytest.mark.parametrize(("case", "close", "words"), [
    ("wrong key", 4401, "teacher"), ("no class", 4404, "No class"),
    ("bad session", 4400, "session id")])
def test_refusals_are_close_codes_with_words(served: RunningApp, case: str, close: int,
                                             words: str) -> None:
    with served.client() as client:
        code, key = open_class(client, "zh")
    mic = Mic(ws(served), "000000" if case == "no class" else code,
              "nope" if case == "wrong key" else key,
              session="x" if case == "bad session" else None)
    said = mic.connect()
    assert said["type"] == "error" and words in said["message"]
    wait(lambda: mic.closed is not None, 10, "close")
    assert mic.closed[0] == close


def test_without_a_recogniser_the_microphone_is_refused_and_typing_works(engine) -> None:
    with serving(engine, Speech.off("Speech is off (--no-speech).")) as app, \
            app.client() as client:
        code, key = open_class(client, "zh")
        mic = Mic(ws(app), code, key)
        said = mic.connect()
        assert said["type"] == "error" and "--no-speech" in said["message"]
        wait(lambda: mic.closed is not None, 10, "close")
        assert mic.closed[0] == 4503
        posted = client.post(f"/class/api/rooms/{code}/sentences", json={"text": "早上好。"},
                             headers={"X-Class-Key": key})
        assert posted.status_code == 200


def test_the_teacher_fixes_a_sentence_and_every_phone_gets_the_fix(served: RunningApp) -> None:
    with served.client() as client:
        code, key = open_class(client, "zh")
        reader = Reader(served.url, code, student=join(client, code, "en"), lang="en")
        sid = client.post(f"/class/api/rooms/{code}/sentences", json={"text": "早上好。"},
                          headers={"X-Class-Key": key}).json()["sentences"][0]
        wait(lambda: reader.translations("en").get(sid), what="translation")
        wrong = client.post(f"/class/api/rooms/{code}/sentences/{sid}/correct",
                            json={"text": "谢谢你的帮助。"}, headers={"X-Class-Key": "nope"})
        assert wrong.status_code == 401
        fixed = client.post(f"/class/api/rooms/{code}/sentences/{sid}/correct",
                            json={"text": "谢谢你的帮助。"}, headers={"X-Class-Key": key})
        assert fixed.status_code == 200 and fixed.json() == {"languages": ["en"]}
        wait(lambda: len(logged(reader, "correction")) == 2, what="two corrections")
        source, translation = logged(reader, "correction")
        assert source["source"] and source["text"] == "谢谢你的帮助。" and source["sid"] == sid
        assert translation["lang"] == "en" and translation["text"] == "Thank you for your help."
        transcript = client.get(f"/class/api/rooms/{code}/transcript",
                                headers={"X-Class-Key": key}).text
        assert "谢谢你的帮助。" in transcript and "Thank you for your help." in transcript
        assert "早上好。" not in transcript
    close_all()


def test_captions_page_and_its_files(served: RunningApp) -> None:
    with served.client() as client:
        code, _ = open_class(client, "zh")
        page = client.get(f"/class/{code}/captions?lang=en,fr")
        assert page.status_code == 200 and 'id="captions"' in page.text
        assert f'data-code="{code}"' in page.text
        for name, kind in [("captions.js", "javascript"), ("captions.css", "css"),
                           ("speech.js", "javascript"), ("pcm-worklet.js", "javascript"),
                           ("live-words.js", "javascript")]:
            got = client.get(f"/class/static/live/{name}")
            assert got.status_code == 200 and kind in got.headers["content-type"], name
        assert "讲话" in client.get("/class/static/live/live-words.js").text
        assert client.get("/class/static/live/nothing.js").status_code == 404
        teacher = client.get(f"/class/teach/{code}").text
        assert "/class/static/live/speech.js" in teacher
