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
   k drafts) at 1, 2, 4 and 8 rows, in the engine's own precision on this CPU (bf16 where it
   computes bf16 natively) and in fp32, steps of each size alternating.
3. **On paper**: what the 1.8B would gain. The demo models run the same requests again, their
   planner deciding with the 1.8B's step costs of (2) instead of the demo's own (a tiny model's
   step is mostly Python, where a verifying step costs twice a plain one; the 1.8B's is reading
   its weights), and every step they take is timed at what a 1.8B step of that shape costs; the
   plain side takes the same requests with no drafts. This assumes the 1.8B's answers copy as
   much as the demo's: an assumption, and the table says so. The upper bound beside it: the
   tokens per step of a drafter that always found the longest run of the answer in the prompt
   (or the hint), free of cost, on the same answers.

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
STEP_ROWS = (1, 2, 4, 8)  # rows in it


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
    """Step time (median ms) of 1 + k tokens per row, at each of :data:`STEP_ROWS`, sizes
    alternating."""
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
        for rows in STEP_ROWS:
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
            for rows in STEP_ROWS:
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
def _between(points: dict[float, float], x: float) -> float:
    """Straight lines through ``points``, the last one going on past the largest."""
    xs = sorted(points)
    if len(xs) == 1 or x <= xs[0]:
        return points[xs[0]]
    for x0, x1 in zip(xs, xs[1:]):
        if x <= x1:
            return points[x0] + (points[x1] - points[x0]) * (x - x0) / (x1 - x0)
    x0, x1 = xs[-2], xs[-1]
    return points[x1] + (points[x1] - points[x0]) * (x - x1) / (x1 - x0)


class TableCost:
    """The planner's cost model (:class:`~hunyuan_webui.engine.speculative.CostModel`'s
    interface) with the 1.8B's measured steps instead of the running model's: the cost of a
    step of ``rows`` rows and ``tokens`` tokens in all, by straight lines between the measured
    rows and tokens per row. It also counts the shapes of the steps taken, to time them."""

    token_seconds = 0.0  # streaming a token: nothing beside a 1.8B step

    def __init__(self, steps: dict[str, Any]) -> None:
        self.ms: dict[int, dict[float, float]] = {}
        for s in steps["steps"]:
            self.ms.setdefault(s["rows"], {})[s["tokens_per_row"]] = s["ms"]
        self.taken: dict[tuple[int, int], int] = {}

    def step_ms(self, rows: int, per_row: float) -> float:
        by_rows = {r: _between(row, per_row) for r, row in self.ms.items()}
        return _between({float(r): v for r, v in by_rows.items()}, float(rows))

    def curve(self, rows: int = 1) -> Any:
        return lambda tokens: self.step_ms(rows, tokens / rows) / 1000

    def observe(self, tokens: int, seconds: float, rows: int | None = None) -> None:
        assert rows, "the engine says how many rows a step read"
        shape = (rows, tokens // rows)
        self.taken[shape] = self.taken.get(shape, 0) + 1

    def per_token(self, tokens: int, seconds: float) -> None:
        pass

    def seconds_taken(self) -> float:
        return sum(n * self.step_ms(r, t) for (r, t), n in self.taken.items()) / 1000


def upper_bound(fmt: str, kind: str) -> float:
    """Tokens per step of a free drafter that always proposes the longest run (at most
    :data:`~hunyuan_webui.engine.speculative.MAX_DRAFT` tokens) of the demo's greedy answer
    that stands anywhere in the prompt or the hint: what prompt lookup could reach here."""
    import torch

    from hunyuan_webui import models
    from hunyuan_webui.demo.model import ensure_demo_model
    from hunyuan_webui.engine import loader
    from hunyuan_webui.engine.speculative import MAX_DRAFT

    spec = models.resolve(str(ensure_demo_model(fmt)))
    loaded = loader.load(spec, "auto", "cpu")
    tokenizer = loaded.tokenizer
    tokens = steps = 0
    for phrase, hint in _requests(kind, 1):
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": phrase.prompt_in(str(spec.family))}],
            add_generation_prompt=True, tokenize=True, return_dict=False)
        ids = [int(i) for i in (ids["input_ids"] if hasattr(ids, "keys") else ids)]
        with torch.inference_mode():
            out = loaded.model.generate(torch.tensor([ids]), max_new_tokens=64, do_sample=False)
        answer = out[0, len(ids):].tolist()
        ends = [i for i, t in enumerate(answer) if t in loaded.eos_token_ids]
        answer = answer[:ends[0] + 1] if ends else answer
        sources = [ids, tokenizer.encode(hint, add_special_tokens=False) if hint else []]
        i, steps = 1, steps + 1  # the first token comes with the prompt's reading
        while i < len(answer):
            run = max((_common(source, start, answer, i) for source in sources
                       for start in range(len(source))), default=0)
            i += min(run, MAX_DRAFT) + 1
            steps += 1
        tokens += len(answer)
    return tokens / steps


def _common(source: list[int], start: int, answer: list[int], at: int) -> int:
    n = 0
    while start + n < len(source) and at + n < len(answer) and source[start + n] == answer[at + n]:
        n += 1
    return n


def on_paper(fmt: str, steps: dict[str, Any], rounds: int, repeat: int,
             say: Any) -> list[dict[str, Any]]:
    """The demo's requests again, its planner deciding with the 1.8B's costs, every step timed
    at the 1.8B's cost of its shape; plain: the same requests without drafts."""
    from hunyuan_webui import models
    from hunyuan_webui.demo.model import ensure_demo_model
    from hunyuan_webui.engine.local import LocalEngine

    spec = models.resolve(str(ensure_demo_model(fmt)))
    engines = {on: LocalEngine(spec, device="cpu", max_batch_size=16, max_queued=512,
                               max_new_tokens=64, speculative=True) for on in (True, False)}
    out = []
    try:
        for engine in engines.values():
            assert engine.wait_ready(300).state == "ready"
        engines[False]._planner.max_draft = 0  # type: ignore[union-attr]  # plain, its steps counted
        for kind in KINDS:
            for clients in (1, 8):
                costs = {}
                for on, engine in engines.items():
                    # The planner decides with the 1.8B's costs (private: a benchmark's seam).
                    engine._planner.cost = costs[on] = TableCost(steps)  # type: ignore[union-attr]
                cells = {on: Cell() for on in engines}
                _measure_cell(engines, _requests(kind, repeat), clients, rounds, cells)
                on, off = cells[True], cells[False]
                seconds = {side: costs[side].seconds_taken() for side in costs}
                out.append({"format": fmt, "kind": kind, "clients": clients,
                            "dtype": steps["dtype"],
                            "speedup": seconds[False] / seconds[True] if seconds[True] else None,
                            "tokens_per_step": on.tokens / max(1, on.steps),
                            "drafts_per_verify_step": on.drafts / max(1, on.verify_steps),
                            "accepted": on.accepted, "draft_tokens": on.drafts,
                            "same_answers": on.answers == off.answers})
                say(f"on paper, {fmt} {kind} {clients} client(s), 1.8B {steps['dtype']}: "
                    f"{out[-1]['speedup']:.2f}x")
        return out
    finally:
        for engine in engines.values():
            engine.close()


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
                  "row at as many rows):", "", "| rows | tokens per row | ms per step | / plain |",
                  "|---:|---:|---:|---:|"]
        plain = {s["rows"]: s["ms"] for s in steps["steps"] if s["tokens_per_row"] == 1}
        for s in steps["steps"]:
            lines.append(f"| {s['rows']} | {s['tokens_per_row']} | {s['ms']:.0f} | "
                         f"{s['ms'] / plain[s['rows']]:.2f} |")
    if result["paper"]:
        bounds = result.get("upper_bounds", {})
        lines += ["", "**On paper** (not measured on a 1.8B: the demo models' requests again, "
                  "their planner deciding with the 1.8B's step costs above and every step they "
                  "took timed at the 1.8B's cost of its shape; it assumes the 1.8B's answers copy "
                  "as much as the demo's. Upper bound: tokens per step if every step had drafted "
                  "the longest run of its answer found in the prompt or hint, for free):", "",
                  "| demo model | text | clients | 1.8B precision | drafts accepted | tokens per "
                  "step | upper bound | expected speed-up | same answers |",
                  "|---|---|---:|---|---:|---:|---:|---:|---|"]
        for p in result["paper"]:
            accepted = (f"{p['accepted']}/{p['draft_tokens']} "
                        f"({100 * p['accepted'] / p['draft_tokens']:.0f}%)"
                        if p["draft_tokens"] else "none sent")
            bound = bounds.get(p["format"], {}).get(p["kind"])
            lines.append(f"| {p['format']} | {p['kind']} | {p['clients']} | {p['dtype']} | "
                         f"{accepted} | {p['tokens_per_step']:.2f} | "
                         f"{f'{bound:.2f}' if bound and p['clients'] == 1 else '-'} | "
                         f"{p['speedup']:.2f}x | {'yes' if p['same_answers'] else '**no**'} |")
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
    formats = args.formats.split(",")
    paper = [p for s in steps for fmt in formats
             for p in on_paper(fmt, s, args.rounds, args.repeat, say)]
    bounds = {fmt: {kind: upper_bound(fmt, kind) for kind in KINDS} for fmt in formats} \
        if paper else {}
    return {"benchmark": "speculative", "command": "python -m benchmarks.bench speculative "
            + " ".join(args.argv), "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "rounds": args.rounds, "machine": machine_info(load_before), "demo": demo,
            "upper_bounds": bounds,
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
    same = all(r["same_answers"] for d in result["demo"] for r in d["rows"]) and \
        all(p["same_answers"] for p in result["paper"])
    return 0 if same else 1


