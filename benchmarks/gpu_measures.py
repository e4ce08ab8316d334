"""The GPU check's instruments (:mod:`benchmarks.gpu`): bandwidth, the checkpoint, and requests
through the app's engine, each timed against the run's :class:`Budget`.

Only torch, transformers (through the engine), safetensors and this app's engine modules are
imported: the GPU machine has nothing else (tests/service/test_bench_gpu.py checks it).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from hunyuan_webui import models
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
COPY_REPEATS = 5
BATCH = 16
PROMPT_TOKENS = 500  # the first-token prompt
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
    peers = importlib.import_module("benchmarks.peers")
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
    config = Settings(model=str(model_dir), engine="local", dtype=dtype, device=device)
    engine = get_engine(models.resolve(config.model), config.engine_config())
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


