"""The GPU check: the real 7B shape, random weights, our own engine, one prepared run.

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

``--device cpu --size tiny --tokens 8`` runs the same code in seconds (tests/service/test_bench_gpu.py).
"""

from __future__ import annotations

import argparse
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
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import torch

from benchmarks.gpu_measures import (
    BATCH,
    PROMPT_TOKENS,
    Budget,
    OutOfTime,
    ceilings,
    checkpoint_params,
    copy_bandwidth,
    memory_now,
    message,
    open_engine,
    pick_work_dir,
    release_engines,
    run_streams,
    shape_bytes,
    spec_bandwidth,
    stream_numbers,
    weight_bytes,
)
from benchmarks.gpu_report import DOC_END, DOC_START, markdown
from hunyuan_webui.engine import Engine

FIRST_TOKEN_RUNS = 5
# Prior guesses for steps nothing has been measured for yet (seconds), by whether the shape is 7B.
BUILD_GUESS_S = {True: 150.0, False: 20.0}
LOAD_GUESS_S = {True: 90.0, False: 15.0}
RATE_GUESS = 20.0  # tokens/s, eager transformers on a 7B model


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
        peers = importlib.import_module("benchmarks.peers")
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
        report = importlib.import_module("benchmarks.report")
        report.update_doc(Path(args.doc), table, DOC_START, DOC_END)
        print(f"updated {args.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
