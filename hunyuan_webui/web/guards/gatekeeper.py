"""The Gatekeeper: one access policy for every request, and files only for their owners.

Plain ASGI middleware around every route, the JSON API and the page alike (not
``BaseHTTPMiddleware``: streamed answers pass straight through).

- It applies :mod:`hunyuan_webui.web.guards.access` to each request: a key for the API (counted per
  request), a key or the login or ``--open-page`` for the page, nothing for the information
  routes. Routes added later are API routes, so they are behind the keys too.
- It gives each browser a session cookie (``hymt_session``) and keeps files to their owners
  (:mod:`hunyuan_webui.web.guards.visitor_files`): an upload is recorded for the session that sent it; a
  page request that names any other file (a ``FileData`` path, in any field of its JSON body) is
  refused before Gradio reads or copies it; a file is served only to its session.

What reaches Gradio is decided by what Gradio would parse, never by a content-type prefix.
FastAPI (``fastapi/routing.py``) parses a body as JSON when its media type is ``application/json``
or any ``application/*+json``, whatever the casing and parameters (``charset=...``); Gradio's
``/component_server`` parses *every* body that does not start with ``multipart/form-data`` as JSON,
with or without a content type; both with ``json.loads`` on the raw bytes (which also reads UTF-16
and UTF-32). So the rule is on the body, not its label:

1. A ``POST`` to the upload route whose media type is ``multipart/form-data`` is the only body that
   passes uninspected (Gradio streams it to disk in a worker thread; :meth:`Gatekeeper._upload`
   counts it against the quotas and removes what an unfinished upload leaves).
2. Every other page request that carries a body (``Content-Length`` or ``Transfer-Encoding``), in
   any method, is read here (the body limit holds it to ``--max-body-bytes``) and parsed exactly as
   Gradio would (``json.loads`` on the bytes), whatever its content type says:
   - under ``/gradio_api/``, a form (``multipart/*``, ``application/x-www-form-urlencoded``, any
     casing) is refused with 415, and a body that is not JSON with 400: no endpoint there but the
     upload takes anything else;
   - a body that names a file (a ``path``, at any depth) this session did not upload, or that has
     expired, is refused with 403, before Gradio opens, hashes or copies anything;
   - a ``session_hash`` that is empty or not a plain token is refused with 400 (Gradio's queue
     keeps its messages per session and raised a 500 on an empty one);
   - the same bytes are then handed on.
"""

from __future__ import annotations

import email.message
import json
import logging
import re
from collections.abc import Callable, Iterator
from http.cookies import SimpleCookie
from types import SimpleNamespace
from typing import Any

import anyio
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse
from starlette.routing import Match, Mount

from hunyuan_webui.errors import AuthError, TranslatorError
from hunyuan_webui.web.guards.access import PAGE_CLOSED, AccessControl, Caller, key_in
from hunyuan_webui.web.guards.security import UPLOAD_ROUTE, json_error, route_path
from hunyuan_webui.web.guards.visitor_files import (
    NOT_UPLOADED,
    SESSION_COOKIE,
    SESSION_RE,
    VisitorFiles,
    new_session,
    upload_temps,
)
from hunyuan_webui.web.responses import retry_headers

# What Gradio's clients send as a session_hash: the page a random base-36 string, gradio_client a
# UUID. Anything else (empty, above all) is refused before Gradio's queue keys its messages on it.
GRADIO_SESSION_RE = re.compile(r"[A-Za-z0-9_-]{1,100}")

log = logging.getLogger("hunyuan_webui.web.guards.gatekeeper")

FILE_ROUTES = ("/gradio_api/file=", "/gradio_api/file/")  # where Gradio serves files


async def _refuse(exc: TranslatorError, scope: dict, receive: Callable, send: Callable) -> None:
    """Refuse in the shape the route's clients read: a protocol router registers its own
    (``app.state.error_shapes``: path prefixes and a function of the error), else the app's."""
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = retry_headers(exc)
    if isinstance(exc, AuthError):
        headers["WWW-Authenticate"] = "Bearer"
    path = route_path(scope)
    state = getattr(scope.get("app"), "state", None)
    for prefixes, shape in getattr(state, "error_shapes", ()):
        if path.startswith(prefixes):
            status, body = shape(exc)
            await JSONResponse(body, status_code=status, headers=headers)(scope, receive, send)
            return
    await json_error(scope, exc.http_status, exc.code, exc.user_message, headers)(
        scope, receive, send)


class Gatekeeper:
    """One access policy for every request, and files only for the session that owns them."""

    def __init__(self, app: Any, access: AccessControl, files: VisitorFiles) -> None:
        self.app, self.access, self.files = app, access, files
        self._api_routes: list[Any] | None = None
        self._gradio: Any = None  # the mounted Gradio app (its login tokens), once found

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, self._clearing_at_shutdown(receive), send)
            return
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        if self.files.sweep_due():
            await anyio.to_thread.run_sync(self.files.sweep)
        path = route_path(scope)
        kind = self.access.route_kind(path, self._is_api(scope))
        headers = Headers(scope=scope)
        try:
            caller = self._authorize(kind, headers)
        except TranslatorError as exc:
            await _refuse(exc, scope, receive, send)
            return
        state = scope.setdefault("state", {})
        if caller is not None:
            state["caller"] = caller  # request.state.caller: the routes and listeners use it
        if kind == "page" and self.access.login and path.startswith(self.access.page_prefixes):
            state["login"] = self._login_name(HTTPConnection(scope))  # who opens a class (--auth)
        if kind == "page":
            await self._page(path, scope, receive, send, headers)
        else:
            await self.app(scope, receive, send)

    def _clearing_at_shutdown(self, receive: Callable) -> Callable:
        async def receiving() -> dict:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                await anyio.to_thread.run_sync(self.files.clear)
            return message

        return receiving

    def _authorize(self, kind: str, headers: Headers) -> Caller | None:
        """The key caller (counted where the route is an API call), or None; raises 401/429."""
        if kind == "open":
            return None
        key = key_in(headers)
        caller = self.access.identify(key) if key else None
        if caller is not None and caller.kind != "key":
            caller = None  # no keys configured: a key is just ignored
        if kind == "api":
            caller = caller or self.access.identify(None)  # 401 when keys are configured
            self.access.count(caller)
        elif kind == "body_key" and caller is not None:
            self.access.count(caller)  # without a header key, the route reads api_key itself
        elif kind == "page" and caller is None and self.access.page_needs_key:
            raise AuthError(PAGE_CLOSED)
        return caller

    def _page_caller(self, scope: dict) -> Caller:
        """Who a page request counts against, as for the page's events
        (:meth:`AccessControl.page_caller`): the key, else the login name, else the address."""
        request = Request(scope)
        state = SimpleNamespace(caller=scope.get("state", {}).get("caller"))
        return self.access.page_caller(SimpleNamespace(
            state=state, client=request.client, username=self._login_name(request)))

    def _login_name(self, request: HTTPConnection) -> str | None:
        """The page's signed-in user (Gradio's login cookie), if any."""
        if self._gradio is None:
            routes = getattr(getattr(request.scope.get("app"), "router", None), "routes", [])
            self._gradio = next((r.app for r in routes if isinstance(r, Mount)
                                 and hasattr(r.app, "tokens")), False)
        if not self._gradio:
            return None
        cookie_id = getattr(self._gradio, "cookie_id", "")
        token = request.cookies.get(f"access-token-{cookie_id}") or \
            request.cookies.get(f"access-token-unsecure-{cookie_id}")
        name = self._gradio.tokens.get(token) if token else None
        return name if isinstance(name, str) else None

    def _is_api(self, scope: dict) -> bool:
        """Does one of the JSON app's own routes (templates with parameters included) match?"""
        if self._api_routes is None:
            routes = getattr(getattr(scope.get("app"), "router", None), "routes", [])
            self._api_routes = [r for r in routes if not isinstance(r, Mount)]
        probe = {**scope, "path": route_path(scope), "root_path": "", "method": scope.get(
            "method", "GET")}
        return any(route.matches(probe)[0] is not Match.NONE for route in self._api_routes)

    # -- the page ---------------------------------------------------------------------------------
    async def _page(self, path: str, scope: dict, receive: Callable, send: Callable,
                    headers: Headers) -> None:
        session = _session_cookie(headers)
        if session is None:
            session = new_session()
            send = _setting_cookie(send, session, scope)
        scope["state"][SESSION_COOKIE] = session
        method = scope.get("method", "GET")
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif path.startswith(FILE_ROUTES) and method in ("GET", "HEAD"):
            # Checked exactly as Gradio will read it (the old /file/ form names a relative path).
            name = path[len(FILE_ROUTES[0] if path.startswith(FILE_ROUTES[0]) else FILE_ROUTES[1]):]
            if not self.files.owns(session, name):
                await json_error(scope, 404, "not_found", "No such file for this browser session "
                                 "(translated files expire after a while).")(scope, receive, send)
                return
            await self.app(scope, receive, send)
        elif method == "POST" and path == UPLOAD_ROUTE and \
                media_type(headers) == "multipart/form-data":
            await self._upload(scope, receive, send, session, headers)
        elif _has_body(headers):
            await self._inspected(path, scope, receive, send, session, headers)
        else:
            await self.app(scope, receive, send)

    async def _inspected(self, path: str, scope: dict, receive: Callable, send: Callable,
                         session: str, headers: Headers) -> None:
        """Read the (size-limited) body and parse it as Gradio would (the module's rule): refuse a
        form or non-JSON on Gradio's endpoints, and any body naming a file this session does not
        own; then hand the same bytes on."""
        chunks, more, messages = [], True, []
        while more:
            message = await receive()
            if message["type"] != "http.request":
                messages.append(message)
                break
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        body = b"".join(chunks)
        gradio = path.startswith("/gradio_api/")
        media = media_type(headers)
        if gradio and (media.startswith("multipart/") or
                       media == "application/x-www-form-urlencoded"):
            await json_error(scope, 415, "unsupported_media_type", "The page's endpoints take "
                             "JSON bodies; files go to /gradio_api/upload as multipart/form-data."
                             )(scope, receive, send)
            return
        data = None
        if body.strip():
            try:
                data = json.loads(body)  # exactly what Starlette's request.json() does
            except (ValueError, RecursionError):  # also 5,000-digit numbers, 50,000-deep nesting
                if gradio:
                    await json_error(scope, 400, "invalid_request",
                                     "Malformed JSON body.")(scope, receive, send)
                    return
        if any(not self.files.owns(session, p) for p in _named_paths(data)):
            await json_error(scope, 403, "file_not_uploaded", NOT_UPLOADED)(scope, receive, send)
            return
        if gradio and isinstance(data, dict) and isinstance(data.get("session_hash"), str) and \
                not GRADIO_SESSION_RE.fullmatch(data["session_hash"]):
            await json_error(scope, 400, "invalid_request", "'session_hash' must be a short "
                             "token of letters, digits, '-' and '_'.")(scope, receive, send)
            return

        replay = [{"type": "http.request", "body": body, "more_body": False}, *messages]

        async def replayed() -> dict:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)

    async def _upload(self, scope: dict, receive: Callable, send: Callable, session: str,
                      headers: Headers) -> None:
        """Count the upload as a request of its visitor, hold room for it under the quotas, let
        Gradio store it, then record its paths (Gradio's answer) for ``session`` before the
        client can name them. If it does not finish (the client hangs up or is cut off),
        Gradio's partial files are deleted at once."""
        length = headers.get("content-length", "")
        client = scope.get("client")  # the peer, or whom a trusted proxy names
        address = client[0] if client else None
        try:
            self.access.count(self._page_caller(scope))
            release = self.files.reserve(session, int(length) if length.isdigit() else 0,
                                         address)
        except TranslatorError as exc:
            await _refuse(exc, scope, receive, send)
            return
        # Gradio may compress its answer: this one is read here, so it is asked for plain.
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k != b"accept-encoding"]
        status, chunks, recorded = 0, [], False

        async def recording(message: dict) -> None:
            nonlocal status, recorded
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body" and status == 200:
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self._record(session, b"".join(chunks), address)
                    recorded = True
            await send(message)

        with upload_temps() as temps:
            try:
                await self.app(scope, receive, recording)
            finally:
                release()
                if not recorded and temps:
                    with anyio.CancelScope(shield=True):
                        await anyio.to_thread.run_sync(self.files.discard, temps)

    def _record(self, session: str, answer: bytes, address: str | None) -> None:
        try:
            paths = json.loads(answer)
        except ValueError:
            log.warning("an upload answer was not JSON; its files stay unusable")
            return
        for path in paths if isinstance(paths, list) else []:
            if isinstance(path, str):
                self.files.add(session, path, address)


def media_type(headers: Headers) -> str:
    """The request's media type as FastAPI reads it (``email.message``): lower-case
    ``type/subtype`` without parameters; ``text/plain`` when absent or malformed."""
    message = email.message.Message()
    message["content-type"] = headers.get("content-type", "")
    return message.get_content_type()


def _has_body(headers: Headers) -> bool:
    """Does the request carry a body (HTTP/1.1: a non-zero length, or a transfer coding)?"""
    length = headers.get("content-length")
    return "transfer-encoding" in headers or (length is not None and length.strip() != "0")


def _named_paths(data: Any) -> Iterator[object]:
    """Every ``path`` a JSON value names as a file (Gradio's ``FileData`` shape, with or
    without its ``meta``), however deeply nested; iterative, so depth cannot overflow."""
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "path" in item:
                yield item["path"]
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _session_cookie(headers: Headers) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    cookie: SimpleCookie = SimpleCookie()
    try:
        cookie.load(raw)
    except Exception:  # http.cookies raises CookieError, and worse on odd input
        return None
    morsel = cookie.get(SESSION_COOKIE)
    return morsel.value if morsel and SESSION_RE.fullmatch(morsel.value) else None


def _setting_cookie(send: Callable, session: str, scope: dict) -> Callable:
    root = (scope.get("root_path") or "").rstrip("/")
    cookie = f"{SESSION_COOKIE}={session}; Path={root}/; HttpOnly; SameSite=Lax"
    if scope.get("scheme") == "https":
        cookie += "; Secure"

    async def with_cookie(message: dict) -> None:
        if message["type"] == "http.response.start":
            MutableHeaders(scope=message).append("set-cookie", cookie)
        await send(message)

    return with_cookie
