"""The server's guards beside the Gatekeeper, as plain ASGI middleware around every route.

- :class:`LoginGuard` slows down password guessing on Gradio's ``/login``, per account and
  address.
- :class:`SecurityHeaders` adds a Content-Security-Policy and frame protection to the page.
- :func:`header_timeout_protocol` closes connections that do not finish their headers in time.
- :class:`Redactor` replaces a local model path with the model's name in what users read.

Plain ASGI rather than ``BaseHTTPMiddleware``: streamed answers pass straight through.
"""

from __future__ import annotations

import asyncio
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


def header_timeout_protocol(seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing a connection whose request headers are not complete
    ``seconds`` after it opened (or after its previous answer). uvicorn itself waits forever."""

    class HeaderTimeoutProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE:  # a request's headers are still to come
                if self._header_timer is None:
                    self._arm()
            elif self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._header_timer = self.loop.call_later(seconds, self._headers_too_slow)

        def _headers_too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

    return HeaderTimeoutProtocol


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
