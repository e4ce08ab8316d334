"""Operational routes: liveness, readiness, Prometheus metrics, the phrase cache, and what model
is loaded. ``/ready`` and ``/health`` also say which speech recogniser is loaded, or why there is
none (``speech``): ``/ready`` waits for it to finish loading, but a recogniser that could not be
had does not make the app unready (a class can be typed). They take no body and answer the
service's own figures, so this protocol is one module rather than three (no schemas to read,
nothing to map onto the front door)."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from hunyuan_webui.engine.restarts import GIVEN_UP
from hunyuan_webui.web.deps import CallerDep, Edge, EdgeDep
from hunyuan_webui.web.protocols.protocol import Protocol

log = logging.getLogger("hunyuan_webui.web.api")
router = APIRouter(tags=["operations"])


def _hearing(edge: Edge) -> dict[str, Any]:
    if edge.speech is None:
        return {"state": "off", "reason": "This app has no speech recogniser."}
    return edge.redact.answer(edge.speech.status().to_dict())


@router.get("/health")
def health(edge: EdgeDep) -> JSONResponse:
    """The process is alive and can still serve: ``{"status": "ok"}`` (LibreTranslate's answer,
    which its clients and tests read whole; which recogniser is loaded is on ``/ready``), or 503
    once the engine's supervisor has given up restarting it (only restarting the app helps then;
    a liveness probe should)."""
    status = edge.translator.status()
    if status.extra.get(GIVEN_UP):
        return JSONResponse({"status": "failed", "reason": edge.redact.text(status.reason),
                             "speech": _hearing(edge)}, status_code=503)
    return JSONResponse({"status": "ok"})  # LibreTranslate's own test reads exactly this


@router.get("/ready")
def ready(edge: EdgeDep) -> JSONResponse:
    """The model is loaded and warm, and its process answers (503 otherwise, with the state
    and any reason: loading, restarting, a late heartbeat, a failure)."""
    status = edge.translator.status()
    settled = edge.speech is None or edge.speech.status().settled
    return JSONResponse({**edge.redact.answer(status.to_dict()), "speech": _hearing(edge)},
                        status_code=200 if status.ready and settled else 503)


@router.get("/metrics")
def prometheus(edge: EdgeDep) -> Response:
    """Prometheus metrics."""
    body, content_type = edge.metrics.render()
    return Response(body, media_type=content_type)


@router.get("/v1/cache")
def cache_stats(who: CallerDep, edge: EdgeDep) -> dict[str, Any]:
    """Phrase cache statistics (hits, misses, size, backend)."""
    cache = edge.translator.cache
    return cache.stats().to_dict() if cache is not None else {"backend": "off"}


@router.delete("/v1/cache")
def cache_clear(who: CallerDep, edge: EdgeDep) -> dict[str, Any]:
    """Empty the phrase cache (memory, disk and this app's Redis keys)."""
    cache = edge.translator.cache
    if cache is None:
        return {"cleared": False, "backend": "off"}
    cache.clear()
    log.info("phrase cache cleared by %s", who.key_id or "an open API")
    return {"cleared": True, **cache.stats().to_dict()}


@router.get("/v1/model", tags=["translation"])
def model_info(edge: EdgeDep) -> dict[str, Any]:
    """The loaded model: its prompt family, the modes it has prompts for, its chat format and
    the decoding defaults a request starts from."""
    spec = edge.translator.spec
    return {"id": spec.public_id, "family": str(spec.family), "modes": sorted(spec.modes),
            "chat_format": spec.chat_format, "description": spec.description,
            "decoding": spec.decoding.settings(), "demo": spec.demo}


PROTOCOL = Protocol("ops", router, open_routes=frozenset({"/health", "/ready", "/metrics"}))
