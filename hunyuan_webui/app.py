"""Wire the layers into one server process and run it.

Settings (flags + ``HYMT_*``) -> one :class:`Translator` (the engine starts loading and warming at
once, in its own thread) -> a FastAPI app holding the JSON API, with the Gradio page mounted at
``/`` -> uvicorn. Translation requests are refused with a readable "still loading" message until
the engine is warm; ``/ready`` answers 503 until then. If loading fails, the reason is printed
and the process exits with status 1.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Sequence

import gradio as gr
import uvicorn
from fastapi import FastAPI
from starlette.applications import Starlette
from starlette.routing import Mount
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from hunyuan_webui import library, tls
from hunyuan_webui import settings as settings_mod
from hunyuan_webui.choice import choose
from hunyuan_webui.cli_help import app_parser
from hunyuan_webui.core import kinds
from hunyuan_webui.engine import EngineState, close_engines
from hunyuan_webui.engine.threads import let_idle_threads_sleep
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service import Translator
from hunyuan_webui.service.rooms import Rooms
from hunyuan_webui.service.speech import RoomSpeech
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.speech_choice import build_speech, choose_speech
from hunyuan_webui.urls import lan_ip
from hunyuan_webui.web import api, fonts
from hunyuan_webui.web.classroom import PAGE_PREFIXES
from hunyuan_webui.web.classroom import routes as rooms
from hunyuan_webui.web.classroom import speech as class_speech
from hunyuan_webui.web.guards.access import AccessControl, LoginThrottle, ui_auth
from hunyuan_webui.web.guards.compression import PageCompression
from hunyuan_webui.web.guards.gatekeeper import Gatekeeper
from hunyuan_webui.web.guards.security import LoginGuard, SecurityHeaders, slow_client_protocol
from hunyuan_webui.web.guards.upload_folder import (
    claim_upload_folder,
    release_upload_folder,
    skip_empty_cache_files,
)
from hunyuan_webui.web.guards.visitor_files import MB, VisitorFiles, track_upload_temps
from hunyuan_webui.web.page.client import CSS, HEAD, THEME
from hunyuan_webui.web.page.events import skip_absent_matplotlib
from hunyuan_webui.web.page.layout import build_ui
from hunyuan_webui.web.page.text import I18N
from hunyuan_webui.web.protocols import PROTOCOLS
from hunyuan_webui.web.responses import install_page_error_handlers

log = logging.getLogger("hunyuan_webui")


def create_app(settings: Settings, translator: Translator | None = None,
               banner: str = "", speech: Speech | None = None) -> FastAPI:
    """The whole server as an ASGI app (the engine and the speech recogniser load in the
    background); ``banner`` is markdown shown at the top of the page (what the demo model is, and
    how to get a real one; why there is no speech recogniser)."""
    # The same loading path as the library's (hunyuan_webui.Translator.load); not waited for here:
    # the page shows the loading state meanwhile.
    translator = translator or library.Translator.from_settings(settings, wait=False).service
    access = AccessControl.from_settings(settings, PROTOCOLS, PAGE_PREFIXES)
    # The app's own folder for uploads and outputs (emptied now of what a crash left), set as
    # Gradio's before the page is built: its blocks read it when they are made.
    folder = claim_upload_folder(settings.upload_dir, settings.port)
    track_upload_temps()
    skip_empty_cache_files()
    files = VisitorFiles(folder, ttl=settings.files_ttl,
                         session_quota=settings.upload_quota_mb * MB,
                         address_quota=settings.upload_address_mb * MB,
                         total_quota=settings.upload_total_mb * MB)
    # Innermost first: the Gatekeeper sees each request after the login guard and the headers.
    guards = [(Gatekeeper, {"access": access, "files": files}),
              (LoginGuard, {"throttle": LoginThrottle()}),
              (SecurityHeaders, {})]
    speech = speech or build_speech(settings)  # loads beside the translator
    app = api.create_api(translator, settings, access=access, guards=guards, speech=speech)
    rooms.mount(app, Rooms.from_settings(translator, settings), settings)  # a class: web/classroom/
    # The teacher's microphone, captions, dictation: web/classroom/speech.py.
    app.state.room_speech = RoomSpeech(app.state.rooms, speech,
                                       drafts=settings.speech_draft_translations)
    app.include_router(class_speech.router)
    demo = build_ui(translator, banner, access=access, files=files, speech=speech)
    # Gradio keeps a copy of the whole page's configuration per session (~0.2 MB here), for up to
    # 10,000 sessions, and every API call without a session is a new one: the classroom soak saw
    # the server grow by 225 MB in 2,000 requests. Bounded here (read when the page is mounted).
    demo.state_session_capacity = settings.page_sessions
    app = gr.mount_gradio_app(
        app, demo, path="/", root_path=settings.root_path or None,
        auth=ui_auth(settings), auth_message="Hunyuan-MT translator: please sign in.",
        enable_monitoring=settings.enable_monitoring, footer_links=["api", "gradio"],
        theme=THEME, css=fonts.face_css(fonts.installed()) + CSS, head=HEAD, i18n=I18N,
        # Unexpected errors reach the page as a plain apology (ui_errors), never as raw text.
        show_error=False, max_file_size=settings.max_file_bytes,
    )
    for route in app.routes:
        if isinstance(route, Mount) and isinstance(route.app, Starlette):  # the page's own app
            install_page_error_handlers(route.app)
    app.add_middleware(PageCompression)  # outermost: it sees the page as it leaves
    if proxies := settings_mod.proxy_list(settings.forwarded_allow_ips):
        # Outermost of all: every guard, limit and log sees the client the proxies name. Only
        # here: the Server below turns uvicorn's own handling (127.0.0.1 trusted) off.
        app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=proxies)
    app.state.translator = translator
    return app


class Server:
    """uvicorn in a background thread: used by ``main`` and by the tests."""

    def __init__(self, app: FastAPI, settings: Settings) -> None:
        self.tls = tls.files(settings.https, settings.ssl_certfile, settings.ssl_keyfile)
        config = uvicorn.Config(app, host=settings.host, port=settings.port,
                                root_path=settings.root_path, log_level=settings.log_level,
                                timeout_graceful_shutdown=3, access_log=False,
                                # Forwarded addresses: only --forwarded-allow-ips (create_app).
                                proxy_headers=False, forwarded_allow_ips="",
                                http=slow_client_protocol(settings.header_timeout,
                                                          settings.body_timeout,
                                                          settings.body_min_rate),
                                # The teacher's microphone (web/classroom/speech.py): frames
                                # of 100 ms are 3.2 KB; nothing bigger than a second is taken.
                                ws="websockets-sansio", ws_max_size=64 * 1024,
                                ssl_certfile=str(self.tls[0]) if self.tls else None,
                                ssl_keyfile=str(self.tls[1]) if self.tls else None)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="uvicorn", daemon=True)
        self.scheme = "https" if self.tls else "http"
        self.url = f"{self.scheme}://{_display_host(settings.host)}:{settings.port}" \
                   f"{settings.root_path}"

    def start(self, timeout: float = 30) -> Server:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise TranslatorError(f"The web server did not start on {self.url}.")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)


def check_port(host: str, port: int) -> None:
    """Fail early with advice when the port is taken (rather than uvicorn's bare errno)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise TranslatorError(
                f"Port {port} on {host} is already in use ({exc.strerror}). Another translator may "
                f"be running: stop it with `bash launch.sh stop`, or choose another --port.") from None


def check_hardware(settings: Settings) -> None:
    """Before anything loads, for every in-process engine (local and process): refuse a model
    this app cannot run (saying which engine can), and a 7B model on a machine without a GPU
    unless asked to (--device cpu)."""
    if not kinds.of(settings.engine).own_transformers:  # a server, or llama.cpp
        return
    from hunyuan_webui import models
    from hunyuan_webui.engine.loader import estimate_weight_gib, pick_device

    spec = models.resolve(settings.model)
    models.check_in_process(spec)
    if settings.device != "auto":
        return
    if spec.params_b >= 3 and pick_device("auto").type == "cpu":
        raise TranslatorError(
            f"No GPU found. {spec.id} needs a GPU (about {estimate_weight_gib(spec.params_b, 'bf16'):.0f}"
            f" GiB in bf16, {estimate_weight_gib(spec.params_b, 'int4'):.0f} GiB in int4). On this "
            f"machine try `bash launch.sh --demo`, a smaller model (--model tencent/HY-MT1.5-1.8B), "
            f"a remote server (--engine openai --endpoint URL), or --device cpu to try anyway "
            f"(about {estimate_weight_gib(spec.params_b, 'fp32'):.0f} GiB of RAM, and slow).")


def _report_speech(speech: Speech) -> None:
    """One line on the speech recogniser once it has settled: which, or why there is none."""
    status = speech.wait_ready(600)
    if status.state == "ready":
        print(f"Speech recogniser ready: {status.model} ({status.backend}, {status.device} "
              f"{status.compute_type})".replace(" , ", " ").replace(" )", ")"), flush=True)
    else:
        print(f"Speech recogniser {status.state}: {status.reason} (the class can still be "
              "typed)", flush=True)


def _report_tls(server: Server, settings: Settings) -> None:
    """Where HTTPS stands: the microphone of a phone on the LAN needs it."""
    if server.tls and not settings.ssl_certfile:
        print(f"HTTPS with this server's own certificate ({server.tls[0]}): browsers warn once; "
              f"its SHA-256 fingerprint is {tls.fingerprint(server.tls[0])}", flush=True)
    elif not server.tls and settings.host not in ("127.0.0.1", "localhost", "::1"):
        print("Plain HTTP: browsers give the microphone only to https:// pages (or localhost); "
              "start with --https for the teacher's microphone on another machine.", flush=True)


def _display_host(host: str) -> str:
    return "127.0.0.1" if host in ("0.0.0.0", "::") else host


def main(argv: Sequence[str] | None = None) -> int:
    parser = app_parser("app.py")
    argv, teach = _class_flag(list(sys.argv[1:] if argv is None else argv))
    try:
        settings, rest = settings_mod.from_sources(argv, parser=parser)
        if rest:
            parser.error(f"unrecognized arguments: {' '.join(rest)}")
        logging.basicConfig(level=settings.log_level.upper(),
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        check_port(settings.host, settings.port)
        claim_upload_folder(settings.upload_dir, settings.port)  # early: a wrong one fails now
        if settings.engine == kinds.LOCAL:  # before torch loads here: OpenMP reads its policy then
            let_idle_threads_sleep(settings.cpu_threads)
        choice = choose(settings)
        settings = choice.settings
        (log.warning if choice.banner else log.info)("launch choice: %s", choice.reason)
        if choice.why:  # a fall-back, said on the terminal in one line (not only in the log)
            print(f"Hunyuan-MT translator: {choice.why}", file=sys.stderr, flush=True)
        heard = choose_speech(settings)
        settings = heard.settings
        (log.warning if heard.banner else log.info)("launch choice: %s", heard.reason)
        check_hardware(settings)
        skip_absent_matplotlib()
        app = create_app(settings, banner="\n\n".join(b for b in (choice.banner, heard.banner)
                                                      if b), speech=build_speech(settings, heard))
        server = Server(app, settings).start()
    except TranslatorError as exc:
        print(f"error: {exc.user_message}", file=sys.stderr)
        return 2
    translator: Translator = app.state.translator
    log.info("serving on %s (model %s; loading...)", server.url, translator.spec.public_id)
    if settings.host not in ("127.0.0.1", "localhost", "::1") and ui_auth(settings) is None and \
            not (settings.api_keys or settings.api_keys_file):
        log.warning("the page and the API are open to everyone who can reach %s: see the "
                    "README's Security section (--auth, --api-keys)", settings.host)
    _stop_on_sigterm()
    try:
        status = translator.wait_ready()
        if status.state != EngineState.READY:
            print(f"error: {status.reason or 'the model could not be loaded'}", file=sys.stderr)
            return 1
        why = status.extra.get("dtype_reason")  # --dtype auto on a CPU: why this precision
        print(f"Hunyuan-MT translator ready: {server.url}  (model {status.model}, "
              f"{status.device}, {status.dtype}{f': {why}' if why else ''})", flush=True)
        if settings.host in ("0.0.0.0", "::") and (ip := lan_ip()):
            print(f"Hunyuan-MT translator on the LAN (for students): "
                  f"{server.scheme}://{ip}:{settings.port}{settings.root_path}/", flush=True)
        _report_tls(server, settings)
        if teach:
            _open_class(app, server.url, settings, teach)
        _report_speech(app.state.speech)  # after the class's links: a download may take a while
        while server.thread.is_alive():
            server.thread.join(0.5)
    except KeyboardInterrupt:
        log.info("stopping")
    finally:
        server.stop()
        close_engines()  # and the servers or processes they started
        release_upload_folder()  # every upload and output: nobody can come back for them
    return 0


def _class_flag(argv: list[str]) -> tuple[list[str], str | None]:
    """``--class`` or ``--class=LANG`` (the teacher's language, default zh): open a class at
    start. Students' phones must reach the server, so it listens on every interface unless
    --host (or HYMT_HOST) says otherwise."""
    teach = None
    rest = []
    for arg in argv:
        if arg == "--class" or arg.startswith("--class="):
            teach = arg.partition("=")[2] or "zh"
        else:
            rest.append(arg)
    if teach and not any(a == "--host" or a.startswith("--host=") for a in rest) and \
            "HYMT_HOST" not in os.environ:
        rest += ["--host", "0.0.0.0"]
    return rest, teach


def _open_class(app: FastAPI, url: str, settings: Settings, lang: str) -> None:
    """Open a class and print the teacher's link and the students' (code, LAN address)."""
    try:
        room = app.state.rooms.create(lang)
    except TranslatorError as exc:
        print(f"error: could not open a class: {exc.user_message}", file=sys.stderr)
        return
    code = room["code"]
    ip = lan_ip() if settings.host in ("0.0.0.0", "::") else None
    scheme = url.partition(":")[0]
    join = f"{scheme}://{ip}:{settings.port}{settings.root_path}" if ip else url
    print(f"Class open: teacher's page {url}/class/teach/{code}#key={room['key']}", flush=True)
    print(f"Class open: students join at {join}/class/{code} (code {code[:3]} {code[3:]})",
          flush=True)


def _stop_on_sigterm() -> None:
    """``launch.sh stop`` (and service managers) send SIGTERM: stop as on Ctrl+C, so that the
    engines are closed and no server they started outlives the translator."""
    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    if threading.current_thread() is threading.main_thread():  # where handlers can be set
        signal.signal(signal.SIGTERM, stop)


if __name__ == "__main__":
    sys.exit(main())
