"""The JSON API onto the service's front door: a body's texts as translation requests, and the
service's results, detections and streamed updates as the API's answers."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.detect import Detection
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.modes import parse_glossary, parse_instructions
from hunyuan_webui.service import Operation, TranslationRequest, TranslationResult, Translator
from hunyuan_webui.web.guards.metrics import Metrics
from hunyuan_webui.web.guards.security import Redactor
from hunyuan_webui.web.protocols.protocol import MAX_LIST_ITEMS
from hunyuan_webui.web.protocols.v1.schemas import TranslateBody
from hunyuan_webui.web.responses import sse_event

log = logging.getLogger("hunyuan_webui.web.api")


def language_list() -> list[dict[str, Any]]:
    return [{"code": lang.code, "english": lang.english, "chinese": lang.chinese,
             "autonym": lang.autonym, "rtl": lang.rtl} for lang in languages.LANGUAGES]


def detection(det: Detection) -> dict[str, Any]:
    return {"language": det.code, "confidence": round(det.confidence, 4),
            "reliable": det.reliable,
            "candidates": [{"language": c, "confidence": round(p, 4)} for c, p in det.candidates]}


def texts_of(body: TranslateBody) -> list[str]:
    """The body's texts (one, or a list), within the API's rules."""
    texts = body.text if isinstance(body.text, list) else [body.text]
    if not texts or len(texts) > MAX_LIST_ITEMS:
        raise InputError(f"Send between 1 and {MAX_LIST_ITEMS} texts.")
    if body.stream and isinstance(body.text, list):
        raise InputError("Streaming takes a single text; send a list without \"stream\".")
    return texts


def requests_for(body: TranslateBody, texts: list[str],
                 translator: Translator) -> list[TranslationRequest]:
    """One request per text, the body's languages, mode and options on each."""
    options = DecodingOptions.from_mapping(body.options.decoding(), translator.spec.decoding)
    extra = body.options
    previous = _previous(body.previous, texts)
    return [TranslationRequest(text=t, source_lang=body.source_lang,
                               target_lang=body.target_lang, options=options,
                               mode=extra.mode or body.mode, context=extra.context,
                               glossary=parse_glossary(extra.glossary),
                               variants=extra.variants, cache=body.cache, style=extra.style,
                               instructions=parse_instructions(extra.instructions),
                               data_format=extra.data_format or "",
                               previous=p) for t, p in zip(texts, previous)]


def _previous(previous: str | list[str], texts: list[str]) -> list[str]:
    """The previous translation of each text: a string for one text, a list for a list."""
    if isinstance(previous, str):
        if previous and len(texts) > 1:
            raise InputError("With a list of texts, \"previous\" is a list too: one previous "
                             "translation per text (\"\" where there is none).")
        return [previous] * len(texts)
    if len(previous) != len(texts):
        raise InputError(f"\"previous\" has {len(previous)} entries for {len(texts)} texts.")
    return previous


def answer(body: TranslateBody, results: list[TranslationResult],
           redact: Redactor) -> dict[str, Any]:
    """One text's answer, or a list's: the lists side by side, usage summed, and every item."""
    payload = [redact.answer(r.to_dict()) for r in results]
    if not isinstance(body.text, list):
        return payload[0]
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


async def events(operation: Operation, request_id: str, metrics: Metrics,
                 redact: Redactor) -> AsyncIterator[str]:
    """The operation as Server-Sent Events: ``{"delta"}`` per chunk, ``{"replace", "warnings"}``
    when the answer checks took back what was sent (the whole text so far, which the next deltas
    continue), then ``{"done": true, ...}`` with the whole answer; an error after the headers is
    an ``error`` event."""
    # Starlette's StreamingResponse notices a disconnect itself and (usually) cancels this generator.
    try:
        async for updates in operation.updates():
            replaced = next((i for i in range(len(updates) - 1, -1, -1)
                             if getattr(updates[i], "replaced", False)), None)
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
        log.info("stream cancelled: %s", request_id)
        raise
