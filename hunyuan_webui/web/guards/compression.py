"""Compression of the page itself: the HTML that carries the page's whole configuration.

Gradio already serves its JavaScript and CSS brotli-compressed, but not the page's HTML, which
embeds the configuration of every component (~115 KiB here, a quarter of a cold load). Starlette's
GZip middleware compresses it when the browser accepts gzip, for an allow-list of routes only
(:data:`COMPRESSED_ROUTES`): streamed answers (the page's event streams, the API's SSE and
NDJSON) never pass through it, so nothing is buffered on its way to the visitor.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.middleware.gzip import GZipMiddleware

from hunyuan_webui.web.guards.security import route_path

# The page and the two JSON descriptions of it a client may fetch; nothing that streams.
COMPRESSED_ROUTES = frozenset({"/", "/config", "/gradio_api/info"})


class PageCompression:
    def __init__(self, app: Any, minimum_size: int = 1024) -> None:
        self.app = app
        self.gzip = GZipMiddleware(app, minimum_size=minimum_size, compresslevel=6)

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and \
                route_path(scope) in COMPRESSED_ROUTES:
            await self.gzip(scope, receive, send)
        else:
            await self.app(scope, receive, send)
