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
the work, and :mod:`~hunyuan_webui.web.classroom.stream` writes the event streams. The Gatekeeper
treats all of it like the page (:func:`hunyuan_webui.web.guards.access.route_kind`); with
``--auth``, only a signed-in user (or an API key) opens a class, while students join without one.
Every route that takes a code counts a wrong one against the caller's address
(:mod:`~hunyuan_webui.service.rooms.gate`).

The teacher's routes (the secret in ``X-Class-Key``, or ``?key=``), all under
``/class/api/rooms/{code}``: ``POST sentences`` (``{"sentences": [...], "delayed": [...]}``),
``POST questions/{qid}/show``, ``GET stats``, ``GET transcript?format=txt|csv|md|docx``,
``POST end``, ``POST lock``, ``POST unlock``, ``POST pause``, ``POST resume``, ``POST clear``
(each answers the room's state ``{"code", "locked", "paused", "ended"}``), ``GET students`` and
``DELETE students/{student}``. Refusals are ``{"error": {"code", "message"}}`` with the codes of
:mod:`hunyuan_webui.service.rooms.errors`.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from pydantic import BaseModel, Field

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, ModelLoadError
from hunyuan_webui.service.rooms import Rooms, edits, normalize_code
from hunyuan_webui.service.rooms import transcript as room_transcript
from hunyuan_webui.service.rooms.errors import SignInRequiredError
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.urls import lan_ip
from hunyuan_webui.web import fonts
from hunyuan_webui.web.classroom import text as page_text
from hunyuan_webui.web.classroom.edit_routes import Again, Correction
from hunyuan_webui.web.classroom.stream import events
from hunyuan_webui.web.guards.access import ui_auth

PREFIX = "/class"
STATIC = Path(__file__).resolve().parent / "static"
JS, CSS = "text/javascript; charset=utf-8", "text/css; charset=utf-8"
ASSETS = {"class.css": CSS, "class-common.js": JS, "class-start.js": JS,
          "class-student.js": JS, "class-teacher.js": JS}
VIEWS = ("start", "student", "teacher")  # each view's script is class-<view>.js
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


def shell(view: str, code: str = "", demo: bool = False) -> str:
    """The page every view shares: class-common.js and the view's own script build it, in the
    reader's language (static/i18n/, the words' ``class`` tables); ``demo``: the demo model runs (every page says so)."""
    return ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<title>Hunyuan-MT</title>"
            f"<link rel=\"stylesheet\" href=\"{PREFIX}/static/class.css\">"
            f"<link rel=\"stylesheet\" href=\"{PREFIX}/static/live/speech.css\"></head>"
            f"<body><main id=\"app\" data-view=\"{view}\" data-demo=\"{int(demo)}\" "
            f"data-code=\"{html.escape(code)}\" data-prefix=\"{PREFIX}\"></main>"
            f"<script src=\"{PREFIX}/static/class-common.js\" defer></script>"
            f"<script src=\"{PREFIX}/static/class-{view}.js\" defer></script>"
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


def _address(request: Request) -> str:
    """The caller's address: the socket's peer (a proxy's word for it only with
    --forwarded-allow-ips)."""
    return request.client.host if request.client is not None else "unknown"


def _owner(request: Request, login_required: bool) -> str:
    """Whose class a new one is: the signed-in user, else the API key, else the address. With
    --auth, someone signed in (or a key) is required."""
    login = request.scope.get("state", {}).get("login")
    caller = getattr(request.state, "caller", None)
    if login:
        return f"user:{login}"
    if caller is not None and getattr(caller, "kind", "") == "key":
        return f"key:{caller.key_id}"
    if login_required:
        raise SignInRequiredError("Sign in on this translator's page first: only a signed-in "
                                  "teacher can start a class here.")
    return f"addr:{_address(request)}"


def _rooms(request: Request) -> Rooms:
    return request.app.state.rooms


def _settings(request: Request) -> Settings:
    return request.app.state.settings


def _demo(request: Request) -> bool:
    """Whether the demo model runs (every page says so)."""
    translator = request.app.state.rooms.translator
    return bool(getattr(getattr(translator, "spec", None), "demo", False))


# Handlers are module-level functions: the rooms and the settings come from ``app.state``.
RoomsDep = Annotated[Rooms, Depends(_rooms)]
SettingsDep = Annotated[Settings, Depends(_settings)]
DemoDep = Annotated[bool, Depends(_demo)]
API = f"{PREFIX}/api"
ROOM = f"{API}/rooms/{{code}}"
router = APIRouter(tags=["class"], include_in_schema=False)


def mount(app: FastAPI, rooms: Rooms, settings: Settings, speech: Speech | None = None) -> None:
    """Serve a class's pages and routes on ``app`` from ``rooms`` (``speech``: the recogniser
    the teacher speaks to, else ``app.state.speech``'s)."""
    app.state.rooms, app.state.settings = rooms, settings
    if speech is not None or not hasattr(app.state, "speech"):
        app.state.speech = speech
    app.include_router(router)


# -- the pages -------------------------------------------------------------------------------------
@router.get(PREFIX)
def start(demo: DemoDep) -> HTMLResponse:
    return HTMLResponse(shell("start", demo=demo))


@router.get(f"{PREFIX}/static/i18n/{{name}}")
def words(name: str) -> Response:
    """A page's words in one language (``fr.json``): the table a translator corrects."""
    code = name.removesuffix(".json")
    if not name.endswith(".json") or code not in page_text.CODES:
        return PlainTextResponse("Not found", status_code=404)
    return Response(page_text.raw(code), media_type="application/json; charset=utf-8",
                    headers={"Cache-Control": "public, max-age=300"})


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
def teacher(code: str, demo: DemoDep) -> HTMLResponse:
    return HTMLResponse(shell("teacher", normalize_code(code), demo))


@router.get(f"{PREFIX}/{{code}}")
def student(code: str, demo: DemoDep) -> HTMLResponse:
    return HTMLResponse(shell("student", normalize_code(code), demo))


# -- what anyone in the room may do ----------------------------------------------------------------
@router.get(f"{API}/languages")
def language_list() -> list[dict[str, Any]]:
    return [{"code": lang.code, "english": lang.english, "chinese": lang.chinese,
             "autonym": lang.autonym, "rtl": lang.rtl, "tag": page_text.tag(lang.code)}
            for lang in languages.LANGUAGES]


@router.post(f"{API}/rooms")
def create(body: NewRoom, request: Request, rooms: RoomsDep,
           settings: SettingsDep) -> dict[str, Any]:
    room = rooms.create(body.lang, body.title, _owner(request, ui_auth(settings) is not None))
    code, base = room["code"], join_base(request, settings)
    return {**room, "lang": languages.normalize(body.lang),
            "join_url": f"{base}{PREFIX}/{code}",
            "teacher_url": f"{str(request.base_url).rstrip('/')}{PREFIX}/teach/{code}"
                           f"#key={room['key']}"}


@router.get(ROOM)
def info(code: str, request: Request, rooms: RoomsDep, settings: SettingsDep) -> dict[str, Any]:
    room = rooms.public(code, _address(request))
    return {**room, "join_url": f"{join_base(request, settings)}{PREFIX}/{room['code']}"}


@router.get(f"{ROOM}/qr.svg")
def qr(code: str, request: Request, rooms: RoomsDep, settings: SettingsDep) -> Response:
    room = rooms.public(code, _address(request))
    svg = qr_svg(f"{join_base(request, settings)}{PREFIX}/{room['code']}")
    return Response(svg, media_type="image/svg+xml",
                    headers={"Cache-Control": "private, max-age=3600"})


@router.post(f"{ROOM}/join")
def join(code: str, body: Join, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    student = rooms.join(code, body.lang, body.name, body.student, _address(request))
    return {"student": student, "code": normalize_code(code),
            "lang": languages.normalize(body.lang)}


@router.get(f"{ROOM}/events")
async def stream(code: str, request: Request, rooms: RoomsDep) -> StreamingResponse:
    return StreamingResponse(
        await events(rooms, request, normalize_code(code), _key(request), _address(request)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


@router.post(f"{ROOM}/questions")
def ask(code: str, body: Question, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    event = rooms.ask(code, body.student, body.text, _address(request))
    return {"qid": event["qid"], "text": event["text"]}


# -- what only the teacher's secret may do ---------------------------------------------------------
@router.post(f"{ROOM}/sentences")
def post(code: str, body: Post, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.send(code, _key(request), body.text, _address(request))


@router.post(f"{ROOM}/questions/{{qid}}/show")
def show(code: str, qid: int, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return {"sentences": rooms.show(code, _key(request), qid, _address(request))}


@router.get(f"{ROOM}/stats")
def stats(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    meta = rooms.teacher(code, _key(request), _address(request))
    return {"code": meta["code"], **rooms.stats(meta["code"])}


@router.get(f"{ROOM}/transcript")
def transcript(code: str, request: Request, rooms: RoomsDep, format: str = "txt") -> Response:
    meta = rooms.teacher(code, _key(request), _address(request))
    if format not in room_transcript.FORMATS:
        raise InputError(f"Transcript formats: {', '.join(room_transcript.FORMATS)}.")
    body = room_transcript.render(rooms.history(meta["code"]), format, meta["lang"],
                                  meta["title"])
    name = f"class-{meta['code']}.{format}"
    return Response(body, media_type=room_transcript.FORMATS[format],
                    headers={"Content-Disposition": f"attachment; filename={name}"})


# The controls: each answers the room's state.
@router.post(f"{ROOM}/end", name="class_end")
def end(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.end(code, _key(request), _address(request))


@router.post(f"{ROOM}/clear", name="class_clear")
def clear(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.clear(code, _key(request), _address(request))


@router.post(f"{ROOM}/lock", name="class_lock")
def lock(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.lock(code, _key(request), True, _address(request))


@router.post(f"{ROOM}/unlock", name="class_unlock")
def unlock(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.lock(code, _key(request), False, _address(request))


@router.post(f"{ROOM}/pause", name="class_pause")
def pause(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.pause(code, _key(request), True, _address(request))


@router.post(f"{ROOM}/resume", name="class_resume")
def resume(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.pause(code, _key(request), False, _address(request))


@router.get(f"{ROOM}/students")
def students(code: str, request: Request, rooms: RoomsDep) -> list[dict[str, Any]]:
    return rooms.roster(code, _key(request), _address(request))


@router.delete(f"{ROOM}/students/{{student}}")
def remove(code: str, student: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return rooms.remove(code, _key(request), student, _address(request))


# The teacher's mends (the work is service/rooms/edits.py; phones see ``correction`` events).
@router.post(f"{ROOM}/sentences/{{sid}}/correct")
def correct(code: str, sid: int, body: Correction, request: Request,
            rooms: RoomsDep) -> dict[str, Any]:
    return {"languages": edits.correct(rooms, code, _key(request), sid, body.text, body.lang,
                                       _address(request))}


@router.post(f"{ROOM}/sentences/{{sid}}/resend")
def resend(code: str, sid: int, body: Again, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    return {"languages": edits.resend(rooms, code, _key(request), sid, body.lang,
                                      _address(request))}


# -- the teacher speaks ----------------------------------------------------------------------------
@router.post(f"{ROOM}/speech")
async def speak(code: str, request: Request, rooms: RoomsDep) -> dict[str, Any]:
    """The body is a sound file (WAV at any rate and channel count, OGG, WebM, MP3...); the
    teacher's key in ``X-Class-Key``. Recognised in the class's language, its sentences are
    posted exactly as typed ones are; answers ``{"text", "sentences"}``."""
    key = _key(request)
    meta = await anyio.to_thread.run_sync(rooms.teacher, code, key)  # before any sound
    speech: Speech | None = getattr(request.app.state, "speech", None)
    if speech is None:
        raise ModelLoadError("Speech recognition is not available on this server.")
    data = await request.body()
    transcript = await anyio.to_thread.run_sync(speech.transcribe, data, meta["lang"])
    sentences: list[int] = []
    if transcript.text:
        sentences = await anyio.to_thread.run_sync(rooms.post, code, key, transcript.text)
    return {"text": transcript.text, "sentences": sentences}
