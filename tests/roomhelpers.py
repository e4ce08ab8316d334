"""For the room tests: a class's event stream read the way a phone reads it (one thread per
student following ``/class/api/rooms/{code}/events`` with httpx, every event kept in order), a
class app served on the demo engine, and the rooms' service without HTTP."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx

OPEN: list[Reader] = []  # every reader not closed yet: close_all() before stopping a server


def close_all() -> None:
    while OPEN:
        OPEN.pop().close()


class Reader:
    """One student's (or the teacher's) event stream, read in a thread until ``close()``."""

    def __init__(self, base: str, code: str, *, student: str = "", lang: str = "",
                 key: str = "", after: int = 0, last_event_id: int | None = None,
                 address: str | None = None) -> None:
        params = {"role": "teacher", "key": key} if key else {"student": student, "lang": lang}
        if after:
            params["after"] = str(after)
        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
        self.url = f"{base}/class/api/rooms/{code}/events"
        self.params, self.headers, self.address = params, headers, address
        self.events: list[dict[str, Any]] = []
        self.status: int | None = None
        self.ended = False  # the server ended the stream (not this side's close())
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._response: httpx.Response | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        OPEN.append(self)
        assert self._opened.wait(30), "the event stream did not open"

    def _run(self) -> None:
        try:
            transport = httpx.HTTPTransport(local_address=self.address) if self.address else None
            with httpx.Client(timeout=httpx.Timeout(60, read=60), trust_env=False,
                              transport=transport) as client, \
                    client.stream("GET", self.url, params=self.params,
                                  headers=self.headers) as response:
                self.status = response.status_code
                self._response = response
                self._opened.set()
                for line in response.iter_lines():
                    if self._stop.is_set():
                        return
                    if line.startswith("data: "):
                        self.events.append(json.loads(line[len("data: "):]))
            self.ended = True  # the server ended the stream
        except (httpx.HTTPError, RuntimeError, OSError, AttributeError):
            pass  # closed from close(): what was read is kept
        finally:
            self._opened.set()

    def close(self) -> None:
        """Hang up (as a phone that sleeps does): the connection is shut at once, which also
        wakes the reading thread (closing the response alone left it blocked in its read until
        the server's next keep-alive, up to 10 s per student)."""
        self._stop.set()
        if self in OPEN:
            OPEN.remove(self)
        if self._response is not None:
            stream = self._response.extensions.get("network_stream")
            sock = stream.get_extra_info("socket") if stream is not None else None
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(Exception):
                self._response.close()
        self.thread.join(10)

    @property
    def logged(self) -> list[dict[str, Any]]:
        """The events that carry a number (not drafts, not the teacher's numbers)."""
        return [e for e in self.events if e.get("seq")]

    def translations(self, lang: str) -> dict[int, str]:
        return {e["sid"]: e.get("text", "") for e in self.logged
                if e["type"] == "translation" and e["lang"] == lang}

    @property
    def last(self) -> int:
        return max((e["seq"] for e in self.logged), default=0)


def wait_for(predicate: Callable[[], Any], timeout: float = 60, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")


# -- the rooms' service without HTTP ------------------------------------------------------------
def seated(rooms: Any, code: str, lang: str, address: str = "10.0.0.1") -> str:
    """A student joined, with its stream open (a seat taken)."""
    student = rooms.join(code, lang, address=address)
    rooms.connect(code, student, lang, address)
    return student


def translations(rooms: Any, code: str, lang: str) -> dict[int, str]:
    """A room's logged translations into ``lang``, by sentence."""
    return {e["sid"]: e["text"] for _, e in rooms.history(code)
            if e["type"] == "translation" and e["lang"] == lang and "text" in e}


def events_of(rooms: Any, code: str, kind: str) -> list[dict[str, Any]]:
    return [{**e, "seq": seq} for seq, e in rooms.history(code) if e["type"] == kind]


# -- a class served on the demo engine ----------------------------------------------------------
class ClassApp:
    """The teacher's and the students' calls on a served app (``rooms``: its service)."""

    def __init__(self, url: str, rooms: Any, engine: Any) -> None:
        self.url, self.rooms, self.engine = url, rooms, engine
        self.http = httpx.Client(base_url=url, timeout=60, trust_env=False)

    def client(self, address: str = "127.0.0.1") -> httpx.Client:
        """A client whose requests come from ``address`` (127.0.0.2 and so on: another device)."""
        return httpx.Client(base_url=self.url, timeout=60, trust_env=False,
                            transport=httpx.HTTPTransport(local_address=address))

    def open(self, lang: str = "zh", http: httpx.Client | None = None) -> tuple[str, str]:
        r = (http or self.http).post("/class/api/rooms", json={"lang": lang, "title": "Lesson 1"})
        assert r.status_code == 200, r.text
        return r.json()["code"], r.json()["key"]

    def join(self, code: str, lang: str, name: str = "") -> str:
        r = self.http.post(f"/class/api/rooms/{code}/join", json={"lang": lang, "name": name})
        assert r.status_code == 200, r.text
        return r.json()["student"]

    def say(self, code: str, key: str, text: str) -> list[int]:
        r = self.http.post(f"/class/api/rooms/{code}/sentences", json={"text": text},
                           headers={"X-Class-Key": key})
        assert r.status_code == 200, r.text
        return r.json()["sentences"]

    def teacher(self, method: str, code: str, key: str, action: str) -> httpx.Response:
        """One of the teacher's controls: ``("POST", code, key, "end")``..."""
        return self.http.request(method, f"/class/api/rooms/{code}/{action}",
                                 headers={"X-Class-Key": key})


@contextlib.contextmanager
def class_server(engine: Any, settings: Any, limits: Any = None, **overrides: Any
                 ) -> Iterator[ClassApp]:
    """The app on ``engine`` (recorded: every model call counted; no cache), on a free port."""
    from apphelpers import RecordingEngine, free_port

    from hunyuan_webui.app import Server, create_app
    from hunyuan_webui.service import Translator

    settings = replace(settings, port=free_port(), log_level="warning", **overrides)
    recording = RecordingEngine(engine)
    app = create_app(settings, Translator(recording, engine.spec, settings))
    if limits is not None:
        app.state.rooms.limits = limits
    server = Server(app, settings).start()
    try:
        yield ClassApp(server.url, app.state.rooms, recording)
    finally:
        close_all()
        server.stop()
