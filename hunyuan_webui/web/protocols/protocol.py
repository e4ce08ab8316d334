"""What the app needs to know of a protocol, in one record: its routes, which of them are open,
which read their key from the body or the query, and the error shape its clients read.

Each protocol module ends with its ``PROTOCOL``; :data:`hunyuan_webui.web.protocols.PROTOCOLS` is
the one list of them, which the app assembly (:mod:`hunyuan_webui.web.api`) reads to include the
routes, to give the access policy its open and body-key routes
(:meth:`~hunyuan_webui.web.guards.access.AccessControl.from_settings`) and to give the Gatekeeper
each protocol's error shape (``app.state.error_shapes``). Adding a protocol is a module and a line
in that list; no URL is written anywhere else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fastapi import APIRouter

from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service import Translator
from hunyuan_webui.service.operations.documents import DocumentJobs
from hunyuan_webui.speech import Speech
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.security import Redactor

ErrorShape = Callable[[TranslatorError], tuple[int, dict[str, Any]]]


@dataclass(frozen=True)
class Edge:
    """What a protocol's routes are built from: the service and the guards' shared instruments."""

    translator: Translator
    metrics: Metrics
    access: AccessControl
    redact: Redactor
    documents: DocumentJobs
    speech: Speech | None = None  # the recogniser (None: an app without one)


@dataclass(frozen=True)
class Protocol:
    name: str
    routes: Callable[[Edge], APIRouter]
    open_routes: frozenset[str] = frozenset()  # need no key, ever (health, language lists)
    key_in_body: frozenset[str] = frozenset()  # the route reads its key itself (body, query)
    key_in_body_prefixes: tuple[str, ...] = ()  # the same, for routes with a parameter
    error_prefixes: tuple[str, ...] = ()  # paths whose refusals take ``error_shape``
    error_shape: ErrorShape | None = None
