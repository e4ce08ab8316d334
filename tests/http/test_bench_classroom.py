"""The classroom soak (``python -m benchmarks.bench classroom``, docs/RELIABILITY.md).

The pure parts (hang detection, the kill window, statistics, the share of repeats served without
the model, the targets, the report) run on recorded data without a server. One slow test runs a
short soak against the real app on the demo model, engine kill included.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from benchmarks import bench
from benchmarks import classroom as bench_classroom
from benchmarks import classroom_report as report
from benchmarks.classroom_report import KillWindow, Outcome
from benchmarks.classroom_server import alive, rss_mib
from benchmarks.classroom_students import Texts, Watchdog, error_message
from benchmarks.report import update_doc
from hunyuan_webui.segment import split_document

ROOT = Path(__file__).resolve().parents[2]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_watchdog_counts_silence_not_the_whole_request() -> None:
    clock = Clock()
    watch = Watchdog(hang_s=30, limit_s=100, clock=clock)
    clock.now += 20
    assert watch.remaining() == 10
    watch.progress()  # text arrived: a new 30 s
    clock.now += 25
    assert watch.remaining() == 5
    clock.now += 5
    assert watch.remaining() == 0 and watch.verdict() == "hang"


def test_watchdog_limit_caps_a_request_that_keeps_progressing() -> None:
    clock = Clock()
    watch = Watchdog(hang_s=30, limit_s=50, clock=clock)
    for _ in range(2):
        clock.now += 20
        watch.progress()
    assert watch.remaining() == 10  # the limit (at 50 s) comes before the next hang (at 70 s)
    clock.now += 10
    assert watch.remaining() == 0 and watch.verdict() == "limit"


def test_error_message_reads_every_form_of_gradio_error_event() -> None:
    assert error_message('{"error": "The engine restarted.", "duration": 10}') == \
        "The engine restarted."
    assert error_message('"busy"') == "busy"
    assert error_message("null") == "" and error_message('{"error": null}') == ""
    assert error_message("not json") == "not json"


def outcome(started: float, ended: float, error: str = "", **kw: Any) -> Outcome:
    return Outcome(kw.pop("kind", "short"), kw.pop("key", f"k{started}"), "classroom", started,
                   ended, ok=not error and not kw.get("hung"), error=error, **kw)


def test_kill_window_sorts_failures_by_when_they_happened() -> None:
    window = KillWindow(at=50.0, ready=60.0)
    assert window.in_flight(outcome(45, 51))
    assert not window.in_flight(outcome(40, 49))  # ended before the kill
    assert window.during_restart(outcome(55, 56)) and window.during_restart(outcome(60.5, 61))
    assert not window.covers(outcome(62, 63))  # after ready + grace: a plain failure
    assert KillWindow(at=50.0, ready=None).during_restart(outcome(500, 501))  # never back
    assert not KillWindow(None).covers(outcome(45, 51))


def test_readable_messages_name_the_engine_and_hide_stack_traces() -> None:
    assert report.readable("The engine process stopped unexpectedly; it is restarting.")
    assert report.readable("The translator is restarting, try again in a few seconds.")
    assert not report.readable("")
    assert not report.readable("Traceback (most recent call last): engine")
    assert not report.readable("Error")


def test_summarize_counts_failures_at_the_kill_hangs_and_first_text() -> None:
    window = KillWindow(at=50.0, ready=60.0)
    outcomes = [outcome(1, 2, first_text=0.1), outcome(2, 3, first_text=0.3),
                outcome(3, 4, first_text=0.2, closed=True),
                outcome(45, 51, "The engine process stopped."),  # in flight: readable
                outcome(55, 55.1, "HTTP 500"),  # during the restart: unreadable
                outcome(70, 71, "busy"),  # a plain failure
                outcome(80, 110, "no progress for 30 s", hung=True)]
    s = report.summarize(outcomes, window)
    assert (s["requests"], s["ok"], s["closed"], s["hangs"]) == (7, 3, 1, 1)
    assert (s["failed"], s["failed_at_kill"], s["in_flight_at_kill"]) == (3, 2, 1)
    assert s["unreadable_at_kill"] == 1
    # The hung request counts with its 30 s until it was abandoned.
    assert s["first_text"] == {"n": 4, "p50_ms": 250.0, "p95_ms": 25545.0}
    assert report.first_text_stats(outcomes[:3])["p95_ms"] == 290.0
    assert report.first_text_stats([]) == {"n": 0, "p50_ms": None, "p95_ms": None}


def test_repeats_are_identical_requests_sent_before() -> None:
    outcomes = [outcome(3, 4, key="a"), outcome(1, 2, key="a"), outcome(2, 3, key="b")]
    report.mark_repeats(outcomes)
    assert [o.repeat for o in outcomes] == [True, False, False]


def test_repeat_share_counts_hits_and_sequences_shared_in_flight() -> None:
    # 100 lookups, 30 model calls, 5 refused during the restart: 65 served without the model.
    share = report.repeat_share(repeats=70, hits=50, misses=50, model_calls=30, refused=5)
    assert share["served"] == 65 and share["share"] == round(65 / 70, 3)
    assert "in flight" in share["method"]
    only_hits = report.repeat_share(repeats=70, hits=50, misses=50, model_calls=None, refused=0)
    assert only_hits["share"] == round(50 / 70, 3) and "hits only" in only_hits["method"]
    assert report.repeat_share(10, 20, 0, 0, 0)["share"] == 1.0  # capped
    assert report.repeat_share(0, 0, 0, 0, 0)["share"] is None


def summary(**kw: Any) -> dict[str, Any]:
    base = {"requests": 10, "ok": 10, "closed": 0, "failed": 0, "failed_at_kill": 0,
            "in_flight_at_kill": 0, "unreadable_at_kill": 0, "hangs": 0,
            "first_text": {"n": 10, "p50_ms": 100.0, "p95_ms": 150.0}, "errors": []}
    return {**base, **kw}


def good_result() -> dict[str, Any]:
    return {
        "command": "python -m benchmarks.bench classroom", "started": "2026-12-01 10:00 UTC",
        "duration_s": 300.0,
        "settings": {"engine": "process", "students": 30, "duration": 180.0},
        "machine": {"cpus": 2, "processor": "x86_64", "python": "3.11.7",
                    "load_before": [0.5], "load_after": [1.5]},
        "phases": {"idle": summary(), "fairness": summary(),
                   "classroom": summary(failed=3, failed_at_kill=3, in_flight_at_kill=2)},
        "fairness": {"short": summary(), "ratio_p95": 1.4,
                     "document": {"chars": 2010, "ok": True, "seconds": 40.0, "error": ""}},
        "by_kind": {"short": summary()}, "classroom_short_vs_idle_p95": 1.1,
        "kill": {"killed": True, "pid": 11, "new_pid": 12, "at_s": 72.0, "into_classroom_s": 72.0,
                 "ready_after_s": 6.5, "states": ["ready", "restarting", "ready"]},
        "cache": report.repeat_share(100, 80, 40, 25, 3),
        "memory": {"server": {"before": 400.0, "after": 420.0, "growth": 0.05},
                   "engine": {"before": 500.0, "after": 510.0, "growth": 0.02}},
        "stopped": {"clean": True, "note": ""},
    }


def test_targets_all_met_on_a_good_run() -> None:
    checks = report.evaluate(good_result())
    assert len(checks) == 10
    assert all(c["met"] is True for c in checks), [c for c in checks if c["met"] is not True]
    assert report.failures(checks) == []


def test_targets_name_each_failure() -> None:
    result = good_result()
    result["phases"]["fairness"] = summary(hangs=2)
    result["phases"]["classroom"]["failed"] = 5  # 2 of them outside the kill window
    result["phases"]["classroom"]["unreadable_at_kill"] = 1
    result["kill"].update(ready_after_s=None, note="not ready within 120 s")
    result["fairness"].update(ratio_p95=3.2)
    result["fairness"]["document"].update(ok=False, error="no progress for 30 s")
    result["cache"] = report.repeat_share(100, 50, 10, 50, 0)
    result["memory"]["server"]["growth"] = 0.25
    failed = report.failures(report.evaluate(result))
    assert len(failed) == 8, failed  # all but the engine memory and the clean stop
    assert not any(f.startswith("engine process memory") for f in failed)


def test_fairness_is_not_judged_against_a_broken_idle_baseline() -> None:
    result = good_result()
    result["phases"]["idle"] = summary(hangs=3)
    check = next(c for c in report.evaluate(result) if c["target"].startswith("8 short"))
    assert check["met"] is None and "3 hung or failed" in check["note"]


def test_targets_without_a_kill_are_not_measured() -> None:
    result = good_result()
    result["kill"] = {"killed": False, "note": "no engine process to kill"}
    checks = {c["target"]: c for c in report.evaluate(result)}
    assert checks["ready again after kill -9 of the engine (s)"]["met"] is None
    assert checks["requests failed at the kill with a clear message"]["met"] is None


def test_report_shows_the_tables_and_the_failures() -> None:
    result = good_result()
    result["targets"] = report.evaluate(result)
    text = report.report_markdown(result)
    assert "| idle server, 8 clients | 10 |" in text and "| target |" in text
    assert "ready again after 6.5 s" in text and "All targets met." in text
    result["fairness"]["ratio_p95"] = 2.5
    result["targets"] = report.evaluate(result)
    text = report.report_markdown(result)
    assert "**FAIL**" in text and "Targets failed: 8 short clients" in text


def test_the_section_in_the_doc_is_replaced(tmp_path: Path) -> None:
    doc = tmp_path / "RELIABILITY.md"
    doc.write_text(f"# Reliability\n\n{report.DOC_START}\nold\n{report.DOC_END}\n\nKept.\n")
    update_doc(doc, "new table", report.DOC_START, report.DOC_END)
    assert doc.read_text() == (f"# Reliability\n\n{report.DOC_START}\nnew table\n"
                               f"{report.DOC_END}\n\nKept.\n")


def test_texts_documents_have_distinct_sentences_and_shorts_never_repeat() -> None:
    texts = Texts()
    doc = texts.document(2000, "文档")
    segments = split_document(doc.text, "zh").segments
    assert 2000 <= len(doc.text) < 2100 and doc.source == "zh"
    assert len(set(segments)) == len(segments) > 100  # nothing the cache could answer
    assert texts.document(300, "作业1").text != texts.document(300, "作业2").text
    shorts = [texts.unique_short() for _ in range(200)]
    assert len({s.key for s in shorts}) == 200
    assert all(len(split_document(s.text, s.source).segments) == 1 for s in shorts)
    kinds = [texts.pick(random.Random(i))[0] for i in range(2000)]
    assert 0.35 < kinds.count("class example") / len(kinds) < 0.45


def test_engine_memory_growth_after_a_restart_counts_the_killed_process_too() -> None:
    """A fresh engine after the kill is small again; that must not hide the old one's growth."""
    server = SimpleNamespace(proc=SimpleNamespace(pid=1))
    start = {"server": 90.0, "engine": 450.0}
    before = {"server": 100.0, "engine": 500.0, "engine_pid": 7, "at_start": start}
    after = {"server": 104.0, "engine": 455.0, "engine_pid": 8}
    mem = bench_classroom.memory(server, before, after, {"rss_at_kill_mib": 560.0})
    assert mem["server"]["growth"] == 0.04
    assert mem["engine"]["growth"] == 0.12 and "new engine process 8" in mem["engine"]["note"]
    same = bench_classroom.memory(server, before, {**after, "engine_pid": 7}, {})
    assert same["engine"]["growth"] == -0.09 and "note" not in same["engine"]


def test_process_helpers_read_proc() -> None:
    assert alive(os.getpid()) and (rss_mib(os.getpid()) or 0) > 1
    assert rss_mib(None) is None


def test_classroom_subcommand_help_and_the_old_cli_unchanged(capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bench.main(["classroom", "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for flag in ("--students", "--duration", "--idle-requests", "--kill-at", "--engine",
                 "--out", "--doc"):
        assert flag in out
    assert bench.build_parser().parse_args(["--quick"]).quick  # no subcommand needed
    with pytest.raises(SystemExit):
        bench_classroom.main(["--kill-at", "1.5"])


@pytest.mark.slow
def test_short_soak_kills_the_engine_and_it_comes_back(tmp_path: Path) -> None:
    """A 25-second classroom of 6 students: every field reported, the engine killed and back.

    Needs the engine supervision (a killed engine process is restarted): without it /ready never
    says ready again and this fails, which is what it is for.
    """
    out, doc = tmp_path / "soak.json", tmp_path / "RELIABILITY.md"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench", "classroom", "--students", "6",
         "--duration", "25", "--idle-requests", "2", "--kill-at", "0.3", "--doc-chars", "300",
         "--out", str(out), "--doc", str(doc)],
        cwd=ROOT, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    for key in ("phases", "fairness", "by_kind", "kill", "cache", "memory", "stopped", "targets",
                "machine", "outcomes"):
        assert key in result, key
    assert result["phases"]["classroom"]["requests"] > 6
    kill = result["kill"]
    assert kill["killed"] and kill["new_pid"] not in (None, kill["pid"]), kill
    assert kill["ready_after_s"] is not None, kill
    assert result["memory"]["engine"]["pid_after"] == kill["new_pid"]
    assert result["stopped"]["clean"], result["stopped"]
    assert report.DOC_START in doc.read_text() and "| target |" in doc.read_text()
