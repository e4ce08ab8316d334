"""The Gatekeeper: one access policy for every request.

Plain ASGI middleware around every route, the JSON API and the page alike (not
``BaseHTTPMiddleware``: streamed answers pass straight through).

- It applies :mod:`hunyuan_webui.access` to each request: a key for the API (counted per
  request), a key or the login or ``--open-page`` for the page, nothing for the information
  routes. Routes added later are API routes, so they are behind the keys too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.datastructures import Headers
from starlette.routing import Mount

from hunyuan_webui.access import PAGE_CLOSED, AccessControl, Caller, key_in, route_kind
from hunyuan_webui.errors import AuthError, TranslatorError
from hunyuan_webui.security import json_error, route_path


async def _refuse(exc: TranslatorError, scope: dict, receive: Callable, send: Callable) -> None:
    if scope["type"] == "websocket":
        await send({"type": "websocket.close", "code": 1008})
        return
    headers = {}
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        headers["Retry-After"] = str(max(1, round(retry_after)))
    if isinstance(exc, AuthError):
        headers["WWW-Authenticate"] = "Bearer"
    await json_error(scope, exc.http_status, exc.code, exc.user_message, headers)(
        scope, receive, send)


class Gatekeeper:
    """One access policy for every request."""

    def __init__(self, app: Any, access: AccessControl) -> None:
        self.app, self.access = app, access
        self._api_paths: frozenset[str] | None = None

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = route_path(scope)
        kind = route_kind(path, self._routes(scope))
        headers = Headers(scope=scope)
        try:
            caller = self._authorize(kind, headers)
        except TranslatorError as exc:
            await _refuse(exc, scope, receive, send)
            return
        if caller is not None:  # request.state.caller: the routes and listeners use it
            scope.setdefault("state", {})["caller"] = caller
        await self.app(scope, receive, send)

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

    def _routes(self, scope: dict) -> frozenset[str]:
        """The JSON app's own paths (everything else is the page mounted at ``/``)."""
        if self._api_paths is None:
            routes = getattr(getattr(scope.get("app"), "router", None), "routes", [])
            self._api_paths = frozenset(r.path for r in routes
                                        if not isinstance(r, Mount) and getattr(r, "path", None))
        return self._api_paths
