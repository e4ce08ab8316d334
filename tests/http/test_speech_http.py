"""Speech through the app's doors, with the demo recogniser and the demo translation model:
the class's speech route posts what the teacher said like typed sentences (every student's stream
gets its translation), OpenAI's transcription route answers the openai client in every format,
another app uses this one as its --asr-endpoint, and bad audio gets 415/413 with words."""

from __future__ import annotations

import io
import time
import wave
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import numpy as np
import openai
import pytest
from apphelpers import RunningApp, app_process, assert_json_error, wait_until
from roomhelpers import Reader, close_all

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.demo.asr import ensure_demo_asr
from hunyuan_webui.demo.voices import speak
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.speech.audio import RATE, wav_bytes
from hunyuan_webui.speech_choice import build_speech
from hunyuan_webui.urls import free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def speech() -> Iterator[Speech]:
    settings = Settings(asr_model=str(ensure_demo_asr()), demo=True)
    loaded = build_speech(settings)
    assert loaded.wait_ready(120).state == "ready"
    yield loaded
    loaded.close()


@contextmanager
def serving(engine, speech: Speech | None, **overrides) -> Iterator[RunningApp]:
    settings = Settings(model=engine.model_id, port=free_port(), log_level="warning",
                        guards=False, max_new_tokens=64, **overrides)
    translator = Translator(engine, engine.spec, settings, cache=PhraseCache(size=256))
    app = create_app(settings, translator, speech=speech)
    server = Server(app, settings).start()
    try:
        yield RunningApp(server.url, settings, translator, server)
    finally:
        close_all()
        server.stop()


@pytest.fixture(scope="module")
def served(engine, speech: Speech) -> Iterator[RunningApp]:
    with serving(engine, speech, max_audio_bytes=2_000_000) as app:
        yield app


def open_class(client: httpx.Client, lang: str) -> tuple[str, str]:
    room = client.post("/class/api/rooms", json={"lang": lang}).json()
    return room["code"], room["key"]


@pytest.mark.parametrize(("lang", "text", "translations"), [
    ("zh", "早上好。", {"en": "Good morning.", "fr": "Bonjour.", "ja": "おはようございます。"}),
    ("zh", "请打开书。", {"en": "Please open your books.", "ru": "Пожалуйста, откройте книги."}),
    ("zh", "谢谢你的帮助。", {"en": "Thank you for your help."}),
    ("en", "Good morning.", {"zh": "早上好。", "fr": "Bonjour.", "de": "Guten Morgen."}),
])
def test_the_teacher_speaks_and_every_student_reads(served: RunningApp, lang: str, text: str,
                                                     translations: dict[str, str]) -> None:
    with served.client() as client:
        code, key = open_class(client, lang)
        readers = {}
        for target in translations:
            student = client.post(f"/class/api/rooms/{code}/join", json={"lang": target}).json()
            readers[target] = Reader(served.url, code, student=student["student"], lang=target)
        answer = client.post(f"/class/api/rooms/{code}/speech", content=speak(text, lang),
                             headers={"X-Class-Key": key, "Content-Type": "audio/wav"})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["text"] == text and len(body["sentences"]) == 1
        sid = body["sentences"][0]
        for target, expected in translations.items():
            reader = readers[target]
            got = wait_until(lambda r=reader, t=target: r.translations(t).get(sid), timeout=120)
            assert got == expected, (target, reader.events)
            sentence = [e for e in reader.events if e.get("type") == "sentence"]
            assert sentence[-1]["text"] == text and sentence[-1]["kind"] == "teacher"
        # The same transcript as typed sentences.
        transcript = client.get(f"/class/api/rooms/{code}/transcript",
                                headers={"X-Class-Key": key}).text
        assert text in transcript


def test_speech_route_refuses_with_words(served: RunningApp) -> None:
    with served.client() as client:
        code, key = open_class(client, "zh")
        url = f"/class/api/rooms/{code}/speech"
        wav = speak("早上好。", "zh")
        assert client.post(url, content=wav).status_code == 401
        assert client.post(url, content=wav, headers={"X-Class-Key": "wrong"}).status_code == 401
        bad = client.post(url, content=b"this is not sound" * 100, headers={"X-Class-Key": key})
        assert "sound file" in assert_json_error(bad, 415, "unsupported_audio")
        big = client.post(url, content=b"RIFF" + b"\x00" * 2_100_000, headers={"X-Class-Key": key})
        assert "audio file is larger" in assert_json_error(big, 413)
        quiet = client.post(url, content=wav_bytes(np.zeros(5 * RATE, dtype=np.float32)),
                            headers={"X-Class-Key": key})
        assert quiet.json() == {"text": "", "sentences": []}
        history = client.get(f"/class/api/rooms/{code}/transcript", headers={"X-Class-Key": key})
        assert "早上好" not in history.text


def test_openai_client_transcribes(served: RunningApp) -> None:
    client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)
    wav = speak("Good morning.", "en")
    result = client.audio.transcriptions.create(model="whisper-1", file=("a.wav", wav),
                                                language="en")
    assert result.text == "Good morning."
    srt = client.audio.transcriptions.create(model="whisper-1", file=("a.wav", wav),
                                             language="en", response_format="srt")
    lines = srt.strip().splitlines()
    assert lines[0] == "1" and " --> " in lines[1] and lines[2] == "Good morning."
    assert lines[1].startswith("00:00:0") and "," in lines[1]
    vtt = client.audio.transcriptions.create(model="whisper-1", file=("a.wav", wav),
                                             language="en", response_format="vtt")
    assert vtt.startswith("WEBVTT") and "Good morning." in vtt
    text = client.audio.transcriptions.create(model="whisper-1", file=("a.wav", wav),
                                              language="en", response_format="text")
    assert text.strip() == "Good morning."
    verbose = client.audio.transcriptions.create(
        model="whisper-1", file=("a.ogg", _ogg(speak("早上好。", "zh"))),
        response_format="verbose_json")
    assert verbose.text == "早上好。" and verbose.language == "chinese"
    assert verbose.segments and verbose.segments[0].no_speech_prob < 0.5
    assert 0.5 < verbose.duration < 5


def test_posted_sound_stays_in_memory(served: RunningApp) -> None:
    """Starlette spools a form's file over 1 MB to a temporary file: not sound, up to its limit."""
    from starlette.formparsers import MultiPartParser

    assert MultiPartParser.spool_max_size > served.settings.max_audio_bytes


@pytest.mark.parametrize("kind", ["silence", "white noise"])
def test_a_minute_without_speech_posts_nothing(served: RunningApp, kind: str) -> None:
    rng = np.random.default_rng(7)
    samples = np.zeros(60 * RATE, dtype=np.float32) if kind == "silence" else \
        rng.normal(0, 0.1, 60 * RATE).astype(np.float32)
    with served.client() as client:
        code, key = open_class(client, "zh")
        answer = client.post(f"/class/api/rooms/{code}/speech", content=wav_bytes(samples),
                             headers={"X-Class-Key": key})
        assert answer.json() == {"text": "", "sentences": []}
        assert client.get(f"/class/api/rooms/{code}/stats",
                          headers={"X-Class-Key": key}).json()["sentences"] == 0


def test_openai_errors_in_openai_shape(served: RunningApp) -> None:
    client = openai.OpenAI(base_url=f"{served.url}/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.APIStatusError) as caught:
        client.audio.transcriptions.create(model="whisper-1", file=("a.wav", b"nonsense" * 50))
    assert caught.value.status_code == 415
    assert "sound file" in caught.value.body["message"]
    with pytest.raises(openai.BadRequestError):
        client.audio.transcriptions.create(model="whisper-1", file=("a.wav", speak("Hello", "en")),
                                           response_format="mp3")
    with pytest.raises(openai.BadRequestError, match="Unknown language code"):
        client.audio.transcriptions.create(model="whisper-1", file=("a.wav", speak("Hello", "en")),
                                           language="xx")
    # A language Whisper knows and the translator does not (Swahili) is the recogniser's to try.
    assert isinstance(client.audio.transcriptions.create(
        model="whisper-1", file=("a.wav", speak("Hello", "en")), language="sw").text, str)


def test_ready_and_health_name_the_recogniser(served: RunningApp) -> None:
    with served.client() as client:
        ready = client.get("/ready").json()
        assert ready["speech"]["state"] == "ready"
        assert ready["speech"]["model"] == "demo-asr" and ready["speech"]["demo"] is True
        assert client.get("/health").json()["speech"]["state"] == "ready"


def test_remote_recogniser_through_a_second_app(served: RunningApp, engine) -> None:
    """--asr-endpoint: this app's own transcription route stands in for a vLLM server."""
    settings = Settings(asr_endpoint=f"{served.url}/v1", warmup=True)
    remote = build_speech(settings)
    assert remote.wait_ready(60).state == "ready", remote.status()
    assert remote.status().backend == "remote"
    with serving(engine, remote) as front, front.client() as client:
        code, key = open_class(client, "zh")
        answer = client.post(f"/class/api/rooms/{code}/speech", content=speak("请打开书。", "zh"),
                             headers={"X-Class-Key": key})
        assert answer.json()["text"] == "请打开书。"
        assert client.get("/ready").json()["speech"]["backend"] == "remote"
    remote.close()


def test_no_speech_is_said_and_typing_still_works(engine) -> None:
    with serving(engine, Speech.off("Speech is turned off (--no-speech).")) as app, \
            app.client() as client:
        assert client.get("/ready").status_code == 200
        assert client.get("/ready").json()["speech"] == {
            "state": "off", "model": "", "backend": "", "device": "", "compute_type": "",
            "demo": False, "reason": "Speech is turned off (--no-speech)."}
        code, key = open_class(client, "zh")
        refused = client.post(f"/class/api/rooms/{code}/speech", content=speak("早上好。", "zh"),
                              headers={"X-Class-Key": key})
        assert "--no-speech" in assert_json_error(refused, 503)
        typed = client.post(f"/class/api/rooms/{code}/sentences", json={"text": "早上好。"},
                            headers={"X-Class-Key": key})
        assert typed.status_code == 200


def test_app_py_demo_serves_speech() -> None:
    with app_process() as proc, httpx.Client(base_url=proc.url, trust_env=False,
                                             timeout=60) as client:
        assert client.get("/ready").json()["speech"]["state"] == "ready"
        code, key = open_class(client, "zh")
        answer = client.post(f"/class/api/rooms/{code}/speech", content=speak("早上好。", "zh"),
                             headers={"X-Class-Key": key})
        assert answer.json()["text"] == "早上好。"


def _ogg(wav: bytes) -> bytes:
    """The same speech as OGG/Opus, as a browser's MediaRecorder would send it."""
    import av

    with wave.open(io.BytesIO(wav)) as w:
        rate, pcm = w.getframerate(), np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
    buffer = io.BytesIO()
    with av.open(buffer, "w", format="ogg") as out:
        stream = out.add_stream("libopus", rate=48000)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray(pcm[None], format="s16", layout="mono")
        frame.sample_rate = rate
        resampler = av.AudioResampler(format="s16", layout="mono", rate=48000)
        for resampled in resampler.resample(frame):
            for packet in stream.encode(resampled):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buffer.getvalue()


def test_time_is_spent_only_once_per_file(served: RunningApp) -> None:
    """A file is recognised once: the route answers within a bound of one recognition."""
    with served.client() as client:
        code, key = open_class(client, "zh")
        started = time.monotonic()
        client.post(f"/class/api/rooms/{code}/speech", content=speak("早上好。", "zh"),
                    headers={"X-Class-Key": key})
        assert time.monotonic() - started < 60


def test_the_page_status_line_names_the_recogniser(translator, speech: Speech) -> None:
    """The page says which recogniser is loaded, or that there is none, in its language."""
    from browserhelpers import Visitor

    from hunyuan_webui.web.page.ui import TranslatorUI

    en = TranslatorUI(translator, speech=speech).status(Visitor("en-US"))[0]
    assert en.endswith("🎤 speech: demo recogniser (CPU, int8)"), en
    zh = TranslatorUI(translator, speech=speech).status(Visitor("zh-CN,zh;q=0.9"))[0]
    assert zh.endswith("🎤 语音识别：演示模型（处理器，int8）"), zh
    off = TranslatorUI(translator, speech=Speech.off("--no-speech")).status(Visitor("en-US"))[0]
    assert off.endswith("🎤 speech: off"), off
