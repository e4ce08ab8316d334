"""LibreTranslate's routes (``POST /translate``, ``GET|POST /languages``, ``POST /detect``), so its
clients and browser extensions work unchanged. Its clients send forms, JSON or query strings, and
may carry the key in the body (``api_key``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from hunyuan_webui import languages
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.web.bodies import form_items, is_form, is_json, json_object
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.protocols.schemas import (
    LT_DETECT_FIELDS,
    LT_TRANSLATE_FIELDS,
    MAX_LIST_ITEMS,
    lt_body,
)
from hunyuan_webui.web.responses import lt_error


def create_router(translator: Translator, access: AccessControl) -> APIRouter:
    router = APIRouter(tags=["libretranslate"])

    @router.post("/translate", openapi_extra=lt_body(LT_TRANSLATE_FIELDS))
    async def lt_translate(request: Request) -> JSONResponse:
        """LibreTranslate's /translate: q, source, target (form or JSON); api_key in the body."""
        data = await _lt_params(request)
        who = _lt_caller(request, access, data)
        q = data.get("q")
        if q is None or not isinstance(q, str | list) or (
                isinstance(q, list) and not all(isinstance(x, str) for x in q)):
            return lt_error("Invalid request: missing q parameter", 400)
        texts = q if isinstance(q, list) else [q]
        if not texts or len(texts) > MAX_LIST_ITEMS:
            return lt_error(f"Invalid request: send between 1 and {MAX_LIST_ITEMS} texts", 400)
        source, target = str(data.get("source") or "auto"), data.get("target")
        if not target:
            return lt_error("Invalid request: missing target parameter", 400)
        access.charge(who, sum(len(t) for t in texts))
        requests = [TranslationRequest(text=t, source_lang=source, target_lang=str(target))
                    for t in texts]  # the same defaults as the page and /v1/translate
        results = await translator.atranslate_many(requests)
        translated: Any = [r.text for r in results]
        body: dict[str, Any] = {"translatedText": translated if isinstance(q, list) else translated[0]}
        if source == languages.AUTO:
            detected = [{"confidence": round(100 * (r.detection.confidence if r.detection else 0), 1),
                         "language": r.source_lang} for r in results]
            body["detectedLanguage"] = detected if isinstance(q, list) else detected[0]
        return JSONResponse(body)

    @router.get("/languages")
    @router.post("/languages", operation_id="lt_languages_post")
    def lt_languages() -> list[dict[str, Any]]:
        """LibreTranslate's /languages: every language can be translated to every other."""
        codes = list(languages.CODES)
        return [{"code": lang.code, "name": lang.english,
                 "targets": [c for c in codes if c != lang.code]} for lang in languages.LANGUAGES]

    @router.post("/detect", openapi_extra=lt_body(LT_DETECT_FIELDS))
    async def lt_detect(request: Request) -> JSONResponse:
        """LibreTranslate's /detect: q (form or JSON) -> [{confidence (0-100), language}]."""
        data = await _lt_params(request)
        who = _lt_caller(request, access, data)
        q = data.get("q")
        if not isinstance(q, str):
            return lt_error("Invalid request: missing q parameter", 400)
        access.charge(who, len(q))
        det = translator.detect(q)
        candidates = det.candidates or ((det.code, det.confidence),) if det.code else ()
        return JSONResponse([{"confidence": round(100 * p, 1), "language": c}
                             for c, p in candidates if c])

    return router


def _lt_caller(request: Request, access: AccessControl, data: dict[str, Any]) -> Caller:
    """A key from the headers (checked and counted by the Gatekeeper), else the body's api_key."""
    caller = getattr(request.state, "caller", None)
    return caller if isinstance(caller, Caller) else access.check_key(data.get("api_key"))


async def _lt_params(request: Request) -> dict[str, Any]:
    """LibreTranslate clients send forms, JSON or query strings."""
    data: dict[str, Any] = dict(request.query_params)
    content_type = request.headers.get("content-type", "")
    if is_json(content_type):
        data.update(await json_object(request))
    elif is_form(content_type):
        form: dict[str, list[Any]] = {}
        for key, value in await form_items(request):
            form.setdefault(key, []).append(value)
        for key, values in form.items():
            data[key] = values if key == "q" and len(values) > 1 else values[0]
    return data


PROTOCOL = Protocol("libretranslate", lambda edge: create_router(edge.translator, edge.access),
                    open_routes=frozenset({"/languages"}),
                    key_in_body=frozenset({"/translate", "/detect"}))  # LibreTranslate's api_key
