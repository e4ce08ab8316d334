"""The JSON app's own middleware: the request log (with request ids and metrics) and the body
limit enforced while the bytes arrive."""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import Headers, MutableHeaders
from starlette.routing import Mount

from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.security import UPLOAD_ROUTE, route_path
from hunyuan_webui.web.responses import error_response, unexpected_error

log = logging.getLogger("hunyuan_webui.web.api")

_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")  # a client's X-Request-ID is kept if it looks sane
UPLOAD_OVERHEAD = 64 * 1024  # multipart boundaries and part headers around an uploaded file
# The protocols' document uploads take a file too (read in memory, bounded like the page's).
GRADIO_API = "/gradio_api/"  # the page's calls
DOCUMENT_UPLOADS = frozenset({"/v2/document", "/v1/documents"})
# Sound files for the recogniser: their own limit (--max-audio-bytes).
AUDIO_UPLOADS = re.compile(r"/v1/audio/transcriptions|/class/api/rooms/[^/]+/speech")
QUIET_ROUTES = ("/gradio_api/queue/data", "/gradio_api/heartbeat", "/gradio_api/run/",
                "/gradio_api/api/")


class RequestLog:
    """Give every request an id (``X-Request-ID``, kept if the client sent a sane one), answer
    unexpected errors as JSON 500s, and count and log each request when it ends.

    Plain ASGI rather than ``@app.middleware("http")``: Starlette's ``BaseHTTPMiddleware`` pipes
    every chunk of a streamed response through a memory stream and an extra task, a cost paid per
    token on the SSE route; here the chunks pass straight through, and the logged time is the whole
    stream's, not the time to its headers.
    """

    def __init__(self, app: Any, metrics: Metrics, api: FastAPI) -> None:
        self.app, self.metrics, self.api = app, metrics, api

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id  # request.state.request_id
        started = time.perf_counter()
        status = 500
        responded = False

        async def send_tagged(message: dict) -> None:
            nonlocal status, responded
            if message["type"] == "http.response.start":
                responded, status = True, message["status"]
                headers = MutableHeaders(scope=message)
                headers["X-Request-ID"] = request_id
                if headers.get("content-type", "").startswith("application/json"):
                    headers["X-Content-Type-Options"] = "nosniff"  # never sniffed as HTML
            await send(message)

        try:
            try:
                await self.app(scope, receive, send_tagged)
            except Exception as exc:
                if responded:  # too late for a 500: the status line has gone out
                    raise
                # Answered here rather than by Starlette's outermost handler, which re-raises into
                # uvicorn and so closes the client's keep-alive connection after the 500.
                await unexpected_error(Request(scope), exc)(scope, receive, send_tagged)
        finally:
            elapsed = time.perf_counter() - started
            request = Request(scope)
            path = _route_label(request, self.api)
            self.metrics.observe_request(request.method, path, status, elapsed)
            # The page's own chatter (every open tab's status poll, queue streams) only in debug.
            level = logging.DEBUG if path.startswith(QUIET_ROUTES) else logging.INFO
            log.log(level, "%s %s %s %d %.3fs", request_id, request.method, path, status, elapsed)


def _route_label(request: Request, app: FastAPI) -> str:
    """The route template that served the request (a bounded label set for the metrics)."""
    path = getattr(request.scope.get("route"), "path", None)
    if path:
        return path
    path = request.url.path
    root = request.scope.get("root_path") or ""
    if root and path.startswith(root):
        path = path[len(root):] or "/"
    # Plain Starlette routes (/docs, /openapi.json) and requests refused before routing.
    if any(getattr(r, "path", None) == path for r in app.router.routes
           if not isinstance(r, Mount)):
        return path
    return _route_group(path)


def _route_group(path: str) -> str:
    """Bound the label set: a path no route template matched is "other" (the page's too:
    ``/gradio_api/<anything>`` would be a label per made-up name)."""
    return path if path in ("/", "") else "other"


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` (uploads: ``upload_bytes``) with a JSON 413,
    declared or streamed: counted as the bytes arrive, so nothing larger is ever stored or held."""

    def __init__(self, app: Any, max_bytes: int, upload_bytes: int | None = None,
                 explain: Callable[[dict], str] | None = None,
                 audio_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_bytes = upload_bytes or max_bytes
        self.audio_bytes = audio_bytes or self.upload_bytes
        self.explain = explain  # what the page's visitor reads of a refusal (web/page/text.py)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = route_path(scope)
        upload = path == UPLOAD_ROUTE
        limit = self.upload_bytes if upload or path in DOCUMENT_UPLOADS else self.max_bytes
        if AUDIO_UPLOADS.fullmatch(path):
            limit = self.audio_bytes
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._reject(scope, receive, send, limit)
            return
        if upload and declared is None and scope.get("method") == "POST":
            # Browsers and gradio_client declare an upload's size; one that does not could only
            # be cut off midway, leaving Gradio's partly written file behind.
            await error_response(411, "length_required", "An upload must declare its size "
                         "(Content-Length).", request_id=(scope.get("state") or {}).get(
                             "request_id"))(scope, receive, send)
            return
        seen = 0
        too_large = started = False

        async def limited_receive() -> dict:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    too_large = True
                    raise _TooLarge()
            return message

        async def guarded_send(message: dict) -> None:
            nonlocal started
            if too_large:  # whatever the route made of the cut-off body, the answer is 413
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not too_large:
                raise
        if too_large and not started:
            await self._reject(scope, receive, send, limit)

    async def _reject(self, scope: dict, receive: Callable, send: Callable, limit: int) -> None:
        upload = limit in (self.upload_bytes, self.audio_bytes)
        if AUDIO_UPLOADS.fullmatch(route_path(scope)):
            message = (f"The audio file is larger than the limit of "
                       f"{self.audio_bytes - UPLOAD_OVERHEAD:,} bytes.")
        elif upload:
            message = (f"The file is larger than the limit of "
                       f"{self.upload_bytes - UPLOAD_OVERHEAD:,} bytes.")
        else:
            message = f"The request body is larger than {self.max_bytes:,} bytes."
        response = error_response(413, "body_too_large", message,
                          request_id=(scope.get("state") or {}).get("request_id"))
        if not upload and self.explain is not None and route_path(scope).startswith(GRADIO_API):
            # The page shows a refused call's "detail", and nothing at all without one: its
            # Translate did nothing, without a word.
            body = {"detail": self.explain(scope), **json.loads(response.body)}
            response = JSONResponse(body, status_code=413)
        # The rest of the body is never read: the connection closes after this answer.
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass
