"""How many languages a spoken class keeps pace with: ``python -m benchmarks.bench pace --help``.

A teacher speaks one sentence every ``--every`` seconds (4) into a room with 1, 2, 4 and 8
languages present. Each sentence fans out to every language in one batch, as the room does
(:meth:`hunyuan_webui.service.rooms.Rooms._fan_out`: one job per language through the service,
the first of each primed together, then a reader per language). Measured: the lag from the end
of a sentence (when it is posted) to each language's finished translation, p50 and p95, and the
largest number of languages whose p95 stays within 2 s.

Systems: each CPU default of this machine on the real Hy-MT2-1.8B shape with random weights
(:mod:`benchmarks.bf16` prepares them): PyTorch bf16 (``--dtype auto`` where the CPU computes
bf16 natively), PyTorch fp32, llama.cpp Q4_K_M, each built as the app builds it (the engine in
its own process, ``--engine process`` / ``llamacpp``), on 1 and 2 cores (``--cores``: the
benchmark and the engine it starts are bound to that many cores).

Answers are capped at the answer guard's length budget (:func:`~hunyuan_webui.service.checks.budget.
answer_budget`: characters, from the sentence and the pair), which random weights always reach.
A budget in characters is a number of tokens only through a tokenizer: the real Hy-MT
tokenizer's is not here, so the cap in tokens is the budget over :data:`CHARS_PER_TOKEN` (an
assumption, in the JSON and the table), set per request as ``max_new_tokens``. The guards are off
(random weights are in no language; the language guard would retry every answer).

Every system runs ``--sentences`` sentences per language count, then waits at most ``--grace``
seconds for the last translations; one that did not finish counts as later than the wait (a
lower bound on its lag). Counts past the first one that misses 2 s are still measured, up to
``--languages``, unless ``--stop-early``.

The recogniser (issue 38) shares the cores: :func:`recogniser_load` runs the launch's CPU
recogniser beside the class (``--no-recogniser``: without it).

What a laptop with more cores would keep is computed on paper from the per-core figures: the
decode throughput per core measured at 1 and 2 cores, scaled by cores (and capped by nothing: a
laptop's memory bandwidth would cap it; the table says so).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.report import machine_info, percentile, publish

DOC_START, DOC_END = "<!-- pace:start -->", "<!-- pace:end -->"
SYSTEMS = ("torch-bf16", "torch-fp32", "llamacpp-Q4_K_M")
LANGUAGES = ("en", "fr", "ja", "ru", "ar", "de", "es", "ko")  # the room's, in order of arrival
SOURCE = "zh"
# A teacher's sentences, about 20 tokens each in a real tokenizer.
SENTENCES = ("今天我们学习光合作用，植物用阳光把水和二氧化碳变成糖。",
             "请大家打开课本第三十五页，看一下这张图。",
             "叶子里的叶绿素吸收光，所以叶子看起来是绿色的。",
             "如果没有阳光，植物就不能制造自己的食物。",
             "下课以前，每个同学写三句话总结今天的内容。",
             "明天我们做一个小实验，请带一片新鲜的叶子来。")
# Characters per token of a real Hy-MT tokenizer, by script (an assumption: about what 120k-entry
# multilingual BPE vocabularies give): the guard's character budget over this is the token cap.
CHARS_PER_TOKEN = {"ja": 1.5, "zh": 1.5, "ko": 2.0, "ar": 3.0, "ru": 3.5}
DEFAULT_CHARS_PER_TOKEN = 4.0
KEEP_S = 2.0  # a language is kept when its p95 lag is within this


def token_cap(sentence: str, target: str) -> int:
    """The answer guard's budget for ``sentence`` into ``target``, in tokens (see the module)."""
    from hunyuan_webui.service.checks.budget import answer_budget

    chars = answer_budget(sentence, SOURCE, target)
    return math.ceil(chars / CHARS_PER_TOKEN.get(target, DEFAULT_CHARS_PER_TOKEN))


RECOGNISER = "base"  # what the launch picks on a CPU with under 8 cores (speech_choice.py)


@contextlib.contextmanager
def recogniser_load(cores: int, work: Path | None, every: float) -> Iterator[str]:
    """The recogniser of the speech issue running beside the class, on the same cores; yields
    what ran ("" for nothing). The launch's CPU recogniser (Whisper base, int8, CTranslate2 as
    faster-whisper runs it; random weights at its real shape, :mod:`benchmarks.speech_rtf`)
    recognises a 3 s utterance three times per sentence (about a draft per second of voice and
    the final, as the streaming Listener does), i.e. every ``every / 3`` seconds, back to back
    when one takes longer (the Listener would then draft less often)."""
    if work is None:
        yield ""
        return
    import ctranslate2
    import numpy as np

    from benchmarks import speech_rtf

    model = ctranslate2.models.Whisper(str(speech_rtf.build(RECOGNISER, work, "int8")),
                                       device="cpu", compute_type="int8", intra_threads=cores)
    view = ctranslate2.StorageView.from_array(np.random.default_rng(0).standard_normal(
        (1, model.n_mels, 3000)).astype(np.float32))
    prompt = [[50258, 50260, 50359, 50363]]  # start, zh, transcribe, no timestamps
    tokens, period, stop, done = int(3 * speech_rtf.TOKENS_PER_S), every / 3, \
        threading.Event(), []

    def listen() -> None:
        while not stop.is_set():
            started = time.perf_counter()
            model.generate(view, prompt, beam_size=1, max_length=len(prompt[0]) + tokens,
                           suppress_tokens=[50257], suppress_blank=False)
            done.append(time.perf_counter() - started)
            stop.wait(max(0.0, period - done[-1]))

    thread = threading.Thread(target=listen, name="pace-recogniser", daemon=True)
    thread.start()
    try:
        yield (f"Whisper {RECOGNISER} int8 (random weights), a 3 s utterance every "
               f"{period:.2f} s")
    finally:
        stop.set()
        thread.join(120)
        if done:
            say = f"{len(done)} recognitions, median {statistics.median(done):.2f} s"
            print(f"[pace] recogniser beside the class: {say}", file=sys.stderr, flush=True)


@dataclass
class Count:
    """One room size's measurement."""

    languages: int
    lags: list[float] = field(default_factory=list)  # seconds; unfinished: the wait (a bound)
    unfinished: int = 0
    tokens: int = 0
    busy_s: float = 0.0  # from the first post to the last translation

    def summary(self) -> dict[str, Any]:
        return {"languages": self.languages, "p50_s": percentile(self.lags, 50),
                "p95_s": percentile(self.lags, 95), "unfinished": self.unfinished,
                "translations": len(self.lags), "tokens": self.tokens,
                "tokens_per_s": self.tokens / self.busy_s if self.busy_s else None,
                "kept": (percentile(self.lags, 95) or math.inf) <= KEEP_S and not self.unfinished}


def _fan_out(translator: Any, sentence: str, langs: Sequence[str], posted: float,
             count: Count, lock: threading.Lock) -> list[threading.Thread]:
    """One sentence into every language: jobs started and primed together (one batch), then a
    reader per language that notes when its translation is done."""
    from hunyuan_webui.engine import DecodingOptions
    from hunyuan_webui.service import TranslationRequest

    jobs = []
    for lang in langs:
        options = DecodingOptions(deterministic=True, max_new_tokens=token_cap(sentence, lang))
        jobs.append(translator.start(TranslationRequest(sentence, lang, source_lang=SOURCE,
                                                        options=options, cache=False)))
    for job in jobs:
        job.prime()

    def read(job: Any) -> None:
        result = None
        for update in job:
            result = update.result or result
        with lock:
            count.lags.append(time.monotonic() - posted)
            count.tokens += int((result.usage if result else {}).get("completion_tokens", 0))

    threads = [threading.Thread(target=read, args=(job,), daemon=True) for job in jobs]
    for thread in threads:
        thread.start()
    return threads


def run_count(translator: Any, languages: int, sentences: int, every: float,
              grace: float) -> Count:
    """``sentences`` sentences, one every ``every`` seconds, into ``languages`` languages."""
    count, lock, readers = Count(languages), threading.Lock(), []
    langs = LANGUAGES[:languages]
    start = time.monotonic()
    for i in range(sentences):
        time.sleep(max(0.0, start + i * every - time.monotonic()))
        readers += _fan_out(translator, SENTENCES[i % len(SENTENCES)], langs, time.monotonic(),
                            count, lock)
    deadline = time.monotonic() + grace
    for reader in readers:
        reader.join(max(0.0, deadline - time.monotonic()))
    with lock:
        count.unfinished = sum(reader.is_alive() for reader in readers)
        count.lags += [time.monotonic() - start - (sentences - 1) * every] * count.unfinished
        count.busy_s = time.monotonic() - start
    return count


def _engine(system: str, model: str, cores: int) -> Any:
    """The engine as the app builds it for this system (in its own process)."""
    from hunyuan_webui import models
    from hunyuan_webui.engine.factory import build
    from hunyuan_webui.settings import Settings

    settings = Settings(model=model, engine="llamacpp" if model.endswith(".gguf") else "process",
                        dtype="fp32" if system == "torch-fp32" else "auto", cpu_threads=cores,
                        cache_size=0, guards=False, max_new_tokens=512)
    engine = build(models.resolve(model), settings.engine_config())
    status = engine.wait_ready(1800)
    if status.state != "ready":
        engine.close()
        raise RuntimeError(f"{system} did not load: {status.reason}")
    return engine, settings


def measure_system(system: str, model: str, cores: int, args: argparse.Namespace,
                   say: Any) -> dict[str, Any]:
    from hunyuan_webui import models
    from hunyuan_webui.service import Translator

    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, set(sorted(before)[:cores]))  # inherited by the engine's process
    try:
        engine, settings = _engine(system, model, cores)
        try:
            translator = Translator(engine, models.resolve(model), settings)
            run_count(translator, 1, 1, 0.0, 600)  # warm-up
            counts = []
            with recogniser_load(cores, args.recogniser_work, args.every) as recogniser:
                for languages in [int(n) for n in args.languages.split(",")]:
                    if cores < max(int(c) for c in args.cores.split(",")) and \
                            languages > args.fewer_cores_max:
                        break
                    count = run_count(translator, languages, args.sentences, args.every,
                                      args.grace).summary()
                    counts.append(count)
                    say(f"{system}, {cores} core(s), {languages} language(s): p50 "
                        f"{count['p50_s']:.1f}s p95 {count['p95_s']:.1f}s, "
                        f"{count['tokens_per_s'] or 0:.1f} tokens/s")
                    if args.stop_early and not count["kept"]:
                        break
            dtype = engine.status().dtype
        finally:
            engine.close()
    finally:
        os.sched_setaffinity(0, before)
    return {"system": system, "cores": cores, "dtype": dtype, "recogniser": recogniser,
            "counts": counts}


def on_paper(results: list[dict[str, Any]], cores: Sequence[int]) -> list[dict[str, Any]]:
    """Languages a machine with ``cores`` would keep: the decode rate per core at the largest
    room measured on 1 core and on 2, scaled by cores; a room of ``n`` is kept when the tokens
    of one sentence into ``n`` languages take at most 2 s at that rate."""
    out = []
    for system in {r["system"] for r in results}:
        rates = {}
        tokens_per_language = []
        for r in results:
            if r["system"] != system or not r["counts"]:
                continue
            last = r["counts"][-1]
            if last["tokens_per_s"]:
                rates[r["cores"]] = last["tokens_per_s"] / r["cores"]
            tokens_per_language += [c["tokens"] / max(1, c["translations"]) for c in r["counts"]]
        if not rates or not tokens_per_language:
            continue
        per_core = max(rates.values())  # the better of the measured per-core figures
        tokens = statistics.median(tokens_per_language)
        for n in cores:
            kept = max((k for k in range(1, 65) if k * tokens / (per_core * n) <= KEEP_S),
                       default=0)
            out.append({"system": system, "cores": n, "tokens_per_s_per_core": per_core,
                        "tokens_per_answer": tokens, "languages_kept": kept})
    return sorted(out, key=lambda r: (r["system"], r["cores"]))


def table(result: dict[str, Any]) -> str:
    machine = result["machine"]
    lines = [f"Command: `{result['command']}`", "",
             f"Run {result['when']} on {machine['cpus']} CPUs ({machine['processor']}), torch "
             f"{machine['torch']}; load average {machine['load_before']} before, "
             f"{machine['load_after']} after (a machine shared with other work). The Hy-MT2-1.8B "
             f"shape ({result['layers']} layers), random weights; one sentence every "
             f"{result['every']:g} s, {result['sentences']} per room size; answers capped at the "
             "guard's length budget (characters over an assumed "
             f"{DEFAULT_CHARS_PER_TOKEN:g} characters per token, 1.5 for Chinese and Japanese). "
             f"Recogniser beside it: {result['recogniser'] or 'none (--no-recogniser)'}.",
             "", "| system | cores | languages | lag p50 s | lag p95 s | unfinished | tokens/s "
             "| within 2 s |", "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in result["results"]:
        for c in r["counts"]:
            lines.append(f"| {r['system']} ({r['dtype']}) | {r['cores']} | {c['languages']} | "
                         f"{c['p50_s']:.1f} | {c['p95_s']:.1f} | {c['unfinished']} | "
                         f"{c['tokens_per_s'] or 0:.1f} | {'yes' if c['kept'] else 'no'} |")
    lines += ["", "| system | cores | languages kept within 2 s |", "|---|---:|---|"]
    for r in result["results"]:
        kept = max((c["languages"] for c in r["counts"] if c["kept"]), default=0)
        lines.append(f"| {r['system']} | {r['cores']} | {kept} (measured) |")
    for p in result["paper"]:
        lines.append(f"| {p['system']} | {p['cores']} | {p['languages_kept']} (on paper: "
                     f"{p['tokens_per_s_per_core']:.1f} tokens/s per core, "
                     f"{p['tokens_per_answer']:.0f} tokens per answer) |")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from benchmarks import bf16 as bench_bf16

    def say(message: str) -> None:
        print(f"[pace] {message}", file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="hymt-pace-"))
    models = bench_bf16.prepare(work, args.layers, say)
    results = []
    for cores in [int(c) for c in args.cores.split(",")][::-1]:
        for system in args.systems.split(","):
            results.append(measure_system(system, models[system], cores, args, say))
    return {"benchmark": "pace", "command": "python -m benchmarks.bench pace "
            + " ".join(args.argv), "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "layers": args.layers, "every": args.every, "sentences": args.sentences,
            "chars_per_token": {**CHARS_PER_TOKEN, "other": DEFAULT_CHARS_PER_TOKEN},
            "recogniser": results[0]["recogniser"] if results else "",
            "machine": machine_info(load_before), "results": results,
            "paper": on_paper(results, (1, 2, 4, 8))}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench pace",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", help="keep the checkpoints and GGUF files here (reused)")
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--languages", default="1,2,4,8")
    parser.add_argument("--cores", default="1,2")
    parser.add_argument("--fewer-cores-max", type=int, default=2,
                        help="the largest room measured on fewer than the most cores")
    parser.add_argument("--sentences", type=int, default=3)
    parser.add_argument("--every", type=float, default=4.0, help="seconds between sentences")
    parser.add_argument("--grace", type=float, default=90.0,
                        help="seconds to wait for the last translations")
    parser.add_argument("--stop-early", action="store_true",
                        help="skip larger rooms once one misses 2 s")
    parser.add_argument("--no-recogniser", dest="recogniser", action="store_false",
                        help="without the speech recogniser running beside the class")
    parser.add_argument("--out", help="write the JSON results here")
    parser.add_argument("--doc", help="write the table between this document's markers")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    args.recogniser_work = None
    if args.recogniser:
        args.recogniser_work = Path(args.work_dir or tempfile.mkdtemp(prefix="hymt-pace-")) / \
            "whisper"
    result = run(args)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1, default=str) + "\n",
                                  encoding="utf-8")
    publish(render(result), args.doc, DOC_START, DOC_END)
    return 0


def render(data: dict[str, Any]) -> str:
    """The Markdown tables of one run (the JSON ``--out`` writes)."""
    return table(data)



