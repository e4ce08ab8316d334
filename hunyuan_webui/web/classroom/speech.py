"""A class spoken, as routes: the teacher's microphone, the projector's captions, dictation.

- ``WS /class/api/rooms/{code}/speech?key=...&session=...``: the teacher's microphone. The page
  sends binary frames, each a little-endian 32-bit frame number then 16 kHz mono 16-bit PCM
  (about 100 ms); text frames are JSON commands (``{"type": "stop"}``: the microphone is off).
  The server answers JSON: ``ready`` ``{session, next, lang}`` (``next``: the first frame it
  still needs; a reconnecting page resends from there), ``ack`` ``{next}``, ``draft``, ``final``,
  ``error``, ``stopped`` (:mod:`hunyuan_webui.service.speech.session`). A refusal is a close
  code 4000 + the HTTP status it would have been (4401 wrong key, 4404 no such class, 4409
  another tab speaks, 4503 no recogniser or the recogniser cannot keep pace) after an ``error``
  message with words the page shows.
- ``WS /class/api/dictate?lang=..``: the same frames from the translator's page, no class: the
  text comes back (``draft``, ``final``) to fill its text box. Under the page's access policy
  (the Gatekeeper treats ``/class`` as the page; with ``--auth``, a signed-in visitor).
- The teacher's fix of a sentence heard wrong is the rooms' own ``POST
  /class/api/rooms/{code}/sentences/{sid}/correct`` (``edit_routes.py``): speech.js calls it.
- ``GET /class/{code}/captions?lang=en,fr``: captions for a projector or OBS (read-only, no key).
- ``GET /class/static/live/{name}``: this module's scripts and styles.

Routes are module-level functions reading the services from ``app.state``; sound stays in
memory (frames are fed to the recogniser and dropped).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import queue
import re
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
from fastapi import APIRouter, Request, WebSocket
from fastapi.responses import HTMLResponse, PlainTextResponse, Response
from starlette.websockets import WebSocketDisconnect, WebSocketState

from hunyuan_webui.errors import AuthError, InputError, TranslatorError
from hunyuan_webui.service.rooms import normalize_code
from hunyuan_webui.service.speech.session import PUT_DEADLINE_S, Behind
from hunyuan_webui.speech import Draft
from hunyuan_webui.web import speech_words

PREFIX = "/class"
API = f"{PREFIX}/api"
STATIC = Path(__file__).resolve().parent / "static" / "live"
JS, CSS = "text/javascript; charset=utf-8", "text/css; charset=utf-8"
ASSETS = {"speech.js": JS, "speech.css": CSS, "capture.js": JS, "pcm-worklet.js": JS,
          "captions.js": JS, "captions.css": CSS, "live-words.js": JS}
SESSION_RE = re.compile(r"[A-Za-z0-9_-]{8,64}")
MAX_FRAME_SAMPLES = 16_000  # one second in one frame at most
ACK_EVERY = 5  # frames
DICTATION_S = 300.0  # one dictation's sound at most (then the page starts another)

router = APIRouter(tags=["class"], include_in_schema=False)


def _key(conn: Request | WebSocket) -> str | None:
    return conn.headers.get("x-class-key") or conn.query_params.get("key")


# -- the teacher's microphone ----------------------------------------------------------------------
@router.websocket(f"{API}/rooms/{{code}}/speech")
async def speak(websocket: WebSocket, code: str) -> None:
    desk = websocket.app.state.room_speech
    session_id = websocket.query_params.get("session", "")
    await websocket.accept()
    if not SESSION_RE.fullmatch(session_id):
        await _refuse(websocket, InputError("A microphone session id (8-64 letters, digits, "
                                            "'-' or '_') is required."))
        return
    try:
        session = await anyio.to_thread.run_sync(desk.open, code, _key(websocket), session_id)
    except TranslatorError as exc:
        await _refuse(websocket, exc)
        return
    outbox, say = _outbox()
    session.attach(say)
    sender = asyncio.create_task(_send(websocket, outbox))
    try:
        say({"type": "ready", "session": session.id, "next": session.next,
             "lang": session.lang})
        await _receive(websocket, session, say)
    finally:
        session.detach(say)
        sender.cancel()


async def _receive(websocket: WebSocket, session: Any, say: Any) -> None:
    received = 0
    while True:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return
        if message.get("bytes") is not None:
            data = message["bytes"]
            seq, pcm = _frame(data)
            if seq is None:
                await _refuse(websocket, InputError("A frame is a 4-byte number then 16-bit "
                                                    "PCM, at most one second of it."))
                return
            if not await _offer(session, seq, pcm):
                await _refuse(websocket, Behind("The speech recogniser cannot keep pace on this "
                                                "machine; the class can still be typed."))
                return
            received += 1
            if received % ACK_EVERY == 0:
                say({"type": "ack", "next": session.next})
        elif message.get("text"):
            command = _command(message["text"])
            if command == "stop":
                say({"type": "ack", "next": session.next})
                session.stop()


def _frame(data: bytes) -> tuple[int | None, bytes]:
    if len(data) < 4 or (len(data) - 4) % 2 or len(data) - 4 > 2 * MAX_FRAME_SAMPLES:
        return None, b""
    return int.from_bytes(data[:4], "little"), bytes(data[4:])


def _command(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return ""
    return str(value.get("type", "")) if isinstance(value, dict) else ""


async def _offer(session: Any, seq: int, pcm: bytes) -> bool:
    """Queue a frame; wait (the page's socket waits too) while the recogniser is behind."""
    deadline = time.monotonic() + PUT_DEADLINE_S
    while True:
        try:
            session.offer(seq, pcm)
            return True
        except queue.Full:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(0.05)


def _outbox() -> tuple[asyncio.Queue[dict[str, Any]], Any]:
    """Messages for the page, said from any thread; drafts are dropped if the page is slow."""
    loop = asyncio.get_running_loop()
    box: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=256)

    def put(message: dict[str, Any]) -> None:
        with contextlib.suppress(asyncio.QueueFull):
            box.put_nowait(message)

    def say(message: dict[str, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: the page is too
            loop.call_soon_threadsafe(put, message)

    return box, say


async def _send(websocket: WebSocket, box: asyncio.Queue[dict[str, Any]]) -> None:
    with contextlib.suppress(Exception):  # the page went away: the receiver sees it
        while True:
            message = await box.get()
            await websocket.send_text(json.dumps(message, ensure_ascii=False))
            if message["type"] == "stopped":
                await websocket.close(1000)
                return


async def _refuse(websocket: WebSocket, exc: TranslatorError) -> None:
    """An ``error`` the page shows, then a close code the page can tell apart."""
    with contextlib.suppress(Exception):
        if websocket.application_state == WebSocketState.CONNECTED:
            await websocket.send_text(json.dumps(
                {"type": "error", "code": exc.code, "message": exc.user_message},
                ensure_ascii=False))
            await websocket.close(4000 + exc.http_status, exc.user_message.encode()[:120]
                                  .decode("utf-8", "ignore"))


# -- dictation on the translator's page --------------------------------------------------------------
@router.websocket(f"{API}/dictate")
async def dictate(websocket: WebSocket) -> None:
    """Speech into the translator's text box: the same frames, words back, no class."""
    await websocket.accept()
    try:
        _page_visitor(websocket)
        speech = websocket.app.state.speech
        if speech is None:
            raise TranslatorError("Speech recognition is not available on this server.")
        lang = websocket.query_params.get("lang") or None
        listener = await anyio.to_thread.run_sync(speech.listener, lang)
    except TranslatorError as exc:
        await _refuse(websocket, exc)
        return
    await websocket.send_json({"type": "ready", "lang": listener.language})
    heard = 0
    with contextlib.suppress(WebSocketDisconnect):
        while heard < DICTATION_S * 16_000:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is None:
                if _command(message.get("text") or "") == "stop":
                    break
                continue
            seq, pcm = _frame(message["bytes"])
            if seq is None:
                await _refuse(websocket, InputError("A frame is a 4-byte number then 16-bit "
                                                    "PCM, at most one second of it."))
                return
            heard += len(pcm) // 2
            await _said(websocket, await anyio.to_thread.run_sync(listener.feed, pcm))
        await _said(websocket, await anyio.to_thread.run_sync(listener.finish))
        await websocket.send_json({"type": "stopped"})
        await websocket.close(1000)


async def _said(websocket: WebSocket, events: list[Any]) -> None:
    for event in events:
        await websocket.send_json({"type": "draft" if isinstance(event, Draft) else "final",
                                   "utterance": event.utterance, "text": event.text})


def _page_visitor(websocket: WebSocket) -> None:
    """The page's access policy for dictation: with --auth a signed-in visitor (or a key);
    counted like the page's requests."""
    access = getattr(websocket.app.state, "access", None)
    if access is None:
        return
    state = websocket.scope.get("state", {})
    caller, login = state.get("caller"), state.get("login")
    if access.login and not login and caller is None:
        raise AuthError("Sign in on the translator's page first.")
    access.count(access.page_caller(SimpleNamespace(
        state=SimpleNamespace(caller=caller), client=websocket.client, username=login)))


# -- captions, and this module's files ---------------------------------------------------------------
@router.get(f"{PREFIX}/{{code}}/captions")
def captions(code: str) -> HTMLResponse:
    """Big rolling captions (``?lang=en,fr``: the languages under the original; ``theme``,
    ``size``, ``bg``: see captions.js)."""
    code = html.escape(normalize_code(code))
    return HTMLResponse(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        "<title>Captions · Hunyuan-MT</title>"
        f"<link rel=\"stylesheet\" href=\"{PREFIX}/static/live/captions.css\"></head>"
        f"<body><main id=\"captions\" data-code=\"{code}\" data-prefix=\"{PREFIX}\"></main>"
        f"<script src=\"{PREFIX}/static/live/live-words.js\" defer></script>"
        f"<script src=\"{PREFIX}/static/live/captions.js\" defer></script></body></html>")


@router.get(f"{PREFIX}/static/live/{{name}}")
def asset(name: str) -> Response:
    if name not in ASSETS:
        return PlainTextResponse("Not found", status_code=404)
    body = speech_words.script() if name == "live-words.js" else \
        (STATIC / name).read_text(encoding="utf-8")
    return Response(body, media_type=ASSETS[name],
                    headers={"Cache-Control": "public, max-age=300"})
