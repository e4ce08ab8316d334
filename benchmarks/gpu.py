"""The GPU check (issue 14): the real 7B shape, random weights, our own engine, one prepared run.

``python -m benchmarks.gpu`` builds a random-weight ``HunYuanDenseV1ForCausalLM`` of the real 7B
shape in bf16 directly on the GPU (:func:`benchmarks.peers.build_checkpoint`: every stop and special
token unreachable, so each request generates exactly the tokens asked for), loads it the way the
app does (``get_engine`` on ``Settings(model=DIR, engine="local")``, so ``models.resolve(DIR)`` and
:class:`~hunyuan_webui.engine.local.LocalEngine`), and measures:

* the bandwidth ceiling of batch-1 decoding, ``HBM bandwidth / weight bytes``, from the GPU's
  spec sheet (:data:`SPEC_BANDWIDTH`, by name) and from a device-to-device copy measured here;
* single-stream greedy decoding, ``(tokens - 1) / (last token - first token)`` (the engine's own
  :attr:`Usage.tokens_per_s`), and its share of each ceiling;
* 16 requests decoded together (aggregate tokens/s), the first-token time of a ~500-token prompt,
  and single-stream decoding in the engine's ``int8`` and ``int4`` (bitsandbytes) precisions, whose
  failure (bitsandbytes missing or broken) is recorded, not raised.

It runs on a lent machine that has torch, transformers, safetensors and numpy but not this app's
web stack and no network, within minutes: every step is checked against ``--budget-s`` before it
starts (and streams are cancelled at the deadline), a step that does not fit is recorded as
``time budget``, and the JSON is rewritten after every step, so a killed run keeps what it measured.
Progress goes to stderr, stamped with the elapsed time; the markdown table to stdout, and with
``--doc`` between :data:`DOC_START` and :data:`DOC_END`. ``--from-json FILE --doc PATH`` renders
a saved run (e.g. one brought back from the GPU machine) without measuring anything.

``--device cpu --size tiny --tokens 8`` runs the same code in seconds (tests/test_bench_gpu.py).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import importlib.util
import json
import logging
import os
import platform
import shutil
import statistics
import sys
import tempfile
import threading
import time
import traceback
import types
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import torch

from hunyuan_webui.engine import (
    DecodingOptions,
    Engine,
    EngineState,
    Stream,
    close_engines,
    get_engine,
)
from hunyuan_webui.models import estimate_weight_gib
from hunyuan_webui.prompts import translation_prompt
from hunyuan_webui.settings import Settings

DOC_START, DOC_END = "<!-- bench-gpu:start -->", "<!-- bench-gpu:end -->"
# Share of the bandwidth ceiling single-stream bf16 decoding should reach (docs/PERFORMANCE.md).
TARGET, GOAL = 0.6, 0.8
# HBM bandwidth by GPU name (bytes/s): every substring must occur (case-insensitive); first match
# wins, so the specific rows come first. "NVIDIA H100 80GB HBM3" is how the SXM part names itself.
SPEC_BANDWIDTH: tuple[tuple[tuple[str, ...], float], ...] = (
    (("H200",), 4.8e12),
    (("H100", "PCIe"), 2.0e12),
    (("H100", "SXM"), 3.35e12),
    (("H100", "HBM3"), 3.35e12),
    (("A100", "80GB"), 2.04e12),
    (("A100", "40GB"), 1.56e12),
    (("L40S",), 0.864e12),
)
BATCH = 16
PROMPT_TOKENS = 500  # the first-token prompt
FIRST_TOKEN_RUNS = 5
COPY_REPEATS = 5
# Prior guesses for steps nothing has been measured for yet (seconds), by whether the shape is 7B.
BUILD_GUESS_S = {True: 150.0, False: 20.0}
LOAD_GUESS_S = {True: 90.0, False: 15.0}
RATE_GUESS = 20.0  # tokens/s, eager transformers on a 7B model

SENTENCES = (
    "The committee will publish its final report on the railway line next spring.",
    "Please keep your luggage with you at all times while you are in the station.",
    "Our small team has been working on this translation tool for almost two years.",
    "If the weather is good tomorrow, we would like to visit the old castle.",
    "The museum is open every day except Monday, from nine in the morning.",
    "Thank you very much for your help with the move last weekend.",
)


class OutOfTime(Exception):
    """The time budget ran out during a step."""


# -- time and progress -------------------------------------------------------------------------
class Budget:
    """Seconds since the start, against ``--budget-s``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def left(self) -> float:
        return self.seconds - self.elapsed()

    def fits(self, estimate_s: float) -> bool:
        return self.elapsed() + estimate_s <= self.seconds

    def say(self, message: str) -> None:
        print(f"[{self.elapsed():6.1f}s] {message}", file=sys.stderr, flush=True)


# -- bandwidth ---------------------------------------------------------------------------------
def spec_bandwidth(gpu_name: str) -> float | None:
    """The spec-sheet HBM bandwidth of a GPU by its name (bytes/s); None when unknown."""
    name = gpu_name.lower()
    for parts, bandwidth in SPEC_BANDWIDTH:
        if all(p.lower() in name for p in parts):
            return bandwidth
    return None


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def copy_bandwidth(device: torch.device, buffer_mb: int,
                   repeats: int = COPY_REPEATS) -> dict[str, Any]:
    """Device-to-device copy of one buffer: each copy reads and writes it (2x its bytes)."""
    size = buffer_mb * 2**20
    src = torch.ones(size, dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)  # first touch and kernel load, not timed
    times = []
    for _ in range(repeats):
        _sync(device)
        started = time.perf_counter()
        dst.copy_(src)
        _sync(device)
        times.append(time.perf_counter() - started)
    del src, dst
    return {"buffer_bytes": size, "repeats": repeats,
            "bytes_per_s": 2 * size / statistics.median(times),
            "bytes_per_s_best": 2 * size / min(times)}


# -- the checkpoint ----------------------------------------------------------------------------
def _import_without_httpx(name: str) -> types.ModuleType:
    """Import one of our benchmark modules on a machine without httpx.

    ``benchmarks.peers`` and ``benchmarks.report`` (through ``benchmarks.clients``) import httpx at
    the top for their HTTP clients, which building a checkpoint and writing a table never call. The
    GPU machine may not have httpx and nothing can be installed there: where it is missing, an
    empty placeholder stands in for the length of this import only."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != "httpx":
            raise
    before = sys.modules.get("httpx", _ABSENT)  # None where a test made httpx unimportable
    sys.modules["httpx"] = types.ModuleType("httpx")
    try:
        return importlib.import_module(name)
    finally:
        if before is _ABSENT:
            del sys.modules["httpx"]
        else:
            sys.modules["httpx"] = before  # type: ignore[assignment]


_ABSENT = object()


def checkpoint_params(model_dir: Path) -> dict[str, int]:
    """Parameter counts from the safetensors headers (nothing is loaded): total and embedding."""
    from safetensors import safe_open

    total = embedding = 0
    for path in sorted(model_dir.glob("*.safetensors")):
        with safe_open(str(path), framework="pt") as f:
            for key in f.keys():  # noqa: SIM118 - safe_open has keys(), not iteration
                count = 1
                for dim in f.get_slice(key).get_shape():
                    count *= dim
                total += count
                if key.endswith("embed_tokens.weight"):
                    embedding += count
    return {"params": total, "embedding_params": embedding}


def pick_work_dir(expected_bytes: int) -> Path:
    """RAM (/dev/shm) when it holds the checkpoint twice over, else the temporary directory."""
    shm = Path("/dev/shm")
    with contextlib.suppress(OSError):
        if shm.is_dir() and shutil.disk_usage(shm).free > 2 * expected_bytes:
            return Path(tempfile.mkdtemp(prefix="hymt-gpu-", dir=shm))
    return Path(tempfile.mkdtemp(prefix="hymt-gpu-"))


def shape_bytes(size: str, bytes_per_param: int = 2) -> int:
    """Approximate checkpoint size of a benchmark shape (for choosing where to write it)."""
    peers = _import_without_httpx("benchmarks.peers")
    s = peers.SIZES[size]
    vocab = s.vocab or 1000
    per_layer = (2 * s.hidden * s.hidden + 2 * s.hidden * s.kv_heads * s.head_dim
                 + 3 * s.hidden * s.ffn)
    return bytes_per_param * (2 * vocab * s.hidden + s.layers * per_layer)


# -- decoding through the engine ---------------------------------------------------------------
def greedy(tokens: int) -> DecodingOptions:
    return DecodingOptions(deterministic=True, repetition_penalty=1.0, max_new_tokens=tokens)


def message(i: int, min_tokens: int = 0, engine: Engine | None = None) -> str:
    """Request ``i``'s translation prompt; with ``min_tokens``, sentences are added until the
    message is at least that long in ``engine``'s tokens."""
    text = f"Item {i + 1}: {SENTENCES[i % len(SENTENCES)]}"
    k = i
    while engine is not None and engine.count_tokens(
            translation_prompt(text, "en", "zh")) < min_tokens:
        k += 1
        text += " " + SENTENCES[k % len(SENTENCES)]
    return translation_prompt(text, "en", "zh")


def run_streams(engine: Engine, prompts: Sequence[str], tokens: int,
                budget: Budget) -> list[Stream]:
    """Submit ``prompts`` together and wait for every stream; at the deadline, cancel them."""
    streams = engine.submit(list(prompts), greedy(tokens))
    finished = threading.Semaphore(0)
    for stream in streams:
        stream.add_done_callback(lambda _s: finished.release())
    for _ in streams:
        if not finished.acquire(timeout=max(0.0, budget.left())):
            for stream in streams:
                stream.cancel()
            raise OutOfTime(f"stopped at the budget's end ({budget.seconds:.0f}s)")
    for stream in streams:
        stream.raise_if_failed()
    return streams


def stream_numbers(stream: Stream, tokens: int) -> dict[str, Any]:
    usage = stream.usage
    return {"requested_tokens": tokens, "tokens": usage.completion_tokens,
            "exact": usage.completion_tokens == tokens, "prompt_tokens": usage.prompt_tokens,
            "decode_tokens_per_s": usage.tokens_per_s, "first_token_s": usage.first_token_s,
            "latency_s": usage.latency_s, "finish_reason": stream.finish_reason}


def open_engine(model_dir: Path, dtype: str, device: str,
                budget: Budget) -> tuple[Engine, dict[str, Any]]:
    """The app's engine for ``model_dir``, loaded and warmed; raises with the engine's reason."""
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated() if device == "cuda" else 0
    started = time.perf_counter()
    engine = get_engine(Settings(model=str(model_dir), engine="local", dtype=dtype, device=device))
    status = engine.wait_ready(timeout=max(1.0, budget.left()))
    if status.state is not EngineState.READY:
        if status.state in (EngineState.LOADING, EngineState.WARMING):
            raise OutOfTime(f"still {status.state.value} at the budget's end")
        raise RuntimeError(status.reason or f"engine {status.state.value}")
    info: dict[str, Any] = {"load_s": time.perf_counter() - started, "dtype": status.dtype,
                            "device": status.device}
    if device == "cuda":
        info["gpu_weights_bytes"] = torch.cuda.memory_allocated() - before
    return engine, info


def release_engines(device: str) -> None:
    close_engines()
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()


def memory_now(device: str) -> dict[str, Any]:
    if device == "cuda":
        free, total = torch.cuda.mem_get_info()
        return {"gpu_allocated_peak_bytes": torch.cuda.max_memory_allocated(),
                "gpu_used_bytes": total - free, "gpu_total_bytes": total}
    import resource

    return {"rss_peak_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024}


def weight_bytes(params: int, dtype: str) -> int:
    """Bytes of weights for ``params`` parameters stored as ``dtype``; int8/int4 as bitsandbytes
    keeps them (embeddings and lm_head in 16 bits: an estimate, from the model registry)."""
    exact = {"bf16": 2, "fp16": 2, "fp32": 4}
    if dtype in exact:
        return params * exact[dtype]
    return int(estimate_weight_gib(params / 1e9, dtype) * 2**30)


def ceilings(rate: float | None, bytes_per_token: int,
             bandwidth: dict[str, float | None]) -> dict[str, Any]:
    """Tokens/s ceilings (bandwidth / weight bytes) and the share of each that ``rate`` reaches."""
    out: dict[str, Any] = {"weight_bytes": bytes_per_token}
    for source, value in bandwidth.items():
        if value:
            ceiling = value / bytes_per_token
            out[f"ceiling_{source}_tokens_per_s"] = ceiling
            out[f"fraction_of_{source}"] = rate / ceiling if rate else None
    return out


# -- the run -----------------------------------------------------------------------------------
class Run:
    """One run's measurements, in order; each is ``ok``, ``failed`` or ``skipped`` with a reason."""

    def __init__(self, args: argparse.Namespace, budget: Budget) -> None:
        self.args, self.budget = args, budget
        self.results: dict[str, Any] = {"format": 1, "started_at": datetime.now().isoformat(
            timespec="seconds"), "args": vars(args), "environment": environment(args.device),
            "measurements": {}}
        self.out = Path(args.out)

    def step(self, name: str, estimate_s: float,
             fn: Callable[[], dict[str, Any]]) -> dict[str, Any] | None:
        """Run one measurement if it fits the budget; record what happened; save the JSON."""
        if not self.budget.fits(estimate_s):
            reason = (f"time budget: ~{estimate_s:.0f}s needed, {self.budget.left():.0f}s of "
                      f"{self.budget.seconds:.0f}s left")
            return self.record(name, {"status": "skipped", "reason": reason})
        self.budget.say(f"{name}: start (estimate {estimate_s:.0f}s)")
        started = time.perf_counter()
        try:
            result = {"status": "ok", **fn()}
        except OutOfTime as exc:
            result = {"status": "skipped", "reason": f"time budget: {exc}"}
        except Exception as exc:  # one failed step must not lose the others' numbers
            traceback.print_exc(file=sys.stderr)
            result = {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
        result["step_s"] = round(time.perf_counter() - started, 3)
        return self.record(name, result)

    def record(self, name: str, result: dict[str, Any]) -> dict[str, Any] | None:
        self.results["measurements"][name] = result
        self.budget.say(f"{name}: {result['status']}"
                        + (f" ({result['reason']})" if "reason" in result else ""))
        self.save()
        return result if result["status"] == "ok" else None

    def skip_after(self, failed: str, names: Sequence[str]) -> None:
        """Record ``names`` as skipped because step ``failed`` did not succeed (its reason kept)."""
        first = self.results["measurements"][failed]
        for name in names:
            self.record(name, {"status": "skipped",
                               "reason": f"needs {failed} ({first['status']}: {first['reason']})"})

    def save(self) -> None:
        self.results["elapsed_s"] = round(self.budget.elapsed(), 3)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        partial = self.out.with_name(self.out.name + ".partial")
        partial.write_text(json.dumps(self.results, indent=2, default=str) + "\n", encoding="utf-8")
        os.replace(partial, self.out)


def environment(device: str) -> dict[str, Any]:
    import transformers

    env: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__,
                           "transformers": transformers.__version__, "cpus": os.cpu_count(),
                           "device": device}
    for name in ("safetensors", "numpy", "bitsandbytes", "accelerate"):
        env[name] = _version_of(name)
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        env.update(gpu=props.name, gpu_memory_bytes=props.total_memory, cuda=torch.version.cuda,
                   spec_bandwidth=spec_bandwidth(props.name))
    else:
        env.update(gpu=None, processor=platform.processor() or platform.machine(),
                   spec_bandwidth=None)
    return env


def _version_of(name: str) -> str | None:
    if importlib.util.find_spec(name) is None:
        return None
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


def measure(args: argparse.Namespace) -> dict[str, Any]:
    budget = Budget(args.budget_s)
    run = Run(args, budget)
    env = run.results["environment"]
    budget.say(f"{env.get('gpu') or env.get('processor')}: torch {env['torch']}, transformers "
               f"{env['transformers']}, bitsandbytes {env['bitsandbytes']}")
    device = torch.device(args.device)
    big = args.size == "7b"
    copy = run.step("copy_bandwidth", 10.0, lambda: copy_bandwidth(device, args.copy_mb))
    bandwidth = {"spec": env["spec_bandwidth"], "measured": copy["bytes_per_s"] if copy else None}

    model_dir = Path(args.model_dir) if args.model_dir else None
    made_here = model_dir is None
    try:
        model_dir = build_step(run, model_dir, big)
        if model_dir is None:
            run.skip_after("checkpoint", ("load", "probe", "single_stream", "batch16",
                                          "first_token", "int8", "int4"))
            return run.results
        counts = checkpoint_params(model_dir)
        run.results["checkpoint"] = {"dir": str(model_dir), **counts}
        measure_float(run, model_dir, counts, bandwidth, big)
        for dtype in ("int8", "int4"):
            measure_quantized(run, model_dir, dtype, counts, bandwidth)
    finally:
        release_engines(args.device)
        if made_here and model_dir is not None and not args.keep:
            shutil.rmtree(model_dir, ignore_errors=True)
    run.results["memory"] = memory_now(args.device)
    run.save()
    budget.say(f"done: {run.out}")
    return run.results


def build_step(run: Run, model_dir: Path | None, big: bool) -> Path | None:
    args = run.args
    if model_dir is not None and (model_dir / "config.json").is_file():
        run.record("checkpoint", {"status": "ok", "reused": str(model_dir)})
        return model_dir

    def build() -> dict[str, Any]:
        nonlocal model_dir
        peers = _import_without_httpx("benchmarks.peers")
        model_dir = model_dir or pick_work_dir(shape_bytes(args.size))
        peers.build_checkpoint(model_dir, args.size, device=args.device,
                               dtype=args.checkpoint_dtype)
        gc.collect()
        if args.device == "cuda":
            torch.cuda.empty_cache()
        return {"dir": str(model_dir), "size": args.size, "dtype": args.checkpoint_dtype,
                "bytes": sum(p.stat().st_size for p in model_dir.glob("*.safetensors"))}

    done = run.step("checkpoint", BUILD_GUESS_S[big], build)
    return model_dir if done else None


def measure_float(run: Run, model_dir: Path, counts: dict[str, int],
                  bandwidth: dict[str, float | None], big: bool) -> None:
    args, budget = run.args, run.budget
    loaded: dict[str, Any] = {}

    def load() -> dict[str, Any]:
        engine, info = open_engine(model_dir, args.dtype, args.device, budget)
        loaded.update(engine=engine, **info)
        return info

    if run.step("load", LOAD_GUESS_S[big], load) is None:
        run.skip_after("load", ("probe", "single_stream", "batch16", "first_token"))
        return
    engine: Engine = loaded["engine"]
    # A short probe sizes the later steps' estimates (and warms the decode path once more).
    probe = run.step("probe", 1.0 + min(16, args.tokens) / RATE_GUESS,
                     lambda: stream_numbers(*run_streams(engine, [message(99)],
                                                         min(16, args.tokens), budget),
                                            min(16, args.tokens)))
    if probe is None:
        run.skip_after("probe", ("single_stream", "batch16", "first_token"))
        return
    rate = probe["decode_tokens_per_s"] or RATE_GUESS
    weights = weight_bytes(counts["params"], loaded["dtype"])

    def single() -> dict[str, Any]:
        [stream] = run_streams(engine, [message(0)], args.tokens, budget)
        numbers = stream_numbers(stream, args.tokens)
        return {**numbers, "dtype": loaded["dtype"],
                **ceilings(numbers["decode_tokens_per_s"], weights, bandwidth)}

    def batch() -> dict[str, Any]:
        started = time.perf_counter()
        streams = run_streams(engine, [message(i) for i in range(BATCH)], args.tokens, budget)
        wall = time.perf_counter() - started
        per = [stream_numbers(s, args.tokens) for s in streams]
        total = sum(p["tokens"] for p in per)
        return {"requests": BATCH, "tokens": total, "wall_s": wall,
                "aggregate_tokens_per_s": total / wall,
                "exact": all(p["exact"] for p in per),
                "stream_decode_tokens_per_s_p50": statistics.median(
                    p["decode_tokens_per_s"] or 0.0 for p in per)}

    def first_token() -> dict[str, Any]:
        times, lengths = [], []
        for i in range(FIRST_TOKEN_RUNS):
            [stream] = run_streams(engine, [message(200 + i, PROMPT_TOKENS, engine)], 1, budget)
            times.append(stream.usage.first_token_s)
            lengths.append(stream.usage.prompt_tokens)
        return {"runs": FIRST_TOKEN_RUNS, "prompt_tokens": lengths,
                "first_token_s_p50": statistics.median(times), "first_token_s": times}

    run.step("single_stream", 1.0 + 1.3 * args.tokens / rate, single)
    run.step("batch16", 2.0 + 3.0 * args.tokens / rate, batch)
    run.step("first_token", FIRST_TOKEN_RUNS * (1.0 + 40 / rate), first_token)
    run.results["memory_float"] = memory_now(args.device)
    release_engines(args.device)


def measure_quantized(run: Run, model_dir: Path, dtype: str, counts: dict[str, int],
                      bandwidth: dict[str, float | None]) -> None:
    """Load in ``dtype`` (bitsandbytes) and decode one stream; the engine's reason on failure."""
    args, budget = run.args, run.budget
    float_step = run.results["measurements"].get("load", {})
    single = run.results["measurements"].get("single_stream", {})
    rate = single.get("decode_tokens_per_s") or RATE_GUESS
    slowdown = {"int8": 4.0, "int4": 1.5}[dtype]  # bitsandbytes vs bf16 at batch 1 (REFERENCE.md)
    estimate = 1.5 * float_step.get("load_s", LOAD_GUESS_S[args.size == "7b"]) \
        + slowdown * args.tokens / rate

    def quantized() -> dict[str, Any]:
        try:
            engine, info = open_engine(model_dir, dtype, args.device, budget)
            [stream] = run_streams(engine, [message(0)], args.tokens, budget)
            numbers = stream_numbers(stream, args.tokens)
            bytes_ = info.get("gpu_weights_bytes") or weight_bytes(counts["params"], dtype)
            return {**info, **numbers, **memory_now(args.device),
                    **ceilings(numbers["decode_tokens_per_s"], bytes_, bandwidth)}
        finally:
            release_engines(args.device)

    run.step(dtype, estimate, quantized)


# -- the report --------------------------------------------------------------------------------
def _count(n: int) -> str:
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.2f} M"


def _fmt_rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f} tok/s"


def _share(result: dict[str, Any]) -> str:
    parts = []
    for source in ("spec", "measured"):
        ceiling = result.get(f"ceiling_{source}_tokens_per_s")
        fraction = result.get(f"fraction_of_{source}")
        if ceiling:
            parts.append(f"{100 * (fraction or 0):.0f}% of the {source} ceiling ({ceiling:,.0f})")
    return "; ".join(parts) or "no ceiling (unknown bandwidth)"


def _why(result: dict[str, Any] | None) -> str:
    if not result:
        return "not run"
    return f"{result['status']}: {result.get('reason', '')}".replace("|", "/").replace("\n", " ")


def markdown(results: dict[str, Any]) -> str:
    """The run as a markdown table (measurement | result | against the ceiling / notes)."""
    env, m = results["environment"], results["measurements"]
    args = results["args"]
    gib = 2**30
    where = env.get("gpu") or env.get("processor") or "?"
    if env.get("gpu_memory_bytes"):
        where += f", {env['gpu_memory_bytes'] / gib:.0f} GiB"
    lines = [f"Random-weight `{args['size']}` checkpoint, `python -m benchmarks.gpu`, "
             f"{results['started_at']}: {where}; torch {env['torch']}, transformers "
             f"{env['transformers']}, bitsandbytes {env.get('bitsandbytes') or 'not installed'}.",
             "", "| measurement | result | against the ceiling / notes |", "|---|---|---|"]
    ckpt = results.get("checkpoint", {})
    if ckpt.get("params"):
        lines.append(f"| weights | {_count(ckpt['params'])} parameters | the embedding table: "
                     f"{_count(ckpt['embedding_params'])} of them (read one row per token) |")
    copy = m.get("copy_bandwidth", {})
    spec = env.get("spec_bandwidth")
    measured = (f"{copy['bytes_per_s'] / 1e12:.2f} TB/s measured (copy of "
                f"{copy['buffer_bytes'] / gib:.1f} GiB, median of {copy['repeats']})"
                if copy.get("status") == "ok" else _why(copy))
    lines.append(f"| memory bandwidth | {measured} | spec "
                 f"{f'{spec / 1e12:.2f} TB/s' if spec else 'unknown for this device'} |")
    for name, label in (("single_stream", "single-stream decode"), ("int8", "int8 decode"),
                        ("int4", "int4 decode")):
        r = m.get(name, {})
        if r.get("status") == "ok":
            exact = "" if r["exact"] else f" ONLY {r['tokens']} of {r['requested_tokens']} tokens"
            lines.append(f"| {label} ({r['dtype']}, {r['requested_tokens']} tokens) | "
                         f"{_fmt_rate(r['decode_tokens_per_s'])}{exact} | {_share(r)}"
                         + (f"; target {TARGET:.0%}, goal {GOAL:.0%}" if name == "single_stream"
                            else "") + " |")
        else:
            lines.append(f"| {label} | — | {_why(r)} |")
    r = m.get("batch16", {})
    lines.append(f"| {BATCH} requests together | {_fmt_rate(r.get('aggregate_tokens_per_s'))} "
                 f"aggregate | " + (f"{r['tokens']} tokens in {r['wall_s']:.2f} s; each stream "
                                    f"{_fmt_rate(r['stream_decode_tokens_per_s_p50'])} (p50)"
                                    if r.get("status") == "ok" else _why(r)) + " |")
    r = m.get("first_token", {})
    if r.get("status") == "ok":
        lines.append(f"| first token, ~{PROMPT_TOKENS}-token prompt | "
                     f"{1000 * r['first_token_s_p50']:.0f} ms (p50 of {r['runs']}) | prompts of "
                     f"{min(r['prompt_tokens'])}-{max(r['prompt_tokens'])} tokens |")
    else:
        lines.append(f"| first token, ~{PROMPT_TOKENS}-token prompt | — | {_why(r)} |")
    for name in ("checkpoint", "load"):
        r = m.get(name, {})
        if r.get("status") != "ok":
            lines.append(f"| {name} | — | {_why(r)} |")
        elif "load_s" in r:
            lines.append(f"| load through the engine | {r['load_s']:.1f} s | {r['dtype']} on "
                         f"{r['device']} |")
    mem = results.get("memory_float", {})
    if "gpu_allocated_peak_bytes" in mem:
        lines.append(f"| GPU memory ({m.get('load', {}).get('dtype', 'float')}) | "
                     f"{mem['gpu_allocated_peak_bytes'] / gib:.1f} GiB peak allocated | "
                     f"{mem['gpu_used_bytes'] / gib:.1f} GiB in use on the device |")
    lines.append(f"| run | {results.get('elapsed_s', 0):.0f} s | budget {args['budget_s']:.0f} s |")
    return "\n".join(lines)


class _Once(logging.Filter):
    """Let each distinct log message through once."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg)
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


# -- command line ------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.gpu", description=__doc__.split("\n\n")[0],
        epilog="Smoke test on a CPU: --device cpu --size tiny --tokens 8.")
    parser.add_argument("--device", default="cuda", help="cuda (default) or cpu")
    parser.add_argument("--size", default="7b", help="checkpoint shape from "
                        "benchmarks.peers.SIZES (default 7b; tiny for a smoke test)")
    parser.add_argument("--checkpoint-dtype", default="bf16", choices=("bf16", "fp16", "fp32"),
                        help="precision the checkpoint is written in (default bf16)")
    parser.add_argument("--dtype", default="auto", help="the engine's --dtype for the float "
                        "measurements (default auto: bf16 on a GPU, fp32 on a CPU)")
    parser.add_argument("--model-dir", help="reuse (or build into) this checkpoint directory "
                        "instead of a temporary one")
    parser.add_argument("--keep", action="store_true", help="keep the temporary checkpoint")
    parser.add_argument("--tokens", type=int, default=256, help="new tokens per request")
    parser.add_argument("--copy-mb", type=int, default=0, help="copy-bandwidth buffer in MiB "
                        "(default 3072 on a GPU, 64 on a CPU)")
    parser.add_argument("--budget-s", type=float, default=420.0, help="skip what would end after "
                        "this many seconds from the start (default 420)")
    parser.add_argument("--out", help="JSON results (default runs/gpu-<time>.json)")
    parser.add_argument("--doc", help="also write the table between the bench-gpu markers of "
                        "this markdown file (e.g. docs/PERFORMANCE.md)")
    parser.add_argument("--from-json", help="render a saved run (with --doc: into the document) "
                        "instead of measuring")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # bitsandbytes' int8 matmul logs on every call that it casts bf16/fp32 inputs to fp16: 256
    # tokens x 32 layers x 7 linears would bury the progress lines (and slow the decoding).
    logging.getLogger("bitsandbytes.autograd._functions").addFilter(_Once())
    if args.from_json:
        results = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
    else:
        if args.tokens < 2:
            raise SystemExit("--tokens must be at least 2 (a decode rate needs two tokens)")
        if args.device == "cuda" and not torch.cuda.is_available():
            raise SystemExit("--device cuda: PyTorch sees no CUDA GPU (use --device cpu to smoke-"
                             "test)")
        args.copy_mb = args.copy_mb or (3072 if args.device == "cuda" else 64)
        args.out = args.out or f"runs/gpu-{datetime.now():%Y%m%d-%H%M%S}.json"
        results = measure(args)
    table = markdown(results)
    print(table)
    if args.doc:
        report = _import_without_httpx("benchmarks.report")
        report.update_doc(Path(args.doc), table, DOC_START, DOC_END)
        print(f"updated {args.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
