"""Every table of ``docs/PERFORMANCE.md``, regenerated from the committed JSON of its run.

A table lives between two markers, ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``. Its run's
figures (the figures, the command, the versions and the machine: no logs) are committed under
``benchmarks/results/``, and the benchmark module that measures it owns the function that renders
the JSON as Markdown. :data:`TABLES` maps each marker name to the two:

    python -m benchmarks.report --check   # regenerate in memory; exit 1 with a diff if the doc differs
    python -m benchmarks.report --write   # regenerate the tables in place, between their markers

Adding a table is one line in :data:`TABLES`:

    Table("pdf", "pdf.json", "benchmarks.pdf:render"),

with ``render(result: dict) -> str`` in the benchmark's module (it must read only the JSON: no
clock, no machine probe, so that the same JSON always gives the same text) and the marker pair
in the document. A marker pair whose JSON is not committed yet must stay empty (a table not
measured yet); a marker pair in the document without a row here is an error, so no table escapes
the check. Renderers are imported by name, lazily: the check imports only the modules of the
tables it renders.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "PERFORMANCE.md"
RESULTS = Path(__file__).resolve().parent / "results"
MARKER = re.compile(r"<!-- ([a-z0-9-]+):start -->\n(.*?)<!-- \1:end -->", re.S)


@dataclass(frozen=True)
class Table:
    marker: str  # <!-- marker:start --> ... <!-- marker:end -->
    result: str  # the run's JSON, a file name under benchmarks/results/ (or several, comma-separated)
    render: str  # "module:function", the function taking the JSON's object (or objects)

    def renderer(self) -> Callable[..., str]:
        module, name = self.render.split(":")
        return getattr(importlib.import_module(module), name)

    def paths(self, results: Path = RESULTS) -> list[Path]:
        return [results / name for name in self.result.split(",")]


TABLES: tuple[Table, ...] = (
    Table("bench", "bench-cpu.json", "benchmarks.report:report_markdown"),
    Table("bench-defaults", "bench-defaults.json", "benchmarks.report:report_markdown"),
    Table("bench-summary", "bench-cpu.json,bench-defaults.json", "benchmarks.report:summary"),
    Table("bench-cpu-step", "cpu-step.json", "benchmarks.cpu_step:render"),
    Table("bench-threads", "threads.json", "benchmarks.threads:render"),
    Table("bench-threads-llamacpp", "threads-llamacpp.json", "benchmarks.threads:render"),
    Table("cpu-laptop", "cpu-laptop.json", "benchmarks.cpu_laptop:table"),
    Table("bench-gpu", "gpu.json", "benchmarks.gpu_report:markdown"),
    Table("bench-room", "room.json", "benchmarks.room:table"),
    Table("speech-rtf", "speech-rtf.json", "benchmarks.speech_rtf:render"),
    Table("bench-guards-corpus", "guards.json", "benchmarks.guards:render_corpus"),
    Table("bench-guards", "guards.json", "benchmarks.guards:render_cost"),
    Table("bench-bf16", "bf16-page.json", "benchmarks.bf16:table"),
    Table("bench-speculative", "speculative.json", "benchmarks.speculative:table"),
    Table("bench-pace", "pace.json", "benchmarks.pace:table"),
    Table("pdf", "pdf.json", "benchmarks.pdf:render"),
)


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def block(table: Table, results: Path = RESULTS) -> str:
    """The table's Markdown from its JSON; empty when its run is not committed yet."""
    paths = table.paths(results)
    if not all(p.exists() for p in paths):
        return ""
    return table.renderer()(*(load(p) for p in paths)).rstrip("\n")


def regenerate(text: str, tables: Sequence[Table] = TABLES, results: Path = RESULTS) -> str:
    """``text`` with every marked table regenerated; ValueError for a marker without a row."""
    known = {t.marker: t for t in tables}
    unknown = sorted({m.group(1) for m in MARKER.finditer(text)} - set(known))
    if unknown:
        raise ValueError(f"tables without a row in benchmarks.tables.TABLES: {', '.join(unknown)}")

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        body = block(known[name], results)
        return f"<!-- {name}:start -->\n" + (body + "\n" if body else "") + f"<!-- {name}:end -->"

    return MARKER.sub(fill, text)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report",
                                     description=__doc__.split("\n\n")[0])
    how = parser.add_mutually_exclusive_group(required=True)
    how.add_argument("--check", action="store_true",
                     help="regenerate in memory; exit 1 with a diff when the document differs")
    how.add_argument("--write", action="store_true", help="regenerate the tables in place")
    parser.add_argument("--doc", default=str(DOC), help="the document (docs/PERFORMANCE.md)")
    parser.add_argument("--results", default=str(RESULTS), help="the runs' JSON folder")
    args = parser.parse_args(argv)
    doc = Path(args.doc)
    text = doc.read_text(encoding="utf-8")
    try:
        new = regenerate(text, TABLES, Path(args.results))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 1
    if args.write:
        if new != text:
            doc.write_text(new, encoding="utf-8")
        print(f"{doc}: {'rewritten' if new != text else 'unchanged'}")
        return 0
    if new == text:
        print(f"{doc}: every table equals its JSON ({len(TABLES)} tables)")
        return 0
    sys.stdout.writelines(difflib.unified_diff(
        text.splitlines(keepends=True), new.splitlines(keepends=True),
        f"{doc} (committed)", f"{doc} (from benchmarks/results/)"))
    print(f"\n{doc} differs from its JSON: run `python -m benchmarks.report --write`",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
