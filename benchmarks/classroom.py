"""The classroom soak: ``python -m benchmarks.bench classroom --help``.

It starts ``app.py --demo`` as a child process on a free loopback port
(:mod:`~benchmarks.classroom_server`) and drives it the way a class does, over the page's
own protocol (:mod:`~benchmarks.classroom_students`): an idle baseline (8 clients sending
single sentences); the same 8 clients beside one client translating a ~2,000-character Chinese
document; then 30 students for three minutes: mostly short phrases, about 40% the same class
example, a few 2,000-character pastes, about 10% of tabs closed after the first text, and one
``kill -9`` of the engine process. It reports requests, errors, hangs (no progress for 30 s:
aborted), first-text times against the idle server, cache hits and model calls, the memory of
both processes before and after, and the targets
(:mod:`~benchmarks.classroom_report`). Every wait has a deadline; the server and its
engine are stopped at the end, on errors and on Ctrl+C. It is a measurement: it exits 0 even when
targets fail, and says which.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import signal
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks import classroom_report as report
from benchmarks.classroom_report import KillWindow, Outcome
from benchmarks.classroom_server import ServerProcess, SoakError, rss_mib
from benchmarks.classroom_students import SHORT_LIMIT_S, Soak, Texts
from benchmarks.report import update_doc

CLIENTS = 8  # the clients of single sentences, idle and beside the document
CLOSE_SHARE = 0.10  # requests whose tab is closed after the first text
THINK_S = (1.0, 4.0)  # a student reads the answer before typing the next phrase
START_TIMEOUT_S = 300.0  # the server loads and warms the demo model
READY_WAIT_S = 60.0  # how long the soak watches /ready after the kill (twice the target)
DOC_LIMIT_S = 600.0  # one document in all (each gap still bounded by the hang limit)
SERVING = ("ready", "busy")  # /ready states of an engine that translates
DRAIN_S = 120.0  # requests in flight when --duration ends may finish within this


@dataclass(frozen=True)
class Config:
    students: int = 30
    duration: float = 180.0
    idle_requests: int = 5  # per idle-baseline client
    kill_at: float = 0.4  # fraction of --duration
    doc_chars: int = 2000
    engine: str = "process"
    hang_s: float = 30.0
    seed: int = 0

    @property
    def pasters(self) -> int:
        return max(1, self.students // 10)


# -- the phases ---------------------------------------------------------------------------------
async def idle_phase(soak: Soak, texts: Texts, per_client: int) -> None:
    """8 clients, each sending ``per_client`` sentences nobody sent before, one after another."""
    async def client() -> None:
        for _ in range(per_client):
            await soak.send("short", texts.unique_short(), "idle")

    await asyncio.gather(*(client() for _ in range(CLIENTS)))


async def fairness_phase(soak: Soak, texts: Texts, chars: int) -> None:
    """One client translates a document while 8 clients keep sending single sentences."""
    document = asyncio.create_task(soak.send("document", texts.document(chars, "文档"),
                                             "fairness", limit_s=DOC_LIMIT_S))

    async def client() -> None:
        while not document.done():
            await soak.send("short", texts.unique_short(), "fairness")

    await asyncio.gather(document, *(client() for _ in range(CLIENTS)))


async def classroom_phase(soak: Soak, texts: Texts, cfg: Config,
                          server: ServerProcess) -> dict[str, Any]:
    """The students for ``cfg.duration`` seconds, one engine kill; returns what the kill saw."""
    end = soak.now() + cfg.duration

    async def student(n: int) -> None:
        rng = random.Random(cfg.seed * 1000 + n)
        paste_at = end - cfg.duration * rng.uniform(0.3, 0.9) if n < cfg.pasters else None
        await asyncio.sleep(rng.uniform(0, THINK_S[1]))  # the class does not press at once
        while soak.now() < end:
            limit = end + DRAIN_S - soak.now()
            if paste_at is not None and soak.now() >= paste_at:
                paste_at = None
                await soak.send("paste", texts.document(cfg.doc_chars, f"作业{n}"), "classroom",
                                limit_s=min(DOC_LIMIT_S, limit))
            else:
                kind, text = texts.pick(rng)
                await soak.send(kind, text, "classroom", close_early=rng.random() < CLOSE_SHARE,
                                limit_s=min(SHORT_LIMIT_S, limit))
            await asyncio.sleep(min(rng.uniform(*THINK_S), max(0.0, end - soak.now())))

    kill = asyncio.create_task(kill_engine(soak, server, cfg.duration * cfg.kill_at,
                                           end - cfg.duration))
    try:  # each request bounds itself; this deadline only guards the soak's own code
        await asyncio.wait_for(asyncio.gather(*(student(n) for n in range(cfg.students))),
                               cfg.duration + DRAIN_S + 30)
        return await asyncio.wait_for(kill, READY_WAIT_S + 30)
    except TimeoutError:
        raise SoakError("the classroom phase overran its own deadline (a bug in the soak)") \
            from None
    finally:
        kill.cancel()


async def kill_engine(soak: Soak, server: ServerProcess, delay: float,
                      classroom_start: float) -> dict[str, Any]:
    """``kill -9`` the engine process after ``delay`` s; time until /ready is 200 again."""
    await asyncio.sleep(delay)
    _, status = await server.ready(soak.http)
    pid = server.engine_pid(status)
    if pid is None:
        return {"killed": False, "note": "no engine process to kill (the engine runs in the "
                                         "server process)"}
    info: dict[str, Any] = {"killed": True, "pid": pid, "rss_at_kill_mib": rss_mib(pid)}
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return {"killed": False, "note": f"the engine process {pid} was already gone"}
    at = soak.now()
    _say(f"kill -9 of the engine process {pid}, {at - classroom_start:.1f} s into the classroom")
    states, ready = [str(status.get("state"))], None
    while soak.now() < at + READY_WAIT_S:
        code, body = await server.ready(soak.http)
        state = str(body.get("state") or (f"HTTP {code}" if code else "no answer"))
        if state != states[-1]:
            states.append(state)
        serving = code == 200 or state in SERVING  # busy: serving, just full
        new_pid = server.engine_pid(body) if serving else None
        if new_pid not in (None, pid):
            ready = soak.now()
            info["new_pid"] = new_pid
            break
        await asyncio.sleep(0.2)
    info.update(at_s=round(at, 2), into_classroom_s=round(at - classroom_start, 1),
                ready_s=None if ready is None else round(ready, 2), states=states,
                ready_after_s=None if ready is None else round(ready - at, 2))
    if ready is None:
        info["note"] = f"not ready within {READY_WAIT_S:g} s"
    return info


# -- counters and memory ------------------------------------------------------------------------
async def counters(http: httpx.AsyncClient, url: str) -> dict[str, int | None]:
    """Cache hits and misses (/v1/cache) and model calls (/metrics, when the app counts them);
    None where the server does not answer."""
    out: dict[str, int | None] = {"hits": None, "misses": None, "model_calls": None,
                                  "guard_events": None}
    try:
        cache = (await http.get(url + "/v1/cache", timeout=10)).json()
        out.update(hits=int(cache.get("hits", 0)), misses=int(cache.get("misses", 0)))
        for line in (await http.get(url + "/metrics", timeout=10)).text.splitlines():
            if line.startswith("hymt_model_calls_total "):
                out["model_calls"] = int(float(line.split()[1]))
            elif line.startswith("hymt_guard_events_total{"):  # answers a guard caught
                out["guard_events"] = (out["guard_events"] or 0) + int(float(line.split()[-1]))
    except (httpx.HTTPError, ValueError) as exc:
        _say(f"could not read the counters: {exc}")
    return out


def memory(server: ServerProcess, before: dict[str, Any], after: dict[str, Any],
           kill: dict[str, Any]) -> dict[str, Any]:
    """RSS at start, before the classroom and after it; growth over the classroom (the warm-up
    and the first document's allocations are not a leak)."""
    start = before["at_start"]
    server_mem = {"pid": server.proc.pid if server.proc else None, "at_start": start["server"],
                  "before": before["server"], "after": after["server"],
                  "growth": report.growth(before["server"], after["server"])}
    engine = {"pid_before": before["engine_pid"], "pid_after": after["engine_pid"],
              "at_start": start["engine"], "before": before["engine"],
              "at_kill": kill.get("rss_at_kill_mib"),
              "after": after["engine"], "growth": report.growth(before["engine"], after["engine"])}
    if before["engine_pid"] is None:
        engine["note"] = "no engine process: the engine runs in the server process"
    elif after["engine_pid"] is None:
        engine["note"] = "no engine process after the soak"
    elif before["engine_pid"] != after["engine_pid"]:
        # Growth is the larger of the killed process's (until the kill) and the end's, both
        # against the same warm baseline: a fresh process must not hide a leak, nor show one.
        grown = [g for g in (report.growth(before["engine"], engine["at_kill"]), engine["growth"])
                 if g is not None]
        engine["growth"] = max(grown) if grown else None
        engine["note"] = (f"after: the new engine process {after['engine_pid']}; the killed one "
                          f"had {engine['at_kill']} MiB at the kill; growth is the larger of "
                          f"the two against before")
    return {"server": server_mem, "engine": engine}


async def snapshot(soak: Soak, server: ServerProcess) -> dict[str, Any]:
    _, status = await server.ready(soak.http)
    pid = server.engine_pid(status)
    return {"server": rss_mib(server.proc.pid if server.proc else None), "engine_pid": pid,
            "engine": rss_mib(pid), **await counters(soak.http, server.url)}


# -- one run ------------------------------------------------------------------------------------
async def soak_run(cfg: Config, server: ServerProcess, result: dict[str, Any]) -> None:
    limits = httpx.Limits(max_connections=2 * (cfg.students + CLIENTS) + 8)
    timeout = httpx.Timeout(30.0, read=2 * cfg.hang_s)
    async with httpx.AsyncClient(timeout=timeout, limits=limits, trust_env=False) as http:
        started = time.monotonic()
        await server.wait_ready(http, START_TIMEOUT_S)
        soak, texts = Soak(http, server.url, cfg.hang_s), Texts()
        result["server"] = {"ready_after_s": round(time.monotonic() - started, 1)}
        at_start = await snapshot(soak, server)
        for _ in range(2):
            await soak.send("short", texts.unique_short(), "warm-up")
        _say(f"idle baseline: {CLIENTS} clients x {cfg.idle_requests} sentences")
        await idle_phase(soak, texts, cfg.idle_requests)
        _say(f"fairness: a {cfg.doc_chars:,}-character document beside {CLIENTS} clients")
        await fairness_phase(soak, texts, cfg.doc_chars)
        before = {**await snapshot(soak, server), "at_start": at_start}
        _say(f"classroom: {cfg.students} students for {cfg.duration:g} s")
        kill = await classroom_phase(soak, texts, cfg, server)
        after = await snapshot(soak, server)
    result.update(assemble(soak.outcomes, kill, before, after))
    result["outcomes"] = [_compact(o) for o in soak.outcomes]
    result["memory"] = memory(server, before, after, kill)


def assemble(outcomes: list[Outcome], kill: dict[str, Any], before: dict[str, Any],
             after: dict[str, Any]) -> dict[str, Any]:
    """Every statistic the report shows, from the outcomes, the kill and the counters."""
    report.mark_repeats(outcomes)
    window = KillWindow(kill.get("at_s"), kill.get("ready_s"))
    by_phase = {p: [o for o in outcomes if o.phase == p] for p in ("idle", "fairness", "classroom")}
    document = next((o for o in by_phase["fairness"] if o.kind == "document"), None)
    beside = [o for o in by_phase["fairness"] if o.kind == "short"
              and document is not None and o.started < document.ended]
    idle, fair = report.first_text_stats(by_phase["idle"]), report.first_text_stats(beside)
    room = by_phase["classroom"]
    short = [o for o in room if o.kind in ("short", "class example")]
    refused = sum(o.failed and window.during_restart(o) for o in short)
    deltas = {k: None if before[k] is None or after[k] is None else after[k] - before[k]
              for k in ("hits", "misses", "model_calls", "guard_events")}
    if deltas["guard_events"] is None and after.get("model_calls") is not None:
        deltas["guard_events"] = 0  # counted by the app, none yet
    return {
        "phases": {p: report.summarize(v, window if p == "classroom" else None)
                   for p, v in by_phase.items()},
        "fairness": {"short": report.summarize(beside), "ratio_p95": _ratio(fair, idle),
                     "document": None if document is None else {
                         "chars": document.chars, "ok": document.ok, "error": document.error,
                         "seconds": round(document.ended - document.started, 1)}},
        "by_kind": {k: report.summarize([o for o in room if o.kind == k], window)
                    for k in ("short", "class example", "paste")},
        "classroom_short_vs_idle_p95": _ratio(report.first_text_stats(short), idle),
        "kill": kill,
        "guard_events": deltas["guard_events"],
        "cache": report.repeat_share(sum(o.repeat for o in short), deltas["hits"] or 0,
                                     deltas["misses"] or 0, deltas["model_calls"], refused),
    }


def _compact(o: Outcome) -> dict[str, Any]:
    """One outcome for the JSON file: times rounded, the text's key cut short."""
    return {**asdict(o), "key": o.key[:60], "started": round(o.started, 2),
            "ended": round(o.ended, 2),
            "first_text": None if o.first_text is None else round(o.first_text, 3)}


def _ratio(a: dict[str, Any], b: dict[str, Any]) -> float | None:
    return round(a["p95_ms"] / b["p95_ms"], 2) if a["p95_ms"] and b["p95_ms"] else None


def run(cfg: Config, command: str) -> dict[str, Any]:
    load_before, started = os.getloadavg(), time.perf_counter()
    result: dict[str, Any] = {"command": command, "settings": asdict(cfg),
                              "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")}
    with tempfile.TemporaryDirectory(prefix="hymt-classroom-") as tmp:
        server = ServerProcess(cfg.engine, Path(tmp) / "server.log")
        _say(f"starting {' '.join(server.command[1:])}")
        server.start()
        try:
            asyncio.run(soak_run(cfg, server, result))
        finally:
            result["stopped"] = server.stop()
            _say(f"server stopped: {result['stopped']}")
    result["machine"] = {"cpus": os.cpu_count(), "processor": platform.processor()
                         or platform.machine(), "python": platform.python_version(),
                         "load_before": [round(x, 2) for x in load_before],
                         "load_after": [round(x, 2) for x in os.getloadavg()]}
    result["duration_s"] = round(time.perf_counter() - started, 1)
    result["targets"] = report.evaluate(result)
    return result


def _say(message: str) -> None:
    print(f"[classroom] {message}", file=sys.stderr, flush=True)


# -- the command line ---------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    d = Config()
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench classroom",
        description="Classroom soak: start the app on the demo model and drive it like a class "
                    "(idle baseline, a document beside 8 clients, then students with one kill -9 "
                    "of the engine); report hangs, errors, first-text times, cache use, memory "
                    "and the targets of docs/RELIABILITY.md.",
        epilog="Example: python -m benchmarks.bench classroom --doc docs/RELIABILITY.md")
    add = parser.add_argument
    add("--students", type=int, default=d.students, help="simulated students (default %(default)s)")
    add("--duration", type=float, default=d.duration,
        help="seconds of the classroom phase (default %(default)s)")
    add("--idle-requests", type=int, default=d.idle_requests,
        help=f"sentences per client of the {CLIENTS} in the idle baseline (default %(default)s)")
    add("--kill-at", type=float, default=d.kill_at,
        help="when to kill -9 the engine, as a fraction of --duration (default %(default)s)")
    add("--doc-chars", type=int, default=d.doc_chars,
        help="characters of the document and of each paste (default %(default)s)")
    add("--engine", default=d.engine, choices=("process", "local"),
        help="the app's --engine (default %(default)s; local has no engine process to kill)")
    add("--hang", type=float, default=d.hang_s, dest="hang_s",
        help="seconds without progress that make a request a hang (default %(default)s)")
    add("--seed", type=int, default=d.seed, help="random seed of the students (default 0)")
    add("--out", help="write the JSON results here (default: runs/classroom-<time>.json)")
    add("--doc", help="also write the report between the classroom markers of this markdown "
                      "file (e.g. docs/RELIABILITY.md)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    if not 0 < args.kill_at < 1 or args.students < 1 or args.duration <= 0:
        raise SystemExit("--kill-at must be between 0 and 1; --students and --duration positive")
    cfg = Config(**{k: v for k, v in vars(args).items() if k not in ("out", "doc")})
    command = " ".join(["python -m benchmarks.bench classroom", *argv])
    try:
        result = run(cfg, command)
    except SoakError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: the server was stopped", file=sys.stderr)
        return 130
    text = report.report_markdown(result)
    print(text)
    out = Path(args.out or f"runs/classroom-{datetime.now(UTC):%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    _say(f"results written to {out}")
    if args.doc:
        update_doc(Path(args.doc), text, report.DOC_START, report.DOC_END)
        _say(f"report written to {args.doc}")
    for line in report.failures(result["targets"]):
        _say(f"FAILED {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
