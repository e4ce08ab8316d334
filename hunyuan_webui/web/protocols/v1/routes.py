"""The JSON API's routes: ``POST /v1/translate`` (JSON, or Server-Sent Events with
``"stream": true``), ``POST /v1/detect`` and ``GET /v1/languages``."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from hunyuan_webui.web.deps import CallerDep, EdgeDep
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.protocols.v1 import mapping
from hunyuan_webui.web.protocols.v1.schemas import DetectBody, TranslateBody

router = APIRouter(tags=["translation"])


@router.get("/v1/languages")
def list_languages() -> list[dict[str, Any]]:
    """The table's languages (``len(LANGUAGES)``): code, English and Chinese names, autonym, right-to-left flag."""
    return mapping.language_list()


@router.post("/v1/detect")
def detect(body: DetectBody, who: CallerDep, edge: EdgeDep) -> dict[str, Any]:
    """Detect the language of a text."""
    edge.access.charge(who, len(body.text))
    return mapping.detection(edge.translator.detect(body.text))


@router.post("/v1/translate")
async def translate(body: TranslateBody, request: Request, who: CallerDep, edge: EdgeDep) -> Any:
    """Translate one text or a list; ``"stream": true`` answers with Server-Sent Events:
    ``{"delta": str}`` per chunk, ``{"replace": str, "warnings": [...]}`` when the answer
    checks took back what was sent (the whole text so far, which the next deltas continue),
    then ``{"done": true, ...the complete response}``."""
    texts = mapping.texts_of(body)
    edge.access.charge(who, sum(len(t) for t in texts))
    requests = mapping.requests_for(body, texts, edge.translator)
    if body.stream:
        # Errors raised here (planning, the first part's start) are plain 4xx answers.
        operation = await edge.translator.atranslate_texts(requests)
        # The background task runs however the response ends. A disconnect normally cancels
        # the generator (whose `finally` cancels the work), but one that lands while Starlette
        # awaits a paused write leaves the generator suspended until garbage collection.
        request_id = getattr(request.state, "request_id", "?")
        return StreamingResponse(mapping.events(operation, request_id, edge.metrics, edge.redact),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                                 background=BackgroundTask(operation.cancel))
    results = await edge.translator.atranslate_many(requests)
    for result in results:
        edge.metrics.observe_result(result)
    return mapping.answer(body, results, edge.redact)


PROTOCOL = Protocol("v1", router, open_routes=frozenset({"/v1/languages"}))
