"""The JSON API: ``POST /v1/translate`` (JSON, or Server-Sent Events with ``"stream": true``),
``POST /v1/detect`` and ``GET /v1/languages``.

A text is translated as the page translates it (:class:`~hunyuan_webui.service.LongText`): up to
ten times ``--max-input-chars``, in parts when it is longer than one request may be.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from hunyuan_webui import languages
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.modes import parse_glossary, parse_instructions
from hunyuan_webui.service import LongText, TranslationRequest, Translator
from hunyuan_webui.web.deps import CallerDep
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.security import Redactor
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.protocols.schemas import MAX_LIST_ITEMS, DetectBody, TranslateBody
from hunyuan_webui.web.responses import sse_event

log = logging.getLogger("hunyuan_webui.web.api")


def create_router(translator: Translator, metrics: Metrics, access: AccessControl,
                  redact: Redactor) -> APIRouter:
    router = APIRouter(tags=["translation"])

    @router.get("/v1/languages")
    def list_languages() -> list[dict[str, Any]]:
        """The 38 languages: code, English and Chinese names, autonym, right-to-left flag."""
        return [{"code": lang.code, "english": lang.english, "chinese": lang.chinese,
                 "autonym": lang.autonym, "rtl": lang.rtl} for lang in languages.LANGUAGES]

    @router.post("/v1/detect")
    def detect(body: DetectBody, who: CallerDep) -> dict[str, Any]:
        """Detect the language of a text."""
        access.charge(who, len(body.text))
        det = translator.detect(body.text)
        return {"language": det.code, "confidence": round(det.confidence, 4),
                "reliable": det.reliable,
                "candidates": [{"language": c, "confidence": round(p, 4)} for c, p in det.candidates]}

    @router.post("/v1/translate")
    async def translate(body: TranslateBody, request: Request, who: CallerDep) -> Any:
        """Translate one text or a list; ``"stream": true`` answers with Server-Sent Events:
        ``{"delta": str}`` per chunk, ``{"replace": str, "warnings": [...]}`` when the answer
        checks took back what was sent (the whole text so far, which the next deltas continue),
        then ``{"done": true, ...the complete response}``."""
        texts = body.text if isinstance(body.text, list) else [body.text]
        if not texts or len(texts) > MAX_LIST_ITEMS:
            raise InputError(f"Send between 1 and {MAX_LIST_ITEMS} texts.")
        if body.stream and isinstance(body.text, list):
            raise InputError("Streaming takes a single text; send a list without \"stream\".")
        access.charge(who, sum(len(t) for t in texts))
        options = DecodingOptions.from_mapping(body.options.decoding(), translator.spec.decoding)
        extra = body.options
        requests = [TranslationRequest(text=t, source_lang=body.source_lang,
                                       target_lang=body.target_lang, options=options,
                                       mode=extra.mode or body.mode, context=extra.context,
                                       glossary=parse_glossary(extra.glossary),
                                       variants=extra.variants, cache=body.cache,
                                       style=extra.style,
                                       instructions=parse_instructions(extra.instructions),
                                       data_format=extra.data_format or "") for t in texts]
        if body.stream:
            # Errors raised here (planning, the first part's start) are plain 4xx answers.
            text = await LongText.open(translator, requests[0])
            # The background task runs however the response ends. A disconnect normally cancels
            # the generator (whose `finally` cancels the job), but one that lands while Starlette
            # awaits a paused write leaves the generator suspended until garbage collection.
            return StreamingResponse(_sse(text, request, metrics, redact),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache",
                                              "X-Accel-Buffering": "no"},
                                     background=BackgroundTask(text.cancel))
        results = await translate_texts(translator, requests)
        for r in results:
            metrics.observe_result(r)
        payload = [redact.answer(r.to_dict()) for r in results]
        return _list_answer(payload) if isinstance(body.text, list) else payload[0]

    return router


async def run_jobs(translator: Translator, requests: list[TranslationRequest]) -> list[Any]:
    """Validate every request, then translate them together (their segments share batches)."""
    return await anyio.to_thread.run_sync(translator.translate_many, requests)


async def translate_texts(translator: Translator,
                          requests: list[TranslationRequest]) -> list[Any]:
    """Texts of any accepted length: those within one request's limits batch together
    (:func:`run_jobs`); a longer one is translated in parts, one text after another."""
    def translate() -> list[Any]:
        texts = [LongText.plan(translator, r) for r in requests]  # every length checked first
        if all(t.parts == 1 for t in texts):
            return translator.translate_many(requests)
        for r, t in zip(requests, texts, strict=True):  # the longer ones were validated by parts
            if t.parts == 1:
                translator.validate(r)
        return [t.result() for t in texts]

    return await anyio.to_thread.run_sync(translate)


async def _sse(text: LongText, request: Request, metrics: Metrics,
               redact: Redactor) -> AsyncIterator[str]:
    # Starlette's StreamingResponse notices a disconnect itself and (usually) cancels this generator.
    try:
        async for updates in text.updates():
            replaced = next((i for i in range(len(updates) - 1, -1, -1)
                             if updates[i].replaced), None)
            if replaced is not None:  # the answer checks took back text already sent
                yield sse_event({"replace": updates[replaced].text,
                                 "warnings": [dict(w) for w in updates[replaced].warnings]})
                updates = updates[replaced + 1:] or updates[-1:]
            delta = "".join(u.delta for u in updates)
            if delta:
                yield sse_event({"delta": delta})
            final = updates[-1].result
            if final is not None:
                metrics.observe_result(final)
                yield sse_event({"done": True, **redact.answer(final.to_dict())})
    except TranslatorError as exc:
        metrics.count_error("/v1/translate", exc.http_status)
        yield sse_event({"error": {"code": exc.code, "message": redact.text(exc.user_message)}},
                     event="error")
    except asyncio.CancelledError:
        log.info("stream cancelled: %s", getattr(request.state, "request_id", "?"))
        raise


def _list_answer(payload: list[dict[str, Any]]) -> dict[str, Any]:
    """The answer to a list of texts: the lists side by side, usage summed, and every item."""
    return {
        "translation": [p["translation"] for p in payload],
        "source_lang": [p["source_lang"] for p in payload],
        "target_lang": payload[0]["target_lang"], "model": payload[0]["model"],
        "cached": all(p["cached"] for p in payload),
        "usage": _sum_usage([p["usage"] for p in payload]),
        "items": payload,
    }


def _sum_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("prompt_tokens", "completion_tokens", "segments", "cached_segments"):
        out[key] = sum(u.get(key) or 0 for u in usages)
    out["latency_s"] = max((u.get("latency_s") or 0) for u in usages)
    return out


PROTOCOL = Protocol("v1", lambda edge: create_router(edge.translator, edge.metrics, edge.access,
                                                     edge.redact),
                    open_routes=frozenset({"/v1/languages"}))
