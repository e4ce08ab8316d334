"""A serving benchmark anyone can rerun: ``python -m benchmarks.bench --help``.

In one run, on one checkpoint, the same prompts and the same number of generated tokens per
request, it measures side by side:

* ``baseline``: what this project replaces, one non-streaming ``model.generate`` per request,
  one at a time behind a web endpoint (:mod:`benchmarks.peers`);
* ``serve`` / ``serve-cb``: ``transformers serve`` on the same directory, without / with
  ``--continuous-batching``, through its streaming OpenAI API;
* ``app-gradio`` / ``app-api``: this app through its Gradio ``translate`` endpoint and its
  ``POST /v1/translate`` SSE stream (one app process serves both);
* ``engine``: :class:`~hunyuan_webui.engine.local.LocalEngine` in this process, no HTTP at all:
  the floor the app's own overhead is measured against;
* ``hf-cb``: transformers' own continuous batching (paged attention,
  ``model.init_continuous_batching()``) in this process, streaming: the engine-to-engine
  comparison of our padded dynamic batch with transformers' paged one;
* ``llamacpp``: :class:`~hunyuan_webui.engine.llamacpp.LlamaCppEngine` in this process on a GGUF
  of the same weights; ``app-llamacpp``: the app on that GGUF (``--engine llamacpp``) through its
  JSON API; ``llama-cpp-server``: llama-cpp-python's own server on it.

Two conditions, one per run: *controlled* (``--threads N``: every system the same thread count,
the app with the benchmark's batch and queue sizes) and *defaults* (``--defaults``: every system as
its users start it, answers of 200 tokens); docs/PERFORMANCE.md keeps one table of each.

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
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import httpx

from benchmarks import classroom as bench_classroom
from benchmarks import peers as bench_peers
from benchmarks import room as bench_room
from benchmarks.clients import (
    Batch,
    Client,
    app_api_client,
    baseline_client,
    engine_client,
    engine_counter,
    gradio_client,
    hf_cb_client,
    openai_client,
    prompt,
    run_batch,
)
from benchmarks.report import (
    doc_markers,
    machine_info,
    report_markdown,
    summarize,
    target_checks,
    update_doc,
)
from hunyuan_webui.engine.threads import POLICY, let_idle_threads_sleep

SYSTEMS = ("baseline", "serve", "serve-cb", "app-gradio", "app-api", "engine", "hf-cb",
           "llamacpp", "app-llamacpp", "llama-cpp-server")
PEER_OF = {"baseline": "baseline", "serve": "serve", "serve-cb": "serve-cb",
           "app-gradio": "app", "app-api": "app", "app-llamacpp": "app-llamacpp",
           "llama-cpp-server": "llama-cpp-server"}
LLAMA_CPP_SYSTEMS = ("llamacpp", "app-llamacpp", "llama-cpp-server")
DEFAULT_TOKENS = {False: 64, True: 200}  # per request: controlled, defaults
WARMUP_FIRST = 10_000  # warm-up requests are numbered apart from the measured ones


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
    defaults: bool = False  # every system at its own defaults (threads is then None)
    cb_memory: float | None = None  # at defaults: serve-cb's --cb-max-memory-percent

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
        elif name == "llamacpp":
            engine = start_llamacpp(cfg)
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
        elif name == "llama-cpp-server":  # greedy in its spelling (its penalty defaults to 1.1)
            targets[name] = Target(name, openai_client(
                http, url, cfg.tokens, str(bench_peers.bench_gguf(model)),
                extra={"repeat_penalty": 1.0, "top_k": 1}))
        else:
            make = gradio_client if name == "app-gradio" else app_api_client
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


def start_llamacpp(cfg: Config) -> Any:
    """Our llama.cpp engine on the checkpoint's GGUF; its threads as the app would pick them."""
    from hunyuan_webui import models
    from hunyuan_webui.engine.llamacpp import LlamaCppEngine

    spec = models.resolve(str(bench_peers.bench_gguf(cfg.model_dir)))
    engine = LlamaCppEngine(spec, device=cfg.device, max_batch_size=16, max_new_tokens=cfg.tokens,
                            cpu_threads=cfg.threads or 0)
    status = engine.wait_ready(600)
    if status.state != "ready":
        raise bench_peers.PeerError(f"the llama.cpp engine did not load: {status.reason}")
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
    before = await settled(target.counter) if target.counter else None
    batch = await run_batch(target.client, clients, requests, first, timeout)
    if target.counter and before is not None:
        batch.engine_tokens = await settled(target.counter) - before
    return batch


async def settled(counter: Callable[[], Awaitable[int]], every_s: float = 0.6,
                  within_s: float = 10.0) -> int:
    """The app's token counter once it stops moving: ``/ready`` reads the engine child's
    heartbeat, which comes twice a second, so a read right after a batch can miss its end."""
    value, deadline = await counter(), time.monotonic() + within_s
    while time.monotonic() < deadline:
        await asyncio.sleep(every_s)
        again = await counter()
        if again == value:
            break
        value = again
    return value


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
            count = partial(engine_counter, http, peer.url)
            counts, samples = [await settled(count)], []
            for _ in range(4):  # the first request, then three repeats
                samples.append(await call(0))
                counts.append(await settled(count))
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


# -- the command line ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench",
        description="Side-by-side serving benchmark: the old one-generate-at-a-time WebUI, "
                    "transformers serve (with and without continuous batching) and this app, "
                    "on one random-weight checkpoint of the Hunyuan-MT architecture.",
        epilog="Example: python -m benchmarks.bench --threads 1 --doc docs/PERFORMANCE.md. "
               "The classroom soak: python -m benchmarks.bench classroom --help; a class: "
               "python -m benchmarks.bench room --help; speculative decoding on and off: "
               "python -m benchmarks.bench speculative --help; bf16 against fp32 and llama.cpp: "
               "python -m benchmarks.bench bf16 --help; how many languages a room keeps pace "
               "with: python -m benchmarks.bench pace --help; what a PDF costs beyond its "
               "translation: python -m benchmarks.bench pdf --help")
    parser.add_argument("--size", choices=sorted(bench_peers.SIZES), default="cpu",
                        help="checkpoint shape: cpu = 31M params for a CPU (default), 7b = the "
                             "real 7B shape for a GPU, small = 4M, tiny = 0.7M for tests")
    parser.add_argument("--model-dir", help="use (or build and keep) the checkpoint here; "
                                            "default: a temporary directory")
    parser.add_argument("--device", default="auto", help="auto (default: cuda if available), cpu or cuda")
    parser.add_argument("--tokens", type=int,
                        help="generated tokens per request (default 64; 200 with --defaults)")
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
    parser.add_argument("--interleave", action="store_true",
                        help="all servers up at once, rounds alternating between them, also at "
                             "--defaults (there one at a time is the default): an A/B that a "
                             "noisy machine's drift hits alike")
    parser.add_argument("--threads", type=int,
                        help="torch/OpenMP threads for every system (default: library default)")
    parser.add_argument("--defaults", action="store_true",
                        help="every system at its own defaults (threads, batch, queue), 200 "
                             "tokens per request unless --tokens, one system at a time (as on "
                             "a machine of its own); the table goes to the document's defaults "
                             "markers")
    parser.add_argument("--cb-memory-share", type=float,
                        help="with --defaults: the share of free memory `transformers serve "
                             "--continuous-batching` may take for its paged cache (its "
                             "--cb-max-memory-percent, a setting its users have; its own default "
                             "is 0.6 on a CPU, 0.9 on a GPU). Default: its own")
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
    tokens = args.tokens or DEFAULT_TOKENS[args.defaults]
    if args.quick:
        concurrency = tuple(c for c in concurrency if c in (1, 8)) or (1, 8)
    return Config(model_dir=model_dir, tokens=32 if args.quick else tokens,
                  concurrency=concurrency, rounds=1 if args.quick else args.rounds,
                  per_client=args.requests_per_client,
                  min_requests=3 if args.quick else args.min_requests, systems=systems,
                  device=resolve_device(args.device),
                  interleave=args.interleave or (not (args.sequential or args.defaults)
                                                 and resolve_device(args.device) == "cpu"),
                  timeout=args.timeout, threads=args.threads, defaults=args.defaults,
                  cb_memory=args.cb_memory_share)


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
        with bench_peers.Peers(log_dir, threads=cfg.threads, defaults=cfg.defaults,
                               cb_memory=cfg.cb_memory) as peers:
            cfg = _drop_unavailable(cfg, skipped)
            batches = asyncio.run(measure(cfg, peers))
            cache = asyncio.run(cache_check(cfg, peers, workdir)) if args.cache_check else None
        rows = [summarize(s, c, batches[(s, c)], cfg.tokens)
                for c in cfg.concurrency for s in cfg.systems if (s, c) in batches]
        return {
            "command": "python -m benchmarks.bench " + " ".join(sys.argv[1:]),
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
    """Leave out the systems whose packages are missing here (and say so)."""
    needs = {name: (bench_peers.serve_missing_packages(), "transformers[serving]")
             for name in ("serve", "serve-cb")}
    gguf = [] if importlib.util.find_spec("gguf") else ["gguf"]  # writes the checkpoint's GGUF
    llama = [] if importlib.util.find_spec("llama_cpp") else ["llama_cpp"]
    needs |= {name: (gguf + llama, "llama-cpp-python gguf") for name in LLAMA_CPP_SYSTEMS}
    needs["llama-cpp-server"] = (gguf + bench_peers.llama_server_missing_packages(),
                                 "gguf 'llama-cpp-python[server]'")
    for name, (missing, install) in needs.items():
        if name in cfg.systems and missing:
            skipped[name] = f"needs {', '.join(missing)} (pip install {install})"
    if not skipped:
        return cfg
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["classroom"]:  # the classroom soak: docs/RELIABILITY.md
        return bench_classroom.main(argv[1:])
    if argv[:1] == ["room"]:  # a class: one teacher, many students' streams (docs/PERFORMANCE.md)
        return bench_room.main(argv[1:])
    # issue 34's tables, and issue 37's PDF (PERFORMANCE.md)
    if argv[:1] in (["speculative"], ["pace"], ["bf16"], ["pdf"]):
        module = importlib.import_module(f"benchmarks.{argv[0]}")
        return int(module.main(argv[1:]))
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.defaults and args.threads:
        parser.error("--defaults runs every system with its own thread count: leave out --threads")
    if args.threads:  # before torch loads: the in-process engine runs like the peers
        os.environ.update(OMP_NUM_THREADS=str(args.threads), MKL_NUM_THREADS=str(args.threads))
    elif POLICY not in os.environ:  # before torch loads: the in-process columns (and only they)
        let_idle_threads_sleep()  # run OpenMP as the app's engine process does at its defaults
        bench_peers.OWN_PROCESS_ONLY.add(POLICY)
    result = run(args)
    text = report_markdown(result)
    print(text)
    out = Path(args.out or f"runs/bench-{datetime.now(UTC):%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _say(f"results written to {out}")
    if args.doc:
        update_doc(Path(args.doc), text, *doc_markers(args.defaults))
        _say(f"table written to {args.doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
