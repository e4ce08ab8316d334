"""What the answer guards cost: tokens/s at 8 clients with the guards on and off, in one run.

One engine (the demo model in fp32, or ``--model``), two service Translators over it that differ
only in ``guards``, no cache. Eight client threads translate the demo phrases (every language
pair the demo knows, so every script the guards judge) with the model card's sampling; the two
settings take turns, round after round, so that a noisy machine slows both alike. Each answer of
the demo model is a few tokens long, so the checks' share of the time is larger here than on a
real model's sentences: an upper bound of their cost.

    python -m benchmarks.guards [--rounds 6] [--doc docs/PERFORMANCE.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.report import publish
from hunyuan_webui import models
from hunyuan_webui.demo.model import ensure_demo_model
from hunyuan_webui.demo.phrases import load_phrases
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.settings import Settings

DOC_START, DOC_END = "<!-- bench-guards:start -->", "<!-- bench-guards:end -->"
CLIENTS = 8


@dataclass
class Round:
    guards: bool
    tokens: int
    seconds: float
    events: int

    @property
    def rate(self) -> float:
        return self.tokens / self.seconds


def run_round(translator: Translator, requests: Sequence[TranslationRequest],
              guards: bool) -> Round:
    """Every request once, by ``CLIENTS`` threads taking the next one in turn."""
    todo = list(requests)
    lock = threading.Lock()
    tokens = [0]
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

    threads = [threading.Thread(target=client) for _ in range(CLIENTS)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    seconds = time.perf_counter() - start
    return Round(guards, tokens[0], seconds, _events(translator) - before)


def _events(translator: Translator) -> int:
    return translator.guards.counts.total() if translator.guards is not None else 0


def measure(model: str, rounds: int, repeat: int) -> list[Round]:
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


def table(rounds: list[Round], model: str) -> str:
    on = [r.rate for r in rounds if r.guards]
    off = [r.rate for r in rounds if not r.guards]
    ratio = statistics.median(on) / statistics.median(off)
    events = sum(r.events for r in rounds if r.guards)
    return "\n".join([
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with "
        f"`python -m benchmarks.guards --rounds {len(on)}` on `{Path(model).name}`: "
        f"{CLIENTS} client threads, every demo phrase, the model card's sampling, no cache; the "
        "settings in turns.",
        "",
        "| guards | tokens/s, median of rounds | rounds | guard events |",
        "|---|---:|---:|---:|",
        f"| off | {statistics.median(off):.1f} | {len(off)} | - |",
        f"| on | {statistics.median(on):.1f} | {len(on)} | {events} |",
        "",
        f"**Guards on / off: {ratio:.3f}** ({(1 - ratio) * 100:+.1f}% cost; the target is under "
        "3%).",
    ])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="", help="a checkpoint directory (default: the demo)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds per setting")
    parser.add_argument("--repeat", type=int, default=2, help="times each phrase in a round")
    parser.add_argument("--doc", default="", help="write the table into this file's markers")
    args = parser.parse_args(argv)
    model = args.model or str(ensure_demo_model())
    publish(table(measure(model, args.rounds, args.repeat), model), args.doc, DOC_START, DOC_END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
