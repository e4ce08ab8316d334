"""How the engine's CPU threads and OpenMP's wait policy hold up when the machine is not its own.

The engine's decoding step (the bench checkpoint, ``--batch`` rows, the prompts read first) is
timed in a fresh process per setting, because OpenMP reads its wait policy once, when torch loads:

- ``1 thread``: one core left to the web server (the old default on 2 cores);
- ``N spin``: every core, OpenMP's default wait (idle threads spin before they sleep);
- ``N passive``: every core, ``OMP_WAIT_POLICY=PASSIVE`` (idle threads sleep at once; the app's
  default on 2 cores, :mod:`hunyuan_webui.engine.threads`),

under four loads started beside it: none; a web server's share (a process busy 2 ms in every
10); one process that never sleeps; one such process per core. Settings are measured in turns,
in ``--rounds`` rounds, and each is reported as its median step time and as a ratio to 1 thread
under the same load (ratios: the machine is shared and noisy).

``--engine llamacpp`` measures our llama.cpp engine the same way, on an F32 GGUF of the same
checkpoint (its CPU build runs on OpenMP too, and takes the same thread policy); its table has
markers of its own.

    python -m benchmarks.threads                       # builds the bench checkpoint in a temp dir
    python -m benchmarks.threads --model-dir /tmp/bench-cpu --doc docs/PERFORMANCE.md
    python -m benchmarks.threads --engine llamacpp --model-dir /tmp/bench-cpu --doc docs/PERFORMANCE.md
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.report import cpu_model, update_doc
from hunyuan_webui.engine.threads import usable_cores

DOC_START, DOC_END = "<!-- bench-threads:start -->", "<!-- bench-threads:end -->"
LLAMACPP_DOC = "<!-- bench-threads-llamacpp:start -->", "<!-- bench-threads-llamacpp:end -->"
BURST = ("import time\nwhile True:\n    end = time.perf_counter() + 0.002\n"
         "    while time.perf_counter() < end: pass\n    time.sleep(0.008)")
SPIN = "while True: pass"
LOADS = {"none": [], "web server (20% of a core)": [BURST], "1 busy process": [SPIN],
         "1 busy process per core": None}  # None: one SPIN per core


def settings(cores: int) -> list[tuple[str, int, str | None]]:
    """(name, threads, OMP_WAIT_POLICY) per setting; None leaves OpenMP's default."""
    return [("1 thread", 1, None), (f"{cores} spin", cores, None),
            (f"{cores} passive", cores, "PASSIVE")]


def step_worker(model_dir: str, batch: int, steps: int) -> None:
    """In this process: load the checkpoint as the app does, read ``batch`` prompts, time steps."""
    import torch

    from hunyuan_webui import models
    from hunyuan_webui.engine import loader
    from hunyuan_webui.engine.batch import Batch, Prefill, Row
    from hunyuan_webui.engine.kvcache import growing_cache

    loaded = loader.load(models.resolve(model_dir))
    vocab = loaded.model.config.vocab_size
    rows = [Row(None, [(7 * i + j) % vocab for j in range(120)], steps, None, None)  # type: ignore[arg-type]
            for i in range(batch)]
    group = Prefill.start(rows, 0, loaded.device, growing_cache(loaded.model.config))
    with torch.inference_mode():
        logits = group.read(loaded.model, 1 << 20)
        assert logits is not None
        running = Batch()
        running.merge(group, logits.argmax(-1), torch.zeros(batch, vocab, dtype=torch.bool))
        times = []
        for _ in range(steps):
            started = time.perf_counter()
            out = loaded.model(**running.step_inputs())
            running.next = out.logits[:, -1, :].argmax(-1)
            times.append(time.perf_counter() - started)
    print(json.dumps({"ms": statistics.median(times[steps // 5:]) * 1000}))


def llamacpp_step_worker(model_dir: str, batch: int, steps: int, threads: int) -> None:
    """The same for our llama.cpp engine's model (one context, ``batch`` sequences)."""
    import numpy as np

    from benchmarks.peers import bench_gguf
    from hunyuan_webui.engine.llama_model import LlamaModel

    model = LlamaModel(bench_gguf(model_dir), n_ctx=batch * (128 + steps), n_seq_max=batch,
                       n_batch=128 + batch, threads=threads, gpu=False)
    vocab, nexts = model.n_vocab, []
    for seq in range(batch):
        ids = [(7 * seq + j) % vocab for j in range(120)]
        [logits] = model.decode([(t, p, seq, p == len(ids) - 1) for p, t in enumerate(ids)])
        nexts.append(int(np.argmax(logits)))
    times = []
    for step in range(steps):
        started = time.perf_counter()
        out = model.decode([(nexts[seq], 120 + step, seq, True) for seq in range(batch)])
        nexts = [int(np.argmax(logits)) for logits in out]
        times.append(time.perf_counter() - started)
    model.close()
    print(json.dumps({"ms": statistics.median(times[steps // 5:]) * 1000}))


def time_setting(model_dir: str, batch: int, steps: int, threads: int,
                 policy: str | None, engine: str = "local") -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads),
               HF_HUB_OFFLINE="1", TRANSFORMERS_VERBOSITY="error")
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    out = subprocess.run([sys.executable, "-m", "benchmarks.threads", "--step-worker", model_dir,
                          "--batch", str(batch), "--steps", str(steps), "--engine", engine,
                          "--worker-threads", str(threads)], env=env,
                         capture_output=True, text=True, timeout=600, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the step worker failed:\n{out.stderr[-2000:]}")
    return float(json.loads(out.stdout.strip().splitlines()[-1])["ms"])


@contextlib.contextmanager
def load_beside(kind: str, cores: int) -> Iterator[None]:
    codes = LOADS[kind]
    procs = [subprocess.Popen([sys.executable, "-c", code])
             for code in (codes if codes is not None else [SPIN] * cores)]
    try:
        time.sleep(0.5)
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def measure(model_dir: str, batch: int, steps: int, rounds: int, engine: str = "local") -> dict:
    cores = usable_cores()  # as the engine counts them
    results: dict[str, dict[str, list[float]]] = {}
    for r in range(rounds):
        for kind in LOADS:
            order = settings(cores)
            with load_beside(kind, cores):
                for name, threads, policy in order if r % 2 == 0 else order[::-1]:
                    ms = time_setting(model_dir, batch, steps, threads, policy, engine)
                    results.setdefault(kind, {}).setdefault(name, []).append(ms)
                    print(f"  round {r + 1}, load {kind!r}, {name}: {ms:.1f} ms/step",
                          file=sys.stderr, flush=True)
    return {"cores": cores, "processor": cpu_model(), "batch": batch, "steps": steps,
            "rounds": rounds, "engine": engine,
            "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "ms_per_step": results}


def render(result: dict) -> str:
    """The table from the run's JSON (benchmarks/results/threads.json, threads-llamacpp.json)."""
    names = [name for name, _, _ in settings(result["cores"])]
    lines = [f"Command: `{result['command']}`", "",
             f"Run {result['at']} on {result['cores']} CPUs ({result['processor']}); "
             + ("our llama.cpp engine (an F32 GGUF of the checkpoint); "
                if result.get("engine") == "llamacpp" else "") + "decoding "
             f"steps at batch {result['batch']}, median of each run's steps, median of "
             f"{result['rounds']} rounds. In brackets: step time of 1 thread / this setting "
             f"under the same load (above 1: faster).", "",
             "| load beside the engine | " + " | ".join(f"{n} ms/step" for n in names) + " |",
             "|---|" + "---:|" * len(names)]
    for kind, per in result["ms_per_step"].items():
        base = statistics.median(per[names[0]])
        cells = []
        for name in names:
            ms = statistics.median(per[name])
            cells.append(f"{ms:.1f}" + ("" if name == names[0] else f" ({base / ms:.2f}x)"))
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", help="the bench checkpoint (default: build one)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--doc", help="write the table between this Markdown file's markers")
    parser.add_argument("--out", help="write the run's JSON here (benchmarks/results/threads.json)")
    parser.add_argument("--engine", choices=("local", "llamacpp"), default="local",
                        help="local: our PyTorch engine's step; llamacpp: our llama.cpp engine's")
    parser.add_argument("--step-worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.step_worker and args.engine == "llamacpp":
        llamacpp_step_worker(args.step_worker, args.batch, args.steps, args.worker_threads)
        return 0
    if args.step_worker:
        step_worker(args.step_worker, args.batch, args.steps)
        return 0
    command = "python -m benchmarks.threads " + " ".join(argv or sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model_dir
        if model_dir is None:
            from benchmarks.peers import build_checkpoint

            model_dir = str(build_checkpoint(Path(tmp) / "bench-cpu"))
        if args.engine == "llamacpp":
            from benchmarks.peers import bench_gguf

            bench_gguf(model_dir)  # written once, before any timing
        result = measure(model_dir, args.batch, args.steps, args.rounds, args.engine)
    result["command"] = command.strip()
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    text = render(result)
    print(text)
    if args.doc:
        markers = LLAMACPP_DOC if args.engine == "llamacpp" else (DOC_START, DOC_END)
        update_doc(Path(args.doc), text, *markers)
    return 0


if __name__ == "__main__":
    sys.exit(main())
