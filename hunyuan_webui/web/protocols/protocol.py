"""What the app needs to know of a protocol, in one record: its routes, which of them are open,
which read their key from the body or the query, and the error shape its clients read.

Each protocol's ``routes.py`` ends with its ``PROTOCOL``; :data:`hunyuan_webui.web.protocols.PROTOCOLS`
is the one list of them, which the app assembly (:mod:`hunyuan_webui.web.api`) reads to include
the routes, to give the access policy its open and body-key routes
(:meth:`~hunyuan_webui.web.guards.access.AccessControl.from_settings`) and to give the Gatekeeper
each protocol's error shape (``app.state.error_shapes``). No URL is written anywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import APIRouter

from hunyuan_webui.web.responses import ErrorShape

MAX_LIST_ITEMS = 128  # texts in one request of the JSON API, LibreTranslate's and the extensions'


@dataclass(frozen=True)
class Protocol:
    name: str
    routes: APIRouter  # module-level handlers that read the app from ``app.state`` (web.deps)
    open_routes: frozenset[str] = frozenset()  # need no key, ever (health, language lists)
    key_in_body: frozenset[str] = frozenset()  # the route reads its key itself (body, query)
    key_in_body_prefixes: tuple[str, ...] = ()  # the same, for routes with a parameter
    error_prefixes: tuple[str, ...] = ()  # paths whose refusals take ``error_shape``
    error_shape: ErrorShape | None = None
