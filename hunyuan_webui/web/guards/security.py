"""The server's guards beside the Gatekeeper, as plain ASGI middleware around every route.

- :class:`LoginGuard` slows down password guessing on Gradio's ``/login``, per account and
  address.
- :class:`SecurityHeaders` adds a Content-Security-Policy and frame protection to the page.
- :func:`slow_client_protocol` closes connections that do not finish their headers, or their
  request body, in time (or send the body too slowly).
- :class:`Redactor` replaces a local model path with the model's name in what users read.

Plain ASGI rather than ``BaseHTTPMiddleware``: streamed answers pass straight through.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import h11
from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import JSONResponse
from uvicorn.protocols.http.h11_impl import H11Protocol

from hunyuan_webui.models import ModelSpec
from hunyuan_webui.web.guards.access import LoginThrottle

UPLOAD_ROUTE = "/gradio_api/upload"
# Gradio's page needs inline scripts and eval (its event `js=` snippets run through Function),
# and the Soft theme asks Google Fonts for its typeface. Nothing else leaves the origin.
PAGE_CSP = "; ".join([
    "default-src 'self'",
    "script-src 'self' 'unsafe-inline' 'unsafe-eval'",
    "style-src 'self' 'unsafe-inline' https://fonts.googleapis.com",
    "font-src 'self' data: https://fonts.gstatic.com",
    "img-src 'self' data: blob:",
    "media-src 'self' data: blob:",
    "worker-src 'self' blob:",
    "connect-src 'self'",
    "frame-ancestors 'self'",
    "base-uri 'self'",
    "form-action 'self'",
    "object-src 'none'",
])
DOCS_ROUTES = ("/docs", "/redoc")  # FastAPI's docs pages load Swagger UI from a CDN


def route_path(scope: dict) -> str:
    """The request's path without the root path (``--root-path``) in front of it."""
    path, root = scope.get("path", ""), scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):] or "/"
    return path


def json_error(scope: dict, status: int, code: str, message: str,
               headers: dict[str, str] | None = None) -> JSONResponse:
    """The app's error shape, ``{"error": {"code", "message", "request_id"}}``."""
    body: dict[str, Any] = {"error": {"code": code, "message": message}}
    request_id = (scope.get("state") or {}).get("request_id")
    if request_id:
        body["error"]["request_id"] = request_id
    return JSONResponse(body, status_code=status, headers=headers)


class LoginGuard:
    """Gradio's ``POST /login`` with :class:`~hunyuan_webui.web.guards.access.LoginThrottle` in front,
    counted per account *and* address: after a few failures for one user name from one address,
    that pair must wait longer before each new attempt (429), the right password too (otherwise a
    200 among the 429s would tell a guesser which guess was right). Another account from the same
    address, a classmate behind the same router, signs in as usual."""

    def __init__(self, app: Any, throttle: LoginThrottle) -> None:
        self.app, self.throttle = app, throttle

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or \
                route_path(scope).rstrip("/") != "/login":
            await self.app(scope, receive, send)
            return
        replay = await _buffered(receive)
        who = login_key(await _login_name(scope, replay()),
                        (scope.get("client") or ("unknown", 0))[0])
        wait = self.throttle.wait(who)
        if wait > 0:
            await json_error(scope, 429, "rate_limited",
                             f"Too many failed sign-ins; try again in {wait:.0f} s.",
                             {"Retry-After": str(max(1, round(wait)))})(scope, receive, send)
            return
        status = 0

        async def watching(message: dict) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, replay(), watching)
        if status == 200:
            self.throttle.succeeded(who)
        elif status == 400:  # Gradio's "Incorrect credentials."
            self.throttle.failed(who)


def login_key(user: str, address: str) -> str:
    """What the login throttle counts: one user name (hashed: names are not kept) at one
    address."""
    return f"{hashlib.sha256(user.encode('utf-8', 'replace')).hexdigest()[:16]}@{address}"


async def _buffered(receive: Callable) -> Callable[[], Callable]:
    """Read a (size-limited: BodyLimit is outside) body once; each call of the result gives a
    ``receive`` that hands the same bytes on again."""
    body, more, after = b"", True, []
    while more:
        message = await receive()
        if message["type"] != "http.request":
            after.append(message)
            break
        body += message.get("body", b"")
        more = message.get("more_body", False)

    def replay() -> Callable:
        queue = [{"type": "http.request", "body": body, "more_body": False}, *after]

        async def replayed() -> dict:
            return queue.pop(0) if queue else await receive()

        return replayed

    return replay


async def _login_name(scope: dict, receive: Callable) -> str:
    """The ``username`` field of a login form ("" when there is none or the form is broken:
    Gradio then refuses it itself)."""
    try:
        async with Request(scope, receive).form() as form:  # closes any uploaded part
            name = form.get("username")
    except Exception:  # any unreadable form: counted under the empty name
        return ""
    return name[:256] if isinstance(name, str) else ""


class SecurityHeaders:
    """No sniffing, no referrer beyond the origin; on HTML, a Content-Security-Policy and no
    framing by other sites (the same origin may frame it, as a JupyterHub notebook does)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        docs = route_path(scope).startswith(DOCS_ROUTES)

        async def headed(message: dict) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.setdefault("X-Content-Type-Options", "nosniff")
                headers.setdefault("Referrer-Policy", "same-origin")
                headers.setdefault("X-Frame-Options", "SAMEORIGIN")
                if headers.get("content-type", "").startswith("text/html"):
                    headers.setdefault("Content-Security-Policy",
                                       "frame-ancestors 'self'" if docs else PAGE_CSP)
            await send(message)

        await self.app(scope, receive, headed)


BODY_RATE_GRACE = 5.0  # seconds of a body before its rate is judged
TOO_SLOW = (b'{"error":{"code":"request_timeout","message":"The request body arrived too '
            b'slowly; the connection is closed."}}')


def slow_client_protocol(header_timeout: float, body_timeout: float = 0.0,
                         body_min_rate: float = 0.0) -> type[H11Protocol]:
    """uvicorn's h11 protocol with these deadlines (:class:`SlowClientProtocol`)."""
    return type("SlowClientProtocol", (SlowClientProtocol,), {
        "header_timeout": header_timeout, "body_timeout": body_timeout,
        "body_min_rate": body_min_rate})


class SlowClientProtocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines for slow clients (uvicorn itself waits forever):

    - a connection whose request headers are not complete ``header_timeout`` seconds after it
      opened (or after its previous answer) is closed;
    - a request body must be complete ``body_timeout`` seconds after its headers (0 = no limit),
      and, once it has taken ``BODY_RATE_GRACE`` seconds, arrive at ``body_min_rate`` bytes per
      second on average (0 = no limit). A slower body gets a 408 (if nothing was answered yet)
      and its connection is closed; the app's ``receive`` reads a disconnect, so an upload in
      progress is abandoned (and removed) at once. Time the server itself stopped reading (flow
      control: the app was slow to take the body) is not held against the client.
    """

    header_timeout = 10.0
    body_timeout = 0.0
    body_min_rate = 0.0
    _header_timer: asyncio.TimerHandle | None = None
    _body_timer: asyncio.TimerHandle | None = None
    _body_started = 0.0
    _body_excused = 0.0
    _body_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._body_timer is not None:
            self._body_bytes += len(data)
        super().data_received(data)
        if self._upgraded():
            return
        if self.conn.their_state is h11.IDLE:  # a request's headers are still to come
            if self._header_timer is None:
                self._arm()
        elif self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if self.conn.their_state is h11.SEND_BODY:
            if self._body_timer is None and (self.body_timeout or self.body_min_rate):
                self._body_started, self._body_excused, self._body_bytes = (
                    self.loop.time(), 0.0, 0)
                self._body_timer = self.loop.call_later(self._tick, self._check_body)
        elif self._body_timer is not None:
            self._stop_body_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self._stop_body_timer()
        super().connection_lost(exc)

    def _upgraded(self) -> bool:
        """The connection became a WebSocket (uvicorn handed the transport to its WebSocket
        protocol): these deadlines are for HTTP requests, not for a microphone that streams
        for an hour. Without this, the body-rate check, armed by the upgrade request, closed
        every WebSocket 5 s after it opened (this protocol no longer sees its bytes)."""
        if self.transport.get_protocol() is self:
            return False
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        self._stop_body_timer()
        return True

    def _arm(self) -> None:
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    @property
    def _tick(self) -> float:
        return min(0.5, self.body_timeout or 0.5)

    def _stop_body_timer(self) -> None:
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None

    def _check_body(self) -> None:
        self._body_timer = None
        if self.conn.their_state is not h11.SEND_BODY or self.transport.is_closing() or \
                self._upgraded():
            return
        if self.flow is not None and self.flow.read_paused:
            self._body_excused += self._tick  # the server is not reading: not the client's fault
        elapsed = self.loop.time() - self._body_started - self._body_excused
        too_long = self.body_timeout and elapsed >= self.body_timeout
        too_slow = self.body_min_rate and elapsed >= BODY_RATE_GRACE and \
            self._body_bytes < self.body_min_rate * elapsed
        if too_long or too_slow:
            self._cut_off()
        else:
            self._body_timer = self.loop.call_later(self._tick, self._check_body)

    def _cut_off(self) -> None:
        """408 (unless an answer has begun), then close; the app reads a disconnect."""
        cycle = self.cycle
        answered = cycle is None or cycle.response_started
        if cycle is not None:
            cycle.disconnected = True  # the app's sends are dropped, its receive ends
            cycle.message_event.set()
        if not answered and self.conn.our_state is h11.SEND_RESPONSE:
            with contextlib.suppress(h11.LocalProtocolError):
                self.transport.write(self.conn.send(h11.Response(
                    status_code=408, reason=b"Request Timeout", headers=[
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(TOO_SLOW)).encode()),
                        (b"connection", b"close")])))
                self.transport.write(self.conn.send(h11.Data(data=TOO_SLOW)))
                self.transport.write(self.conn.send(h11.EndOfMessage()))
        self.transport.close()


class Redactor:
    """Replaces local checkpoint paths with the models' names in text users read."""

    def __init__(self, specs: list[ModelSpec], extra: dict[str, str] | None = None) -> None:
        names = dict(extra or {})
        for spec in specs:
            if spec.local_path:
                names[spec.local_path] = spec.public_id
        # Longest first, so that a path is never half-replaced by a shorter one inside it.
        self.names = sorted(((p, n) for p, n in names.items() if p), key=lambda pn: -len(pn[0]))

    @classmethod
    def for_translator(cls, translator: Any) -> Redactor:
        settings = translator.settings
        extra = {}
        for given in (settings.model, settings.chimera_model):
            if given and Path(given).expanduser().is_dir():
                extra[given] = Path(given).expanduser().resolve().name
        return cls([translator.spec], extra)

    def text(self, value: str) -> str:
        for path, name in self.names:
            value = value.replace(path, name)
        return value

    def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A result or status dict with its ``model`` and ``reason`` fields named, not located."""
        for field in ("model", "reason", "notice"):
            if isinstance(payload.get(field), str):
                payload[field] = self.text(payload[field])
        return payload
