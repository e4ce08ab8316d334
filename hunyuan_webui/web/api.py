"""The HTTP API beside the page: JSON + SSE, LibreTranslate-compatible routes, health, metrics.

A thin layer over :class:`~hunyuan_webui.service.Translator`: request bodies are parsed and checked
here, translated by the service, and every :class:`~hunyuan_webui.errors.TranslatorError` becomes a
JSON error with a 4xx/5xx status in exactly one handler. Nothing here knows about models.

Routes: ``POST /v1/translate`` (JSON, or Server-Sent Events with ``"stream": true``),
``GET /v1/languages``, ``POST /v1/detect``, ``GET /health``, ``GET /ready``, ``GET /metrics``
(Prometheus), and LibreTranslate's ``POST /translate``, ``GET|POST /languages``, ``POST /detect``.
OpenAI's and DeepL's protocols are routers of their own (:mod:`~hunyuan_webui.web.openai`,
:mod:`~hunyuan_webui.web.deepl`), included here.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import asdict
from typing import Annotated, Any, Literal

import anyio
from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from starlette.background import BackgroundTask
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Mount

from hunyuan_webui import languages
from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions
from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.modes import (
    MAX_ALTERNATIVES,
    MAX_STYLE_CHARS,
    MODE_HELP,
    MODES,
    parse_glossary,
    parse_instructions,
)
from hunyuan_webui.service import Job, TranslationRequest, Translator
from hunyuan_webui.service.job import batched_updates
from hunyuan_webui.settings import Settings
from hunyuan_webui.structured import FORMATS
from hunyuan_webui.web.access import AccessControl, Caller
from hunyuan_webui.web.metrics import Metrics
from hunyuan_webui.web.security import UPLOAD_ROUTE, Redactor, route_path

log = logging.getLogger("hunyuan_webui.web.api")

MAX_LIST_ITEMS = 128
UPLOAD_OVERHEAD = 64 * 1024  # multipart boundaries and part headers around an uploaded file
FASTAPI_BODY_ERROR = "There was an error parsing the body"  # FastAPI's 400 for an unreadable body
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")  # a client's X-Request-ID is kept if it looks sane


def _whole(value: Any) -> Any:
    """A JSON number like 20.0 is accepted where a whole number is expected."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


_LOW = {name: low for name, (low, _) in OPTION_BOUNDS.items()}
_HIGH = {name: high for name, (_, high) in OPTION_BOUNDS.items()}
_Whole = BeforeValidator(_whole)


REQUEST_FIELDS = ("mode", "context", "glossary", "variants", "style", "instructions",
                  "data_format")
QUIET_ROUTES = ("/gradio_api/queue/data", "/gradio_api/heartbeat", "/gradio_api/run/",
                "/gradio_api/api/")


_MODEL_DEFAULT = "Default: the loaded model's (its model card's; see GET /v1/model)."


class Options(BaseModel):
    """Decoding options; what is left out is the loaded model's default (its model card's).
    Unknown names are refused (400)."""

    model_config = ConfigDict(extra="allow")  # left to DecodingOptions, whose error lists the names

    deterministic: StrictBool = Field(False, description="Greedy decoding: same text, same answer.")
    # Left out, these are the model's; an explicit null is refused (the None default is never
    # validated and never reaches DecodingOptions: decoding() keeps only what was given).
    temperature: float = Field(None, ge=_LOW["temperature"], le=_HIGH["temperature"],  # type: ignore[assignment]
                               strict=True, description=_MODEL_DEFAULT)
    top_p: float = Field(None, ge=_LOW["top_p"], le=_HIGH["top_p"], strict=True,  # type: ignore[assignment]
                         description=_MODEL_DEFAULT)
    top_k: Annotated[StrictInt, _Whole] = Field(None, ge=_LOW["top_k"], le=_HIGH["top_k"],  # type: ignore[assignment]
                                                description="0: no top-k cut. " + _MODEL_DEFAULT)
    repetition_penalty: float = Field(None, ge=_LOW["repetition_penalty"],  # type: ignore[assignment]
                                      le=_HIGH["repetition_penalty"], strict=True,
                                      description=_MODEL_DEFAULT)
    max_new_tokens: Annotated[StrictInt, Field(ge=_LOW["max_new_tokens"],
                                               le=_HIGH["max_new_tokens"]), _Whole] | None = Field(
        None, description="Cap on generated tokens per segment (default: from the input length).")
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1), _Whole] | None = Field(
        None, description="Makes sampling repeatable (torch.Generator's range).")
    # What to do rather than how to decode: the translation mode and its inputs.
    mode: Literal[MODES] | None = Field(  # type: ignore[valid-type]
        None, description="; ".join(f"{m}: {h}" for m, h in MODE_HELP.items()))
    context: StrictStr = Field("", max_length=5000,
                               description="context mode: surrounding text, not translated.")
    glossary: list[Annotated[list[StrictStr], Field(min_length=2, max_length=2)]] | dict[
        StrictStr, StrictStr] = Field(default_factory=list, description=(
            "Term pairs [[source, target], ...] or {source: target}; the answer reports which "
            "targets appear."))
    variants: StrictInt = Field(3, ge=1, le=MAX_ALTERNATIVES,
                                description="alternatives mode: how many translations.")
    style: StrictStr = Field("", max_length=MAX_STYLE_CHARS,
                             description="style mode: the style, in free text.")
    instructions: list[StrictStr] | StrictStr = Field(
        default_factory=list, description="instructions mode: your instructions, a list or one "
                                          "per line (the prompt numbers them).")
    data_format: Literal[tuple(FORMATS)] | None = Field(  # type: ignore[valid-type]
        None, description="structured mode: the data's format (default: detected).")

    def decoding(self) -> dict[str, Any]:
        """The decoding options the client gave (the rest are the model's defaults)."""
        return self.model_dump(exclude_unset=True, exclude=set(REQUEST_FIELDS))


class TranslateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: StrictStr | list[StrictStr] = Field(description="Text, or a list of texts.",
                                              examples=["今天天气很好。"])
    source_lang: StrictStr = Field("auto", description="Language code, or 'auto' to detect it.",
                                   examples=["auto", "zh"])
    target_lang: StrictStr = Field(description="Language code (see /v1/languages).",
                                   examples=["en"])
    options: Options = Field(default_factory=Options, examples=[{"deterministic": True}])
    mode: StrictStr = Field(TRANSLATE, description="Same as options.mode (kept for clients that "
                            "send it at the top level).")
    stream: StrictBool = Field(False, description="Answer with Server-Sent Events.")
    cache: StrictBool = Field(True, description=(
        "Answer repeated sentences from the phrase cache and share identical ones in flight "
        "(the default, whatever the decoding options). false: a fresh translation, which then "
        "replaces the cached one."))


class DetectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: StrictStr = Field(examples=["Where is the train station?"])


class ErrorBody(BaseModel):
    error: dict[str, str]


# LibreTranslate's parameters, read by hand (forms, JSON or query strings); documented here.
_LT_TEXT = {"type": "string", "examples": ["Where is the train station?"]}
LT_TRANSLATE_FIELDS: dict[str, Any] = {
    "q": {"anyOf": [_LT_TEXT, {"type": "array", "items": {"type": "string"}}]},
    "source": {"type": "string", "default": "auto", "examples": ["auto", "en"]},
    "target": {"type": "string", "examples": ["zh"]},
    "format": {"type": "string", "enum": ["text", "html"]},
    "api_key": {"type": "string"},
}
LT_DETECT_FIELDS: dict[str, Any] = {"q": _LT_TEXT, "api_key": {"type": "string"}}


def _lt_body(fields: dict[str, Any]) -> dict[str, Any]:
    required = [name for name in ("q", "target") if name in fields]
    schema = {"type": "object", "properties": fields, "required": required}
    form = {**schema, "properties": {k: (_LT_TEXT if k == "q" else v) for k, v in fields.items()}}
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": schema},
        "application/x-www-form-urlencoded": {"schema": form}}}}


def _caller(request: Request) -> Caller:
    """The key the Gatekeeper accepted (and counted) for this request; OPEN without keys."""
    caller = getattr(request.state, "caller", None)
    if isinstance(caller, Caller):
        return caller
    access: AccessControl = request.app.state.access
    return access.identify(None)  # 401 if keys are configured (the Gatekeeper said so first)


CallerDep = Annotated[Caller, Depends(_caller)]


def create_api(translator: Translator, settings: Settings, *,
               access: AccessControl | None = None,
               guards: Sequence[tuple[type, dict[str, Any]]] = ()) -> FastAPI:
    """The JSON app; ``guards`` are ASGI middlewares (class, options) that go innermost, inside
    CORS, the body limit and the request log, so that those see everything the guards answer."""
    access = access or AccessControl.from_settings(settings)
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
    for guard, options in guards:
        app.add_middleware(guard, **options)
    # Always present, so that Gradio's own CORS middleware (which would echo localhost origins,
    # and any origin when the Host is not localhost) stands aside: no origins, no CORS headers.
    origins = [o.strip() for o in (settings.cors_origins or "").split(",") if o.strip()]
    app.add_middleware(CORSMiddleware, allow_origins=origins, allow_methods=["GET", "POST"],
                       allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes,
                       upload_bytes=settings.max_file_bytes + UPLOAD_OVERHEAD)
    app.add_middleware(RequestLog, metrics=metrics, api=app)
    _install_error_handlers(app)

    @app.get("/health", tags=["operations"])
    def health() -> dict[str, str]:
        """The process is alive."""
        return {"status": "ok"}

    @app.get("/ready", tags=["operations"])
    def ready() -> JSONResponse:
        """The model is loaded and warm (503 until then, with the state and any failure reason)."""
        status = translator.engine.status()
        return JSONResponse(redact.answer(status.to_dict()),
                            status_code=200 if status.ready else 503)

    @app.get("/metrics", tags=["operations"])
    def prometheus() -> Response:
        """Prometheus metrics."""
        body, content_type = metrics.render()
        return Response(body, media_type=content_type)

    @app.get("/v1/cache", tags=["operations"])
    def cache_stats(who: CallerDep) -> dict[str, Any]:
        """Phrase cache statistics (hits, misses, size, backend)."""
        cache = translator.cache
        return cache.stats().to_dict() if cache is not None else {"backend": "off"}

    @app.delete("/v1/cache", tags=["operations"])
    def cache_clear(who: CallerDep) -> dict[str, Any]:
        """Empty the phrase cache (memory, disk and this app's Redis keys)."""
        cache = translator.cache
        if cache is None:
            return {"cleared": False, "backend": "off"}
        cache.clear()
        log.info("phrase cache cleared by %s", who.key_id or "an open API")
        return {"cleared": True, **cache.stats().to_dict()}

    @app.get("/v1/model", tags=["translation"])
    def model_info() -> dict[str, Any]:
        """The loaded model: its prompt family, the modes it has prompts for, its chat format and
        the decoding defaults a request starts from."""
        spec = translator.spec
        return {"id": spec.id, "family": str(spec.family), "modes": sorted(spec.modes),
                "chat_format": spec.chat_format, "description": spec.description,
                "decoding": asdict(spec.decoding), "demo": spec.demo}

    @app.get("/v1/languages", tags=["translation"])
    def list_languages() -> list[dict[str, Any]]:
        """The 38 languages: code, English and Chinese names, autonym, right-to-left flag."""
        return [{"code": lang.code, "english": lang.english, "chinese": lang.chinese,
                 "autonym": lang.autonym, "rtl": lang.rtl} for lang in languages.LANGUAGES]

    @app.post("/v1/detect", tags=["translation"])
    def detect(body: DetectBody, who: CallerDep) -> dict[str, Any]:
        """Detect the language of a text."""
        access.charge(who, len(body.text))
        det = translator.detect(body.text)
        return {"language": det.code, "confidence": round(det.confidence, 4),
                "reliable": det.reliable,
                "candidates": [{"language": c, "confidence": round(p, 4)} for c, p in det.candidates]}

    @app.post("/v1/translate", tags=["translation"])
    async def translate(body: TranslateBody, request: Request, who: CallerDep) -> Any:
        """Translate one text or a list; ``"stream": true`` answers with Server-Sent Events:
        ``{"delta": str}`` per chunk, then ``{"done": true, ...the complete response}``."""
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
            job = translator.start(requests[0])  # errors raised here are plain 4xx answers
            # The background task runs however the response ends. A disconnect normally cancels
            # the generator (whose `finally` cancels the job), but one that lands while Starlette
            # awaits a paused write leaves the generator suspended until garbage collection.
            return StreamingResponse(_sse(job, request, metrics, redact),
                                     media_type="text/event-stream",
                                     headers={"Cache-Control": "no-cache",
                                              "X-Accel-Buffering": "no"},
                                     background=BackgroundTask(job.cancel))
        results = await _run_jobs(translator, requests)
        for r in results:
            metrics.observe_result(r)
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

    # -- LibreTranslate compatibility -------------------------------------------------------------
    @app.post("/translate", tags=["libretranslate"], openapi_extra=_lt_body(LT_TRANSLATE_FIELDS))
    async def lt_translate(request: Request) -> JSONResponse:
        """LibreTranslate's /translate: q, source, target (form or JSON); api_key in the body."""
        data = await _lt_params(request)
        who = _lt_caller(request, access, data)
        q = data.get("q")
        if q is None or not isinstance(q, str | list) or (
                isinstance(q, list) and not all(isinstance(x, str) for x in q)):
            return _lt_error("Invalid request: missing q parameter", 400)
        texts = q if isinstance(q, list) else [q]
        if not texts or len(texts) > MAX_LIST_ITEMS:
            return _lt_error(f"Invalid request: send between 1 and {MAX_LIST_ITEMS} texts", 400)
        source, target = str(data.get("source") or "auto"), data.get("target")
        if not target:
            return _lt_error("Invalid request: missing target parameter", 400)
        access.charge(who, sum(len(t) for t in texts))
        requests = [TranslationRequest(text=t, source_lang=source, target_lang=str(target))
                    for t in texts]  # the same defaults as the page and /v1/translate
        results = await _run_jobs(translator, requests)
        translated: Any = [r.text for r in results]
        body: dict[str, Any] = {"translatedText": translated if isinstance(q, list) else translated[0]}
        if source == languages.AUTO:
            detected = [{"confidence": round(100 * (r.detection.confidence if r.detection else 0), 1),
                         "language": r.source_lang} for r in results]
            body["detectedLanguage"] = detected if isinstance(q, list) else detected[0]
        return JSONResponse(body)

    @app.get("/languages", tags=["libretranslate"])
    @app.post("/languages", tags=["libretranslate"], operation_id="lt_languages_post")
    def lt_languages() -> list[dict[str, Any]]:
        """LibreTranslate's /languages: every language can be translated to every other."""
        codes = list(languages.CODES)
        return [{"code": lang.code, "name": lang.english,
                 "targets": [c for c in codes if c != lang.code]} for lang in languages.LANGUAGES]

    @app.post("/detect", tags=["libretranslate"], openapi_extra=_lt_body(LT_DETECT_FIELDS))
    async def lt_detect(request: Request) -> JSONResponse:
        """LibreTranslate's /detect: q (form or JSON) -> [{confidence (0-100), language}]."""
        data = await _lt_params(request)
        who = _lt_caller(request, access, data)
        q = data.get("q")
        if not isinstance(q, str):
            return _lt_error("Invalid request: missing q parameter", 400)
        access.charge(who, len(q))
        det = translator.detect(q)
        candidates = det.candidates or ((det.code, det.confidence),) if det.code else ()
        return JSONResponse([{"confidence": round(100 * p, 1), "language": c}
                             for c, p in candidates if c])

    # Other tools' protocols, a module each (imported here: they use this module's dependencies).
    from hunyuan_webui.web import deepl as deepl_compat
    from hunyuan_webui.web import openai as openai_compat

    app.include_router(openai_compat.create_router(translator))
    app.include_router(deepl_compat.create_router(translator))
    # Refusals at the Gatekeeper, in the shape each protocol's clients read.
    app.state.error_shapes = [(("/v1/chat/", "/v1/models"), openai_compat.error_shape),
                              (("/v2/",), deepl_compat.error_shape)]
    _refuse_other_methods(app)
    return app


# -- helpers ---------------------------------------------------------------------------------------
def _refuse_other_methods(app: FastAPI) -> None:
    """A wrong method on an API path gets a JSON 405 (else the page mounted at / answers 404)."""
    allowed: dict[str, set[str]] = {}
    for route in app.router.routes:
        if isinstance(route, APIRoute):
            allowed.setdefault(route.path, set()).update(route.methods)
    for path, methods in allowed.items():
        others = sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - methods)
        if others:
            app.add_api_route(path, _method_not_allowed(", ".join(sorted(methods))),
                              methods=others, include_in_schema=False)


def _method_not_allowed(allow: str) -> Callable[[], Any]:
    async def refuse() -> None:
        raise StarletteHTTPException(405, "Method Not Allowed", headers={"Allow": allow})

    return refuse


async def _run_jobs(translator: Translator, requests: list[TranslationRequest]) -> list[Any]:
    """Validate every request, then translate them together (their segments share batches)."""
    return await anyio.to_thread.run_sync(translator.translate_many, requests)


async def _sse(job: Job, request: Request, metrics: Metrics,
               redact: Redactor) -> AsyncIterator[str]:
    # Starlette's StreamingResponse notices a disconnect itself and (usually) cancels this generator.
    try:
        async for updates in batched_updates(job):
            delta = "".join(u.delta for u in updates if u.result is None)
            if delta:
                yield _event({"delta": delta})
            final = updates[-1].result
            if final is not None:
                metrics.observe_result(final)
                yield _event({"done": True, **redact.answer(final.to_dict())})
    except TranslatorError as exc:
        metrics.count_error("/v1/translate", exc.http_status)
        yield _event({"error": {"code": exc.code, "message": redact.text(exc.user_message)}},
                     event="error")
    except asyncio.CancelledError:
        log.info("stream cancelled: %s", getattr(request.state, "request_id", "?"))
        raise


def _event(data: dict[str, Any], event: str | None = None) -> str:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n"


def _sum_usage(usages: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("prompt_tokens", "completion_tokens", "segments", "cached_segments"):
        out[key] = sum(u.get(key) or 0 for u in usages)
    out["latency_s"] = max((u.get("latency_s") or 0) for u in usages)
    return out


def _lt_caller(request: Request, access: AccessControl, data: dict[str, Any]) -> Caller:
    """A key from the headers (checked and counted by the Gatekeeper), else the body's api_key."""
    caller = getattr(request.state, "caller", None)
    return caller if isinstance(caller, Caller) else access.check_key(data.get("api_key"))


async def _lt_params(request: Request) -> dict[str, Any]:
    """LibreTranslate clients send forms, JSON or query strings."""
    data: dict[str, Any] = dict(request.query_params)
    content_type = request.headers.get("content-type", "")
    if "json" in content_type:
        try:
            body = await request.json()
        except (ValueError, RecursionError):  # bad JSON or UTF-8, 5,000-digit numbers, deep nesting
            raise InputError("Malformed JSON body.") from None
        if not isinstance(body, dict):
            raise InputError("The JSON body must be an object.")
        data.update(body)
    elif "form" in content_type:
        form = await request.form()
        for key in form:
            values = form.getlist(key)
            data[key] = values if key == "q" and len(values) > 1 else values[0]
    return data


def _lt_error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None,
           request_id: str | None = None) -> JSONResponse:
    body: dict[str, Any] = {"error": {"code": code, "message": message}}
    if request_id:
        body["error"]["request_id"] = request_id
    return JSONResponse(body, status_code=status, headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    def lt_route(request: Request) -> bool:
        return request.url.path.rstrip("/").rsplit("/", 1)[-1] in ("translate", "detect",
                                                                    "languages") and not \
            request.url.path.startswith("/v1/")

    @app.exception_handler(TranslatorError)
    async def translator_error(request: Request, exc: TranslatorError) -> JSONResponse:
        headers = {}
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            headers["Retry-After"] = str(max(1, round(retry_after)))
        message = app.state.redact.text(exc.user_message)
        if lt_route(request):
            return JSONResponse({"error": message}, status_code=exc.http_status, headers=headers)
        return _error(exc.http_status, exc.code, message, headers,
                      getattr(request.state, "request_id", None))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body") or "body"
            problems.append(f"{where}: {err.get('msg', 'invalid')}")
        message = "Invalid request: " + "; ".join(problems[:5])
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            message = "Malformed JSON body."
        return _error(422, "invalid_request", message,
                      request_id=getattr(request.state, "request_id", None))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400 and exc.detail == FASTAPI_BODY_ERROR:  # e.g. bytes, not UTF-8
            return _error(422, "invalid_request", "Malformed JSON body.",
                          request_id=getattr(request.state, "request_id", None))
        return _error(exc.status_code, "http_error", str(exc.detail),
                      getattr(exc, "headers", None), getattr(request.state, "request_id", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        return _unexpected(request, exc)


def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    """A bug, not a user error: log it with the request id, answer a JSON 500 without details."""
    request_id = getattr(request.state, "request_id", None)
    log.error("unexpected error in %s %s (%s)", request.method, request.url.path, request_id,
              exc_info=exc)
    return _error(500, "internal_error",
                  "Something went wrong on the server; it has been logged.", None, request_id)


class RequestLog:
    """Give every request an id (``X-Request-ID``, kept if the client sent a sane one), answer
    unexpected errors as JSON 500s, and count and log each request when it ends.

    Plain ASGI rather than ``@app.middleware("http")``: Starlette's ``BaseHTTPMiddleware`` pipes
    every chunk of a streamed response through a memory stream and an extra task, a cost paid per
    token on the SSE route; here the chunks pass straight through, and the logged time is the whole
    stream's, not the time to its headers.
    """

    def __init__(self, app: Any, metrics: Metrics, api: FastAPI) -> None:
        self.app, self.metrics, self.api = app, metrics, api

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = Headers(scope=scope).get("x-request-id", "")
        request_id = given if _REQUEST_ID.fullmatch(given) else uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id  # request.state.request_id
        started = time.perf_counter()
        status = 500
        responded = False

        async def send_tagged(message: dict) -> None:
            nonlocal status, responded
            if message["type"] == "http.response.start":
                responded, status = True, message["status"]
                headers = MutableHeaders(scope=message)
                headers["X-Request-ID"] = request_id
                if headers.get("content-type", "").startswith("application/json"):
                    headers["X-Content-Type-Options"] = "nosniff"  # never sniffed as HTML
            await send(message)

        try:
            try:
                await self.app(scope, receive, send_tagged)
            except Exception as exc:
                if responded:  # too late for a 500: the status line has gone out
                    raise
                # Answered here rather than by Starlette's outermost handler, which re-raises into
                # uvicorn and so closes the client's keep-alive connection after the 500.
                await _unexpected(Request(scope), exc)(scope, receive, send_tagged)
        finally:
            elapsed = time.perf_counter() - started
            request = Request(scope)
            path = _route_label(request, self.api)
            self.metrics.observe_request(request.method, path, status, elapsed)
            # The page's own chatter (every open tab's status poll, queue streams) only in debug.
            level = logging.DEBUG if path.startswith(QUIET_ROUTES) else logging.INFO
            log.log(level, "%s %s %s %d %.3fs", request_id, request.method, path, status, elapsed)


def _route_label(request: Request, app: FastAPI) -> str:
    """The route template that served the request (a bounded label set for the metrics)."""
    path = getattr(request.scope.get("route"), "path", None)
    if path:
        return path
    path = request.url.path
    root = request.scope.get("root_path") or ""
    if root and path.startswith(root):
        path = path[len(root):] or "/"
    # Plain Starlette routes (/docs, /openapi.json) and requests refused before routing.
    if any(getattr(r, "path", None) == path for r in app.router.routes
           if not isinstance(r, Mount)):
        return path
    return _route_group(path)


def _route_group(path: str) -> str:
    """Bound the label set: Gradio's own paths are grouped under their first two parts."""
    if path.startswith("/gradio_api/"):
        return "/".join(path.split("/")[:3])
    return path if path in ("/", "") else "other"


class BodyLimit:
    """Refuse request bodies over ``max_bytes`` (uploads: ``upload_bytes``) with a JSON 413,
    declared or streamed: counted as the bytes arrive, so nothing larger is ever stored or held."""

    def __init__(self, app: Any, max_bytes: int, upload_bytes: int | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.upload_bytes = upload_bytes or max_bytes

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        upload = route_path(scope) == UPLOAD_ROUTE
        limit = self.upload_bytes if upload else self.max_bytes
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._reject(scope, receive, send, upload)
            return
        if upload and declared is None and scope.get("method") == "POST":
            # Browsers and gradio_client declare an upload's size; one that does not could only
            # be cut off midway, leaving Gradio's partly written file behind.
            await _error(411, "length_required", "An upload must declare its size "
                         "(Content-Length).", request_id=(scope.get("state") or {}).get(
                             "request_id"))(scope, receive, send)
            return
        seen = 0
        too_large = started = False

        async def limited_receive() -> dict:
            nonlocal seen, too_large
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    too_large = True
                    raise _TooLarge()
            return message

        async def guarded_send(message: dict) -> None:
            nonlocal started
            if too_large:  # whatever the route made of the cut-off body, the answer is 413
                return
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, guarded_send)
        except Exception:
            if not too_large:
                raise
        if too_large and not started:
            await self._reject(scope, receive, send, upload)

    async def _reject(self, scope: dict, receive: Callable, send: Callable, upload: bool) -> None:
        if upload:
            message = (f"The file is larger than the limit of "
                       f"{self.upload_bytes - UPLOAD_OVERHEAD:,} bytes.")
        else:
            message = f"The request body is larger than {self.max_bytes:,} bytes."
        response = _error(413, "body_too_large", message,
                          request_id=(scope.get("state") or {}).get("request_id"))
        # The rest of the body is never read: the connection closes after this answer.
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass

