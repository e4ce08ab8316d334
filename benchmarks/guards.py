"""What the answer guards catch and cost.

The cost: one engine (the demo model in fp32, or ``--model``), two service Translators over it
that differ only in ``guards``, no cache. Eight client threads translate the demo phrases (every
language pair the demo knows, so every script the guards judge) with the model card's sampling;
the two settings take turns, round after round, so that a noisy machine slows both alike. Per
setting: tokens/s, and the time to the first shown text of each translation (what the page
shows first: with the guards on, when an answer's first letters are judged). Each answer of the
demo model is a few tokens long, so the checks' share of the time is larger here than on a real
model's sentences: an upper bound of their cost.

``--corpus`` first runs the corpora of :mod:`benchmarks.guard_corpus` through the service (every
bad answer caught or fixed, no legitimate one marked), then the cost, and keeps the run's figures
in ``benchmarks/results/guards.json``.

    python -m benchmarks.guards [--rounds 6] [--doc docs/PERFORMANCE.md]
    python -m benchmarks.guards --corpus [--doc docs/PERFORMANCE.md]
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
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.report import percentile, publish

if TYPE_CHECKING:  # the tables' check renders the JSON without loading the service
    from hunyuan_webui.service import TranslationRequest, Translator

DOC_START, DOC_END = "<!-- bench-guards:start -->", "<!-- bench-guards:end -->"
CORPUS_START, CORPUS_END = "<!-- bench-guards-corpus:start -->", "<!-- bench-guards-corpus:end -->"
RESULTS = Path(__file__).resolve().parent / "results" / "guards.json"
CLIENTS = 8


@dataclass
class Round:
    guards: bool
    tokens: int
    seconds: float
    events: int
    first_text: list[float]  # seconds from the request to its first shown text

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds


def run_round(translator: Translator, requests: Sequence[TranslationRequest],
              guards: bool) -> Round:
    """Every request once, by ``CLIENTS`` threads taking the next one in turn."""
    todo = list(requests)
    lock = threading.Lock()
    tokens = [0]
    first: list[float] = []
    before = _events(translator)

    def client() -> None:
        while True:
            with lock:
                if not todo:
                    return
                request = todo.pop()
            result = translator.translate(request)
            with lock:
                tokens[0] += int(result.usage.get("completion_tokens") or 0)
                if result.usage.get("first_token_s") is not None:
                    first.append(float(result.usage["first_token_s"]))

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    seconds = time.perf_counter() - start
    return Round(guards, tokens[0], seconds, _events(translator) - before, first)


def _events(translator: Translator) -> int:
    return translator.guards.counts.total() if translator.guards is not None else 0


def measure(model: str, rounds: int, repeat: int) -> list[Round]:
    from hunyuan_webui import models
    from hunyuan_webui.demo.phrases import load_phrases
    from hunyuan_webui.engine.local import LocalEngine
    from hunyuan_webui.service import TranslationRequest, Translator
    from hunyuan_webui.settings import Settings

    spec = models.resolve(model)
    engine = LocalEngine(spec, max_batch_size=16, max_queued=256, max_new_tokens=64)
    try:
        status = engine.wait_ready(180)
        if status.state != "ready":
            raise SystemExit(f"the engine did not start: {status.reason}")
        base = Settings(model=model, cache_size=0, max_new_tokens=64, max_batch_size=16)
        translators = {on: Translator(engine, spec, replace(base, guards=on))
                       for on in (True, False)}
        requests = [TranslationRequest(text=p.source, source_lang=p.source_lang,
                                       target_lang=p.target_lang)
                    for p in load_phrases()] * repeat
        run_round(translators[False], requests[:CLIENTS * 2], False)  # warm-up
        out = []
        for i in range(rounds):
            for on in ((True, False) if i % 2 == 0 else (False, True)):
                out.append(run_round(translators[on], requests, on))
                print(f"round {i + 1} guards {'on ' if on else 'off'}: "
                      f"{out[-1].rate:7.1f} tokens/s ({out[-1].events} guard events)",
                      file=sys.stderr)
        return out
    finally:
        engine.close()


def figures(rounds: list[Round]) -> dict[str, dict[str, float]]:
    """Per setting: median tokens/s over rounds, p50 and p95 of the first shown text (ms)."""
    out = {}
    for on in (False, True):
        mine = [r for r in rounds if r.guards == on]
        firsts = [t for r in mine for t in r.first_text]
        out["on" if on else "off"] = {
            "tokens_per_s": round(statistics.median(r.rate for r in mine), 1),
            "first_text_p50_ms": round(1000 * (percentile(firsts, 50) or 0), 2),
            "first_text_p95_ms": round(1000 * (percentile(firsts, 95) or 0), 2),
            "rounds": len(mine), "translations": len(firsts),
            "guard_events": sum(r.events for r in mine)}
    return out


def _when(result: dict[str, Any], key: str = "measured") -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.strptime(result.get(key, result["measured"]),
                                                              "%Y-%m-%dT%H:%M:%SZ"))


def render_cost(result: dict[str, Any]) -> str:
    """The cost table from the run's JSON (benchmarks/results/guards.json)."""
    on, off = result["cost"]["on"], result["cost"]["off"]
    ratio = on["tokens_per_s"] / off["tokens_per_s"]
    first = on["first_text_p50_ms"] / off["first_text_p50_ms"] if off["first_text_p50_ms"] else 0
    return "\n".join([
        f"Measured {_when(result)} with "
        f"`python -m benchmarks.guards --rounds {on['rounds']}` on `{result['model']}`: "
        f"{CLIENTS} client threads, every demo phrase, the model card's sampling, no cache; the "
        "settings in turns.",
        "",
        "| guards | tokens/s, median of rounds | first shown text p50 / p95 | rounds | "
        "guard events |",
        "|---|---:|---:|---:|---:|",
        f"| off | {off['tokens_per_s']:.1f} | {off['first_text_p50_ms']:.1f} / "
        f"{off['first_text_p95_ms']:.1f} ms | {off['rounds']} | - |",
        f"| on | {on['tokens_per_s']:.1f} | {on['first_text_p50_ms']:.1f} / "
        f"{on['first_text_p95_ms']:.1f} ms | {on['rounds']} | {on['guard_events']} |",
        "",
        f"**Guards on / off: tokens/s {ratio:.3f}** ({(1 - ratio) * 100:+.1f}% cost; the target "
        f"is under 3%), **first shown text p50 {first:.3f}** (the target is within 5%).",
    ])


def render_corpus(result: dict[str, Any]) -> str:
    """What the corpora show: per kind of bad answer, caught or fixed; the false alarms."""
    bad, legit = result["corpus"]["misbehaving"], result["corpus"]["legit"]
    lines = [f"Measured {_when(result, 'corpus_measured')} with "
             "`python -m benchmarks.guards --corpus`: "
             f"{bad['cases']} bad answers of `tests/data/guards/misbehaving.tsv` and "
             f"{legit['cases']} legitimate translations ({legit['language_pairs']} language "
             "pairs) of `tests/data/guards/legit.tsv`, each through the service as a model "
             "would stream it (the bad answer first, the table's retry answer next).",
             "", "| bad answers of the kind | cases | caught (marked) | fixed (retry served) | "
             "missed |", "|---|---:|---:|---:|---:|"]
    for kind, row in bad["kinds"].items():
        lines.append(f"| {kind} | {row['cases']} | {row['caught']} | {row['fixed']} | "
                     f"{row['missed']} |")
    lines += ["", f"**Misbehaving set: {bad['caught_or_fixed']} of {bad['cases']} caught or "
                  f"fixed** (the target is all). **Legitimate set: {legit['false_alarms']} false "
                  f"alarms in {legit['cases']}** (the target is 0)."]
    return "\n".join(lines)


def run_corpus() -> dict[str, object]:
    from benchmarks import guard_corpus

    legit = guard_corpus.run(guard_corpus.load_legit())
    bad = guard_corpus.run(guard_corpus.load_misbehaving())
    return guard_corpus.summary(legit, bad)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="", help="a checkpoint directory (default: the demo)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per setting")
    parser.add_argument("--repeat", type=int, default=2, help="times each phrase in a round")
    parser.add_argument("--doc", default="", help="write the table into this file's markers")
    parser.add_argument("--corpus", action="store_true",
                        help="also the corpora (caught per kind, false alarms)")
    parser.add_argument("--results", default=str(RESULTS),
                        help="the run's JSON (kept with --corpus; without it, its cost replaced)")
    args = parser.parse_args(argv)
    from hunyuan_webui.demo.model import ensure_demo_model

    model = args.model or str(ensure_demo_model())
    path = Path(args.results) if args.results else None
    kept = json.loads(path.read_text(encoding="utf-8")) if path and path.exists() else {}
    found = run_corpus() if args.corpus else kept.get("corpus")
    result = keep(found, figures(measure(model, args.rounds, args.repeat)), model, args)
    if not args.corpus and found is not None:  # the corpora's figures and time as they were
        result["corpus_measured"] = kept.get("corpus_measured", kept["measured"])
    if found is not None and args.corpus:
        publish(render_corpus(result), args.doc, CORPUS_START, CORPUS_END)
    publish(render_cost(result), args.doc, DOC_START, DOC_END)
    if path and found is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


def keep(found: object, cost: dict[str, dict[str, float]], model: str,
         args: argparse.Namespace) -> dict[str, Any]:
    """The run's figures, small: what the tables are made from."""
    import platform

    corpus = " --corpus" if args.corpus else ""
    return {"command": f"python -m benchmarks.guards{corpus} --rounds {args.rounds} "
                       f"--repeat {args.repeat}",
            "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "model": Path(model).name, "clients": CLIENTS,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "load_average": [round(x, 2) for x in os.getloadavg()]},
            "corpus": found, "cost": cost}


if __name__ == "__main__":
    sys.exit(main())
