"""Operational routes: liveness, readiness, Prometheus metrics, the phrase cache, and what model
is loaded. ``/ready`` and ``/health`` also say which speech recogniser is loaded, or why there is
none (``speech``): ``/ready`` waits for it to finish loading, but a recogniser that could not be
had does not make the app unready (a class can be typed)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from hunyuan_webui.engine.restarts import GIVEN_UP
from hunyuan_webui.service import Translator
from hunyuan_webui.speech import Speech
from hunyuan_webui.web.deps import CallerDep
from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.security import Redactor
from hunyuan_webui.web.protocols.protocol import Protocol

log = logging.getLogger("hunyuan_webui.web.api")


def create_router(translator: Translator, metrics: Metrics, redact: Redactor,
                  speech: Speech | None = None) -> APIRouter:
    router = APIRouter(tags=["operations"])

    def hearing() -> dict[str, Any]:
        if speech is None:
            return {"state": "off", "reason": "This app has no speech recogniser."}
        return redact.answer(speech.status().to_dict())

    @router.get("/health")
    def health() -> JSONResponse:
        """The process is alive and can still serve: 503 once the engine's supervisor has given
        up restarting it (only restarting the app helps then; a liveness probe should)."""
        status = translator.engine.status()
        if status.extra.get(GIVEN_UP):
            return JSONResponse({"status": "failed", "reason": redact.text(status.reason),
                                 "speech": hearing()}, status_code=503)
        return JSONResponse({"status": "ok", "speech": hearing()})

    @router.get("/ready")
    def ready() -> JSONResponse:
        """The model is loaded and warm, and its process answers (503 otherwise, with the state
        and any reason: loading, restarting, a late heartbeat, a failure)."""
        status = translator.engine.status()
        settled = speech is None or speech.status().settled
        return JSONResponse({**redact.answer(status.to_dict()), "speech": hearing()},
                            status_code=200 if status.ready and settled else 503)

    @router.get("/metrics")
    def prometheus() -> Response:
        """Prometheus metrics."""
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    @router.get("/v1/cache")
    def cache_stats(who: CallerDep) -> dict[str, Any]:
        """Phrase cache statistics (hits, misses, size, backend)."""
        cache = translator.cache
        return cache.stats().to_dict() if cache is not None else {"backend": "off"}

    @router.delete("/v1/cache")
    def cache_clear(who: CallerDep) -> dict[str, Any]:
        """Empty the phrase cache (memory, disk and this app's Redis keys)."""
        cache = translator.cache
        if cache is None:
            return {"cleared": False, "backend": "off"}
        cache.clear()
        log.info("phrase cache cleared by %s", who.key_id or "an open API")
        return {"cleared": True, **cache.stats().to_dict()}

    @router.get("/v1/model", tags=["translation"])
    def model_info() -> dict[str, Any]:
        """The loaded model: its prompt family, the modes it has prompts for, its chat format and
        the decoding defaults a request starts from."""
        spec = translator.spec
        return {"id": spec.public_id, "family": str(spec.family), "modes": sorted(spec.modes),
                "chat_format": spec.chat_format, "description": spec.description,
                "decoding": spec.decoding.settings(), "demo": spec.demo}

    return router


PROTOCOL = Protocol("ops", lambda edge: create_router(edge.translator, edge.metrics, edge.redact,
                                                     edge.speech),
                    open_routes=frozenset({"/health", "/ready", "/metrics"}))
