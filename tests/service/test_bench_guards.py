"""The guards' benchmark runs: the corpora (every bad answer caught or fixed, no false alarm),
and the cost with the guards on and off, where the demo phrases set off no guard
(benchmarks/guards.py)."""

from __future__ import annotations

import json

from benchmarks import guards


def test_the_guards_benchmark_reports_the_corpora_and_compares_both_settings(demo_dir, tmp_path):
    doc = tmp_path / "PERFORMANCE.md"
    doc.write_text(f"before\n{guards.CORPUS_START}\n{guards.CORPUS_END}\n{guards.DOC_START}\n"
                   f"{guards.DOC_END}\nafter\n", encoding="utf-8")
    results = tmp_path / "guards.json"
    assert guards.main(["--model", demo_dir, "--rounds", "1", "--repeat", "1", "--doc", str(doc),
                        "--corpus", "--results", str(results)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert "| off |" in text and "| on |" in text and "Guards on / off: tokens/s" in text
    on_row = next(line for line in text.splitlines() if line.startswith("| on |"))
    assert on_row.endswith("| 0 |"), on_row  # no guard event on any demo phrase
    assert "**Misbehaving set: 109 of 109 caught or fixed**" in text
    assert "**Legitimate set: 0 false alarms in 376**" in text
    assert text.startswith("before\n") and text.endswith("after\n")
    kept = json.loads(results.read_text(encoding="utf-8"))
    assert kept["corpus"]["misbehaving"]["missed"] == [] and kept["clients"] == 8
    assert kept["cost"]["on"]["first_text_p50_ms"] > 0 and kept["cost"]["off"]["tokens_per_s"] > 0
