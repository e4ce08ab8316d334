"""The remote recogniser (--asr-endpoint) against transcription servers that misbehave on purpose:
one that invents text over silence, one without verbose_json, one that fails, one that wants a
key. A real HTTP server on a loopback port; no model."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
import uvicorn
from fastapi import FastAPI, Form, Request, UploadFile
from fastapi.responses import JSONResponse

from hunyuan_webui.errors import AuthError, EngineError
from hunyuan_webui.speech.audio import RATE
from hunyuan_webui.speech.remote import RemoteRecognizer
from hunyuan_webui.urls import free_port

SOUND = (0.1 * np.sin(np.arange(RATE) / RATE * 2 * np.pi * 200)).astype(np.float32)


def misbehaving() -> FastAPI:
    app = FastAPI()
    app.state.formats = []

    @app.post("/{mode}/v1/audio/transcriptions")
    async def transcribe(mode: str, request: Request, file: UploadFile,
                         response_format: str = Form("json"),
                         language: str | None = Form(None)) -> JSONResponse:
        app.state.formats.append((mode, response_format, language, len(await file.read())))
        if mode == "fails":
            return JSONResponse({"error": "boom"}, status_code=500)
        if mode == "keyed" and request.headers.get("authorization") != "Bearer right":
            return JSONResponse({"error": "bad key"}, status_code=401)
        if mode == "plain" and response_format != "json":
            return JSONResponse({"error": "only json"}, status_code=400)
        if mode == "inventor":
            return JSONResponse({"text": "Thank you for watching.", "language": "en", "segments": [
                {"text": "Thank you for watching.", "start": 0.0, "end": 1.0,
                 "no_speech_prob": 0.95, "avg_logprob": -0.3}]})
        return JSONResponse({"text": "早上好。", "language": "zh"})

    return app


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, FastAPI]]:
    app = misbehaving()
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not running.started:
        assert time.monotonic() < deadline, "the fake server did not start"
        time.sleep(0.05)
    yield f"127.0.0.1:{port}", app
    running.should_exit = True
    thread.join(10)


def test_invented_text_over_silence_is_gated(server) -> None:
    host, _ = server
    recognition = RemoteRecognizer(f"http://{host}/inventor/v1").recognize(SOUND, "en")
    assert recognition.text == "" and recognition.dropped == 1


def test_a_server_without_verbose_json_is_asked_for_json(server) -> None:
    host, app = server
    remote = RemoteRecognizer(f"http://{host}/plain/v1")
    assert remote.recognize(SOUND, "zh").text == "早上好。"
    assert remote.recognize(SOUND, "zh").text == "早上好。"
    asked = [(fmt, lang) for mode, fmt, lang, _ in app.state.formats if mode == "plain"]
    assert asked == [("verbose_json", "zh"), ("json", "zh"), ("json", "zh")]
    assert all(size > RATE * 2 for mode, _, _, size in app.state.formats if mode == "plain")


def test_a_failing_server_is_named_without_its_password(server) -> None:
    host, _ = server
    remote = RemoteRecognizer(f"http://user:secret@{host}/fails/v1", retries=1)
    with pytest.raises(EngineError) as caught:
        remote.recognize(SOUND, "en")
    assert "did not answer" in caught.value.user_message and "500" in caught.value.user_message
    assert "secret" not in caught.value.user_message and "***@" in caught.value.user_message


def test_a_key_is_sent_and_a_wrong_one_said(server) -> None:
    host, _ = server
    assert RemoteRecognizer(f"http://{host}/keyed/v1", api_key="right").recognize(
        SOUND, "zh").text == "早上好。"
    with pytest.raises(AuthError, match="--asr-api-key"):
        RemoteRecognizer(f"http://{host}/keyed/v1", api_key="wrong").recognize(SOUND, "zh")
