"""The GPU check's table (:mod:`benchmarks.gpu`): one markdown row per measurement, against the
bandwidth ceilings, with the reason where a measurement was skipped or failed."""

from __future__ import annotations

from typing import Any

from benchmarks.gpu_measures import BATCH, PROMPT_TOKENS

DOC_START, DOC_END = "<!-- bench-gpu:start -->", "<!-- bench-gpu:end -->"
# Share of the bandwidth ceiling single-stream bf16 decoding should reach (docs/PERFORMANCE.md).
TARGET, GOAL = 0.6, 0.8


def _count(n: int) -> str:
    return f"{n / 1e9:.2f} B" if n >= 1e9 else f"{n / 1e6:.2f} M"


def _fmt_rate(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f} tok/s"


def _share(result: dict[str, Any]) -> str:
    parts = []
    for source in ("spec", "measured"):
        ceiling = result.get(f"ceiling_{source}_tokens_per_s")
        fraction = result.get(f"fraction_of_{source}")
        if ceiling:
            parts.append(f"{100 * (fraction or 0):.0f}% of the {source} ceiling ({ceiling:,.0f})")
    return "; ".join(parts) or "no ceiling (unknown bandwidth)"


def _why(result: dict[str, Any] | None) -> str:
    if not result:
        return "not run"
    return f"{result['status']}: {result.get('reason', '')}".replace("|", "/").replace("\n", " ")


def markdown(results: dict[str, Any]) -> str:
    """The run as a markdown table (measurement | result | against the ceiling / notes)."""
    env, m = results["environment"], results["measurements"]
    args = results["args"]
    gib = 2**30
    where = env.get("gpu") or env.get("processor") or "?"
    if env.get("gpu_memory_bytes"):
        where += f", {env['gpu_memory_bytes'] / gib:.0f} GiB"
    lines = [f"Random-weight `{args['size']}` checkpoint, `python -m benchmarks.gpu`, "
             f"{results['started_at']}: {where}; torch {env['torch']}, transformers "
             f"{env['transformers']}, bitsandbytes {env.get('bitsandbytes') or 'not installed'}.",
             "", "| measurement | result | against the ceiling / notes |", "|---|---|---|"]
    ckpt = results.get("checkpoint", {})
    if ckpt.get("params"):
        lines.append(f"| weights | {_count(ckpt['params'])} parameters | the embedding table: "
                     f"{_count(ckpt['embedding_params'])} of them (read one row per token) |")
    copy = m.get("copy_bandwidth", {})
    spec = env.get("spec_bandwidth")
    measured = (f"{copy['bytes_per_s'] / 1e12:.2f} TB/s measured (copy of "
                f"{copy['buffer_bytes'] / gib:.1f} GiB, median of {copy['repeats']})"
                if copy.get("status") == "ok" else _why(copy))
    lines.append(f"| memory bandwidth | {measured} | spec "
                 f"{f'{spec / 1e12:.2f} TB/s' if spec else 'unknown for this device'} |")
    for name, label in (("single_stream", "single-stream decode"), ("int8", "int8 decode"),
                        ("int4", "int4 decode")):
        r = m.get(name, {})
        if r.get("status") == "ok":
            exact = "" if r["exact"] else f" ONLY {r['tokens']} of {r['requested_tokens']} tokens"
            lines.append(f"| {label} ({r['dtype']}, {r['requested_tokens']} tokens) | "
                         f"{_fmt_rate(r['decode_tokens_per_s'])}{exact} | {_share(r)}"
                         + (f"; target {TARGET:.0%}, goal {GOAL:.0%}" if name == "single_stream"
                            else "") + " |")
        else:
            lines.append(f"| {label} | — | {_why(r)} |")
    r = m.get("batch16", {})
    lines.append(f"| {BATCH} requests together | {_fmt_rate(r.get('aggregate_tokens_per_s'))} "
                 f"aggregate | " + (f"{r['tokens']} tokens in {r['wall_s']:.2f} s; each stream "
                                    f"{_fmt_rate(r['stream_decode_tokens_per_s_p50'])} (p50)"
                                    if r.get("status") == "ok" else _why(r)) + " |")
    r = m.get("first_token", {})
    if r.get("status") == "ok":
        lines.append(f"| first token, ~{PROMPT_TOKENS}-token prompt | "
                     f"{1000 * r['first_token_s_p50']:.0f} ms (p50 of {r['runs']}) | prompts of "
                     f"{min(r['prompt_tokens'])}-{max(r['prompt_tokens'])} tokens |")
    else:
        lines.append(f"| first token, ~{PROMPT_TOKENS}-token prompt | — | {_why(r)} |")
    for name in ("checkpoint", "load"):
        r = m.get(name, {})
        if r.get("status") != "ok":
            lines.append(f"| {name} | — | {_why(r)} |")
        elif "load_s" in r:
            lines.append(f"| load through the engine | {r['load_s']:.1f} s | {r['dtype']} on "
                         f"{r['device']} |")
    mem = results.get("memory_float", {})
    if "gpu_allocated_peak_bytes" in mem:
        lines.append(f"| GPU memory ({m.get('load', {}).get('dtype', 'float')}) | "
                     f"{mem['gpu_allocated_peak_bytes'] / gib:.1f} GiB peak allocated | "
                     f"{mem['gpu_used_bytes'] / gib:.1f} GiB in use on the device |")
    lines.append(f"| run | {results.get('elapsed_s', 0):.0f} s | budget {args['budget_s']:.0f} s |")
    return "\n".join(lines)

