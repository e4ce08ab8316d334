"""A class's event stream read the way a phone reads it, for the room tests: one thread per
student following ``/class/api/rooms/{code}/events`` with httpx, every event kept in order."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

OPEN: list[Reader] = []  # every reader not closed yet: close_all() before stopping a server


def close_all() -> None:
    while OPEN:
        OPEN.pop().close()


class Reader:
    """One student's (or the teacher's) event stream, read in a thread until ``close()``."""

    def __init__(self, base: str, code: str, *, student: str = "", lang: str = "",
                 key: str = "", after: int = 0, last_event_id: int | None = None) -> None:
        params = {"role": "teacher", "key": key} if key else {"student": student, "lang": lang}
        if after:
            params["after"] = str(after)
        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
        self.url = f"{base}/class/api/rooms/{code}/events"
        self.params, self.headers = params, headers
        self.events: list[dict[str, Any]] = []
        self.status: int | None = None
        self._stop = threading.Event()
        self._opened = threading.Event()
        self._response: httpx.Response | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        OPEN.append(self)
        assert self._opened.wait(30), "the event stream did not open"

    def _run(self) -> None:
        try:
            with httpx.Client(timeout=httpx.Timeout(60, read=60), trust_env=False) as client, \
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
        except (httpx.HTTPError, RuntimeError, OSError, AttributeError):
            pass  # closed from close(): what was read is kept
        finally:
            self._opened.set()

    def close(self) -> None:
        """Hang up (as a phone that sleeps does)."""
        self._stop.set()
        if self in OPEN:
            OPEN.remove(self)
        if self._response is not None:
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
