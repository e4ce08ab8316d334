"""OpenAI's chat completions, spoken by the translator: ``POST /v1/chat/completions`` (streaming and
not), the legacy ``POST /v1/completions`` and ``GET /v1/models``.

Page, PDF and subtitle translators often speak only this protocol, with a custom endpoint and a
prompt the user writes. A request whose last user message is one of the model cards' translation
prompts (:func:`~hunyuan_webui.prompts.recognize`; the tool's system message may hold the
instruction and the user message the text) goes through the translator: sentence segments, the
phrase cache, in-flight sharing, the same streamed-text guarantees, and an extra ``translation``
object in the answer that says what was done and whether it came from the cache. So does a known
tool's own prompt (Immersive Translate, KISS Translator, PDFMathTranslate, BabelDOC, pot,
openai-translator, SubtitleEdit; "Translate to X: ..."; Qwen-MT's ``translation_options``: see
:mod:`hunyuan_webui.tool_prompts`), answered in the form the tool asked for. Anything else is
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
from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from hunyuan_webui import prompts, tool_prompts
from hunyuan_webui.engine import Stream
from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.service import TranslationRequest, TranslationResult, Translator
from hunyuan_webui.service.operations import items
from hunyuan_webui.service.translate.job import Job, batched_updates
from hunyuan_webui.web.deps import CallerDep
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.openai_messages import (
    ChatRequest,
    CompletionRequest,
    Sampling,
    StopText,
    fold,
    tool_request_for,
    translation_for,
)
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.responses import ShapedErrorRoute


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

    def __init__(self, model: str, redact: Callable[[str], str] = str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.model = model
        self.redact = redact  # an error's text, with a local model path named, not located

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


class _TextAnswer(_Answer):
    """The legacy completions' shape: ``text_completion`` objects with ``choices[].text``."""

    def __init__(self, model: str, redact: Callable[[str], str] = str) -> None:
        super().__init__(model, redact)
        self.id = f"cmpl-{uuid.uuid4().hex[:24]}"

    def completion(self, text: str, finish: str, usage: dict[str, int],
                   **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "text_completion", "created": self.created,
                "model": self.model, "choices": [{
                    "index": 0, "text": text, "logprobs": None, "finish_reason": finish}],
                "usage": usage, **extra}

    def chunk(self, delta: dict[str, Any] | None, finish: str | None = None,
              **extra: Any) -> str:
        choices = [] if delta is None else [{"index": 0, "text": delta.get("content", ""),
                                             "logprobs": None, "finish_reason": finish}]
        return _data({"id": self.id, "object": "text_completion", "created": self.created,
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


# Every error of these routes in OpenAI's shape, whatever raised it (a dependency, the body's
# validation or the translator).
OpenAIRoute = ShapedErrorRoute.shaped("OpenAIRoute", error_shape, validation=True)


# -- the routes ------------------------------------------------------------------------------------
def create_router(translator: Translator) -> APIRouter:
    router = APIRouter(route_class=OpenAIRoute, tags=["openai"])
    name = translator.spec.public_id  # never a local checkpoint's path
    model_card = {"id": name, "object": "model", "created": 0, "owned_by": "tencent"}

    @router.get("/v1/models")
    def list_models(who: CallerDep) -> dict[str, Any]:
        """OpenAI's model list: the one model served here."""
        return {"object": "list", "data": [model_card]}

    @router.get("/v1/models/{model:path}")
    def get_model(model: str, who: CallerDep) -> dict[str, Any]:
        if model != name:
            raise _NotFound(f"The model {model!r} does not exist; this server has {name!r}.")
        return model_card

    @router.post("/v1/chat/completions")
    async def chat_completions(body: ChatRequest, request: Request, who: CallerDep) -> Any:
        """OpenAI's chat completions. A translation prompt (the model cards', a known tool's,
        "Translate to X: ...", Qwen-MT's translation_options) goes through the translator
        (cache, segments); anything else is plain generation."""
        options = body.decoding(translator.spec.decoding)
        # Detection, segmentation, cache look-ups and engine admission are blocking work: off the
        # event loop.
        wanted = await anyio.to_thread.run_sync(translation_for, body, translator, options)
        tool = None if wanted is not None else await anyio.to_thread.run_sync(
            tool_request_for, body)  # long messages: a few regular expressions each
        ask = _Ask(body, request, who, _Answer(name, request.app.state.redact.text))
        if wanted is not None:
            return await _serve_translation(translator, ask, wanted)
        if tool is not None:
            return await _serve_tool(translator, ask, tool)
        prompt = fold(body.messages)
        if not prompt.strip():
            raise InputError("The messages have no text.")
        return await _serve_generation(translator, ask, prompt)

    @router.post("/v1/completions")
    async def completions(body: CompletionRequest, request: Request, who: CallerDep) -> Any:
        """OpenAI's legacy completions: the prompt is read like a chat's user message (a
        translation prompt goes through the translator); anything else is plain generation."""
        return await _completions(translator, body, _Ask(body, request, who,
                                                          _TextAnswer(name, request.app.state.redact.text)))

    return router


class _NotFound(TranslatorError):
    code = "model_not_found"
    http_status = 404


def _sse(chunks: AsyncIterator[str], cancel: Callable[[], None]) -> StreamingResponse:
    # The background task runs however the response ends (see api.translate's stream).
    return StreamingResponse(chunks, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                             background=BackgroundTask(cancel))


@dataclass
class _Ask:
    """One request being answered: its body, the HTTP request, the caller, the answer's shape."""

    body: Sampling
    request: Request
    who: Caller
    answer: _Answer

    def charge(self, chars: int) -> None:
        access: AccessControl = self.request.app.state.access
        access.charge(self.who, chars)

    @property
    def include_usage(self) -> bool:
        return bool(self.body.stream_options and self.body.stream_options.include_usage)


async def _serve_translation(translator: Translator, ask: _Ask,
                             wanted: TranslationRequest) -> Any:
    """One text through the translator, streamed as it is translated."""
    ask.charge(len(wanted.text))
    stop = StopText(ask.body.stops())
    # User errors are plain 4xx answers, raised here before any output.
    # A chat stream cannot take text back: each answer is shown once it is judged whole.
    job = (await anyio.to_thread.run_sync(translator.start, wanted)).hold()
    if ask.body.stream:
        return _sse(_translation_chunks(job, ask.answer, stop, ask.include_usage, ask.request),
                    job.cancel)
    result = await anyio.to_thread.run_sync(job.result)
    ask.request.app.state.metrics.observe_result(result)
    text = stop.feed(result.text) + stop.flush()
    return ask.answer.completion(text, "stop", _result_usage(result),
                                 translation=_translation_info(result))


async def _serve_tool(translator: Translator, ask: _Ask, tool: tool_prompts.ToolRequest) -> Any:
    """A tool's request: one plain text streams like any translation; several items (or tags
    and placeholders to keep) are translated together and given back in the tool's form."""
    options = ask.body.tool_decoding(translator.spec.decoding)
    if tool.form.kind == "text" and not items.has_kept(tool.items[0]):
        wanted = await anyio.to_thread.run_sync(items.request_for, translator, tool.items[0],
                                                tool.target, tool.source, options,
                                                tool.glossary, tool.context)
        return await _serve_translation(translator, ask, wanted)
    ask.charge(tool.chars)
    done = await anyio.to_thread.run_sync(
        lambda: items.translate_items(translator, tool.items, tool.target, tool.source, options,
                                      tool.glossary, tool.context))
    for result in done.results:
        ask.request.app.state.metrics.observe_result(result)
    text = tool.form.render(done.texts, done.sources)
    info = {**done.info(), "tool": tool.tool}
    if ask.body.stream:
        async def whole() -> AsyncIterator[str]:
            yield text

        def ending() -> tuple[str, dict[str, Any], dict[str, int]]:
            return "stop", {"translation": info}, done.usage

        return _sse(_chat_chunks(whole(), ask.answer, StopText(ask.body.stops()),
                                 ask.include_usage, ending), lambda: None)
    stop = StopText(ask.body.stops())
    return ask.answer.completion(stop.feed(text) + stop.flush(), "stop", done.usage,
                                 translation=info)


async def _serve_generation(translator: Translator, ask: _Ask, prompt: str) -> Any:
    """Plain generation through the model's chat template."""
    ask.charge(len(prompt))
    options = ask.body.decoding(translator.spec.decoding)
    stop = StopText(ask.body.stops())
    stream = await anyio.to_thread.run_sync(translator.generate, prompt, options)
    if ask.body.stream:
        return _sse(_generation_chunks(stream, ask.answer, stop, ask.include_usage),
                    stream.cancel)
    text = ""
    async with aclosing(aiter(stream)) as chunks:
        async for chunk in chunks:
            text += stop.feed(chunk)
            if stop.stopped:
                break
    text += stop.flush()
    finish = "length" if stream.finish_reason == "length" and not stop.stopped else "stop"
    return ask.answer.completion(text, finish, _usage(stream.usage.prompt_tokens,
                                                      stream.usage.completion_tokens))


async def _completions(translator: Translator, body: CompletionRequest, ask: _Ask) -> Any:
    """A legacy prompt, read like a chat's lone user message."""
    prompt = body.text()
    if not prompt.strip():
        raise InputError("The prompt has no text.")
    options = body.decoding(translator.spec.decoding)
    found = await anyio.to_thread.run_sync(prompts.recognize, prompt)
    if found is not None and found.text.strip():
        detected = await anyio.to_thread.run_sync(translator.detect, found.text)
        if detected.code is not None:
            return await _serve_translation(translator, ask, TranslationRequest(
                text=found.text, target_lang=found.target, source_lang=detected.code,
                options=options, mode="context" if found.context else "translate",
                glossary=found.glossary, context=found.context))
    tool = (tool_prompts.from_options(prompt, body.translation_options)
            if body.translation_options else
            await anyio.to_thread.run_sync(tool_prompts.recognize, prompt))
    if tool is not None:
        return await _serve_tool(translator, ask, tool)
    return await _serve_generation(translator, ask, prompt)


# What ends a streamed answer, known once its text is done: the finish reason, extra fields of
# the finish chunk, and the usage.
Ending = Callable[[], tuple[str, dict[str, Any], dict[str, int]]]


async def _chat_chunks(pieces: AsyncIterator[str], answer: _Answer, stop: StopText,
                       include_usage: bool, ending: Ending) -> AsyncIterator[str]:
    """A streamed answer: the role, the text cut at the stop text, the finish chunk, the usage if
    asked, ``[DONE]``. An error after the headers is one more event, and the last."""
    yield answer.chunk({"role": "assistant", "content": ""})
    try:
        async with aclosing(pieces) as texts:  # closed (the work cancelled) on a stop
            async for piece in texts:
                text = stop.feed(piece)
                if text:
                    yield answer.chunk({"content": text})
                if stop.stopped:
                    break
    except TranslatorError as exc:
        exc.user_message = answer.redact(exc.user_message)
        yield _stream_error(exc)
        return
    tail = stop.flush()
    if tail:
        yield answer.chunk({"content": tail})
    finish, extra, usage = ending()
    yield answer.chunk({}, finish, **extra)
    if include_usage:
        yield answer.chunk(None, usage=usage)
    yield _data("[DONE]")


def _translation_chunks(job: Job, answer: _Answer, stop: StopText, include_usage: bool,
                        request: Request) -> AsyncIterator[str]:
    results: list[TranslationResult] = []

    async def pieces() -> AsyncIterator[str]:
        async with aclosing(batched_updates(job)) as batches:  # closed (job cancelled) on a stop
            async for updates in batches:
                if updates[-1].result is not None:
                    results.append(updates[-1].result)
                yield "".join(u.delta for u in updates)
                if results:
                    return

    def ending() -> tuple[str, dict[str, Any], dict[str, int]]:
        if not results:
            return "stop", {}, _usage(0, 0)
        request.app.state.metrics.observe_result(results[0])
        return "stop", {"translation": _translation_info(results[0])}, _result_usage(results[0])

    return _chat_chunks(pieces(), answer, stop, include_usage, ending)


def _generation_chunks(stream: Stream, answer: _Answer, stop: StopText,
                       include_usage: bool) -> AsyncIterator[str]:
    def ending() -> tuple[str, dict[str, Any], dict[str, int]]:
        finish = "length" if stream.finish_reason == "length" and not stop.stopped else "stop"
        return finish, {}, _usage(stream.usage.prompt_tokens, stream.usage.completion_tokens)

    return _chat_chunks(aiter(stream), answer, stop, include_usage, ending)


def _stream_error(exc: TranslatorError) -> str:
    """After the headers, an error is one more event (the openai client raises it)."""
    return _data(_error_body(exc.http_status, exc.user_message, exc.code))


PROTOCOL = Protocol("openai", lambda edge: create_router(edge.translator),
                    error_prefixes=("/v1/chat/", "/v1/models", "/v1/completions"),
                    error_shape=error_shape)
