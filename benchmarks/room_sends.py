"""How long the teacher's send takes, with and without late students: ``python -m
benchmarks.room_sends --help``.

It starts ``app.py --demo`` in a process of its own (the engine in its child process, the phrase
cache off, guards as the launch has them), opens a class with a Chinese-speaking teacher, seats
``--students`` students over ``--languages`` languages (each on its own event stream, read to the
end as a phone reads it), and times ``--sends`` sends of the demo's class sentences, one every
``--every`` seconds, from the teacher's POST to its answer. In the "late students" variant a
student in a new language arrives before every ``--sends / (--late + 1)``-th send, as latecomers
do: the room then translates its recent sentences for that language. The two variants run on
fresh servers, alternating for ``--rounds`` rounds, so that load from elsewhere on the machine
hits both alike; it prints p50, p95 and the maximum of each side by side, with their ratio, and
which sends were slow (over 500 ms: their number, and whether a student had just arrived).

A measurement: it exits 0 whatever it finds. ``--quick`` is a smoke run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from benchmarks.classroom_server import ROOT, ServerProcess
from benchmarks.report import percentile

SENTENCES = ("早上好。", "请打开书。")  # the demo knows both in its first six languages
LANGUAGES = ("en", "fr", "ja", "ru", "ar", "ug", "de", "ko", "es", "vi")
LATE = ("th", "id", "tr", "hi", "it", "pt", "pl", "nl", "ms", "km")
SLOW_S = 0.5


@dataclass(frozen=True)
class Config:
    sends: int = 50
    students: int = 12
    languages: int = 4
    every: float = 0.5
    late: int = 6
    rounds: int = 1
    engine: str = "process"


async def _follow(http: httpx.AsyncClient, url: str, code: str, params: dict[str, str],
                  opened: asyncio.Event) -> None:
    with contextlib.suppress(httpx.HTTPError):
        async with http.stream("GET", f"{url}/class/api/rooms/{code}/events", params=params,
                               timeout=httpx.Timeout(30, read=None)) as r:
            opened.set()
            async for _ in r.aiter_lines():
                pass
    opened.set()


async def _seat(http: httpx.AsyncClient, url: str, code: str, lang: str,
                tasks: list[asyncio.Task[None]]) -> None:
    """One student: joined, its stream open (the room's catch-up for its language started)."""
    r = await http.post(f"{url}/class/api/rooms/{code}/join", json={"lang": lang})
    opened = asyncio.Event()
    params = {"student": r.json()["student"], "lang": lang}
    tasks.append(asyncio.create_task(_follow(http, url, code, params, opened)))
    await asyncio.wait_for(opened.wait(), 30)


async def _class(http: httpx.AsyncClient, url: str, cfg: Config) -> dict[str, Any]:
    room = (await http.post(f"{url}/class/api/rooms", json={"lang": "zh"})).json()
    code, key = room["code"], room["key"]
    opened = asyncio.Event()  # the teacher's page follows the class too (questions, numbers)
    tasks = [asyncio.create_task(_follow(http, url, code, {"role": "teacher", "key": key},
                                         opened))]
    await asyncio.wait_for(opened.wait(), 30)
    for i in range(cfg.students):
        await _seat(http, url, code, LANGUAGES[i % cfg.languages], tasks)
    await asyncio.sleep(1.0)
    late, times, statuses, after_join, at = list(LATE[:cfg.late]), [], [], [], []
    refusals: dict[int, str] = {}
    step = max(1, cfg.sends // (cfg.late + 1))
    try:
        for i in range(cfg.sends):
            joined = bool(i and i % step == 0 and late)
            if joined:
                await _seat(http, url, code, late.pop(0), tasks)
            at.append(time.time())
            started = time.perf_counter()
            r = await http.post(f"{url}/class/api/rooms/{code}/sentences",
                                json={"text": SENTENCES[i % 2]}, headers={"X-Class-Key": key})
            took = time.perf_counter() - started
            times.append(took)
            statuses.append(r.status_code)
            if r.status_code != 200 and r.status_code not in refusals:
                refusals[r.status_code] = r.text[:200]
            after_join.append(joined)
            await asyncio.sleep(max(0.0, cfg.every - took))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for status, body in refusals.items():
        print(f"a send was refused: {status} {body}", file=sys.stderr)
    return {"times": times, "statuses": statuses, "after_join": after_join, "at": at}


async def _run(cfg: Config, root: Path, log_dir: Path, name: str) -> dict[str, Any]:
    server = ServerProcess(cfg.engine, log_dir / f"{name}.log", root=root)
    server.command += ["--cache-size", "0"]
    server.start()
    limits = httpx.Limits(max_connections=cfg.students + cfg.late + 20)
    try:
        async with httpx.AsyncClient(timeout=60, limits=limits, trust_env=False) as http:
            await server.wait_ready(http, 300)
            return await _class(http, server.url, cfg)
    finally:
        server.stop()


def summary(times: Sequence[float], statuses: Sequence[int],
            after_join: Sequence[bool]) -> dict[str, Any]:
    ms = [t * 1000 for t in times]
    slow = [f"#{i}{'+join' if j else ''}={m:.0f}ms"
            for i, (m, j) in enumerate(zip(ms, after_join, strict=True)) if m > SLOW_S * 1000]
    return {"sends": len(ms), "p50_ms": _r(percentile(ms, 50)), "p95_ms": _r(percentile(ms, 95)),
            "max_ms": _r(max(ms) if ms else None), "over_500ms": len(slow),
            "refused": sum(s != 200 for s in statuses), "slow": slow}


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


async def measure(cfg: Config, against: Path | None = None) -> dict[str, Any]:
    """Each variant on each checkout (this one, and ``against``), alternating round by round so
    that load from elsewhere on the machine hits all alike."""
    trees = {"": ROOT, **({f"{against}: ": against} if against else {})}
    runs = [(f"{tree}{name}", root, variant) for tree, root in trees.items()
            for name, variant in (("no late students", replace(cfg, late=0)),
                                  (f"{cfg.late} late students", cfg))]
    raw: dict[str, dict[str, list[Any]]] = {
        name: {"times": [], "statuses": [], "after_join": [], "at": []} for name, _, _ in runs}
    with tempfile.TemporaryDirectory() as tmp:
        for turn in range(cfg.rounds):
            for i, (name, root, variant) in enumerate(runs[::-1] if turn % 2 else runs):
                got = await _run(variant, root, Path(tmp), f"{turn}-{i}")
                for field, values in got.items():
                    raw[name][field] += values
    return {name: {**summary(r["times"], r["statuses"], r["after_join"]),
                   "raw": {"ms": [round(t * 1000, 1) for t in r["times"]], "at": r["at"]}}
            for name, r in raw.items()}


def table(result: dict[str, Any]) -> str:
    cfg, rows = result["config"], result["results"]
    lines = [f"`{result['command']}` on {result['machine']}, {result['started']}, load "
             f"{result['load']}: {cfg['students']} students in {cfg['languages']} languages, "
             f"one send every {cfg['every']:g} s, {cfg['sends']} sends x {cfg['rounds']} "
             f"round(s) per variant, engine {cfg['engine']}, phrase cache off.", "",
             "| variant | sends | p50 | p95 | max | over 500 ms | refused |",
             "|---|---|---|---|---|---|---|"]
    for name, s in rows.items():
        lines.append(f"| {name} | {s['sends']} | {s['p50_ms']} ms | {s['p95_ms']} ms | "
                     f"{s['max_ms']} ms | {s['over_500ms']} | {s['refused']} |")
    items = list(rows.items())
    lines.append("")
    for (a, sa), (b, sb) in zip(items[::2], items[1::2], strict=True):
        ratio = [f"{k[:-3]} {sb[k] / sa[k]:.2f}x" for k in ("p50_ms", "p95_ms", "max_ms")
                 if sa[k]]
        lines.append(f"{b} against {a}: " + ", ".join(ratio) + ".")
    if len(items) == 4:
        (a, sa), (b, sb) = items[1], items[3]
        ratio = [f"{k[:-3]} {sb[k] / sa[k]:.2f}x" for k in ("p50_ms", "p95_ms", "max_ms")
                 if sa[k]]
        lines.append(f"{b} against {a}: " + ", ".join(ratio) + ".")
    for name, s in rows.items():
        if s["slow"]:
            lines.append(f"Slow sends ({name}; +join: a new language had just arrived): "
                         + ", ".join(s["slow"]))
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.room_sends",
                                     description=__doc__.split("\n\n")[0])
    d = Config()
    parser.add_argument("--sends", type=int, default=d.sends, help="sends per class")
    parser.add_argument("--students", type=int, default=d.students, help="students seated first")
    parser.add_argument("--languages", type=int, default=d.languages, metavar="N",
                        choices=range(1, len(LANGUAGES) + 1),
                        help=f"their languages (1-{len(LANGUAGES)})")
    parser.add_argument("--every", type=float, default=d.every, help="seconds between sends")
    parser.add_argument("--late", type=int, default=d.late, choices=range(0, len(LATE) + 1),
                        metavar="N", help="students in new languages arriving during the sends "
                        f"(0-{len(LATE)})")
    parser.add_argument("--rounds", type=int, default=d.rounds, help="classes of each variant")
    parser.add_argument("--engine", default=d.engine, help="app.py's --engine (process, local)")
    parser.add_argument("--against", type=Path, metavar="DIR",
                        help="another checkout (git worktree add /tmp/base main) run side by side")
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 8 sends, 3 students, 2 languages, 2 late")
    parser.add_argument("--out", help="JSON results (default runs/room-sends-<time>.json)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cfg = Config(args.sends, args.students, args.languages, args.every, args.late, args.rounds,
                 args.engine)
    if args.quick:
        cfg = replace(cfg, sends=8, students=3, languages=2, every=0.2, late=2, rounds=1)
    result: dict[str, Any] = {
        "config": asdict(cfg), "command": "python -m benchmarks.room_sends "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "machine": f"{platform.machine()}, {len(os.sched_getaffinity(0))} cores",
        "started": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC",
        "load": " ".join(f"{x:.2f}" for x in os.getloadavg())}
    if args.against is not None and not (args.against / "app.py").exists():
        print(f"--against {args.against}: no app.py there", file=sys.stderr)
        return 2
    with contextlib.suppress(KeyboardInterrupt):
        result["results"] = asyncio.run(measure(cfg, args.against))
    if "results" not in result:
        print("interrupted", file=sys.stderr)
        return 1
    print(table(result))
    out = Path(args.out or f"runs/room-sends-{datetime.now(UTC):%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
