"""One decoding step of our PyTorch engine on a CPU, three ways.

:mod:`hunyuan_webui.engine.cpu` multiplies a decoder layer's q/k/v projections as one matrix, and
its gate/up projections as another (:class:`~hunyuan_webui.engine.cpu.SharedInput`), and
:mod:`hunyuan_webui.engine.decode` computes a batched step without transformers' per-call
machinery. This loads the bench checkpoint as the app does, reads ``--batch`` prompts, and times
decoding steps in three arrangements, alternating step by step in one process so that all see the
same machine (it is shared and noisy: ratios, not times):

- ``direct``: the app's step (:class:`~hunyuan_webui.engine.decode.DecodeStep`);
- ``shared``: the model's own ``forward``, with the shared matrices;
- ``separate``: the model's own ``forward``, each projection with its own reordered copy;
- ``plain``: the model's own ``forward`` with plain ``nn.Linear`` multiplies (``F.linear``): the
  step without :mod:`hunyuan_webui.engine.cpu`'s work.

``--dtype bf16`` measures the same in bf16 (on a CPU that computes it natively: AVX512-BF16 or
AMX), ``--batch`` the rows.

It also reports how many multiplies a step makes in each.

    python -m benchmarks.cpu_step                      # builds the bench checkpoint in a temp dir
    python -m benchmarks.cpu_step --model-dir /tmp/bench-cpu --doc docs/PERFORMANCE.md
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.report import cpu_model, publish

DOC_START, DOC_END = "<!-- bench-cpu-step:start -->", "<!-- bench-cpu-step:end -->"
ARRANGEMENTS = ("direct", "shared", "separate", "plain")
DESCRIBED = {"direct": "the app's direct step, shared projections",
             "shared": "the model's forward, shared projections",
             "separate": "the model's forward, a matrix per projection",
             "plain": "the model's forward, plain nn.Linear (F.linear)"}


class Arrangement:
    """Switches every grouped projection of a tuned model between its shared matrix and a
    reordered copy of its own."""

    def __init__(self, model: Any) -> None:
        import torch

        from hunyuan_webui.engine.cpu import TunedLinear

        self.grouped = [(m, m.shared) for m in model.modules()
                        if isinstance(m, TunedLinear) and m.shared is not None]
        self.modules = [m for m in model.modules() if isinstance(m, TunedLinear)]
        self.tuned = len(self.modules)
        for module, _ in self.grouped:
            module.packed = torch.ops.mkldnn._reorder_linear_weight(module.weight.detach(), None)

    def use(self, name: str) -> None:
        import torch

        from hunyuan_webui.engine.cpu import TunedLinear

        for module in self.modules:
            module.__class__ = torch.nn.Linear if name == "plain" else TunedLinear
        for module, shared in self.grouped:
            module.shared = None if name == "separate" else shared

    def multiplies(self, name: str) -> int:
        groups = {id(shared) for _, shared in self.grouped}
        return self.tuned - (0 if name in ("separate", "plain") else
                             len(self.grouped) - len(groups))


def measure(model_dir: str, batch: int, steps: int, dtype: str = "fp32") -> dict[str, Any]:
    import torch

    from hunyuan_webui import models
    from hunyuan_webui.engine import loader
    from hunyuan_webui.engine.batch import Batch, Prefill, Row
    from hunyuan_webui.engine.kvcache import growing_cache

    loaded = loader.load(models.resolve(model_dir), dtype, "cpu")
    arrangement = Arrangement(loaded.model)
    if not arrangement.grouped or loaded.decode is None:
        raise SystemExit("no shared projections or direct step here (no oneDNN, or not an fp32 "
                         "Hunyuan dense model on a CPU)")
    steppers = {"direct": loaded.next_logits,
                "shared": lambda inputs: loaded.model(**inputs).logits[:, -1, :]}
    steppers["separate"] = steppers["plain"] = steppers["shared"]
    vocab = loaded.model.config.vocab_size
    rows = [Row(None, [(7 * i + j) % vocab for j in range(120)], steps, None, None)  # type: ignore[arg-type]
            for i in range(batch)]
    group = Prefill.start(rows, 0, loaded.device, growing_cache(loaded.model.config))
    times: dict[str, list[float]] = {name: [] for name in ARRANGEMENTS}
    with torch.inference_mode():
        logits = group.read(loaded.model, 1 << 20)
        assert logits is not None
        running = Batch()
        running.merge(group, logits.argmax(-1), torch.zeros(batch, vocab, dtype=torch.bool))
        for step in range(len(ARRANGEMENTS) * steps):
            name = ARRANGEMENTS[step % len(ARRANGEMENTS)]
            arrangement.use(name)
            started = time.perf_counter()
            running.next = steppers[name](running.step_inputs()).argmax(-1)
            times[name].append(time.perf_counter() - started)
    skip = steps // 5  # the first steps warm the caches
    arrangement.use("direct")
    return {"batch": batch, "steps": steps, "threads": torch.get_num_threads(),
            "dtype": loaded.dtype,
            "ms": {name: statistics.median(t[skip:]) * 1000 for name, t in times.items()},
            "multiplies": {name: arrangement.multiplies(name) for name in ARRANGEMENTS}}


def render(result: dict[str, Any]) -> str:
    """The table from the run's JSON (benchmarks/results/cpu-step.json)."""
    direct = result["ms"]["direct"]
    lines = [f"Command: `{result['command']}`", "",
             f"Run {result['when']} on {result['processor']}, {result['threads']} threads, "
             f"{result.get('dtype', 'fp32')}; {result['batch']} rows, "
             f"{result['steps']} steps of each arrangement, alternating.", "",
             "| step | what computes it | multiplies per step | step p50 ms | / direct |",
             "|---|---|---:|---:|---:|"]
    for name in (n for n in ARRANGEMENTS if n in result["ms"]):  # older runs lack "plain"
        ms = result["ms"][name]
        lines.append(f"| {name} | {DESCRIBED[name]} | {result['multiplies'][name]} | {ms:.2f} "
                     f"| {ms / direct:.2f} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model-dir", help="the bench checkpoint (default: build one)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--steps", type=int, default=200, help="steps of each arrangement")
    parser.add_argument("--dtype", default="fp32", choices=("fp32", "bf16"))
    parser.add_argument("--doc", help="write the table between this Markdown file's markers")
    parser.add_argument("--out", help="write the run's JSON here (benchmarks/results/cpu-step.json)")
    args = parser.parse_args(argv)
    command = "python -m benchmarks.cpu_step " + " ".join(argv or sys.argv[1:])
    from hunyuan_webui.engine.threads import let_idle_threads_sleep

    let_idle_threads_sleep()  # as the app's engine process: before torch loads
    with tempfile.TemporaryDirectory() as tmp:
        model_dir = args.model_dir
        if model_dir is None:
            from benchmarks.peers import build_checkpoint

            model_dir = str(build_checkpoint(Path(tmp) / "bench-cpu"))
        result = measure(model_dir, args.batch, args.steps, args.dtype)
    start, end = ((DOC_START, DOC_END) if args.dtype == "fp32" else
                  (DOC_START.replace("step", f"step-{args.dtype}"),
                   DOC_END.replace("step", f"step-{args.dtype}")))
    result.update(command=command.strip(), processor=cpu_model(),
                  when=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    publish(render(result), args.doc, start, end)
    return 0


if __name__ == "__main__":
    sys.exit(main())
