"""A class under load: ``python -m benchmarks.bench room --help``.

It starts ``app.py --demo`` in a process of its own (:mod:`benchmarks.classroom_server`), opens a
class with a Chinese-speaking teacher, and joins ``--students`` students spread over
``--languages`` languages, each on its own event stream (as each phone is). The teacher then sends
one of the demo's class sentences every ``--every`` seconds for ``--duration`` seconds. It
measures, for every sentence and every student, the time from the teacher's send to the finished
translation on that student's stream (p50, p95, max); the translations the room made against
sentences x languages (never x students); errors (refused posts, failed translations, streams
that broke, translations that never came); the server's memory (with its engine process) when the
class is seated and at the end; and one student that hangs up for ``--away`` seconds and comes
back with ``Last-Event-ID``: it must get every sentence it missed, in order, once. The phrase
cache is off (``--cache-size 0``) so that every translation is model work. It is a measurement:
it exits 0 even when a target fails, and says which. ``--doc docs/PERFORMANCE.md`` writes its
table there.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.classroom_server import ServerProcess, rss_mib
from benchmarks.report import percentile, update_doc

if TYPE_CHECKING:  # the tables' check renders the JSON with the standard library alone
    import httpx

# The demo knows both in the first six languages (assets/demo_phrases.tsv); in the others it
# answers what it answers, as a real model answers a sentence it has not seen.
SENTENCES = ("早上好。", "请打开书。")
LANGUAGES = ("en", "fr", "ja", "ru", "ar", "ug", "de", "ko", "es", "vi")
DOC_START, DOC_END = "<!-- bench-room:start -->", "<!-- bench-room:end -->"
P95_TARGET_S = 2.0


@dataclass(frozen=True)
class Config:
    students: int = 60
    languages: int = 8
    duration: float = 600.0
    every: float = 5.0
    away: float = 30.0
    engine: str = "process"


class Student:
    """One phone: its stream's finished translations, by sentence, with when they came."""

    def __init__(self, name: str, lang: str) -> None:
        self.name, self.lang, self.student = name, lang, ""
        self.got: dict[int, float] = {}
        self.seqs: list[int] = []
        self.errors: list[str] = []
        self.last = 0

    async def follow(self, http: httpx.AsyncClient, url: str, code: str,
                     last_event_id: int | None = None) -> None:
        import httpx

        headers = {"Last-Event-ID": str(last_event_id)} if last_event_id is not None else {}
        params = {"student": self.student, "lang": self.lang}
        try:
            async with http.stream("GET", f"{url}/class/api/rooms/{code}/events", params=params,
                                   headers=headers, timeout=httpx.Timeout(30, read=None)) as r:
                if r.status_code != 200:
                    self.errors.append(f"stream answered {r.status_code}")
                    return
                async for line in r.aiter_lines():
                    if line.startswith("data: "):
                        self._event(json.loads(line[6:]))
        except httpx.HTTPError as exc:
            self.errors.append(f"stream broke: {type(exc).__name__}")

    def _event(self, event: dict[str, Any]) -> None:
        if event.get("seq"):
            self.seqs.append(event["seq"])
            self.last = event["seq"]
        if event.get("type") == "translation":
            if "error" in event:
                self.errors.append(f"translation failed: {event['error']}")
            else:
                self.got.setdefault(event["sid"], time.monotonic())


async def _class(http: httpx.AsyncClient, url: str, cfg: Config) -> dict[str, Any]:
    room = (await http.post(f"{url}/class/api/rooms", json={"lang": "zh"})).json()
    code, key = room["code"], room["key"]
    langs = LANGUAGES[:cfg.languages]
    students = [Student(f"s{i}", langs[i % len(langs)]) for i in range(cfg.students)]
    for s in students:
        r = await http.post(f"{url}/class/api/rooms/{code}/join", json={"lang": s.lang})
        s.student = r.json()["student"]
    tasks = {s: asyncio.create_task(s.follow(http, url, code)) for s in students}
    await asyncio.sleep(1.0)
    sent: dict[int, float] = {}
    post_errors: list[str] = []
    away, away_at = students[0], cfg.duration / 3
    gone_seq = back_at = None
    started = time.monotonic()
    i = 0
    while time.monotonic() - started < cfg.duration:
        at = time.monotonic()
        r = await _send(http, f"{url}/class/api/rooms/{code}/sentences",
                        SENTENCES[i % len(SENTENCES)], key, post_errors)
        if r is not None and r.status_code == 200:
            for sid in r.json()["sentences"]:
                sent[sid] = at
        elif r is not None:
            post_errors.append(f"post answered {r.status_code}")
        i += 1
        if gone_seq is None and at - started >= away_at:  # the phone sleeps
            tasks[away].cancel()
            gone_seq, back_at = away.last, at + cfg.away
        if back_at is not None and at >= back_at:  # and wakes up
            tasks[away] = asyncio.create_task(away.follow(http, url, code, gone_seq))
            back_at = None
        await asyncio.sleep(max(0.0, cfg.every - (time.monotonic() - at)))
    await _settle(students, sent, deadline=30.0)
    stats = (await http.get(f"{url}/class/api/rooms/{code}/stats",
                            headers={"X-Class-Key": key})).json()
    for task in tasks.values():
        task.cancel()
    return _outcome(cfg, students, sent, stats, post_errors, away, gone_seq)


async def _send(http: httpx.AsyncClient, url: str, text: str, key: str,
                errors: list[str]) -> httpx.Response | None:
    """The teacher's send. A kept-alive connection the server closed as it was reused (its idle
    timeout is 5 s, the pace of the sends) is retried once on a fresh one, as browsers do."""
    import httpx

    for attempt in range(2):
        try:
            return await http.post(url, json={"text": text}, headers={"X-Class-Key": key})
        except httpx.TransportError as exc:
            if attempt:
                errors.append(f"post failed: {type(exc).__name__}")
    return None


async def _settle(students: list[Student], sent: dict[int, float], deadline: float) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end and any(len(s.got) < len(sent) for s in students):
        await asyncio.sleep(0.2)


def _outcome(cfg: Config, students: list[Student], sent: dict[int, float], stats: dict[str, Any],
             post_errors: list[str], away: Student, gone_seq: int | None) -> dict[str, Any]:
    # The student sent away is measured by its catch-up, not by these times.
    times = [s.got[sid] - at for s in students if s is not away
             for sid, at in sent.items() if sid in s.got]
    missing = sum(1 for s in students for sid in sent if sid not in s.got)
    errors = post_errors + [e for s in students for e in s.errors]
    in_order = away.seqs == sorted(away.seqs) and len(away.seqs) == len(set(away.seqs))
    langs = len({s.lang for s in students})
    return {
        "students": len(students), "languages": langs, "sentences": len(sent),
        "deliveries": len(times), "missing": missing, "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
        "complete_p50_s": _round(percentile(times, 50)),
        "complete_p95_s": _round(percentile(times, 95)),
        "complete_max_s": _round(max(times) if times else None),
        "translations": stats.get("translations"), "expected_translations": len(sent) * langs,
        "away": {"seconds": cfg.away, "missed_from": gone_seq,
                 "caught_up": all(sid in away.got for sid in sent), "in_order_once": in_order},
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


async def measure(cfg: Config) -> dict[str, Any]:
    import httpx

    with tempfile.TemporaryDirectory() as tmp:
        server = ServerProcess(cfg.engine, Path(tmp) / "server.log")
        server.command += ["--cache-size", "0"]
        server.start()
        limits = httpx.Limits(max_connections=cfg.students + 20)
        try:
            async with httpx.AsyncClient(timeout=60, limits=limits, trust_env=False) as http:
                status = await server.wait_ready(http, 300)
                engine = server.engine_pid(status)
                before = _memory(server, engine)
                result = await _class(http, server.url, cfg)
                result["memory_mib"] = {"start": before, "end": _memory(server, engine)}
        finally:
            result_stop = server.stop()
    result["server_stop"] = result_stop
    return result


def _memory(server: ServerProcess, engine: int | None) -> dict[str, float | None]:
    return {"server": rss_mib(server.proc.pid if server.proc else None), "engine": rss_mib(engine)}


def table(result: dict[str, Any]) -> str:
    cfg, mem = result["config"], result["memory_mib"]
    away = result["away"]
    growth = [(mem["end"][k] or 0) - (mem["start"][k] or 0) for k in ("server", "engine")]
    rows = [
        f"`{result['command']}` on {result['machine']}, {result['started']}: "
        f"{cfg['students']} students in {result['languages']} languages, one sentence every "
        f"{cfg['every']:g} s for {cfg['duration']:g} s, phrase cache off.",
        "",
        "| measure | value | target |",
        "|---|---|---|",
        f"| sentences sent | {result['sentences']} | |",
        f"| finished translations delivered | {result['deliveries']} "
        f"(missing {result['missing']}) | every one |",
        f"| send -> finished on a connected student's phone, p50 / p95 / max | "
        f"{result['complete_p50_s']} / {result['complete_p95_s']} / {result['complete_max_s']} s"
        f" | p95 < {P95_TARGET_S:g} s |",
        f"| translations made | {result['translations']} | sentences x languages = "
        f"{result['expected_translations']} |",
        f"| errors | {result['errors']} | 0 |",
        f"| memory, server + engine (start -> end) | {mem['start']['server']} + "
        f"{mem['start']['engine']} -> {mem['end']['server']} + {mem['end']['engine']} MiB "
        f"({growth[0]:+.0f} / {growth[1]:+.0f}) | flat |",
        f"| a student away {away['seconds']:g} s: caught up, in order, once | "
        f"{away['caught_up']}, {away['in_order_once']} | yes, yes |",
    ]
    return "\n".join(rows)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench room",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--languages", type=int, default=8, choices=range(1, len(LANGUAGES) + 1))
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of teaching")
    parser.add_argument("--every", type=float, default=5.0, help="seconds between sentences")
    parser.add_argument("--away", type=float, default=30.0,
                        help="seconds one student is disconnected")
    parser.add_argument("--engine", default="process", choices=("process", "local"))
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 8 students, 4 languages, 12 s, away 3 s")
    parser.add_argument("--out", help="JSON results (default runs/room-<time>.json)")
    parser.add_argument("--doc", help="also write the table between the bench-room markers")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    cfg = Config(args.students, args.languages, args.duration, args.every, args.away, args.engine)
    if args.quick:
        cfg = Config(8, 4, 12.0, 2.0, 3.0, args.engine)
    result = {"config": asdict(cfg), "command": "python -m benchmarks.bench room "
              + " ".join(sys.argv[2:] if argv is None else argv),
              "machine": f"{platform.machine()}, {_cores()} cores",
              "started": f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"}
    with contextlib.suppress(KeyboardInterrupt):
        result.update(asyncio.run(measure(cfg)))
    if "sentences" not in result:
        print("interrupted", file=sys.stderr)
        return 1
    text = table(result)
    print(text)
    out = Path(args.out or f"runs/room-{datetime.now(UTC):%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if args.doc:
        update_doc(Path(args.doc), text, DOC_START, DOC_END)
    return 0


def _cores() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
