"""The classroom soak's numbers: what each simulated student saw (:class:`Outcome`), the
statistics over those outcomes, the targets with PASS/FAIL, and the markdown section
written into docs/RELIABILITY.md. Pure functions of recorded data, so the unit tests drive them
without a server; :mod:`benchmarks.classroom` records the data.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.report import percentile

# The targets.
MAX_READY_AFTER_KILL_S = 30.0
MAX_FAIR_P95_RATIO = 2.0
MIN_REPEAT_SERVED = 0.90
MAX_MEMORY_GROWTH = 0.10
# What a student may read when the engine dies under them: it names the engine or a restart.
READABLE = re.compile(r"engine|restart", re.IGNORECASE)
DOC_START, DOC_END = "<!-- classroom:start -->", "<!-- classroom:end -->"


@dataclass
class Outcome:
    """One request as its student saw it; times in seconds on the soak's clock."""

    kind: str  # "short", "class example", "paste", "document"
    key: str  # the request's identity: equal keys are identical requests
    phase: str  # "idle", "fairness", "classroom"
    started: float
    ended: float = 0.0
    first_text: float | None = None  # from sending to the first visible text
    ok: bool = False  # the answer completed
    closed: bool = False  # the tab was closed after the first text, on purpose
    hung: bool = False  # no progress for the hang limit: aborted
    error: str = ""
    repeat: bool = False  # an identical request was sent before in this run
    chars: int = 0

    @property
    def failed(self) -> bool:
        return bool(self.error) and not self.hung


@dataclass(frozen=True)
class KillWindow:
    """When the engine was killed and when /ready said it was back (None: never)."""

    at: float | None
    ready: float | None = None
    grace: float = 1.0  # a request sent a moment after "ready" may still meet the old state

    def in_flight(self, o: Outcome) -> bool:
        return self.at is not None and o.started < self.at <= o.ended

    def during_restart(self, o: Outcome) -> bool:
        if self.at is None:
            return False
        until = self.ready + self.grace if self.ready is not None else float("inf")
        return self.at <= o.started <= until

    def covers(self, o: Outcome) -> bool:
        return self.in_flight(o) or self.during_restart(o)


def readable(message: str) -> bool:
    """A message a student can act on: not empty, not a stack trace, names what happened."""
    return bool(message.strip()) and "Traceback" not in message and bool(READABLE.search(message))


def first_text_stats(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """p50/p95 first-text time (ms) over the requests that showed text, and those that hung
    before any text: they count with the time until they were abandoned (a lower bound), so
    hangs cannot flatter a percentile by dropping out of it."""
    times = [o.first_text if o.first_text is not None else o.ended - o.started
             for o in outcomes if o.first_text is not None or o.hung]

    def ms(q: float) -> float | None:
        value = percentile(times, q)
        return None if value is None else round(1000 * value, 1)

    return {"n": len(times), "p50_ms": ms(50), "p95_ms": ms(95)}


def summarize(outcomes: Sequence[Outcome], window: KillWindow | None = None) -> dict[str, Any]:
    """Counts of one phase (or one kind of request within it) and its first-text times."""
    window = window or KillWindow(None)
    failed = [o for o in outcomes if o.failed]
    at_kill = [o for o in failed if window.covers(o)]
    return {"requests": len(outcomes), "ok": sum(o.ok for o in outcomes),
            "closed": sum(o.closed for o in outcomes), "failed": len(failed),
            "failed_at_kill": len(at_kill),
            "in_flight_at_kill": sum(window.in_flight(o) for o in at_kill),
            "unreadable_at_kill": sum(not readable(o.error) for o in at_kill),
            "hangs": sum(o.hung for o in outcomes), "first_text": first_text_stats(outcomes),
            "errors": sorted({o.error[:200] for o in failed})[:5]}


def mark_repeats(outcomes: Sequence[Outcome]) -> None:
    """Flag every request whose identical twin was sent earlier in the run."""
    seen: set[str] = set()
    for o in sorted(outcomes, key=lambda o: o.started):
        o.repeat = o.key in seen
        seen.add(o.key)


def repeat_share(repeats: int, hits: int, misses: int, model_calls: int | None,
                 refused: int) -> dict[str, Any]:
    """The share of repeated identical requests the model never had to answer.

    Every text sent for the first time needs the model, so the lookups answered without a model
    call (cache hits, and misses that joined an identical sequence in flight) belong to repeats.
    ``refused`` lookups (requests turned away while the engine restarted) called no model either
    and are not counted as served. Without the app's model-call counter only hits are known.
    """
    if model_calls is None:
        served, method = hits, "cache hits only (no hymt_model_calls in /metrics: sharing in " \
                               "flight not counted)"
    else:
        served = hits + misses - model_calls - refused
        method = "cache hits + lookups joined to a sequence in flight (lookups - model calls)"
    share = min(1.0, max(0, served) / repeats) if repeats else None
    return {"repeats": repeats, "hits": hits, "misses": misses, "model_calls": model_calls,
            "refused": refused, "served": served,
            "share": None if share is None else round(share, 3), "method": method}


def growth(before: float | None, after: float | None) -> float | None:
    return None if not before or after is None else round(after / before - 1, 3)


# -- targets ------------------------------------------------------------------------------------
def evaluate(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The targets, each with the measured value, the goal and met (None: not measured)."""
    checks: list[dict[str, Any]] = []

    def add(target: str, value: Any, goal: str, met: bool | None, note: str = "") -> None:
        checks.append({"target": target, "value": value, "goal": goal, "met": met, "note": note})

    phases = list((result.get("phases") or {}).values())
    hangs = sum(p["hangs"] for p in phases)
    add("hangs (no progress for 30 s)", hangs, "0", hangs == 0)
    other = sum(p["failed"] - p["failed_at_kill"] for p in phases)
    add("failed requests, except at the engine kill", other, "0", other == 0)
    kill = result.get("kill") or {}
    killed = kill.get("killed", False)
    at_kill = sum(p["failed_at_kill"] for p in phases)
    unreadable = sum(p["unreadable_at_kill"] for p in phases)
    add("requests failed at the kill with a clear message", f"{at_kill - unreadable}/{at_kill}",
        "all", unreadable == 0 if killed else None, "" if killed else "no kill")
    ready = kill.get("ready_after_s")
    add("ready again after kill -9 of the engine (s)", ready, f"≤ {MAX_READY_AFTER_KILL_S:g}",
        (ready is not None and ready <= MAX_READY_AFTER_KILL_S) if killed else None,
        kill.get("note", ""))
    fair, idle = result.get("fairness") or {}, (result.get("phases") or {}).get("idle") or {}
    broken = idle.get("hangs", 0) + idle.get("failed", 0)
    add("8 short clients beside a document: p95 first text / idle", fair.get("ratio_p95"),
        f"≤ {MAX_FAIR_P95_RATIO:g}",
        None if broken else _at_most(fair.get("ratio_p95"), MAX_FAIR_P95_RATIO),
        f"the idle baseline itself had {broken} hung or failed requests" if broken else "")
    doc = fair.get("document") or {}
    add("the document beside them completed", doc.get("ok"), "yes",
        doc.get("ok") if doc else None, doc.get("error", "")[:120])
    share = (result.get("cache") or {}).get("share")
    add("repeated identical requests served by cache or in flight", share,
        f"≥ {MIN_REPEAT_SERVED:.0%}", None if share is None else share >= MIN_REPEAT_SERVED,
        (result.get("cache") or {}).get("method", ""))
    memory = result.get("memory") or {}
    for name in ("server", "engine"):
        m = memory.get(name) or {}
        add(f"{name} process memory growth", m.get("growth"), f"< {MAX_MEMORY_GROWTH:.0%}",
            None if m.get("growth") is None else m["growth"] < MAX_MEMORY_GROWTH,
            m.get("note", ""))
    stopped = result.get("stopped") or {}
    add("server and engine child gone after the soak", stopped.get("clean"), "yes",
        stopped.get("clean"), stopped.get("note", ""))
    return checks


def _at_most(value: float | None, limit: float) -> bool | None:
    return None if value is None else value <= limit


def failures(checks: Sequence[dict[str, Any]]) -> list[str]:
    return [f"{c['target']}: {c['value']} (goal {c['goal']})" for c in checks if c["met"] is False]


# -- the report ---------------------------------------------------------------------------------
def _cell(value: Any) -> str:
    return "—" if value is None else str(value)


def phase_table(result: dict[str, Any]) -> str:
    lines = ["| phase | sent | completed | tabs closed | failed (at kill) | hangs | "
             "first text p50 ms | p95 ms |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    phases = result.get("phases") or {}
    rows = [("idle server, 8 clients", phases.get("idle")),
            ("8 clients beside the document", (result.get("fairness") or {}).get("short")),
            ("classroom: all", phases.get("classroom"))]
    rows += [(f"classroom: {kind}", s) for kind, s in (result.get("by_kind") or {}).items()]
    for title, s in rows:
        if not s:
            continue
        ft = s["first_text"]
        lines.append(f"| {title} | {s['requests']} | {s['ok']} | {s['closed']} | "
                     f"{s['failed']} ({s['failed_at_kill']}) | {s['hangs']} | "
                     f"{_cell(ft['p50_ms'])} | {_cell(ft['p95_ms'])} |")
    return "\n".join(lines)


def targets_table(checks: Sequence[dict[str, Any]]) -> str:
    lines = ["| target | measured | goal | result |", "|---|---:|---:|---|"]
    for c in checks:
        verdict = {True: "PASS", False: "**FAIL**", None: "n/a"}[c["met"]]
        note = f" ({c['note']})" if c["note"] and c["met"] is not True else ""
        lines.append(f"| {c['target']} | {_cell(c['value'])} | {c['goal']} | {verdict}{note} |")
    return "\n".join(lines)


def details(result: dict[str, Any]) -> list[str]:
    """One sentence each on the kill, the document, first text, the cache and memory."""
    out, kill = [], result.get("kill") or {}
    if kill.get("killed"):
        out.append(f"Engine kill {kill['into_classroom_s']:.1f} s into the classroom (pid "
                   f"{kill['pid']} → {_cell(kill.get('new_pid'))}): ready again after "
                   f"{_cell(kill.get('ready_after_s'))} s; /ready states seen: "
                   f"{' → '.join(kill.get('states', []))}.")
    elif kill:
        out.append(f"No engine kill: {kill.get('note', '')}.")
    doc = (result.get("fairness") or {}).get("document")
    if doc:
        error = f": {doc['error'][:160]}" if doc["error"] else ""
        out.append(f"Document: {doc['chars']:,} characters, "
                   f"{'completed' if doc['ok'] else 'NOT completed'} in {doc['seconds']:.1f} s"
                   f"{error}.")
    ratio = result.get("classroom_short_vs_idle_p95")
    if ratio is not None:
        out.append(f"Classroom short requests (cache hits included): p95 first text {ratio}x the "
                   f"idle server's.")
    cache = result.get("cache")
    if cache:
        out.append(f"Cache during the classroom: {cache['hits']} hits, {cache['misses']} misses, "
                   f"{_cell(cache['model_calls'])} model calls; {cache['repeats']} repeated "
                   f"identical requests, share served without the model {_cell(cache['share'])} "
                   f"({cache['method']}).")
    if result.get("guard_events") is not None:
        out.append(f"Answer guards during the classroom: {result['guard_events']} answers caught "
                   "(each retried once, then served or marked; a retry is a model call).")
    for name, m in (result.get("memory") or {}).items():
        note = f" ({m['note']})" if m.get("note") else ""
        out.append(f"Memory of the {name} process (RSS MiB): {_cell(m.get('at_start'))} at "
                   f"start, {_cell(m.get('before'))} before the classroom, "
                   f"{_cell(m.get('after'))} after{note}.")
    return out


def report_markdown(result: dict[str, Any]) -> str:
    machine, s = result["machine"], result["settings"]
    parts = [f"Command: `{result['command']}`", "",
             f"Run {result['started']} on {machine['cpus']} CPUs ({machine['processor']}), Python "
             f"{machine['python']}; load average {machine['load_before']} before, "
             f"{machine['load_after']} after; engine `{s['engine']}`, demo model; "
             f"{s['students']} students for {s['duration']:g} s; "
             f"{result['duration_s']:.0f} s in all.",
             "", phase_table(result), ""]
    parts += [f"- {line}" for line in details(result)]
    parts += ["", targets_table(result["targets"])]
    failed = failures(result["targets"])
    parts += ["", "Targets failed: " + "; ".join(failed) + "." if failed else "All targets met."]
    return "\n".join(parts)
