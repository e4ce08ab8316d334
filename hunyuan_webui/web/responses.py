"""Errors as JSON answers, in one place: every :class:`~hunyuan_webui.errors.TranslatorError`,
validation error and HTTP error becomes ``{"error": {"code", "message", "request_id"}}`` (plain
``{"error": message}`` on the LibreTranslate routes, as its clients expect), and a wrong method on
an API path is a JSON 405. A protocol's routes (OpenAI's, DeepL's) answer errors in their
clients' shape through :class:`ShapedErrorRoute`, with the shape function they also register in
``app.state.error_shapes`` for the Gatekeeper's refusals."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Coroutine
from typing import Any, ClassVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute
from gradio import route_utils
from gradio.route_utils import FnIndexInferError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException as StarletteHTTPException

from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.web.bodies import unreadable_body

log = logging.getLogger("hunyuan_webui.web.api")

# A protocol's error: the HTTP status and the JSON body its clients read.
ErrorShape = Callable[[TranslatorError], tuple[int, dict[str, Any]]]


def retry_headers(exc: TranslatorError) -> dict[str, str]:
    """``Retry-After`` (whole seconds, at least 1) for an error that says when to come back."""
    retry_after = getattr(exc, "retry_after", None)
    return {} if retry_after is None else {"Retry-After": str(max(1, round(retry_after)))}


def validation_problems(exc: RequestValidationError) -> str:
    """The first five problems of a request, "field: what is wrong; ..."."""
    problems = [f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}"
                f": {e.get('msg', 'invalid')}" for e in exc.errors()[:5]]
    return "; ".join(problems)


class _InvalidRequest(InputError):
    """A body that failed validation, for a protocol that names it so."""

    code = "invalid_request"


class ShapedErrorRoute(APIRoute):
    """A route whose errors come out in one protocol's shape, whatever raised them (a dependency,
    the translator, and with ``validation`` also the body's validation, as a 400
    ``invalid_request``). Make one per protocol with :meth:`shaped`; FastAPI builds the routes from
    the class, so the shape is a class attribute."""

    shape: ClassVar[ErrorShape]
    validation: ClassVar[bool] = False

    @classmethod
    def shaped(cls, name: str, shape: ErrorShape, *,
               validation: bool = False) -> type[ShapedErrorRoute]:
        return type(name, (cls,), {"shape": staticmethod(shape), "validation": validation})

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except TranslatorError as exc:
                redact = getattr(request.app.state, "redact", None)
                if redact is not None:  # a local model path, named rather than located
                    exc.user_message = redact.text(exc.user_message)
                status, body = self.shape(exc)
                return JSONResponse(body, status_code=status, headers=retry_headers(exc))
            except (RequestValidationError, StarletteHTTPException) as exc:
                if unreadable := unreadable_body(exc):  # the one refusal of bodies.py
                    status, body = self.shape(unreadable)
                    return JSONResponse(body, status_code=status)
                if not self.validation or isinstance(exc, StarletteHTTPException):
                    raise
                status, body = self.shape(
                    _InvalidRequest("Invalid request: " + validation_problems(exc)))
                return JSONResponse(body, status_code=status)

        return handle


def refuse_other_methods(app: FastAPI) -> None:
    """A wrong method on an API path gets a JSON 405 (else the page mounted at / answers 404)."""
    allowed: dict[str, set[str]] = {}
    for route in _api_routes(app.router.routes):
        allowed.setdefault(route.path, set()).update(route.methods)
    app.state.allowed_methods = {path: ", ".join(sorted(m)) for path, m in allowed.items()}
    for path, methods in allowed.items():
        others = sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - methods)
        if others:
            app.add_api_route(path, method_not_allowed, methods=others, include_in_schema=False)


def _api_routes(routes: list[Any]) -> list[APIRoute]:
    """Every API route, also those of included routers (FastAPI keeps those as one route each,
    holding the router, rather than copies of its routes; none is included with a prefix here)."""
    found: list[APIRoute] = []
    for route in routes:
        if isinstance(route, APIRoute):
            found.append(route)
        elif hasattr(route, "original_router"):
            found.extend(_api_routes(route.original_router.routes))
    return found


async def method_not_allowed(request: Request) -> None:
    """The JSON 405 of a wrong method, with the methods the path has (``app.state``)."""
    path = getattr(request.scope.get("route"), "path", "")
    allow = request.app.state.allowed_methods.get(path, "")
    raise StarletteHTTPException(405, "Method Not Allowed", headers={"Allow": allow})


def sse_event(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n"


def error_response(status: int, code: str, message: str, headers: dict[str, str] | None = None,
           request_id: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": {"code": code, "message": message}}
    if request_id:
        body["error"]["request_id"] = request_id
    return JSONResponse(body, status_code=status, headers=headers)


def install_error_handlers(app: FastAPI) -> None:
    def lt_route(request: Request) -> bool:
        return request.url.path.rstrip("/").rsplit("/", 1)[-1] in ("translate", "detect",
                                                                    "languages") and not \
            request.url.path.startswith("/v1/")

    @app.exception_handler(TranslatorError)
    async def translator_error(request: Request, exc: TranslatorError) -> JSONResponse:
        headers = retry_headers(exc)
        message = app.state.redact.text(exc.user_message)
        if lt_route(request):
            return JSONResponse({"error": message}, status_code=exc.http_status, headers=headers)
        return error_response(exc.http_status, exc.code, message, headers,
                      getattr(request.state, "request_id", None))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        unreadable = unreadable_body(exc)
        message = unreadable.user_message if unreadable else \
            "Invalid request: " + validation_problems(exc)
        return error_response(422, "invalid_request", message,
                      request_id=getattr(request.state, "request_id", None))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if unreadable := unreadable_body(exc):  # e.g. bytes, not UTF-8; deep nesting
            return error_response(422, "invalid_request", unreadable.user_message,
                          request_id=getattr(request.state, "request_id", None))
        return error_response(exc.status_code, "http_error", str(exc.detail),
                      getattr(exc, "headers", None), getattr(request.state, "request_id", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return unexpected_error(request, exc)


def unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    """A bug, not a user error: log it with the request id, answer a JSON 500 without details."""
    request_id = getattr(request.state, "request_id", None)
    log.error("unexpected error in %s %s (%s)", request.method, request.url.path, request_id,
              exc_info=exc)
    return error_response(500, "internal_error",
                  "Something went wrong on the server; it has been logged.", None, request_id)


def install_page_error_handlers(page: Starlette) -> None:
    """On the page's own app (Gradio's, mounted at /): a request naming a page function that
    does not exist is a 404, not the bare 500 Gradio's own error middleware answers."""

    async def unknown_function(request: Request, exc: Exception) -> Response:
        if not _unknown_page_function(exc):
            raise exc  # a bug: Gradio's 500, and the log
        return error_response(404, "not_found", "The page has no such function.",
                              request_id=getattr(request.state, "request_id", None))

    page.add_exception_handler(FnIndexInferError, unknown_function)
    page.add_exception_handler(KeyError, unknown_function)


def _unknown_page_function(exc: Exception) -> bool:
    """Gradio raised it while looking up the function a request names (``/gradio_api/call/NAME``,
    ``/api/NAME``, a ``fn_index``) and found none: the client's mistake, which Gradio leaves
    unanswered (a 500) rather than answering 404."""
    if isinstance(exc, FnIndexInferError):
        return True
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code if tb is not None else None
    return isinstance(exc, KeyError) and code is not None and code.co_name == "get_fn" and \
        code.co_filename == route_utils.__file__
