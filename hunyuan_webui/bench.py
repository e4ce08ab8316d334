"""A serving benchmark anyone can rerun: ``python -m hunyuan_webui.bench --help``.

In one run, on one checkpoint, the same prompts and the same number of generated tokens per
request, it measures side by side:

* ``baseline``: what this project replaces, one non-streaming ``model.generate`` per request,
  one at a time behind a web endpoint (:mod:`hunyuan_webui.bench_peers`);
* ``serve`` / ``serve-cb``: ``transformers serve`` on the same directory, without / with
  ``--continuous-batching``, through its streaming OpenAI API;
* ``app-gradio`` / ``app-api``: this app through its Gradio ``translate`` endpoint and its
  ``POST /v1/translate`` SSE stream (one app process serves both);
* ``engine``: :class:`~hunyuan_webui.engine.local.LocalEngine` in this process, no HTTP at all:
  the floor the app's own overhead is measured against;
* ``hf-cb``: transformers' own continuous batching (paged attention,
  ``model.init_continuous_batching()``) in this process, streaming: the engine-to-engine
  comparison of our padded dynamic batch with transformers' paged one.

For each number of concurrent clients (closed loop: each client sends its next request when the
last one ends) it reports time to first token (p50, p95, at the client: the first text), the
inter-token latency (per request: time from first to last text over tokens - 1; p50), aggregate
output tokens per second and requests per second. Systems are measured in turns, in rounds whose
order alternates, so load from other processes on the machine hits every column alike.

Fairness: greedy decoding everywhere (no repetition penalty, except the Gradio endpoint, which
always applies the model card's 1.05); the random checkpoint can never emit a stop token, so every
request generates exactly ``--tokens`` tokens, and the counts are checked per system (from the
usage each system reports; for the Gradio endpoint from the app's engine counter); warm-up
requests before timing; the phrase cache off for the throughput runs. A separate cache check sends
one deterministic request, then the identical one three times, through the JSON API with the cache
on. docs/PERFORMANCE.md has the latest table and what it means.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from hunyuan_webui import bench_peers
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.prompts import translation_prompt

SYSTEMS = ("baseline", "serve", "serve-cb", "app-gradio", "app-api", "engine", "hf-cb")
APP_SYSTEMS = ("app-gradio", "app-api")
PEER_OF = {"baseline": "baseline", "serve": "serve", "serve-cb": "serve-cb",
           "app-gradio": "app", "app-api": "app"}
# Single sentences (one segment each, so the app makes exactly one engine sequence per request).
SENTENCES: tuple[tuple[str, str, str], ...] = (
    ("en", "zh", "The committee will publish its final report on the railway line next spring."),
    ("zh", "en", "我们明天早上八点在火车站门口见面，然后一起去博物馆。"),
    ("en", "fr", "Please keep your luggage with you at all times while you are in the station."),
    ("en", "de", "Our small team has been working on this translation tool for almost two years."),
    ("en", "ja", "If the weather is good tomorrow, we would like to visit the old castle."),
    ("zh", "en", "这家餐厅的菜很好吃，但是周末的时候人特别多，需要提前预约。"),
    ("en", "es", "The museum is open every day except Monday, from nine in the morning."),
    ("en", "zh", "Thank you very much for your help with the move last weekend."),
)
TARGETS = {"throughput_vs_baseline": 3.0, "throughput_vs_serve": 1.5, "ttft_vs_engine": 1.3,
           "cache_repeat_fraction": 0.05}
WARMUP_FIRST = 10_000  # warm-up requests are numbered apart from the measured ones
DOC_START, DOC_END = "<!-- bench:start -->", "<!-- bench:end -->"


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


async def _sse(response: httpx.Response) -> AsyncIterator[tuple[str | None, str]]:
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
            async for event, data in _sse(response):
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
    """Gradio's REST protocol for ``/translate`` (what ``gradio_client`` and curl use)."""
    async def call(i: int) -> Sample:
        p, sample = prompt(i), Sample(i)
        timer = _Timer(sample)
        started = await http.post(url + "/gradio_api/call/translate",
                                  json={"data": [p.text, p.source, p.target]})
        event_id = started.raise_for_status().json()["event_id"]
        async with http.stream("GET", f"{url}/gradio_api/call/translate/{event_id}") as response:
            async for event, data in _sse(response):
                if event in ("generating", "complete"):
                    timer.text(json.loads(data)[0] or "")
                elif event == "error":
                    sample.error = data
                if event in ("complete", "error"):
                    break
        return timer.done()

    return call


def openai_client(http: httpx.AsyncClient, url: str, tokens: int, model: str) -> Client:
    """``transformers serve``'s streaming chat completions."""
    async def call(i: int) -> Sample:
        sample = Sample(i)
        timer = _Timer(sample)
        body = {"model": model, "stream": True, "max_tokens": tokens, "temperature": 0.0,
                "messages": [{"role": "user", "content": prompt(i).message}]}
        async with http.stream("POST", url + "/v1/chat/completions", json=body) as response:
            text = ""
            async for _, data in _sse(response):
                if data == "[DONE]":
                    break
                chunk = json.loads(data)
                if "error" in chunk:
                    sample.error = str(chunk["error"])
                    break
                for choice in chunk.get("choices") or []:
                    text += (choice.get("delta") or {}).get("content") or ""
                timer.text(text)
                if chunk.get("usage"):
                    sample.tokens = chunk["usage"]["completion_tokens"]
                    sample.prompt_tokens = chunk["usage"]["prompt_tokens"]
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


# -- statistics --------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values."""
    data = sorted(values)
    if not data:
        return None
    pos = (len(data) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


@dataclass
class Row:
    system: str
    clients: int
    requests: int
    failed: int
    ttft_p50_ms: float | None
    ttft_p95_ms: float | None
    itl_p50_ms: float | None
    tokens_per_s: float
    requests_per_s: float
    tokens_checked: bool  # every request generated exactly --tokens tokens
    engine_ttft_p50_ms: float | None = None
    errors: list[str] = field(default_factory=list)


def summarize(system: str, clients: int, batches: list[Batch], tokens: int) -> Row:
    """One table row from every batch of one system at one client count."""
    samples = [s for b in batches for s in b.samples]
    ok = [s for s in samples if s.ok]
    wall = sum(b.wall_s for b in batches)
    counted = [b.engine_tokens for b in batches]
    if system == "app-gradio" and None not in counted:
        per_request = sum(counted) / max(1, len(samples))  # the app's engine counter
        for s in ok:
            s.tokens = int(per_request) if per_request.is_integer() else None
    checked = bool(ok) and len(ok) == len(samples) and all(s.tokens == tokens for s in ok)
    produced = sum(s.tokens or 0 for s in ok)

    def ms(values: list[float | None], q: float) -> float | None:
        value = percentile([v for v in values if v is not None], q)
        return None if value is None else round(1000 * value, 1)

    return Row(
        system=system, clients=clients, requests=len(samples), failed=len(samples) - len(ok),
        ttft_p50_ms=ms([s.ttft for s in ok], 50), ttft_p95_ms=ms([s.ttft for s in ok], 95),
        itl_p50_ms=ms([s.itl() for s in ok], 50),
        tokens_per_s=round(produced / wall, 1) if wall else 0.0,
        requests_per_s=round(len(ok) / wall, 2) if wall else 0.0,
        tokens_checked=checked, engine_ttft_p50_ms=ms([s.engine_ttft for s in ok], 50),
        errors=sorted({s.error for s in samples if s.error})[:3])


def target_checks(rows: list[Row], cache: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The issue's targets, each with the measured ratio and whether it is met."""
    by = {(r.system, r.clients): r for r in rows}
    checks = []

    def add(name: str, value: float | None, limit: float, higher_is_better: bool) -> None:
        met = None if value is None else (value >= limit if higher_is_better else value <= limit)
        checks.append({"target": name, "value": None if value is None else round(value, 3),
                       "limit": limit, "met": met})

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    c = 8 if any(r.clients == 8 for r in rows) else max((r.clients for r in rows), default=0)
    for app in APP_SYSTEMS:
        mine = by.get((app, c))
        if mine is None:
            continue
        base = by.get(("baseline", c))
        add(f"{app} tokens/s at {c} clients / baseline", ratio(
            mine.tokens_per_s, base.tokens_per_s if base else None),
            TARGETS["throughput_vs_baseline"], True)
        serves = [by[(s, c)].tokens_per_s for s in ("serve", "serve-cb") if (s, c) in by]
        add(f"{app} tokens/s at {c} clients / best transformers serve", ratio(
            mine.tokens_per_s, max(serves) if serves else None),
            TARGETS["throughput_vs_serve"], True)
        engine = by.get(("engine", 1))
        single = by.get((app, 1))
        add(f"{app} TTFT p50 at 1 client / engine's own first-token time", ratio(
            single.ttft_p50_ms if single else None,
            engine.engine_ttft_p50_ms if engine else None), TARGETS["ttft_vs_engine"], False)
    if cache:
        add("repeated identical request / first one (JSON API, cache on)",
            cache.get("repeat_fraction"), TARGETS["cache_repeat_fraction"], False)
    return checks


# -- the systems under test ---------------------------------------------------------------------
@dataclass
class Target:
    name: str
    client: Client
    counter: Callable[[], Awaitable[int]] | None = None  # the app's engine token counter


@dataclass
class Config:
    model_dir: str
    tokens: int
    concurrency: tuple[int, ...]
    rounds: int
    per_client: int
    min_requests: int
    systems: tuple[str, ...]
    device: str
    interleave: bool
    timeout: float
    threads: int | None = None

    def requests(self, clients: int) -> int:
        return max(self.per_client * clients, self.min_requests)

    @property
    def cb_blocks(self) -> int:
        """The paged-cache size of both transformers continuous-batching systems."""
        return bench_peers.cb_blocks_for(max(self.concurrency), self.tokens)


def phases(cfg: Config) -> list[list[str]]:
    """Systems measured together: all at once (interleaved), or one server at a time."""
    groups: dict[str, list[str]] = {}
    for system in cfg.systems:
        groups.setdefault(PEER_OF.get(system, system), []).append(system)
    if cfg.interleave:
        return [list(cfg.systems)]
    return list(groups.values())


def open_targets(names: list[str], cfg: Config, peers: bench_peers.Peers,
                 http: httpx.AsyncClient, stack: contextlib.ExitStack) -> dict[str, Target]:
    """Start the servers (and the in-process engine) these systems need; clients for each."""
    targets: dict[str, Target] = {}
    model = str(Path(cfg.model_dir).resolve())
    for name in names:
        peer_name = PEER_OF.get(name)
        if peer_name is not None and peer_name not in peers.running:
            _say(f"starting {peer_name} ...")
            peers.start(peer_name, peer_name, model, device=cfg.device,
                        max_new_tokens=cfg.tokens, cb_blocks=cfg.cb_blocks)
            stack.callback(peers.stop, peer_name)
        url = peers.running[peer_name].url if peer_name else ""
        if name == "engine":
            engine = start_engine(cfg)
            stack.callback(engine.close)
            targets[name] = Target(name, engine_client(engine, cfg.tokens))
        elif name == "hf-cb":
            manager, tokenizer = start_hf_cb(cfg)
            stack.callback(manager.stop, block=True, timeout=10)
            targets[name] = Target(name, hf_cb_client(manager, tokenizer, cfg.tokens))
        elif name == "baseline":
            targets[name] = Target(name, baseline_client(http, url, cfg.tokens))
        elif name in ("serve", "serve-cb"):
            targets[name] = Target(name, openai_client(http, url, cfg.tokens, model))
        else:
            make = app_api_client if name == "app-api" else gradio_client
            targets[name] = Target(name, make(http, url, cfg.tokens),
                                   counter=lambda url=url: engine_counter(http, url))
    return targets


def start_engine(cfg: Config) -> Any:
    from hunyuan_webui import models
    from hunyuan_webui.engine.local import LocalEngine

    if cfg.threads:
        import torch

        torch.set_num_threads(cfg.threads)
    engine = LocalEngine(models.resolve(cfg.model_dir), device=cfg.device, max_batch_size=16,
                         max_new_tokens=cfg.tokens)
    status = engine.wait_ready(600)
    if status.state != "ready":
        raise bench_peers.PeerError(f"the in-process engine did not load: {status.reason}")
    return engine


def start_hf_cb(cfg: Config) -> tuple[Any, Any]:
    """transformers' continuous batching manager on its own copy of the model, greedy."""
    import torch
    from transformers import (
        AutoModelForCausalLM,
        AutoTokenizer,
        ContinuousBatchingConfig,
        GenerationConfig,
    )

    if cfg.threads:
        torch.set_num_threads(cfg.threads)
    tokenizer = AutoTokenizer.from_pretrained(cfg.model_dir)
    model = AutoModelForCausalLM.from_pretrained(cfg.model_dir, dtype="auto").to(cfg.device)
    config = GenerationConfig(max_new_tokens=cfg.tokens, do_sample=False, use_cache=False,
                              eos_token_id=model.generation_config.eos_token_id,
                              pad_token_id=model.generation_config.pad_token_id)
    manager = model.eval().init_continuous_batching(
        generation_config=config,
        continuous_batching_config=ContinuousBatchingConfig(num_blocks=cfg.cb_blocks))
    manager.start()
    return manager, tokenizer


async def measured_batch(target: Target, clients: int, requests: int, first: int,
                         timeout: float) -> Batch:
    before = await target.counter() if target.counter else None
    batch = await run_batch(target.client, clients, requests, first, timeout)
    if target.counter and before is not None:
        batch.engine_tokens = await target.counter() - before
    return batch


async def warm_up(target: Target, cfg: Config) -> None:
    """A single request, then a small concurrent burst, none of it timed."""
    width = min(4, max(cfg.concurrency))
    for clients, requests in ((1, 1), (width, width)):
        batch = await run_batch(target.client, clients, requests, WARMUP_FIRST, cfg.timeout)
        failed = [s.error for s in batch.samples if not s.ok]
        if failed:
            raise bench_peers.PeerError(f"{target.name} failed its warm-up: {failed[0]}")


async def measure(cfg: Config, peers: bench_peers.Peers) -> dict[tuple[str, int], list[Batch]]:
    """Every (system, clients) pair, in rounds whose system order alternates."""
    results: dict[tuple[str, int], list[Batch]] = {}
    limits = httpx.Limits(max_connections=512, max_keepalive_connections=512)
    async with httpx.AsyncClient(timeout=httpx.Timeout(cfg.timeout), limits=limits) as http:
        for names in phases(cfg):
            with contextlib.ExitStack() as stack:
                targets = open_targets(names, cfg, peers, http, stack)
                for target in targets.values():
                    _say(f"warming up {target.name}")
                    await warm_up(target, cfg)
                for clients in cfg.concurrency:
                    n = cfg.requests(clients)
                    for r in range(cfg.rounds):
                        order = names if r % 2 == 0 else names[::-1]
                        for name in order:
                            batch = await measured_batch(targets[name], clients, n, r * n,
                                                         cfg.timeout)
                            results.setdefault((name, clients), []).append(batch)
                            _say(_progress(name, clients, r, cfg.rounds, batch))
    return results


def _progress(name: str, clients: int, r: int, rounds: int, batch: Batch) -> str:
    tokens = sum(s.tokens or 0 for s in batch.samples if s.ok) or (batch.engine_tokens or 0)
    return (f"{name:>10} clients={clients:<3} round {r + 1}/{rounds}: "
            f"{len(batch.samples)} requests in {batch.wall_s:6.1f}s, "
            f"{tokens / batch.wall_s:7.1f} tokens/s")


async def cache_check(cfg: Config, peers: bench_peers.Peers, workdir: Path) -> dict[str, Any]:
    """First vs repeated identical deterministic request through the JSON API, cache on.

    The app only keeps translations that ended by themselves, so this runs on a copy of the
    checkpoint whose answer to the prompt stops after about ``--tokens`` tokens.
    """
    stop_dir, length = bench_peers.stopping_copy(cfg.model_dir, workdir / "model-stopping",
                                                 prompt(0).message, cfg.tokens, cfg.device)
    peer = peers.start("app-cache", "app", str(stop_dir), device=cfg.device,
                       max_new_tokens=4 * cfg.tokens, cache=True)
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(cfg.timeout)) as http:
            call = app_api_client(http, peer.url, 4 * cfg.tokens)
            await call(WARMUP_FIRST)  # warm-up, on another sentence
            counts, samples = [await engine_counter(http, peer.url)], []
            for _ in range(4):  # the first request, then three repeats
                samples.append(await call(0))
                counts.append(await engine_counter(http, peer.url))
    finally:
        peers.stop("app-cache")
    first, repeats = samples[0], samples[1:]
    calls = [b - a for a, b in zip(counts, counts[1:])]
    second = repeats[0].latency or 0  # the measure: the second identical request
    return {"answer_tokens": length, "first_s": round(first.latency or 0, 4),
            "repeat_s": [round(s.latency or 0, 4) for s in repeats],
            "repeat_fraction": round(second / first.latency, 4) if first.latency else None,
            "engine_tokens": calls, "model_called_once": calls[0] > 0 and not any(calls[1:]),
            "same_text": all(s.ok and s.text == first.text for s in repeats)}


def _say(message: str) -> None:
    print(f"[bench] {message}", file=sys.stderr, flush=True)


# -- the report ---------------------------------------------------------------------------------
COLUMNS = (("system", "system"), ("clients", "clients"), ("requests", "requests"),
           ("ttft_p50_ms", "TTFT p50 ms"), ("ttft_p95_ms", "TTFT p95 ms"),
           ("engine_ttft_p50_ms", "server TTFT p50 ms"), ("itl_p50_ms", "ITL p50 ms"),
           ("tokens_per_s", "tokens/s"),
           ("requests_per_s", "req/s"), ("tokens_checked", "tokens ok"))


def markdown_table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |",
             "|" + "|".join("---" if key == "system" else "---:" for key, _ in COLUMNS) + "|"]
    for row in rows:
        cells = []
        for key, _ in COLUMNS:
            value = getattr(row, key)
            if key == "tokens_checked":
                value = "yes" if value else "**NO**"
            elif key == "requests" and row.failed:
                value = f"{value} ({row.failed} failed)"
            cells.append("—" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets_markdown(checks: list[dict[str, Any]]) -> str:
    lines = ["| target | measured | goal | met |", "|---|---:|---:|---|"]
    for check in checks:
        sign = "≥" if "tokens/s" in check["target"] else "≤"
        met = {True: "yes", False: "**no**", None: "n/a"}[check["met"]]
        lines.append(f"| {check['target']} | {check['value']} | {sign} {check['limit']} | {met} |")
    return "\n".join(lines)


def report_markdown(result: dict[str, Any]) -> str:
    rows = [Row(**r) for r in result["rows"]]
    meta, model = result["machine"], result["model"]
    parts = [
        f"Command: `{result['command']}`",
        "",
        f"Run {result['started']} on {meta['cpus']} CPUs ({meta['processor']}), device "
        f"{result['settings']['device']}, torch {meta['torch']}, transformers "
        f"{meta['transformers']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after; {result['duration_s']:.0f}s in all.",
        f"Model: random-weight HunYuanDenseV1 `{model.get('size', '?')}` "
        f"({model.get('params', 0) / 1e6:.1f}M params); {result['settings']['tokens']} generated "
        f"tokens per request; {result['settings']['rounds']} interleaved round(s).",
        "",
        markdown_table(rows),
    ]
    if result["targets"]:
        parts += ["", targets_markdown(result["targets"])]
    by = {(r.system, r.clients): r for r in rows}
    paged = [f"{c} clients {by[('engine', c)].tokens_per_s / by[('hf-cb', c)].tokens_per_s:.2f}x"
             for c in result["settings"]["concurrency"]
             if ("engine", c) in by and ("hf-cb", c) in by and by[("hf-cb", c)].tokens_per_s]
    if paged:
        parts += ["", "Padded dynamic batch (engine) vs transformers' paged continuous batching "
                      "(hf-cb), both in-process, tokens/s: " + ", ".join(paged) + "."]
    cache = result.get("cache_check")
    if cache:
        repeats = ", ".join(f"{1000 * x:.1f}" for x in cache["repeat_s"])
        parts += ["", f"Cache check (JSON API, cache on): the second identical request took "
                      f"{100 * cache['repeat_fraction']:.2f}% of the first one's time (first "
                      f"{cache['first_s'] * 1000:.0f} ms for {cache['answer_tokens']} tokens; "
                      f"repeats {repeats} ms); model called once: "
                      f"{'yes' if cache['model_called_once'] else 'NO'}; same text: "
                      f"{'yes' if cache['same_text'] else 'NO'}."]
    agree = prompts_agree(result.get("prompt_tokens", {}))
    parts += ["", f"Prompt lengths reported by {', '.join(sorted(result.get('prompt_tokens', {})))}"
                  f" agree token for token: {'yes' if agree else 'NO'}."]
    if result.get("skipped"):
        parts += ["", "Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items())]
    return "\n".join(parts)


def update_doc(path: Path, block: str) -> None:
    """Replace the text between the bench markers in ``path`` (or append a marked block)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    marked = f"{DOC_START}\n{block}\n{DOC_END}"
    if DOC_START in text and DOC_END in text:
        head, rest = text.split(DOC_START, 1)
        text = head + marked + rest.split(DOC_END, 1)[1]
    else:
        text = text.rstrip() + ("\n\n" if text else "") + marked + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def machine_info(load_before: tuple[float, ...]) -> dict[str, Any]:
    import torch
    import transformers

    return {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "threads": torch.get_num_threads(),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()]}


# -- the command line ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hunyuan_webui.bench",
        description="Side-by-side serving benchmark: the old one-generate-at-a-time WebUI, "
                    "transformers serve (with and without continuous batching) and this app, "
                    "on one random-weight checkpoint of the Hunyuan-MT architecture.",
        epilog="Example: python -m hunyuan_webui.bench --threads 1 --doc docs/PERFORMANCE.md")
    parser.add_argument("--size", choices=sorted(bench_peers.SIZES), default="cpu",
                        help="checkpoint shape: cpu = 31M params for a CPU (default), 7b = the "
                             "real 7B shape for a GPU, small = 4M, tiny = 0.7M for tests")
    parser.add_argument("--model-dir", help="use (or build and keep) the checkpoint here; "
                                            "default: a temporary directory")
    parser.add_argument("--device", default="auto", help="auto (default: cuda if available), cpu or cuda")
    parser.add_argument("--tokens", type=int, default=64, help="generated tokens per request (default %(default)s)")
    parser.add_argument("--concurrency", default="1,4,8,16",
                        help="comma-separated numbers of concurrent clients "
                             "(default %(default)s)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="measurement rounds per client count, the system order "
                             "alternating (default %(default)s)")
    parser.add_argument("--requests-per-client", type=int, default=1,
                        help="requests each client sends per round (default %(default)s)")
    parser.add_argument("--min-requests", type=int, default=4,
                        help="at least this many requests per round (default %(default)s)")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma-separated subset of {', '.join(SYSTEMS)} (default: all)")
    parser.add_argument("--sequential", action="store_true",
                        help="one server at a time instead of interleaved rounds (default on GPU: "
                             "several 7B servers do not fit together)")
    parser.add_argument("--threads", type=int,
                        help="torch/OpenMP threads for every system (default: library default)")
    parser.add_argument("--no-cache-check", dest="cache_check", action="store_false",
                        help="skip the repeated-request check of the phrase cache")
    parser.add_argument("--quick", action="store_true",
                        help="a few minutes: 1 and 8 clients, 32 tokens, one round")
    parser.add_argument("--timeout", type=float, default=900.0,
                        help="seconds allowed for one batch of requests (default %(default)s)")
    parser.add_argument("--out", help="write the JSON results here "
                                      "(default: runs/bench-<time>.json)")
    parser.add_argument("--doc", help="also write the table between the bench markers of this "
                                      "markdown file (e.g. docs/PERFORMANCE.md)")
    parser.add_argument("--log-dir", help="peer server logs (default: a temporary directory)")
    return parser


def config_from(args: argparse.Namespace, model_dir: str) -> Config:
    systems = tuple(s.strip() for s in args.systems.split(",") if s.strip())
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        raise SystemExit(f"unknown system(s) {', '.join(unknown)}; "
                         f"choose from {', '.join(SYSTEMS)}")
    concurrency = tuple(int(c) for c in args.concurrency.split(","))
    if args.quick:
        concurrency = tuple(c for c in concurrency if c in (1, 8)) or (1, 8)
    return Config(model_dir=model_dir, tokens=32 if args.quick else args.tokens,
                  concurrency=concurrency, rounds=1 if args.quick else args.rounds,
                  per_client=args.requests_per_client,
                  min_requests=3 if args.quick else args.min_requests, systems=systems,
                  device=resolve_device(args.device),
                  interleave=not args.sequential and resolve_device(args.device) == "cpu",
                  timeout=args.timeout, threads=args.threads)


def resolve_device(device: str) -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def prepare_model(args: argparse.Namespace, workdir: Path) -> str:
    """The checkpoint to benchmark: reused from --model-dir when it matches --size, else built."""
    target = Path(args.model_dir) if args.model_dir else workdir / "model"
    info = bench_peers.checkpoint_info(target)
    if info.get("size") == args.size and info.get("format") == bench_peers.FORMAT:
        _say(f"reusing the {args.size} checkpoint in {target}")
        return str(target)
    device = resolve_device(args.device)
    dtype = "bf16" if args.size == "7b" and device == "cuda" else "fp32"
    _say(f"building a random-weight {args.size} checkpoint in {target} ({dtype}, {device})")
    bench_peers.build_checkpoint(target, args.size, device=device, dtype=dtype)
    return str(target)


def run(args: argparse.Namespace) -> dict[str, Any]:
    started, load_before = time.perf_counter(), os.getloadavg()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    workdir = Path(tempfile.mkdtemp(prefix="hymt-bench-"))
    try:
        cfg = config_from(args, prepare_model(args, workdir))
        log_dir = Path(args.log_dir) if args.log_dir else workdir / "logs"
        skipped: dict[str, str] = {}
        with bench_peers.Peers(log_dir, threads=cfg.threads) as peers:
            cfg = _drop_unavailable(cfg, skipped)
            batches = asyncio.run(measure(cfg, peers))
            cache = asyncio.run(cache_check(cfg, peers, workdir)) if args.cache_check else None
        rows = [summarize(s, c, batches[(s, c)], cfg.tokens)
                for c in cfg.concurrency for s in cfg.systems if (s, c) in batches]
        return {
            "command": "python -m hunyuan_webui.bench " + " ".join(sys.argv[1:]),
            "started": stamp, "duration_s": round(time.perf_counter() - started, 1),
            "machine": machine_info(load_before),
            "model": bench_peers.checkpoint_info(cfg.model_dir),
            "settings": {k: v for k, v in asdict(cfg).items() if k != "model_dir"},
            "rows": [asdict(r) for r in rows], "targets": target_checks(rows, cache),
            "cache_check": cache, "skipped": skipped,
            "prompt_tokens": _prompt_tokens(batches),
        }
    finally:
        if args.log_dir is None and not os.environ.get("HYMT_BENCH_KEEP"):
            shutil.rmtree(workdir, ignore_errors=True)


def _drop_unavailable(cfg: Config, skipped: dict[str, str]) -> Config:
    """Leave out transformers serve when its extra packages are missing (and say so)."""
    missing = bench_peers.serve_missing_packages()
    if not missing:
        return cfg
    for name in ("serve", "serve-cb"):
        if name in cfg.systems:
            skipped[name] = f"needs {', '.join(missing)} (pip install 'transformers[serving]')"
    kept = tuple(s for s in cfg.systems if s not in skipped)
    return Config(**{**asdict(cfg), "systems": kept})


def _prompt_tokens(batches: dict[tuple[str, int], list[Batch]]) -> dict[str, dict[int, list[int]]]:
    """Prompt lengths each system reported, per prompt: they must agree across systems."""
    seen: dict[str, dict[int, set[int]]] = {}
    for (system, _), runs in batches.items():
        for sample in (s for b in runs for s in b.samples):
            if sample.prompt_tokens is not None:
                seen.setdefault(system, {}).setdefault(sample.prompt, set()).add(
                    sample.prompt_tokens)
    return {system: {i: sorted(v) for i, v in sorted(per.items())} for system, per in seen.items()}


def prompts_agree(prompt_tokens: dict[str, dict[Any, list[int]]]) -> bool:
    """Whether every system that reports prompt lengths saw each prompt as the same tokens."""
    merged: dict[str, set[int]] = {}
    for per_prompt in prompt_tokens.values():
        for prompt_index, lengths in per_prompt.items():
            merged.setdefault(str(prompt_index), set()).update(lengths)
    return all(len(lengths) == 1 for lengths in merged.values())


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.threads:  # before torch loads: the in-process engine runs like the peers
        os.environ.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    result = run(args)
    text = report_markdown(result)
    print(text)
    out = Path(args.out or f"runs/bench-{datetime.now(UTC):%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _say(f"results written to {out}")
    if args.doc:
        update_doc(Path(args.doc), text)
        _say(f"table written to {args.doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
