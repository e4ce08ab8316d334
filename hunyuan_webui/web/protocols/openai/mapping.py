"""OpenAI's protocol onto the service: what a message asks for is the service's reading
(:func:`hunyuan_webui.service.operations.chat.read_chat`); a translation goes through the front
door and streams as it is translated, a tool's batch comes back in the tool's form, anything else
is plain generation through the model's chat template. Each answer is given in OpenAI's shape,
cut at the request's ``stop`` strings (:class:`StopText`), with an extra ``translation`` object
that says what was done and whether it came from the cache."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from typing import Any

import anyio
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from hunyuan_webui import tool_prompts
from hunyuan_webui.engine import Stream
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service import Operation, TranslationRequest, TranslationResult
from hunyuan_webui.service.operations import chat, items
from hunyuan_webui.web.deps import Edge
from hunyuan_webui.web.guards.access import Caller
from hunyuan_webui.web.protocols.openai.schemas import Answer, Sampling, data, error_body


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


def _sse(chunks: AsyncIterator[str], cancel: Callable[[], None]) -> StreamingResponse:
    # The background task runs however the response ends (see the JSON API's stream).
    return StreamingResponse(chunks, media_type="text/event-stream",
                             headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
                             background=BackgroundTask(cancel))


@dataclass
class Ask:
    """One request being answered: its body, what the routes work with, the caller, the
    answer's shape."""

    body: Sampling
    edge: Edge
    who: Caller
    answer: Answer

    def charge(self, chars: int) -> None:
        self.edge.access.charge(self.who, chars)

    @property
    def include_usage(self) -> bool:
        return bool(self.body.stream_options and self.body.stream_options.include_usage)


async def serve(asked: chat.Asked, ask: Ask) -> Any:
    """The answer to what the message asked for."""
    if asked.translation is not None:
        return await _serve_translation(ask, asked.translation)
    if asked.tool is not None:
        return await _serve_tool(ask, asked.tool)
    return await _serve_generation(ask, asked.prompt)


async def _serve_translation(ask: Ask, wanted: TranslationRequest) -> Any:
    """One text through the front door, streamed as it is translated."""
    ask.charge(len(wanted.text))
    stop = StopText(ask.body.stops())
    # User errors are plain 4xx answers, raised here before any output. A chat stream cannot
    # take text back: each answer is shown once it is judged whole.
    operation = (await ask.edge.translator.atranslate_texts([wanted])).hold()
    if ask.body.stream:
        return _sse(_translation_chunks(operation, ask), operation.cancel)
    [result] = await operation.aresult()
    ask.edge.metrics.observe_result(result)
    text = stop.feed(result.text) + stop.flush()
    return ask.answer.completion(text, "stop", _result_usage(result),
                                 translation=_translation_info(result))


async def _serve_tool(ask: Ask, tool: tool_prompts.ToolRequest) -> Any:
    """A tool's batch: its items translated together and given back in the tool's form."""
    translator = ask.edge.translator
    options = ask.body.tool_decoding(translator.spec.decoding)
    ask.charge(tool.chars)
    done = await anyio.to_thread.run_sync(
        lambda: items.translate_items(translator, tool.items, tool.target, tool.source, options,
                                      tool.glossary, tool.context))
    for result in done.results:
        ask.edge.metrics.observe_result(result)
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


async def _serve_generation(ask: Ask, prompt: str) -> Any:
    """Plain generation through the model's chat template."""
    translator = ask.edge.translator
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


# What ends a streamed answer, known once its text is done: the finish reason, extra fields of
# the finish chunk, and the usage.
Ending = Callable[[], tuple[str, dict[str, Any], dict[str, int]]]


async def _chat_chunks(pieces: AsyncIterator[str], answer: Answer, stop: StopText,
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
    yield data("[DONE]")


def _translation_chunks(operation: Operation, ask: Ask) -> AsyncIterator[str]:
    results: list[TranslationResult] = []

    async def pieces() -> AsyncIterator[str]:
        async with aclosing(operation.updates()) as batches:  # closed (cancelled) on a stop
            async for updates in batches:
                if updates[-1].result is not None:
                    results.append(updates[-1].result)
                yield "".join(u.delta for u in updates)
                if results:
                    return

    def ending() -> tuple[str, dict[str, Any], dict[str, int]]:
        if not results:
            return "stop", {}, _usage(0, 0)
        ask.edge.metrics.observe_result(results[0])
        return "stop", {"translation": _translation_info(results[0])}, _result_usage(results[0])

    return _chat_chunks(pieces(), ask.answer, StopText(ask.body.stops()), ask.include_usage,
                        ending)


def _generation_chunks(stream: Stream, answer: Answer, stop: StopText,
                       include_usage: bool) -> AsyncIterator[str]:
    def ending() -> tuple[str, dict[str, Any], dict[str, int]]:
        finish = "length" if stream.finish_reason == "length" and not stop.stopped else "stop"
        return finish, {}, _usage(stream.usage.prompt_tokens, stream.usage.completion_tokens)

    return _chat_chunks(aiter(stream), answer, stop, include_usage, ending)


def _stream_error(exc: TranslatorError) -> str:
    """After the headers, an error is one more event (the openai client raises it)."""
    return data(error_body(exc.http_status, exc.user_message, exc.code))
