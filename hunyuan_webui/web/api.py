"""The HTTP app beside the page: it gathers the protocols' routers and wraps them in the guards.

The protocols are thin layers over :class:`~hunyuan_webui.service.Translator`, a module each in
:mod:`hunyuan_webui.web.protocols`, and this module reads their one list
(:data:`~hunyuan_webui.web.protocols.PROTOCOLS`): their routes, their open and body-key routes for
the access policy, their error shapes for the Gatekeeper. Every
:class:`~hunyuan_webui.errors.TranslatorError` becomes a JSON error in one place
(:mod:`~hunyuan_webui.web.responses`). Nothing here knows about models.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

import anyio
from fastapi import FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.formparsers import MultiPartParser

from hunyuan_webui.service import Translator
from hunyuan_webui.service.operations.documents import DocumentJobs
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Speech
from hunyuan_webui.web import fonts
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.middleware import UPLOAD_OVERHEAD, BodyLimit, RequestLog
from hunyuan_webui.web.guards.security import Redactor
from hunyuan_webui.web.page import text as page_text
from hunyuan_webui.web.protocols import PROTOCOLS
from hunyuan_webui.web.protocols.protocol import Edge
from hunyuan_webui.web.protocols.schemas import ErrorBody
from hunyuan_webui.web.responses import install_error_handlers, refuse_other_methods


def create_api(translator: Translator, settings: Settings, *,
               access: AccessControl | None = None,
               guards: Sequence[tuple[type, dict[str, Any]]] = (),
               speech: Speech | None = None) -> FastAPI:
    """The JSON app; ``guards`` are ASGI middlewares (class, options) that go innermost, inside
    CORS, the body limit and the request log, so that those see everything the guards answer."""
    access = access or AccessControl.from_settings(settings, PROTOCOLS)
    metrics = Metrics(translator)
    redact = Redactor.for_translator(translator)
    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        # Each streaming request reads its job in a worker thread; leave room beyond the defaults.
        limiter = anyio.to_thread.current_default_thread_limiter()
        limiter.total_tokens = max(limiter.total_tokens,
                                   2 * (settings.concurrency + settings.max_batch_size) + 40)
        yield

    app = FastAPI(
        title="Hunyuan-MT translator API",
        description="Streaming machine translation with Tencent's Hunyuan-MT models.",
        version="1",
        responses={400: {"model": ErrorBody}, 429: {"model": ErrorBody}},
        lifespan=lifespan,
    )
    app.state.metrics = metrics
    app.state.access = access
    app.state.redact = redact
    app.state.documents = docs = DocumentJobs(translator, ttl=settings.files_ttl)
    for guard, options in guards:
        app.add_middleware(guard, **options)
    # Always present, so that Gradio's own CORS middleware (which would echo localhost origins,
    # and any origin when the Host is not localhost) stands aside: no origins, no CORS headers.
    origins = [o.strip() for o in (settings.cors_origins or "").split(",") if o.strip()]
    app.add_middleware(CORSMiddleware, allow_origins=origins,
                       allow_methods=["GET", "POST", "DELETE"],
                       allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes,
                       upload_bytes=settings.max_file_bytes + UPLOAD_OVERHEAD,
                       explain=page_text.body_refused,
                       audio_bytes=settings.max_audio_bytes + UPLOAD_OVERHEAD)
    app.add_middleware(RequestLog, metrics=metrics, api=app)
    install_error_handlers(app)

    app.state.speech = speech
    # Files posted to the protocols (sound for the recogniser, documents) stay in memory up to
    # their limits, which BodyLimit enforces while they arrive: Starlette would otherwise spool
    # every file part over 1 MB to a temporary file on disk, and audio is never written to disk.
    MultiPartParser.spool_max_size = max(MultiPartParser.spool_max_size, settings.max_file_bytes,
                                         settings.max_audio_bytes) + UPLOAD_OVERHEAD
    edge = Edge(translator, metrics, access, redact, docs, speech)
    for protocol in PROTOCOLS:
        app.include_router(protocol.routes(edge))
    app.include_router(fonts.create_router(fonts.installed()))
    # Refusals at the Gatekeeper, in the shape each protocol's clients read.
    app.state.error_shapes = [(p.error_prefixes, p.error_shape) for p in PROTOCOLS
                              if p.error_shape is not None and p.error_prefixes]
    refuse_other_methods(app)
    return app
