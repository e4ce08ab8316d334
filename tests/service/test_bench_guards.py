"""The guards' cost benchmark runs, and the demo phrases set off no guard (benchmarks/guards.py)."""

from __future__ import annotations

from benchmarks import guards


def test_the_guards_benchmark_compares_both_settings_without_a_false_alarm(demo_dir, tmp_path):
    doc = tmp_path / "PERFORMANCE.md"
    doc.write_text(f"before\n{guards.DOC_START}\n{guards.DOC_END}\nafter\n", encoding="utf-8")
    assert guards.main(["--model", demo_dir, "--rounds", "1", "--repeat", "1",
                        "--doc", str(doc)]) == 0
    text = doc.read_text(encoding="utf-8")
    assert "| off |" in text and "| on |" in text and "Guards on / off:" in text
    on_row = next(line for line in text.splitlines() if line.startswith("| on |"))
    assert on_row.endswith("| 0 |"), on_row  # no guard event on any demo phrase
    assert text.startswith("before\n") and text.endswith("after\n")
