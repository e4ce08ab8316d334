"""The benchmark's requests and clients: one async callable per system, request number in,
a :class:`Sample` (what that client saw) out, and closed-loop batches of them."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx

from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.prompts import translation_prompt

# Single sentences (one segment each, so the app makes exactly one engine sequence per request),
# each long enough that the app's own answer cap (32 + 3 x the prompt's tokens, for requests
# without max_new_tokens: the Gradio endpoint's) is above 200 tokens: 56 prompt tokens or more.
SENTENCES: tuple[tuple[str, str, str], ...] = (
    ("en", "zh", "The committee will publish its final report on the railway line next spring."),
    ("zh", "en", "我们明天早上八点在火车站门口见面，然后一起去博物馆。"),
    ("en", "fr", "Please keep your luggage with you at all times while you are in the station."),
    ("en", "de", "Our small team has been working on this translation tool for almost two years."),
    ("en", "ja", "If the weather is good tomorrow, we would like to visit the old castle."),
    ("zh", "en", "这家餐厅的菜很好吃，但是周末的时候人特别多，需要提前预约。"),
    ("en", "es", "The museum is open every day except Monday, from nine in the morning."),
    ("en", "zh", "Thank you very much for your help with the move last weekend; we could not have "
                 "carried the piano up the stairs without you."),
)


@dataclass(frozen=True)
class Prompt:
    text: str
    source: str
    target: str

    @property
    def message(self) -> str:
        """The official Hunyuan-MT prompt: what every system's model sees as the user turn."""
        return translation_prompt(self.text, self.source, self.target)


def prompt(i: int) -> Prompt:
    """Request ``i``: the sentences in turn, numbered so that no two requests are identical (the
    app shares one engine sequence between identical requests in flight, which would flatter it)."""
    source, target, text = SENTENCES[i % len(SENTENCES)]
    label = f"第{i + 1}句：" if source == "zh" else f"Item {i + 1}: "
    return Prompt(label + text, source, target)


@dataclass
class Sample:
    """One request as its client saw it (times in seconds from sending it)."""

    prompt: int
    ok: bool = False
    error: str = ""
    ttft: float | None = None
    latency: float | None = None
    last_text: float | None = None
    tokens: int | None = None  # completion tokens the system reported
    prompt_tokens: int | None = None
    engine_ttft: float | None = None  # the engine's own first-token time, where exposed
    text: str = ""

    def itl(self) -> float | None:
        """Mean gap between tokens after the first text (None for one-shot answers)."""
        if self.ttft is None or self.last_text is None or not self.tokens or self.tokens < 2:
            return None
        span = self.last_text - self.ttft
        return span / (self.tokens - 1) if span > 0 else None


# -- clients: one async callable per system, request number -> Sample ----------------------------
Client = Callable[[int], Awaitable[Sample]]


class _Timer:
    def __init__(self, sample: Sample) -> None:
        self.sample, self.start = sample, time.perf_counter()

    def text(self, text: str) -> None:
        """Note that visible text arrived (``text`` is the whole answer so far)."""
        now = time.perf_counter() - self.start
        if text and len(text) > len(self.sample.text):
            if self.sample.ttft is None:
                self.sample.ttft = now
            self.sample.last_text = now
            self.sample.text = text

    def done(self) -> Sample:
        self.sample.latency = time.perf_counter() - self.start
        self.sample.ok = not self.sample.error
        return self.sample


async def sse_lines(response: httpx.Response) -> AsyncIterator[tuple[str | None, str]]:
    """(event, data) pairs of a Server-Sent Events response; an HTTP error raises."""
    if response.status_code != 200:
        body = (await response.aread())[:300].decode(errors="replace")
        raise httpx.HTTPStatusError(f"HTTP {response.status_code}: {body}",
                                    request=response.request, response=response)
    event = None
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            yield event, line[5:].strip()
            event = None


def app_api_client(http: httpx.AsyncClient, url: str, tokens: int) -> Client:
    async def call(i: int) -> Sample:
        p, sample = prompt(i), Sample(i)
        timer = _Timer(sample)
        body = {"text": p.text, "source_lang": p.source, "target_lang": p.target, "stream": True,
                "options": {"deterministic": True, "repetition_penalty": 1.0,
                            "max_new_tokens": tokens}}
        async with http.stream("POST", url + "/v1/translate", json=body) as response:
            text = ""
            async for event, data in sse_lines(response):
                payload = json.loads(data)
                if event == "error" or "error" in payload:
                    sample.error = str(payload.get("error"))
                elif payload.get("done"):
                    usage = payload.get("usage", {})
                    sample.tokens, sample.prompt_tokens = usage.get("completion_tokens"), \
                        usage.get("prompt_tokens")
                    sample.engine_ttft = usage.get("first_token_s")
                else:
                    text += payload.get("delta", "")
                    timer.text(text)
        return timer.done()

    return call


def gradio_client(http: httpx.AsyncClient, url: str, tokens: int) -> Client:
    """Gradio's REST protocol for ``/translate`` (what ``gradio_client`` and curl use), each
    client in a Gradio session of its own that it keeps, as a browser tab and a
    ``gradio_client.Client`` do. (Without one, every request is a new session, and Gradio builds
    a session's state from the whole page's configuration first: ~10 ms here.)"""
    idle: list[str] = []  # sessions between requests; closed-loop clients each take one

    async def call(i: int) -> Sample:
        p, sample = prompt(i), Sample(i)
        timer = _Timer(sample)
        session = idle.pop() if idle else uuid.uuid4().hex[:11]
        try:
            started = await http.post(url + "/gradio_api/call/translate",
                                      json={"data": [p.text, p.source, p.target],
                                            "session_hash": session})
            return await _gradio_events(http, url, started, timer, sample)
        finally:
            idle.append(session)

    return call


async def _gradio_events(http: httpx.AsyncClient, url: str, started: httpx.Response,
                         timer: _Timer, sample: Sample) -> Sample:
    """The event stream of a request Gradio has queued."""
    event_id = started.raise_for_status().json()["event_id"]
    async with http.stream("GET", f"{url}/gradio_api/call/translate/{event_id}") as response:
        async for event, data in sse_lines(response):
            if event in ("generating", "complete"):
                timer.text(json.loads(data)[0] or "")
            elif event == "error":
                sample.error = data
            if event in ("complete", "error"):
                break
    return timer.done()


def openai_client(http: httpx.AsyncClient, url: str, tokens: int, model: str,
                  extra: dict[str, Any] | None = None) -> Client:
    """Streaming chat completions (``transformers serve``, llama-cpp-python's server).

    The token count is the usage the server reports; a server that reports none in a stream
    (llama-cpp-python) is credited ``tokens`` only when it says it stopped at that limit
    (``finish_reason: "length"``), which for ``max_tokens = tokens`` means exactly that many.
    ``extra`` goes into every request body (llama-cpp-python's own spelling of greedy decoding).
    """
    async def call(i: int) -> Sample:
        sample = Sample(i)
        timer = _Timer(sample)
        body = {"model": model, "stream": True, "max_tokens": tokens, "temperature": 0.0,
                "messages": [{"role": "user", "content": prompt(i).message}], **(extra or {})}
        finish = None
        async with http.stream("POST", url + "/v1/chat/completions", json=body) as response:
            text = ""
            async for _, data in sse_lines(response):
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    sample.error = str(chunk["error"])
                    break
                for choice in chunk.get("choices") or []:
                    text += (choice.get("delta") or {}).get("content") or ""
                    finish = choice.get("finish_reason") or finish
                timer.text(text)
                if chunk.get("usage"):
                    sample.tokens = chunk["usage"]["completion_tokens"]
                    sample.prompt_tokens = chunk["usage"]["prompt_tokens"]
        if sample.tokens is None and finish == "length":
            sample.tokens = tokens
        return timer.done()

    return call


def baseline_client(http: httpx.AsyncClient, url: str, tokens: int) -> Client:
    async def call(i: int) -> Sample:
        sample = Sample(i)
        timer = _Timer(sample)
        response = await http.post(url + "/generate", json={"prompt": prompt(i).message,
                                                            "max_new_tokens": tokens})
        payload = response.json()
        if response.status_code != 200:
            sample.error = str(payload)
        else:
            timer.text(payload["text"])  # nothing is visible before the whole answer
            sample.tokens, sample.prompt_tokens = payload["completion_tokens"], \
                payload["prompt_tokens"]
        return timer.done()

    return call


def engine_client(engine: Any, tokens: int) -> Client:
    from hunyuan_webui.engine import DecodingOptions

    options = DecodingOptions(deterministic=True, repetition_penalty=1.0, max_new_tokens=tokens)

    async def call(i: int) -> Sample:
        sample = Sample(i)
        timer = _Timer(sample)
        stream = engine.stream(prompt(i).message, options)
        text = ""
        async for chunk in stream:
            text += chunk
            timer.text(text)
        sample.tokens, sample.prompt_tokens = stream.usage.completion_tokens, \
            stream.usage.prompt_tokens
        sample.engine_ttft = stream.usage.first_token_s
        return timer.done()

    return call


def hf_cb_client(manager: Any, tokenizer: Any, tokens: int) -> Client:
    """Streaming requests to an in-process ``ContinuousBatchingManager``."""
    async def call(i: int) -> Sample:
        sample = Sample(i)
        timer = _Timer(sample)
        ids = _render(tokenizer, prompt(i).message)
        finished = asyncio.Event()

        def on_output(output: Any) -> None:
            if output.error:
                sample.error = str(output.error)
            timer.text(tokenizer.decode(output.generated_tokens, skip_special_tokens=True))
            sample.tokens = len(output.generated_tokens)
            if output.is_finished():
                finished.set()

        request_id = f"bench-{i}-{time.monotonic_ns()}"
        manager.register_result_handler(request_id, on_output)
        manager.add_request(ids, request_id=request_id, max_new_tokens=tokens, streaming=True)
        await finished.wait()
        sample.prompt_tokens = len(ids)
        return timer.done()

    return call


def _render(tokenizer: Any, message: str) -> list[int]:
    ids = tokenizer.apply_chat_template([{"role": "user", "content": message}],
                                        add_generation_prompt=True, tokenize=True,
                                        return_dict=False)
    return list(ids["input_ids"] if isinstance(ids, dict) or hasattr(ids, "input_ids") else ids)


# -- running a batch of requests ----------------------------------------------------------------
@dataclass
class Batch:
    samples: list[Sample]
    wall_s: float
    engine_tokens: int | None = None  # the app's engine counter moved by this much


async def run_batch(client: Client, concurrency: int, requests: int, first: int = 0,
                    timeout: float = 900.0) -> Batch:
    """``requests`` requests from ``concurrency`` closed-loop clients, bounded by ``timeout``."""
    todo = iter(range(first, first + requests))
    samples: list[Sample] = []

    async def one_client() -> None:
        for i in todo:
            try:
                samples.append(await client(i))
            except (httpx.HTTPError, ValueError, KeyError, TranslatorError) as exc:
                samples.append(Sample(i, error=f"{type(exc).__name__}: {exc}"))

    started = time.perf_counter()
    try:
        await asyncio.wait_for(asyncio.gather(*(one_client() for _ in range(concurrency))),
                               timeout)
    except TimeoutError:  # what had not finished counts as failed; the run goes on
        finished = {s.prompt for s in samples}
        samples += [Sample(i, error=f"not finished within {timeout:.0f}s")
                    for i in range(first, first + requests) if i not in finished]
    return Batch(samples, time.perf_counter() - started)


async def engine_counter(http: httpx.AsyncClient, url: str) -> int:
    return int((await http.get(url + "/ready")).json()["tokens_generated"])


