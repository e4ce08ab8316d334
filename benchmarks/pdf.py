"""What a PDF costs beyond its translation: ``python -m benchmarks.bench pdf`` (or
``python -m benchmarks.pdf``).

Issue 37's target: a 20-page text PDF on the demo model, the time beyond the translation itself
(reading the file, writing it back) at most 20% of the whole job, and memory under 500 MB.

One process, one demo engine, one :class:`~hunyuan_webui.service.Translator` (no phrase cache, so
that no round answers from an earlier one). The PDF is built with reportlab: 20 A4 pages, each a
heading, three paragraphs of demo phrases said by a different pupil (so that the page's sentences
are distinct, as a real handout's are: a file sends each distinct sentence once), a 2×2 table and
an image. In turns, round after round (the order alternating, so that load from elsewhere on the
machine hits both alike):

* ``job``: the whole job ``POST /v1/documents`` runs in its background thread, less HTTP: a
  :class:`~hunyuan_webui.service.operations.filejob.FileJob` reads the PDF, translates its
  segments through the front door and writes the translated PDF (and, a third column, the same
  job with ``output_format="docx"``);
* ``translation``: the same segments, in the same order, through the same front door
  (``Translator.translate_texts``), nothing else.

The overhead is measured inside each job: its time outside the translator's ``translate_texts``
(from the call to the last update read: :class:`Clocked`) over its whole time, so that the two
parts share whatever load the machine had meanwhile (the median of the rounds); the job beside
the translation alone shows the same from outside. Memory: the process's resident set
(``VmRSS``, sampled every 5 ms) at its peak during the jobs, and its rise above the level before
the first job (the engine and the libraries already loaded). ``--results`` keeps the figures as
JSON; :func:`render` makes the table of docs/PERFORMANCE.md from that JSON alone.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import statistics
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

DOC_START, DOC_END = "<!-- pdf:start -->", "<!-- pdf:end -->"
RESULTS = Path(__file__).resolve().parent / "results" / "pdf.json"
# The issue's: the time beyond the translation, and the memory a document takes (judged on what
# the jobs add to the process: torch and the demo engine alone hold about as much before).
TARGETS = {"overhead_fraction": 0.20, "peak_rss_mb": 500.0}
PUPILS = ("小明说：", "小红说：", "老师说：", "小华问：", "小李说：", "同学们说：", "王伟说：",
          "张伟说：", "妈妈说：", "爸爸说：", "小刚说：", "小美说：")


# -- the document ------------------------------------------------------------------------------
def handout(pages: int = 20) -> bytes:
    """A Chinese handout of ``pages`` pages made with reportlab from the demo's phrases."""
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.platypus import (
        Image,
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Spacer,
        Table,
        TableStyle,
    )

    from hunyuan_webui.demo.phrases import load_phrases

    phrases = [p.source for p in load_phrases() if (p.source_lang, p.target_lang) == ("zh", "en")
               and p.source.endswith(("。", "？"))]
    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    head = ParagraphStyle("h", fontName="STSong-Light", fontSize=20, leading=26)
    body = ParagraphStyle("b", fontName="STSong-Light", fontSize=12, leading=18, wordWrap="CJK")
    story: list[Any] = []
    for page in range(pages):
        story += [Paragraph(f"第{page + 1}课 {phrases[page % len(phrases)]}", head), Spacer(1, 12)]
        for paragraph in range(3):
            said = [PUPILS[(page + paragraph + i) % len(PUPILS)] + f"第{page + 1}课第{i + 1}句，"
                    + phrases[(page * 3 + paragraph + i) % len(phrases)]
                    for i in range(4 + paragraph)]
            story += [Paragraph("".join(said), body), Spacer(1, 10)]
        cells = [[Paragraph(phrases[(page + i + j) % len(phrases)], body) for j in range(2)]
                 for i in range(2)]
        table = Table(cells, colWidths=[200, 200])
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
        story += [table, Spacer(1, 12), Image(io.BytesIO(_png()), 80, 50)]
        if page + 1 < pages:
            story.append(PageBreak())
    buffer = io.BytesIO()
    SimpleDocTemplate(buffer, pagesize=A4).build(story)
    return buffer.getvalue()


def _png() -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (160, 100), (30, 90, 200)).save(buffer, "PNG")
    return buffer.getvalue()


# -- measuring ---------------------------------------------------------------------------------
def rss_kib() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


class Peak:
    """The highest ``VmRSS`` while it runs (sampled every 5 ms on a thread of its own)."""

    def __init__(self) -> None:
        self.kib = rss_kib()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(0.005):
            self.kib = max(self.kib, rss_kib())

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Clocked:
    """A :class:`~hunyuan_webui.service.Translator` whose ``translate_texts`` is timed: from
    the call to the last update read, the seconds a file job spends in its translation (the
    rest of the job is reading and writing the file). Everything else is the translator's."""

    def __init__(self, translator: Any) -> None:
        self.translator = translator
        self.seconds = 0.0

    def translate_texts(self, *args: Any, **kwargs: Any) -> Any:
        return _Timed(self, time.perf_counter(), self.translator.translate_texts(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.translator, name)


class _Timed:
    def __init__(self, clock: Clocked, started: float, operation: Any) -> None:
        self.clock, self.started, self.operation = clock, started, operation

    def __iter__(self) -> Any:
        try:
            yield from self.operation
        finally:
            self.clock.seconds += time.perf_counter() - self.started

    def __getattr__(self, name: str) -> Any:
        return getattr(self.operation, name)


def measure(pages: int, rounds: int) -> dict[str, Any]:
    from hunyuan_webui import files, models
    from hunyuan_webui.demo.model import ensure_demo_model
    from hunyuan_webui.engine.local import LocalEngine
    from hunyuan_webui.service import TranslationRequest, Translator
    from hunyuan_webui.service.operations.filejob import FileJob
    from hunyuan_webui.settings import Settings

    model = str(ensure_demo_model())
    spec = models.resolve(model)
    settings = Settings(model=model, cache_size=0, max_new_tokens=64, max_batch_size=16,
                        max_queued=256, guards=False, max_file_bytes=20_000_000)
    engine = LocalEngine(spec, max_batch_size=16, max_queued=256, max_new_tokens=64)
    try:
        status = engine.wait_ready(180)
        if status.state != "ready":
            raise SystemExit(f"the engine did not start: {status.reason}")
        translator = Translator(engine, spec, settings)
        data = handout(pages)
        template = TranslationRequest(text="", source_lang="zh", target_lang="en",
                                      options=translator.decoding(deterministic=True))
        read = files.read_file("handout.pdf", data, lang="zh", target_lang="en",
                               max_bytes=settings.max_file_bytes)
        segments = read.segments()
        read.close()
        inside: dict[str, list[float]] = {"job": [], "job_docx": []}

        def job(output: str = "") -> None:
            clocked = Clocked(translator)
            FileJob(clocked, "handout.pdf", data, template, output_format=output).run()
            inside["job_docx" if output else "job"].append(clocked.seconds)

        def translation() -> None:
            operation = translator.translate_texts(
                [replace(template, text=s) for s in segments],
                ahead=settings.segments_in_flight())
            done = sum(1 for update in operation if update.result is not None)
            assert done == len(segments), (done, len(segments))

        systems: dict[str, Callable[[], None]] = {
            "job": job, "translation": translation, "job_docx": lambda: job("docx")}
        translation()  # warm-up: the engine's first batches, the fonts' first subsets
        job()
        job("docx")
        inside = {name: [] for name in inside}
        before = rss_kib()
        times: dict[str, list[float]] = {name: [] for name in systems}
        with Peak() as peak:
            for i in range(rounds):
                order = list(systems) if i % 2 == 0 else list(reversed(systems))
                for name in order:
                    started = time.perf_counter()
                    systems[name]()
                    times[name].append(time.perf_counter() - started)
                print(f"round {i + 1}: " + ", ".join(f"{n} {times[n][-1]:.2f} s" for n in systems)
                      + f" (in the jobs' translation: {inside['job'][-1]:.2f} s, "
                        f"{inside['job_docx'][-1]:.2f} s)", file=sys.stderr)
        return figures(times, inside, pages, len(data), len(segments), before, peak.kib, model)
    finally:
        engine.close()


def figures(times: dict[str, list[float]], inside: dict[str, list[float]], pages: int,
            size: int, segments: int, before_kib: int, peak_kib: int,
            model: str) -> dict[str, Any]:
    """The medians; the overhead of each job run is its own time outside its translation over
    its whole time (one run's two parts share whatever load the machine had meanwhile)."""
    import resource

    median = {name: statistics.median(values) for name, values in times.items()}

    def overhead(name: str) -> float:
        return statistics.median((total - spent) / total
                                 for total, spent in zip(times[name], inside[name], strict=True))

    return {
        "pages": pages, "pdf_bytes": size, "segments": segments, "rounds": len(times["job"]),
        "seconds": {name: round(value, 4) for name, value in median.items()},
        "seconds_all": {name: [round(v, 4) for v in values] for name, values in times.items()},
        "translating_all": {name: [round(v, 4) for v in values] for name, values in inside.items()},
        "overhead_fraction": round(overhead("job"), 4),
        "overhead_fraction_docx": round(overhead("job_docx"), 4),
        "overhead_s": round(statistics.median(
            t - s for t, s in zip(times["job"], inside["job"], strict=True)), 4),
        "job_over_translation": round(median["job"] / median["translation"], 4),
        "rss_before_mb": round(before_kib / 1024, 1),
        "peak_rss_mb": round(peak_kib / 1024, 1),
        "rss_rise_mb": round((peak_kib - before_kib) / 1024, 1),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "model": Path(model).name, "targets": TARGETS,
    }


# -- the table ----------------------------------------------------------------------------------
def render(data: dict[str, Any]) -> str:
    """docs/PERFORMANCE.md's table, from :data:`RESULTS`' JSON alone."""
    s = data["seconds"]
    target = data.get("targets", TARGETS)
    overhead_ok = data["overhead_fraction"] <= target["overhead_fraction"]
    memory_ok = data["rss_rise_mb"] < target["peak_rss_mb"]  # what the document costs
    machine = data.get("machine", {})
    lines = [
        f"A {data['pages']}-page text PDF ({data['pdf_bytes'] // 1024} KB, {data['segments']} "
        f"distinct segments) on the demo model ({data['model']}), medians of {data['rounds']} "
        f"rounds taken in turns. Command: `{data.get('command', 'python -m benchmarks.bench pdf')}`.",
        "",
        "| | seconds | × translation alone |",
        "|---|---:|---:|",
        f"| translation alone (the same segments through `Translator.translate_texts`) "
        f"| {s['translation']:.2f} | 1.00 |",
        f"| whole job, PDF out (read, translate, write) | {s['job']:.2f} "
        f"| {s['job'] / s['translation']:.2f} |",
        f"| whole job, Word out (`output_format=docx`) | {s['job_docx']:.2f} "
        f"| {s['job_docx'] / s['translation']:.2f} |",
        "",
        f"- Time beyond the translation (reading and writing the PDF), measured inside each job "
        f"(its time outside `translate_texts` over its whole time): "
        f"**{100 * data['overhead_fraction']:.1f}%** of the job, {data['overhead_s']:.2f} s "
        f"(target ≤ {100 * target['overhead_fraction']:.0f}%: "
        f"{'met' if overhead_ok else 'NOT met'}); as a Word file "
        f"{100 * data['overhead_fraction_docx']:.1f}%.",
        f"- Memory: the jobs took the process **{data['rss_rise_mb']:.0f} MB** above its "
        f"{data['rss_before_mb']:.0f} MB before the first job (target < "
        f"{target['peak_rss_mb']:.0f} MB for the document: {'met' if memory_ok else 'NOT met'}); "
        f"its peak, with torch, the engine and the libraries already loaded, "
        f"{data['peak_rss_mb']:.0f} MB resident.",
        "- The demo model answers a sentence it does not know with up to 64 tokens of its "
        "phrases in any script: the time each segment takes is a real model's order, the text "
        "drawn is not English.",
    ]
    if machine:
        lines.append(f"- Machine: {machine.get('cpus')} CPUs ({machine.get('processor', '')}), "
                     f"load average {machine.get('load_average')} before the run (a machine "
                     f"shared with other work); Python {machine.get('python')}, torch "
                     f"{machine.get('torch')}; measured {data.get('measured', '')}.")
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    import torch

    from benchmarks.report import cpu_model

    versions = {}
    for name in ("pdfminer.six", "pypdf", "fpdf2", "python-docx"):
        try:
            from importlib.metadata import version

            versions[name] = version(name)
        except Exception:  # noqa: BLE001 - a version we cannot read is left out
            continue
    return {"cpus": os.cpu_count(), "processor": cpu_model() or platform.machine(),
            "python": platform.python_version(), "torch": torch.__version__,
            "libraries": versions, "load_average": [round(x, 2) for x in os.getloadavg()]}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--results", default=str(RESULTS), help="the run's JSON ('' for none)")
    parser.add_argument("--doc", default="", help="write the table into this file's markers")
    args = parser.parse_args(argv)
    import logging

    logging.getLogger("fpdf").setLevel(logging.ERROR)  # the demo's unknown answers mix scripts
    found = machine()
    data = measure(args.pages, args.rounds)
    data = {"command": f"python -m benchmarks.bench pdf --pages {args.pages} "
                       f"--rounds {args.rounds}",
            "measured": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **data,
            "machine": found}
    if args.results:
        path = Path(args.results)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    from benchmarks.report import publish

    publish(render(data), args.doc, DOC_START, DOC_END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
