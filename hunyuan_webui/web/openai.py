"""OpenAI's chat completions, spoken by the translator: ``POST /v1/chat/completions`` (streaming and
not) and ``GET /v1/models``.

Page, PDF and subtitle translators often speak only this protocol, with a custom endpoint and a
prompt the user writes. A request whose last user message is one of the model cards' translation
prompts (:func:`~hunyuan_webui.prompts.recognize`; the tool's system message may hold the
instruction and the user message the text) goes through the translator: sentence segments, the
phrase cache, in-flight sharing, the same streamed-text guarantees, and an extra ``translation``
object in the answer that says what was done and whether it came from the cache. Anything else is
plain generation through the model's chat template, within the same limits and batches. The
model takes exactly one user message and no system prompt, so a conversation is folded into one
message (:func:`fold`).

A thin layer, like :mod:`hunyuan_webui.web.api`: keys and limits through the same dependency, errors in
OpenAI's shape (``{"error": {"message", "type", "param", "code"}}``) converted in one place,
:class:`OpenAIRoute`.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import aclosing
from typing import Any, Literal

import anyio
from fastapi import APIRouter, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from starlette.background import BackgroundTask

from hunyuan_webui import prompts
from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions, Stream
from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.service import TranslationRequest, TranslationResult, Translator
from hunyuan_webui.service.job import Job, batched_updates
from hunyuan_webui.web.access import AccessControl
from hunyuan_webui.web.api import CallerDep

SYSTEM_ROLES = ("system", "developer")
ROLE_LABELS = {"user": "User", "assistant": "Assistant", "tool": "Tool", "function": "Tool"}
# OpenAI's temperature runs from 0 (greedy); ours starts where sampling still means something.
GREEDY_BELOW = OPTION_BOUNDS["temperature"][0]


# -- the request -----------------------------------------------------------------------------------
class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        if any(part.type != "text" for part in self.content):
            raise InputError("Only text content is supported (no images, audio or files).")
        return "".join(part.text or "" for part in self.content)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatRequest(BaseModel):
    """OpenAI's fields; others (user, metadata, presence_penalty...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field("", description="Any name: one model is served (see /v1/models).")
    messages: list[ChatMessage] = Field(min_length=1, examples=[[{
        "role": "user", "content": "Translate the following segment into English, without "
        "additional explanation.\n\nBonjour."}]])
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0, le=2, description="0 = greedy (cached).")
    top_p: float | None = Field(None, ge=0, le=1)
    top_k: int | None = Field(None, description="vLLM's extra field.")
    repetition_penalty: float | None = Field(None, description="vLLM's extra field.")
    max_tokens: int | None = Field(None, ge=1, description="Per sentence for translations.")
    max_completion_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    n: int = Field(1, ge=1, le=1, description="One answer per request.")
    stop: str | list[str] | None = None
    logprobs: bool | None = None
    tools: list[Any] | None = None
    response_format: dict[str, Any] | None = None

    def decoding(self, defaults: DecodingOptions | None = None) -> DecodingOptions:
        """The model card's decoding (``defaults``: the loaded model's), changed where the request
        says otherwise."""
        if self.logprobs:
            raise InputError("logprobs are not supported.")
        if self.tools:
            raise InputError("Tools (function calling) are not supported.")
        if self.response_format and self.response_format.get("type", "text") != "text":
            raise InputError("Only the text response_format is supported.")
        values: dict[str, Any] = {}
        if self.temperature is not None:
            if self.temperature < GREEDY_BELOW:
                values["deterministic"] = True
            else:
                values["temperature"] = self.temperature
        if self.top_p is not None:
            values["top_p"] = max(self.top_p, OPTION_BOUNDS["top_p"][0])
        for name in ("top_k", "repetition_penalty", "seed"):
            if getattr(self, name) is not None:
                values[name] = getattr(self, name)
        cap = self.max_completion_tokens or self.max_tokens
        if cap is not None:  # tools ask for generous caps; the engine's own cap applies anyway
            values["max_new_tokens"] = min(cap, int(OPTION_BOUNDS["max_new_tokens"][1]))
        return DecodingOptions.from_mapping(values, defaults)  # the rest: the model's defaults

    def stops(self) -> list[str]:
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        return [s for s in stops if s]


def translation_for(body: ChatRequest, translator: Translator,
                    options: DecodingOptions) -> TranslationRequest | None:
    """The translation the conversation asks for, or None when it is not a translation prompt
    (or its text's language cannot be told: then the model answers the prompt itself)."""
    last = next((m for m in reversed(body.messages) if m.role == "user"), None)
    if last is None:
        return None
    found = prompts.recognize(last.text())
    system = [m.text() for m in body.messages if m.role in SYSTEM_ROLES]
    if found is None and system:  # the instruction in the system message, the text in the user's
        found = prompts.recognize("\n\n".join([*system, last.text()]))
    if found is None or not found.text.strip():
        return None
    detected = translator.detect(found.text).code
    if detected is None:
        return None
    return TranslationRequest(text=found.text, target_lang=found.target, source_lang=detected,
                              options=options, mode="context" if found.context else "translate",
                              glossary=found.glossary, context=found.context)


def fold(messages: list[ChatMessage]) -> str:
    """The conversation as the one user message the model takes: system messages first, then a
    lone user message as it is, or several turns labelled by role."""
    system = [m.text() for m in messages if m.role in SYSTEM_ROLES]
    turns = [m for m in messages if m.role not in SYSTEM_ROLES]
    if len(turns) == 1 and turns[0].role == "user":
        return "\n\n".join([*system, turns[0].text()])
    return "\n\n".join([*system, *(f"{ROLE_LABELS[m.role]}: {m.text()}" for m in turns)])


class StopText:
    """Cuts streamed text at the first stop string, holding back a tail that may start one."""

    def __init__(self, stops: list[str]) -> None:
        self.stops = stops
        self.held = ""
        self.stopped = False

    def feed(self, delta: str) -> str:
        if not self.stops:
            return delta
        if self.stopped:
            return ""
        text = self.held + delta
        found = [i for i in (text.find(s) for s in self.stops) if i >= 0]
        if found:
            self.stopped, self.held = True, ""
            return text[:min(found)]
        keep = next((k for k in range(min(len(text), max(map(len, self.stops)) - 1), 0, -1)
                     if any(s.startswith(text[-k:]) for s in self.stops)), 0)
        self.held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep]

    def flush(self) -> str:
        held, self.held = ("" if self.stopped else self.held), ""
        return held


# -- the answer ------------------------------------------------------------------------------------
def _translation_info(result: TranslationResult) -> dict[str, Any]:
    info = {"source_lang": result.source_lang, "target_lang": result.target_lang,
            "cached": result.cached, "segments": result.segments,
            "cached_segments": result.cached_segments}
    if result.notice:
        info["notice"] = result.notice
    return info


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens}


def _result_usage(result: TranslationResult) -> dict[str, int]:
    """Tokens the model spent on this answer: none for cached sentences."""
    return _usage(result.usage.get("prompt_tokens") or 0, result.usage.get("completion_tokens") or 0)


class _Answer:
    """The fields every chunk and the whole answer share."""

    def __init__(self, model: str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.model = model

    def completion(self, text: str, finish: str, usage: dict[str, int],
                   **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion", "created": self.created,
                "model": self.model, "choices": [{
                    "index": 0, "message": {"role": "assistant", "content": text},
                    "logprobs": None, "finish_reason": finish}],
                "usage": usage, **extra}

    def chunk(self, delta: dict[str, Any] | None, finish: str | None = None,
              **extra: Any) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None,
                                             "finish_reason": finish}]
        return _data({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                      "model": self.model, "choices": choices, **extra})


def _data(payload: dict[str, Any] | str) -> str:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n"


def _error_body(status: int, message: str, code: str) -> dict[str, Any]:
    kind = "invalid_request_error"
    if status == 401:
        code = "invalid_api_key"
    elif status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind = "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """OpenAI's error object, for a refusal made before the route runs (the Gatekeeper)."""
    return exc.http_status, _error_body(exc.http_status, exc.user_message, exc.code)


class OpenAIRoute(APIRoute):
    """Every error of these routes in OpenAI's shape, whatever raised it (a dependency, the body's
    validation or the translator)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def handle(request: Request) -> Response:
            try:
                return await handler(request)
            except TranslatorError as exc:
                headers = {}
                retry_after = getattr(exc, "retry_after", None)
                if retry_after is not None:
                    headers["Retry-After"] = str(max(1, round(retry_after)))
                return JSONResponse(_error_body(exc.http_status, exc.user_message, exc.code),
                                    status_code=exc.http_status, headers=headers)
            except RequestValidationError as exc:
                problems = [f"{'.'.join(str(p) for p in e.get('loc', ()) if p != 'body') or 'body'}"
                            f": {e.get('msg', 'invalid')}" for e in exc.errors()[:5]]
                return JSONResponse(_error_body(400, "Invalid request: " + "; ".join(problems),
                                                "invalid_request"), status_code=400)

        return handle


# -- the routes ------------------------------------------------------------------------------------
def create_router(translator: Translator) -> APIRouter:
    router = APIRouter(route_class=OpenAIRoute, tags=["openai"])
    model_card = {"id": translator.spec.id, "object": "model", "created": 0, "owned_by": "tencent"}

    @router.get("/v1/models")
    def list_models(who: CallerDep) -> dict[str, Any]:
        """OpenAI's model list: the one model served here."""
        return {"object": "list", "data": [model_card]}

    @router.get("/v1/models/{model:path}")
    def get_model(model: str, who: CallerDep) -> dict[str, Any]:
        if model != translator.spec.id:
            raise _NotFound(f"The model {model!r} does not exist; this server has "
                            f"{translator.spec.id!r}.")
        return model_card

    @router.post("/v1/chat/completions")
    async def chat_completions(body: ChatRequest, request: Request, who: CallerDep) -> Any:
        """OpenAI's chat completions. A translation prompt of the model cards goes through the
        translator (cache, segments); anything else is plain generation."""
        access: AccessControl = request.app.state.access
        options = body.decoding(translator.spec.decoding)
        answer = _Answer(translator.spec.id)
        stop = StopText(body.stops())
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        # Detection, segmentation, cache look-ups and engine admission are blocking work: off the
        # event loop.
        wanted = await anyio.to_thread.run_sync(translation_for, body, translator, options)
        if wanted is not None:
            access.charge(who, len(wanted.text))
            # User errors are plain 4xx answers, raised here before any output.
            job = await anyio.to_thread.run_sync(translator.start, wanted)
            if body.stream:
                return _sse(_translation_chunks(job, answer, stop, include_usage, request),
                            job.cancel)
            result = await anyio.to_thread.run_sync(job.result)
            request.app.state.metrics.observe_result(result)
            text = stop.feed(result.text) + stop.flush()
            return answer.completion(text, "stop", _result_usage(result),
                                     translation=_translation_info(result))
        prompt = fold(body.messages)
        if not prompt.strip():
            raise InputError("The messages have no text.")
        access.charge(who, len(prompt))
        stream = await anyio.to_thread.run_sync(translator.generate, prompt, options)
        if body.stream:
            return _sse(_generation_chunks(stream, answer, stop, include_usage), stream.cancel)
        text = ""
        async with aclosing(aiter(stream)) as chunks:
            async for chunk in chunks:
                text += stop.feed(chunk)
                if stop.stopped:
                    break
        text += stop.flush()
        finish = "length" if stream.finish_reason == "length" and not stop.stopped else "stop"
        return answer.completion(text, finish, _usage(stream.usage.prompt_tokens,
                                                      stream.usage.completion_tokens))

    return router


class _NotFound(TranslatorError):
    code = "model_not_found"
    http_status = 404


def _sse(chunks: AsyncIterator[str], cancel: Callable[[], None]) -> StreamingResponse:
    # The background task runs however the response ends (see api.translate's stream).
    return StreamingResponse(chunks, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                             background=BackgroundTask(cancel))


async def _translation_chunks(job: Job, answer: _Answer, stop: StopText, include_usage: bool,
                              request: Request) -> AsyncIterator[str]:
    yield answer.chunk({"role": "assistant", "content": ""})
    result: TranslationResult | None = None
    try:
        async with aclosing(batched_updates(job)) as batches:  # closed (job cancelled) on a stop
            async for updates in batches:
                text = stop.feed("".join(u.delta for u in updates))
                if text:
                    yield answer.chunk({"content": text})
                result = updates[-1].result
                if stop.stopped or result is not None:
                    break
    except TranslatorError as exc:
        yield _stream_error(exc)
        return
    tail = stop.flush()
    if tail:
        yield answer.chunk({"content": tail})
    extra = {} if result is None else {"translation": _translation_info(result)}
    if result is not None:
        request.app.state.metrics.observe_result(result)
    yield answer.chunk({}, "stop", **extra)
    if include_usage:
        usage = _result_usage(result) if result is not None else _usage(0, 0)
        yield answer.chunk(None, usage=usage)
    yield _data("[DONE]")


async def _generation_chunks(stream: Stream, answer: _Answer, stop: StopText,
                             include_usage: bool) -> AsyncIterator[str]:
    yield answer.chunk({"role": "assistant", "content": ""})
    try:
        async with aclosing(aiter(stream)) as chunks:  # closed (sequence cancelled) on a stop
            async for chunk in chunks:
                text = stop.feed(chunk)
                if text:
                    yield answer.chunk({"content": text})
                if stop.stopped:
                    break
    except TranslatorError as exc:
        yield _stream_error(exc)
        return
    tail = stop.flush()
    if tail:
        yield answer.chunk({"content": tail})
    finish = "length" if stream.finish_reason == "length" and not stop.stopped else "stop"
    yield answer.chunk({}, finish)
    if include_usage:
        yield answer.chunk(None, usage=_usage(stream.usage.prompt_tokens,
                                              stream.usage.completion_tokens))
    yield _data("[DONE]")


def _stream_error(exc: TranslatorError) -> str:
    """After the headers, an error is one more event (the openai client raises it)."""
    return _data(_error_body(exc.http_status, exc.user_message, exc.code))

