"""Speculative decoding on and off: ``python -m benchmarks.bench speculative --help``.

Two measurements in one run, and their combination on paper (docs/PERFORMANCE.md says which is
which):

1. **Acceptance and tokens/s on the demo models** (they really copy: the demo phrase table has
   copy-heavy rows). Per demo model, two of our engines side by side in this process, one with
   speculative decoding and one with ``--no-speculative``, each request greedy. Three kinds of
   text: *copy-heavy* (names, numbers, URLs, code), *ordinary* (the other demo phrases), and a
   *re-translation* of each phrase whose previous translation (the draft hint) is the first half
   of its answer, as a text growing under a recogniser gives. At 1 client (one request after the
   other) and 8 (eight closed-loop clients). On and off take turns a few requests at a time (a
   shared machine's load changes from one second to the next), the order flipping every turn,
   so it weighs on both alike; the table has the tokens/s over all turns, the share of draft
   tokens accepted, the tokens per decoding step, and whether every answer was the same on and
   off.
2. **The cost of a verified step on the real Hy-MT2-1.8B shape** (random weights,
   :mod:`benchmarks.cpu_laptop`'s shape): one decoding step of 1 + k tokens per row (a token and
   k drafts) against the plain step, at 1 and 8 rows, in the engine's own precision on this CPU
   (bf16 where it computes bf16 natively) and in fp32, steps of each size alternating.
3. **On paper**: the speed-up the 1.8B would get from the drafts the demo runs verified, had its
   steps the 1.8B's costs: the demo's plain and verification steps re-timed with (2). This
   assumes the 1.8B's answers copy as much as the demo's and its planner sends the same drafts;
   both are assumptions, and the table says so.

Raw results go to ``--out`` (JSON: figures, command, versions, machine) and the tables to stdout
and, with ``--doc``, between the ``bench-speculative`` markers of docs/PERFORMANCE.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.report import machine_info, publish

DOC_START, DOC_END = "<!-- bench-speculative:start -->", "<!-- bench-speculative:end -->"
KINDS = ("copy-heavy", "ordinary", "re-translation")
FORMATS = ("7b", "1.8b")  # the demo models' chat formats
STEP_TOKENS = (1, 2, 4, 8)  # tokens per row in the 1.8B step-cost table


# -- 1. the demo models ------------------------------------------------------------------------
@dataclass
class Cell:
    """One (model, kind, clients, on/off) measurement, over the rounds."""

    rates: list[float] = field(default_factory=list)  # tokens/s per round
    seconds: float = 0.0
    tokens: int = 0
    steps: int = 0  # decoding steps (plain and verifying)
    verify_steps: int = 0
    drafts: int = 0
    accepted: int = 0
    answers: list[str] = field(default_factory=list)  # the last round's, in request order


def _requests(kind: str, repeat: int) -> list[tuple[str, Any]]:
    """(prompt phrase, hint) for a kind of text, ``repeat`` times over."""
    from hunyuan_webui.demo.model import load_phrases

    phrases = load_phrases()
    copying = [p for p in phrases if p.copies]
    if kind == "copy-heavy":
        chosen = [(p, "") for p in copying]
    elif kind == "ordinary":
        chosen = [(p, "") for p in phrases if p not in copying]
    else:
        chosen = [(p, p.target[:len(p.target) // 2]) for p in phrases]
    return chosen * repeat


def _run(engine: Any, requests: list[tuple[Any, str]], clients: int
         ) -> tuple[int, float, list[str]]:
    """``clients`` closed-loop clients taking requests from one list: tokens, seconds, and the
    answers in request order."""
    from hunyuan_webui.engine import DecodingOptions

    family = str(engine.spec.family)
    answers = [""] * len(requests)
    lock = threading.Lock()
    position = iter(range(len(requests)))

    def client() -> None:
        while True:
            with lock:
                i = next(position, None)
            if i is None:
                return
            phrase, hint = requests[i]
            options = DecodingOptions(deterministic=True, draft=hint)
            answers[i] = engine.generate(phrase.prompt_in(family), options)

    before = engine.tokens_generated
    started = time.perf_counter()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return engine.tokens_generated - before, time.perf_counter() - started, answers


def _counters(engine: Any) -> tuple[int, int, int, int]:
    spec = engine.status().extra["speculative"]
    return (engine.steps, spec.get("verify_steps", 0), spec.get("draft_tokens", 0),
            spec.get("accepted", 0))


def _measure_cell(engines: dict[bool, Any], requests: list[tuple[Any, str]], clients: int,
                  rounds: int, cells: dict[bool, Cell]) -> None:
    """On and off in turns, a chunk of requests at a time (a few seconds each: the load of a
    shared machine changes from one second to the next), the order flipping every turn."""
    size = max(clients * 2, 8)
    chunks = [requests[i:i + size] for i in range(0, len(requests), size)]
    turn = 0
    for _ in range(rounds):
        spent = {on: [0, 0.0] for on in engines}
        answers: dict[bool, list[str]] = {on: [] for on in engines}
        for chunk in chunks:
            turn += 1
            for on in ((True, False) if turn % 2 else (False, True)):
                start = _counters(engines[on])
                tokens, seconds, said = _run(engines[on], chunk, clients)
                end = _counters(engines[on])
                spent[on][0] += tokens
                spent[on][1] += seconds
                answers[on] += said
                cell = cells[on]
                cell.tokens += tokens
                for name, a, b in zip(("steps", "verify_steps", "drafts", "accepted"), start,
                                      end):
                    setattr(cell, name, getattr(cell, name) + b - a)
        for on, (tokens, seconds) in spent.items():
            cells[on].rates.append(tokens / seconds)
            cells[on].seconds += seconds
            cells[on].answers = answers[on]


def measure_demo(fmt: str, rounds: int, repeat: int, say: Any) -> dict[str, Any]:
    """Every kind at 1 and 8 clients, on and off in turns."""
    from hunyuan_webui import models
    from hunyuan_webui.demo.model import ensure_demo_model
    from hunyuan_webui.engine.local import LocalEngine

    spec = models.resolve(str(ensure_demo_model(fmt)))
    engines = {on: LocalEngine(spec, device="cpu", max_batch_size=16, max_queued=512,
                               max_new_tokens=64, speculative=on) for on in (True, False)}
    try:
        for engine in engines.values():
            assert engine.wait_ready(300).state == "ready"
        rows = []
        for kind in KINDS:
            for clients in (1, 8):
                cells = {on: Cell() for on in engines}
                _measure_cell(engines, _requests(kind, repeat), clients, rounds, cells)
                for on, cell in cells.items():
                    rows.append({
                        "kind": kind, "clients": clients, "speculative": on,
                        "tokens_per_s": cell.tokens / cell.seconds, "rounds": cell.rates,
                        "tokens": cell.tokens, "steps": cell.steps,
                        "verify_steps": cell.verify_steps, "draft_tokens": cell.drafts,
                        "accepted": cell.accepted,
                        "same_answers": cell.answers == cells[not on].answers})
                say(f"{fmt} {kind} {clients} client(s): on {rows[-2]['tokens_per_s']:.0f}, "
                    f"off {rows[-1]['tokens_per_s']:.0f} tokens/s")
        return {"format": fmt, "model": spec.id, "rows": rows}
    finally:
        for engine in engines.values():
            engine.close()


# -- 2. the 1.8B's verified step -----------------------------------------------------------------
def measure_steps(model_dir: Path, dtype: str, rounds: int, say: Any) -> dict[str, Any]:
    """Step time (median ms) of 1 + k tokens per row, at 1 and 8 rows, sizes alternating."""
    import torch

    from hunyuan_webui import models
    from hunyuan_webui.engine import loader
    from hunyuan_webui.engine.batch import Batch, Prefill, Row
    from hunyuan_webui.engine.kvcache import growing_cache

    loaded = loader.load(models.resolve(str(model_dir)), dtype, "cpu")
    model = loaded.model
    say(f"1.8B shape in {loaded.dtype}: direct step {'yes' if loaded.decode else 'no'}")
    batches = {}
    with torch.inference_mode():
        for rows in (1, 8):
            group = Prefill.start([Row(None, [(7 * i + j) % 600 + 1 for j in range(48)], 64,  # type: ignore[arg-type]
                                       None, None) for i in range(rows)], 0, loaded.device,
                                  growing_cache(model.config))
            logits = group.read(model, 1 << 20)
            assert logits is not None
            batch = Batch()
            batch.merge(group, logits.argmax(-1),
                        torch.zeros(rows, model.config.vocab_size, dtype=torch.bool))
            batches[rows] = batch
        times: dict[tuple[int, int], list[float]] = {}
        for r in range(rounds):
            for rows in (1, 8):
                for tokens in (STEP_TOKENS if r % 2 == 0 else STEP_TOKENS[::-1]):
                    batch = batches[rows]
                    started = time.perf_counter()
                    if tokens == 1:
                        loaded.logits(batch.step_inputs())
                    else:
                        inputs = batch.verify_inputs([[5] * (tokens - 1)] * rows)
                        loaded.logits(inputs)
                        batch.settle(tokens, [1] * rows)
                    times.setdefault((rows, tokens), []).append(time.perf_counter() - started)
    del loaded, model, batches
    skip = 1 if rounds > 2 else 0  # the first round warms the caches
    return {"dtype": dtype, "steps": [
        {"rows": rows, "tokens_per_row": tokens, "ms": statistics.median(t[skip:]) * 1000,
         "rounds": [round(x * 1000, 1) for x in t]} for (rows, tokens), t in sorted(times.items())]}


# -- 3. on paper ---------------------------------------------------------------------------------
def on_paper(demo: dict[str, Any], steps: dict[str, Any]) -> list[dict[str, Any]]:
    """The demo's 1-client runs re-timed with the 1.8B's step costs (linear between the measured
    sizes): the same tokens from its plain and verifying steps, each step costing what a 1.8B
    step of that many tokens costs."""
    cost = {s["tokens_per_row"]: s["ms"] for s in steps["steps"] if s["rows"] == 1}

    def ms(tokens: float) -> float:
        sizes = sorted(cost)
        low = max((s for s in sizes if s <= tokens), default=sizes[0])
        high = min((s for s in sizes if s >= tokens), default=sizes[-1])
        if high == low:
            return cost[low] * (tokens / low if tokens > sizes[-1] else 1.0)
        return cost[low] + (cost[high] - cost[low]) * (tokens - low) / (high - low)

    rows = {(r["kind"], r["clients"], r["speculative"]): r for r in demo["rows"]}
    out = []
    for (kind, clients, on), row in rows.items():
        if clients != 1 or not on or not row["steps"]:
            continue
        plain = row["steps"] - row["verify_steps"]
        per_verify = 1 + row["draft_tokens"] / row["verify_steps"] if row["verify_steps"] else 1
        with_drafts = plain * ms(1) + row["verify_steps"] * ms(per_verify)
        without = rows[kind, clients, False]["steps"] * ms(1)  # the same requests, no drafts
        out.append({"format": demo["format"], "kind": kind, "dtype": steps["dtype"],
                    "speedup": without / with_drafts if with_drafts else None,
                    "tokens_per_step": row["tokens"] / row["steps"],
                    "drafts_per_verify_step": per_verify - 1})
    return out


# -- the report ----------------------------------------------------------------------------------
def table(result: dict[str, Any]) -> str:
    machine = result["machine"]
    lines = [f"Command: `{result['command']}`", "",
             f"Run {result['when']} on {machine['cpus']} CPUs ({machine['processor']}), torch "
             f"{machine['torch']}, transformers {machine['transformers']}; load average "
             f"{machine['load_before']} before, {machine['load_after']} after (a machine shared "
             f"with other work: read the ratios, not the times). {result['rounds']} rounds of "
             "each cell.", "",
             "**On the demo models** (greedy; tokens/s over all turns, on and off in turns a "
             "few requests at a time; accepted: the share of draft tokens the model agreed "
             "with):", "",
             "| demo model | text | clients | off tokens/s | on tokens/s | on / off | drafts "
             "accepted | tokens per step | same answers |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for demo in result["demo"]:
        rows = {(r["kind"], r["clients"], r["speculative"]): r for r in demo["rows"]}
        for kind in KINDS:
            for clients in (1, 8):
                on, off = rows[kind, clients, True], rows[kind, clients, False]
                accepted = (f"{on['accepted']}/{on['draft_tokens']} "
                            f"({100 * on['accepted'] / on['draft_tokens']:.0f}%)"
                            if on["draft_tokens"] else "none sent")
                lines.append(
                    f"| {demo['format']} | {kind} | {clients} | {off['tokens_per_s']:.0f} | "
                    f"{on['tokens_per_s']:.0f} | {on['tokens_per_s'] / off['tokens_per_s']:.2f} | "
                    f"{accepted} | {on['tokens'] / max(1, on['steps']):.2f} | "
                    f"{'yes' if on['same_answers'] else '**no**'} |")
    for steps in result["steps"]:
        lines += ["", f"**A verified step on the Hy-MT2-1.8B shape**, {steps['dtype']} (random "
                  "weights, 48-token prompts; ms per step, median; / plain: against 1 token per "
                  "row):", "", "| rows | tokens per row | ms per step | / plain |",
                  "|---:|---:|---:|---:|"]
        plain = {s["rows"]: s["ms"] for s in steps["steps"] if s["tokens_per_row"] == 1}
        for s in steps["steps"]:
            lines.append(f"| {s['rows']} | {s['tokens_per_row']} | {s['ms']:.0f} | "
                         f"{s['ms'] / plain[s['rows']]:.2f} |")
    if result["paper"]:
        lines += ["", "**On paper** (not measured: the demo's 1-client runs re-timed with the "
                  "1.8B's step costs above, assuming its answers copy as much and its planner "
                  "sends the same drafts):", "",
                  "| demo model | text | 1.8B precision | tokens per step | drafts per verifying "
                  "step | expected speed-up |", "|---|---|---|---:|---:|---:|"]
        for p in result["paper"]:
            lines.append(f"| {p['format']} | {p['kind']} | {p['dtype']} | "
                         f"{p['tokens_per_step']:.2f} | {p['drafts_per_verify_step']:.1f} | "
                         f"{p['speedup']:.2f}x |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    def say(message: str) -> None:
        print(f"[speculative] {message}", file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    demo = [measure_demo(fmt, args.rounds, args.repeat, say) for fmt in args.formats.split(",")]
    steps = []
    if args.model_dir:
        for dtype in args.step_dtypes.split(","):
            steps.append(measure_steps(Path(args.model_dir), dtype, args.step_rounds, say))
    paper = [p for s in steps for d in demo for p in on_paper(d, s)]
    return {"benchmark": "speculative", "command": "python -m benchmarks.bench speculative "
            + " ".join(args.argv), "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "rounds": args.rounds, "machine": machine_info(load_before), "demo": demo,
            "steps": steps, "paper": paper}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench speculative",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--formats", default=",".join(FORMATS), help="demo models (7b, 1.8b)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of on and off per cell")
    parser.add_argument("--repeat", type=int, default=2,
                        help="times each cell's phrases are sent per round")
    parser.add_argument("--model-dir", help="a checkpoint of the 1.8B shape for the step costs "
                        "(benchmarks.cpu_laptop builds one); without it, no step table")
    parser.add_argument("--step-dtypes", default="auto,fp32",
                        help="precisions of the step table (auto: the engine's choice here)")
    parser.add_argument("--step-rounds", type=int, default=5)
    parser.add_argument("--out", help="write the JSON results here")
    parser.add_argument("--doc", help="write the table between this document's markers")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    from hunyuan_webui.engine.threads import let_idle_threads_sleep

    let_idle_threads_sleep()  # as the app's engine process: before torch loads
    result = run(args)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    publish(table(result), args.doc, DOC_START, DOC_END)
    same = all(r["same_answers"] for d in result["demo"] for r in d["rows"])
    return 0 if same else 1


