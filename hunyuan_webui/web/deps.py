"""FastAPI dependencies shared by the routers: who is calling, and what the routes work with.

Route handlers are module-level functions; what they need of the running app they read from
``app.state`` through these dependencies, never from a closure: :data:`EdgeDep` is the service
and the guards' shared instruments (one :class:`Edge` per app, ``app.state.edge``),
:data:`CallerDep` the key the request came with.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request

from hunyuan_webui.service import Translator
from hunyuan_webui.service.operations.documents import DocumentJobs
from hunyuan_webui.speech import Speech
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.security import Redactor


@dataclass(frozen=True)
class Edge:
    """What a protocol's routes work with: the service's front door and the guards' shared
    instruments (metrics, the access policy, the redactor of local paths), the documents
    translated in the background, and the speech recogniser."""

    translator: Translator
    metrics: Metrics
    access: AccessControl
    redact: Redactor
    documents: DocumentJobs
    speech: Speech | None = None  # the recogniser (None: an app without one)


def _edge(request: Request) -> Edge:
    return request.app.state.edge


def _caller(request: Request) -> Caller:
    """The key the Gatekeeper accepted (and counted) for this request; OPEN without keys."""
    caller = getattr(request.state, "caller", None)
    if isinstance(caller, Caller):
        return caller
    access: AccessControl = request.app.state.access
    return access.identify(None)  # 401 if keys are configured (the Gatekeeper said so first)


EdgeDep = Annotated[Edge, Depends(_edge)]
CallerDep = Annotated[Caller, Depends(_caller)]
