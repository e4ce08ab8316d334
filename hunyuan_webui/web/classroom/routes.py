"""A class's routes: the start page, the teacher's and the students' pages, and their JSON/SSE.

Plain HTML, CSS and JavaScript (``static/``), not Gradio: a student's phone loads about
20 KB and then reads one event stream, which is what a crowded school Wi-Fi can carry. Pages:

- ``/class``: start a class (the teacher) or type a code (a student);
- ``/class/{code}``: a student's page (the QR code opens it);
- ``/class/teach/{code}#key=...``: the teacher's page; the secret stays in the fragment, which
  browsers never send, and the page sends it in the ``X-Class-Key`` header (or ``?key=`` where a
  browser cannot set headers: its event stream).
- ``POST /class/api/rooms/{code}/speech``: the teacher speaks (a sound file; the recogniser,
  :mod:`hunyuan_webui.speech`, writes it down and its sentences are posted like typed ones).

The JSON routes under ``/class/api`` are thin: :class:`~hunyuan_webui.service.rooms.Rooms` does
the work, and :mod:`hunyuan_webui.web.room_stream` writes the event streams. The Gatekeeper
treats all of it like the page (:func:`hunyuan_webui.web.guards.access.route_kind`).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from pydantic import BaseModel, Field

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, ModelLoadError
from hunyuan_webui.service.rooms import Rooms, normalize_code
from hunyuan_webui.service.rooms import transcript as room_transcript
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.urls import lan_ip
from hunyuan_webui.web import fonts
from hunyuan_webui.web.classroom.stream import events

PREFIX = "/class"
STATIC = Path(__file__).resolve().parent / "static"
ASSETS = {"class.js": "text/javascript; charset=utf-8", "class.css": "text/css; charset=utf-8"}
KEY_HEADER = "x-class-key"


class NewRoom(BaseModel):
    lang: str = Field("zh", max_length=20)
    title: str = Field("", max_length=200)


class Join(BaseModel):
    lang: str = Field(..., max_length=20)
    name: str = Field("", max_length=200)
    student: str | None = Field(None, max_length=64)


class Post(BaseModel):
    text: str = Field(..., max_length=100_000)


class Question(BaseModel):
    student: str = Field(..., max_length=64)
    text: str = Field(..., max_length=10_000)


def shell(view: str, code: str = "") -> str:
    """The page every view shares: class.js builds it (in the browser's language)."""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>Class · Hunyuan-MT</title>"
            f"<link rel=\"stylesheet\" href=\"{PREFIX}/static/class.css\">"
            f"<link rel=\"stylesheet\" href=\"{PREFIX}/static/live/speech.css\"></head>"
            f"<body><main id=\"app\" data-view=\"{html.escape(view)}\" "
            f"data-code=\"{html.escape(code)}\" data-prefix=\"{PREFIX}\"></main>"
            f"<script src=\"{PREFIX}/static/class.js\" defer></script>"
            + "".join(f"<script src=\"{PREFIX}/static/live/{name}\" defer></script>"
                      for name in ("live-words.js", "capture.js", "speech.js"))  # speech.py
            + "</body></html>")


def join_base(request: Request, settings: Settings) -> str:
    """Where students reach this server: its LAN address when it listens on every interface
    (the teacher's own browser may be on 127.0.0.1), else the address the teacher used."""
    base = str(request.base_url).rstrip("/")
    if settings.host in ("0.0.0.0", "::") and (ip := lan_ip()):
        base = f"{request.url.scheme}://{ip}:{settings.port}{settings.root_path}"
    return base


def qr_svg(url: str) -> str:
    """A QR code as SVG squares (no image library needed): big and sharp on a projector."""
    import qrcode

    code = qrcode.QRCode(border=2, error_correction=qrcode.constants.ERROR_CORRECT_M)
    code.add_data(url)
    matrix = code.get_matrix()
    size = len(matrix)
    cells = "".join(f"M{x},{y}h1v1h-1z" for y, row in enumerate(matrix)
                    for x, dark in enumerate(row) if dark)
    return (f"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {size} {size}\" "
            f"shape-rendering=\"crispEdges\"><rect width=\"{size}\" height=\"{size}\" "
            f"fill=\"#fff\"/><path d=\"{cells}\" fill=\"#000\"/></svg>")


def _key(request: Request) -> str | None:
    return request.headers.get(KEY_HEADER) or request.query_params.get("key")


def create_router(rooms: Rooms, settings: Settings, speech: Speech | None = None) -> APIRouter:
    router = APIRouter(tags=["class"], include_in_schema=False)
    _pages(router)
    api = f"{PREFIX}/api"

    @router.get(f"{api}/languages")
    def language_list() -> list[dict[str, Any]]:
        return [{"code": lang.code, "english": lang.english, "chinese": lang.chinese,
                 "autonym": lang.autonym, "rtl": lang.rtl} for lang in languages.LANGUAGES]

    @router.post(f"{api}/rooms")
    def create(body: NewRoom, request: Request) -> dict[str, Any]:
        room = rooms.create(body.lang, body.title)
        code, base = room["code"], join_base(request, settings)
        return {**room, "lang": languages.normalize(body.lang),
                "join_url": f"{base}{PREFIX}/{code}",
                "teacher_url": f"{str(request.base_url).rstrip('/')}{PREFIX}/teach/{code}"
                               f"#key={room['key']}"}

    @router.get(f"{api}/rooms/{{code}}")
    def info(code: str, request: Request) -> dict[str, Any]:
        room = rooms.public(code)
        return {**room, "join_url": f"{join_base(request, settings)}{PREFIX}/{room['code']}"}

    @router.get(f"{api}/rooms/{{code}}/qr.svg")
    def qr(code: str, request: Request) -> Response:
        room = rooms.public(code)
        svg = qr_svg(f"{join_base(request, settings)}{PREFIX}/{room['code']}")
        return Response(svg, media_type="image/svg+xml",
                        headers={"Cache-Control": "private, max-age=3600"})

    @router.post(f"{api}/rooms/{{code}}/join")
    def join(code: str, body: Join) -> dict[str, Any]:
        student = rooms.join(code, body.lang, body.name, body.student)
        return {"student": student, "code": normalize_code(code),
                "lang": languages.normalize(body.lang)}

    @router.get(f"{api}/rooms/{{code}}/events")
    async def stream(code: str, request: Request) -> StreamingResponse:
        return StreamingResponse(
            await events(rooms, request, normalize_code(code), _key(request)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @router.post(f"{api}/rooms/{{code}}/questions")
    def ask(code: str, body: Question) -> dict[str, Any]:
        event = rooms.ask(code, body.student, body.text)
        return {"qid": event["qid"], "text": event["text"]}

    _teacher_routes(router, rooms)
    _speech_routes(router, rooms, speech)
    return router


def _speech_routes(router: APIRouter, rooms: Rooms, speech: Speech | None) -> None:
    """The teacher speaks: a sound file in, its sentences posted to the class like typed ones."""
    api = f"{PREFIX}/api"

    @router.post(f"{api}/rooms/{{code}}/speech")
    async def speak(code: str, request: Request) -> dict[str, Any]:
        """The body is a sound file (WAV at any rate and channel count, OGG, WebM, MP3...); the
        teacher's key in ``X-Class-Key``. Recognised in the class's language, its sentences are
        posted exactly as typed ones are; answers ``{"text", "sentences"}``."""
        key = _key(request)
        meta = await anyio.to_thread.run_sync(rooms.teacher, code, key)  # before any sound
        if speech is None:
            raise ModelLoadError("Speech recognition is not available on this server.")
        data = await request.body()
        transcript = await anyio.to_thread.run_sync(speech.transcribe, data, meta["lang"])
        sentences: list[int] = []
        if transcript.text:
            sentences = await anyio.to_thread.run_sync(rooms.post, code, key, transcript.text)
        return {"text": transcript.text, "sentences": sentences}


def _teacher_routes(router: APIRouter, rooms: Rooms) -> None:
    """What only the teacher's secret may do."""
    api = f"{PREFIX}/api"

    @router.post(f"{api}/rooms/{{code}}/sentences")
    def post(code: str, body: Post, request: Request) -> dict[str, Any]:
        return {"sentences": rooms.post(code, _key(request), body.text)}

    @router.post(f"{api}/rooms/{{code}}/questions/{{qid}}/show")
    def show(code: str, qid: int, request: Request) -> dict[str, Any]:
        return {"sentences": rooms.show(code, _key(request), qid)}

    @router.get(f"{api}/rooms/{{code}}/stats")
    def stats(code: str, request: Request) -> dict[str, Any]:
        meta = rooms.teacher(code, _key(request))
        return {"code": meta["code"], **rooms.stats(meta["code"])}

    @router.get(f"{api}/rooms/{{code}}/transcript")
    def transcript(code: str, request: Request, format: str = "txt") -> PlainTextResponse:
        meta = rooms.teacher(code, _key(request))
        if format not in room_transcript.FORMATS:
            raise InputError(f"Transcript formats: {', '.join(room_transcript.FORMATS)}.")
        body = room_transcript.render(rooms.history(meta["code"]), format, meta["lang"],
                                      meta["title"])
        name = f"class-{meta['code']}.{format}"
        return PlainTextResponse(body, media_type=room_transcript.FORMATS[format],
                                 headers={"Content-Disposition": f"attachment; filename={name}"})


def _pages(router: APIRouter) -> None:
    @router.get(PREFIX)
    def start() -> HTMLResponse:
        return HTMLResponse(shell("start"))

    @router.get(f"{PREFIX}/static/{{name}}")
    def asset(name: str) -> Response:
        if name not in ASSETS:
            return PlainTextResponse("Not found", status_code=404)
        body = (STATIC / name).read_text(encoding="utf-8")
        if name == "class.css":  # the fonts the page lends (Uyghur, Tibetan), as on the page
            body = fonts.face_css(fonts.installed()).replace(
                'url("fonts/', 'url("../../fonts/') + "\n" + body
        return Response(body, media_type=ASSETS[name],
                        headers={"Cache-Control": "public, max-age=300"})

    @router.get(f"{PREFIX}/teach/{{code}}")
    def teacher(code: str) -> HTMLResponse:
        return HTMLResponse(shell("teacher", normalize_code(code)))

    @router.get(f"{PREFIX}/{{code}}")
    def student(code: str) -> HTMLResponse:
        return HTMLResponse(shell("student", normalize_code(code)))
