"""The class benchmark (``python -m benchmarks.bench room``): its smoke run measures what the
README says (deliveries, translations = sentences x languages, errors, the student that was away)
and its table lands between its markers in a document."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import room

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_quick_class_every_student_gets_every_sentence_once_per_language(tmp_path: Path):
    out, doc = tmp_path / "room.json", tmp_path / "PERF.md"
    doc.write_text("# Performance\n\nbefore\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench", "room", "--quick", "--out",
                           str(out), "--doc", str(doc)], cwd=ROOT, capture_output=True,
                          text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text(encoding="utf-8"))
    assert (result["students"], result["languages"]) == (8, 4)
    assert result["errors"] == 0 and result["missing"] == 0, result["error_samples"]
    assert result["sentences"] >= 4
    assert result["translations"] == result["expected_translations"] == result["sentences"] * 4
    assert result["deliveries"] == result["sentences"] * 7  # all but the one sent away
    assert result["away"]["caught_up"] and result["away"]["in_order_once"]
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Performance\n\nbefore\n")
    assert room.DOC_START in text and room.DOC_END in text and "translations made" in text


def test_the_table_says_what_was_measured():
    result = {"config": {"students": 60, "every": 5.0, "duration": 600.0},
              "command": "python -m benchmarks.bench room", "machine": "x86_64, 2 cores",
              "started": "2026-12-01 22:00 UTC", "languages": 8, "sentences": 120,
              "deliveries": 7080, "missing": 0, "complete_p50_s": 0.4, "complete_p95_s": 0.9,
              "complete_max_s": 1.5, "translations": 960, "expected_translations": 960,
              "errors": 0, "memory_mib": {"start": {"server": 300.0, "engine": 400.0},
                                          "end": {"server": 310.0, "engine": 401.0}},
              "away": {"seconds": 30.0, "caught_up": True, "in_order_once": True}}
    text = room.table(result)
    assert "60 students in 8 languages" in text
    assert "| translations made | 960 | sentences x languages = 960 |" in text
    assert "0.4 / 0.9 / 1.5 s" in text and "(+10 / +1)" in text
