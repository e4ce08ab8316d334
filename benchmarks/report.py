"""The benchmark's numbers: percentiles, one :class:`Row` per system and client count, the
target ratios, and the markdown report written into docs/PERFORMANCE.md.

``python -m benchmarks.report --check`` (or ``--write``) regenerates every table of
docs/PERFORMANCE.md from the committed JSON of its run: :mod:`benchmarks.tables` (the registry of
marker pairs, JSON files and render functions, and how to add one)."""

from __future__ import annotations

import os
import platform
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the GPU check writes tables on machines without the HTTP clients
    from benchmarks.clients import Batch

APP_SYSTEMS = ("app-gradio", "app-api")
TARGETS = {"throughput_vs_baseline": 3.0, "throughput_vs_serve": 1.5, "ttft_vs_engine": 1.3,
           "cache_repeat_fraction": 0.05, "llamacpp_vs_engine": 1.0}
DOC_START, DOC_END = "<!-- bench:start -->", "<!-- bench:end -->"
DEFAULTS_START, DEFAULTS_END = "<!-- bench-defaults:start -->", "<!-- bench-defaults:end -->"


def doc_markers(defaults: bool) -> tuple[str, str]:
    """Where a run's table goes in the document: one place per condition."""
    return (DEFAULTS_START, DEFAULTS_END) if defaults else (DOC_START, DOC_END)


# -- statistics --------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100); None for no values."""
    data = sorted(values)
    if not data:
        return None
    pos = (len(data) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(data) - 1)
    return data[low] + (data[high] - data[low]) * (pos - low)


@dataclass
class Row:
    system: str
    clients: int
    requests: int
    failed: int
    ttft_p50_ms: float | None
    ttft_p95_ms: float | None
    itl_p50_ms: float | None
    tokens_per_s: float
    requests_per_s: float
    tokens_checked: bool  # every request generated exactly --tokens tokens
    engine_ttft_p50_ms: float | None = None
    errors: list[str] = field(default_factory=list)


def summarize(system: str, clients: int, batches: list[Batch], tokens: int) -> Row:
    """One table row from every batch of one system at one client count."""
    samples = [s for b in batches for s in b.samples]
    ok = [s for s in samples if s.ok]
    wall = sum(b.wall_s for b in batches)
    counted = [b.engine_tokens for b in batches]
    if system == "app-gradio" and None not in counted:
        per_request = sum(counted) / max(1, len(samples))  # the app's engine counter
        for s in ok:
            s.tokens = int(per_request) if per_request.is_integer() else None
    checked = bool(ok) and len(ok) == len(samples) and all(s.tokens == tokens for s in ok)
    produced = sum(s.tokens or 0 for s in ok)

    def ms(values: list[float | None], q: float) -> float | None:
        value = percentile([v for v in values if v is not None], q)
        return None if value is None else round(1000 * value, 1)

    return Row(
        system=system, clients=clients, requests=len(samples), failed=len(samples) - len(ok),
        ttft_p50_ms=ms([s.ttft for s in ok], 50), ttft_p95_ms=ms([s.ttft for s in ok], 95),
        itl_p50_ms=ms([s.itl() for s in ok], 50),
        tokens_per_s=round(produced / wall, 1) if wall else 0.0,
        requests_per_s=round(len(ok) / wall, 2) if wall else 0.0,
        tokens_checked=checked, engine_ttft_p50_ms=ms([s.engine_ttft for s in ok], 50),
        errors=sorted({s.error for s in samples if s.error})[:3])


def target_checks(rows: list[Row], cache: dict[str, Any] | None) -> list[dict[str, Any]]:
    """The targets, each with the measured ratio and whether it is met."""
    by = {(r.system, r.clients): r for r in rows}
    checks = []

    def add(name: str, value: float | None, limit: float, higher_is_better: bool) -> None:
        met = None if value is None else (value >= limit if higher_is_better else value <= limit)
        checks.append({"target": name, "value": None if value is None else round(value, 3),
                       "limit": limit, "met": met})

    def ratio(a: float | None, b: float | None) -> float | None:
        return a / b if a is not None and b else None

    c = 8 if any(r.clients == 8 for r in rows) else max((r.clients for r in rows), default=0)
    for app in APP_SYSTEMS:
        mine = by.get((app, c))
        if mine is None:
            continue
        base = by.get(("baseline", c))
        add(f"{app} tokens/s at {c} clients / baseline", ratio(
            mine.tokens_per_s, base.tokens_per_s if base else None),
            TARGETS["throughput_vs_baseline"], True)
        serves = [by[(s, c)].tokens_per_s for s in ("serve", "serve-cb") if (s, c) in by]
        add(f"{app} tokens/s at {c} clients / best transformers serve", ratio(
            mine.tokens_per_s, max(serves) if serves else None),
            TARGETS["throughput_vs_serve"], True)
        engine = by.get(("engine", 1))
        single = by.get((app, 1))
        add(f"{app} TTFT p50 at 1 client / engine's own first-token time", ratio(
            single.ttft_p50_ms if single else None,
            engine.engine_ttft_p50_ms if engine else None), TARGETS["ttft_vs_engine"], False)
    llama, engine = by.get(("llamacpp", 1)), by.get(("engine", 1))
    if llama and engine:
        add("llamacpp tokens/s at 1 client / PyTorch engine", ratio(
            llama.tokens_per_s, engine.tokens_per_s), TARGETS["llamacpp_vs_engine"], True)
    if cache:
        add("repeated identical request / first one (JSON API, cache on)",
            cache.get("repeat_fraction"), TARGETS["cache_repeat_fraction"], False)
    return checks


# -- the report ---------------------------------------------------------------------------------
COLUMNS = (("system", "system"), ("clients", "clients"), ("requests", "requests"),
           ("ttft_p50_ms", "TTFT p50 ms"), ("ttft_p95_ms", "TTFT p95 ms"),
           ("engine_ttft_p50_ms", "server TTFT p50 ms"), ("itl_p50_ms", "ITL p50 ms"),
           ("tokens_per_s", "tokens/s"),
           ("requests_per_s", "req/s"), ("tokens_checked", "tokens ok"))


def handicaps(settings: dict[str, Any]) -> dict[str, str]:
    """What each system runs without or with less of, said in its rows: the in-process paged
    cache is sized for the clients (as `serve-cb`'s is in the controlled condition), and the
    page's endpoint samples as the model card says (it takes no options)."""
    from benchmarks.peers import cb_blocks_for

    blocks = cb_blocks_for(max(settings.get("concurrency") or [1]), settings.get("tokens", 64))
    out = {"hf-cb": f"paged cache capped at {blocks} blocks",
           "app-gradio": "repetition penalty 1.05"}
    if not settings.get("defaults"):
        out["serve-cb"] = f"paged cache capped at {blocks} blocks"
    elif settings.get("cb_memory"):
        out["serve-cb"] = f"paged cache capped at {settings['cb_memory']:g} of free memory"
    return out


def markdown_table(rows: list[Row], notes: dict[str, str] | None = None) -> str:
    lines = ["| " + " | ".join(title for _, title in COLUMNS) + " |",
             "|" + "|".join("---" if key == "system" else "---:" for key, _ in COLUMNS) + "|"]
    for row in rows:
        cells = []
        for key, _ in COLUMNS:
            value = getattr(row, key)
            if key == "system" and notes and value in notes:
                value = f"{value} ({notes[value]})"
            elif key == "tokens_checked":
                value = "yes" if value else "**NO**"
            elif key == "requests" and row.failed:
                value = f"{value} ({row.failed} failed)"
            cells.append("—" if value is None else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def targets_markdown(checks: list[dict[str, Any]]) -> str:
    lines = ["| target | measured | goal | met |", "|---|---:|---:|---|"]
    for check in checks:
        sign = "≥" if "tokens/s" in check["target"] else "≤"
        met = {True: "yes", False: "**no**", None: "n/a"}[check["met"]]
        lines.append(f"| {check['target']} | {check['value']} | {sign} {check['limit']} | {met} |")
    return "\n".join(lines)


def condition_text(settings: dict[str, Any]) -> str:
    if settings.get("defaults"):
        share = settings.get("cb_memory")
        cache = (f"its paged cache capped at {share:g} of free memory (`--cb-max-memory-percent`)"
                 if share else "its paged cache at its own size")
        together = ("all up at once, rounds alternating between them" if settings.get("interleave")
                    else "each measured alone")
        return ("every system at its own defaults (threads, batch and queue sizes; "
                f"`transformers serve --continuous-batching` with {cache}), {together}.")
    threads = settings.get("threads")
    return (f"every system on {threads} thread(s), the app with the benchmark's batch and queue "
            "sizes." if threads else "every system on its library's default threads.")


def report_markdown(result: dict[str, Any]) -> str:
    rows = [Row(**r) for r in result["rows"]]
    meta, model = result["machine"], result["model"]
    parts = [
        f"Command: `{result['command']}`",
        "",
        f"Run {result['started']} on {meta['cpus']} CPUs ({meta['processor']}), device "
        f"{result['settings']['device']}, torch {meta['torch']}, transformers "
        f"{meta['transformers']}; load average {meta['load_before']} before, "
        f"{meta['load_after']} after; {result['duration_s']:.0f}s in all.",
        f"Model: random-weight HunYuanDenseV1 `{model.get('size', '?')}` "
        f"({model.get('params', 0) / 1e6:.1f}M params); {result['settings']['tokens']} generated "
        f"tokens per request; {result['settings']['rounds']} round(s); "
        + condition_text(result["settings"]),
        "",
        markdown_table(rows, handicaps(result["settings"])),
    ]
    if result["targets"]:
        parts += ["", targets_markdown(result["targets"])]
    by = {(r.system, r.clients): r for r in rows}
    paged = [f"{c} clients {by[('engine', c)].tokens_per_s / by[('hf-cb', c)].tokens_per_s:.2f}x"
             for c in result["settings"]["concurrency"]
             if ("engine", c) in by and ("hf-cb", c) in by and by[("hf-cb", c)].tokens_per_s]
    if paged:
        parts += ["", "Padded dynamic batch (engine) vs transformers' paged continuous batching "
                      "(hf-cb), both in-process, tokens/s: " + ", ".join(paged) + "."]
    cache = result.get("cache_check")
    if cache:
        repeats = ", ".join(f"{1000 * x:.1f}" for x in cache["repeat_s"])
        parts += ["", f"Cache check (JSON API, cache on): the second identical request took "
                      f"{100 * cache['repeat_fraction']:.2f}% of the first one's time (first "
                      f"{cache['first_s'] * 1000:.0f} ms for {cache['answer_tokens']} tokens; "
                      f"repeats {repeats} ms); model called once: "
                      f"{'yes' if cache['model_called_once'] else 'NO'}; same text: "
                      f"{'yes' if cache['same_text'] else 'NO'}."]
    reported = sorted(result.get("prompt_tokens") or result.get("prompt_systems", []))
    agree = (prompts_agree(result["prompt_tokens"]) if "prompt_tokens" in result
             else result.get("prompts_agree", False))
    parts += ["", f"Prompt lengths reported by {', '.join(reported)}"
                  f" agree token for token: {'yes' if agree else 'NO'}."]
    if result.get("skipped"):
        parts += ["", "Skipped: " + "; ".join(f"{k}: {v}" for k, v in result["skipped"].items())]
    return "\n".join(parts)


SUMMARY = (  # (what, the targets' names it joins: JSON API first, then Gradio)
    ("app tokens/s at 8 clients >= 3x the baseline (JSON API / Gradio)",
     "tokens/s at 8 clients / baseline"),
    ("app tokens/s at 8 clients >= 1.5x the best `transformers serve` (JSON API / Gradio)",
     "tokens/s at 8 clients / best transformers serve"),
    ("first text at 1 client <= 1.3x the engine's own first-token time (JSON API / Gradio)",
     "TTFT p50 at 1 client / engine's own first-token time"),
    ("llama.cpp engine faster than our PyTorch engine at 1 client",
     "llamacpp tokens/s at 1 client / PyTorch engine"),
)


def summary(controlled: dict[str, Any], defaults: dict[str, Any]) -> str:
    """The targets of both conditions side by side, from the two runs' JSON."""
    runs = {"controlled": controlled, "at defaults": defaults}
    lines = [f"Targets, both conditions: the controlled run of {controlled['started']} "
             f"({controlled['settings'].get('threads')} thread, "
             f"{controlled['settings']['tokens']} tokens) and the run at defaults of "
             f"{defaults['started']} ({defaults['settings']['tokens']} tokens), the tables above.",
             "", "| target | controlled | at defaults | met |", "|---|---:|---:|---|"]
    for what, name in SUMMARY:
        cells, met = [], {}
        for label, run in runs.items():
            found = [c for c in run["targets"] if c["target"].endswith(name)
                     and (name.startswith("llamacpp") or c["target"].startswith("app-"))]
            found.sort(key=lambda c: not c["target"].startswith("app-api"))
            cells.append(" / ".join(f"{c['value']:.2f}x" for c in found) or "—")
            met[label] = all(c["met"] for c in found) if found else None
        lines.append(f"| {what} | {cells[0]} | {cells[1]} | {_met(met)} |")
    caches = [run.get("cache_check") for run in runs.values()]
    if all(caches):
        cells = [f"{100 * c['repeat_fraction']:.2f}%, {'once' if c['model_called_once'] else 'NOT once'}"
                 for c in caches]
        met = {label: c["repeat_fraction"] <= TARGETS["cache_repeat_fraction"]
               and c["model_called_once"] for label, c in zip(runs, caches)}
        lines.append("| second identical request < 5% of the first, model called once | "
                     f"{cells[0]} | {cells[1]} | {_met(met)} |")
    return "\n".join(lines)


def _met(met: dict[str, bool | None]) -> str:
    if all(met.values()):
        return "yes"
    if not any(met.values()):
        return "**no**"
    return ", ".join(f"{label} {'yes' if ok else '**no**'}" for label, ok in met.items())


def update_doc(path: Path, block: str, start: str = DOC_START, end: str = DOC_END) -> None:
    """Replace the text between the ``start`` and ``end`` markers in ``path`` (or append a marked
    block)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    marked = f"{start}\n{block}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + marked + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + ("\n\n" if text else "") + marked + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def publish(text: str, doc: str | None, start: str, end: str) -> None:
    """Print a benchmark's table and, given a Markdown file, write it between its markers."""
    print(text)
    if doc:
        update_doc(Path(doc), text, start, end)


def cpu_model() -> str:
    """The CPU's model name (Linux), so that runs on different machines are told apart."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return ""


def machine_info(load_before: tuple[float, ...]) -> dict[str, Any]:
    import torch
    import transformers

    return {"cpus": os.cpu_count(), "processor": cpu_model() or platform.processor()
            or platform.machine(),
            "python": platform.python_version(), "torch": torch.__version__,
            "transformers": transformers.__version__, "threads": torch.get_num_threads(),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()]}

def prompts_agree(prompt_tokens: dict[str, dict[Any, list[int]]]) -> bool:
    """Whether every system that reports prompt lengths saw each prompt as the same tokens."""
    merged: dict[str, set[int]] = {}
    for per_prompt in prompt_tokens.values():
        for prompt_index, lengths in per_prompt.items():
            merged.setdefault(str(prompt_index), set()).update(lengths)
    return all(len(lengths) == 1 for lengths in merged.values())


if __name__ == "__main__":
    from benchmarks.tables import main

    sys.exit(main())
