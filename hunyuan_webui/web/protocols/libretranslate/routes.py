"""LibreTranslate's routes: ``POST /translate``, ``GET|POST /languages``, ``POST /detect``; the
key may come in the body (``api_key``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hunyuan_webui.web.deps import EdgeDep
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.libretranslate import mapping
from hunyuan_webui.web.protocols.libretranslate.schemas import (
    LT_DETECT_FIELDS,
    LT_TRANSLATE_FIELDS,
    error,
    lt_body,
    read_params,
)
from hunyuan_webui.web.protocols.protocol import Protocol

router = APIRouter(tags=["libretranslate"])


def _caller(request: Request, access: AccessControl, data: dict[str, Any]) -> Caller:
    """A key from the headers (checked and counted by the Gatekeeper), else the body's api_key."""
    caller = getattr(request.state, "caller", None)
    return caller if isinstance(caller, Caller) else access.check_key(data.get("api_key"))


@router.post("/translate", openapi_extra=lt_body(LT_TRANSLATE_FIELDS))
async def lt_translate(request: Request, edge: EdgeDep) -> JSONResponse:
    """LibreTranslate's /translate: q, source, target (form or JSON); api_key in the body."""
    data = await read_params(request)
    who = _caller(request, edge.access, data)
    q = data.get("q")
    texts = mapping.texts_of(q)
    if isinstance(texts, str):
        return error(texts, 400)
    source, target = str(data.get("source") or "auto"), data.get("target")
    if not target:
        return error("Invalid request: missing target parameter", 400)
    edge.access.charge(who, sum(len(t) for t in texts))
    results = await edge.translator.atranslate_many(
        mapping.requests_for(texts, source, str(target)))
    return JSONResponse(mapping.answer(q, source, results))


@router.get("/languages")
@router.post("/languages", operation_id="lt_languages_post")
def lt_languages() -> list[dict[str, Any]]:
    """LibreTranslate's /languages: every language can be translated to every other."""
    return mapping.language_list()


@router.post("/detect", openapi_extra=lt_body(LT_DETECT_FIELDS))
async def lt_detect(request: Request, edge: EdgeDep) -> JSONResponse:
    """LibreTranslate's /detect: q (form or JSON) -> [{confidence (0-100), language}]."""
    data = await read_params(request)
    who = _caller(request, edge.access, data)
    q = data.get("q")
    if not isinstance(q, str):
        return error("Invalid request: missing q parameter", 400)
    edge.access.charge(who, len(q))
    return JSONResponse(mapping.detections(edge.translator.detect(q)))


PROTOCOL = Protocol("libretranslate", router, open_routes=frozenset({"/languages"}),
                    key_in_body=frozenset({"/translate", "/detect"}))  # LibreTranslate's api_key
