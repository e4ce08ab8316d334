"""docs/PERFORMANCE.md's tables are what their committed JSON renders (benchmarks/tables.py), and
the check that CI runs (``python -m benchmarks.report --check``) fails when they are not."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import tables

ROOT = Path(__file__).resolve().parents[2]


def test_every_table_of_the_document_equals_what_its_json_renders():
    text = tables.DOC.read_text(encoding="utf-8")
    assert tables.regenerate(text) == text, "run: python -m benchmarks.report --write"


def test_the_check_as_ci_runs_it_passes(tmp_path):
    done = subprocess.run([sys.executable, "-m", "benchmarks.report", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every table equals its JSON" in done.stdout


def test_every_marked_table_has_its_json_committed_or_is_empty():
    text = tables.DOC.read_text(encoding="utf-8")
    marked = {m.group(1): m.group(2) for m in tables.MARKER.finditer(text)}
    by_marker = {t.marker: t for t in tables.TABLES}
    assert set(marked) <= set(by_marker)
    for name, body in marked.items():
        if body.strip():
            assert all(p.exists() for p in by_marker[name].paths()), name
    # the tables measured so far, each from its JSON
    for name in ("bench", "bench-defaults", "bench-summary", "bench-cpu-step", "bench-threads",
                 "bench-threads-llamacpp", "cpu-laptop", "bench-room", "speech-rtf",
                 "bench-guards-corpus", "bench-guards", "bench-bf16", "bench-speculative"):
        assert marked[name].strip(), name


@pytest.fixture
def copy(tmp_path):
    """The document and the results in a folder of their own, to change."""
    results = tmp_path / "results"
    shutil.copytree(tables.RESULTS, results)
    doc = tmp_path / "PERFORMANCE.md"
    shutil.copy(tables.DOC, doc)
    return doc, results


def _check(doc: Path, results: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchmarks.report", "--check", "--doc",
                           str(doc), "--results", str(results)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_figure_changed_in_a_json_fails_the_check_with_a_diff_and_write_puts_it_in(copy):
    doc, results = copy
    run = json.loads((results / "bench-defaults.json").read_text(encoding="utf-8"))
    row = next(r for r in run["rows"] if r["system"] == "llamacpp" and r["clients"] == 1)
    row["tokens_per_s"] = 130.6  # 2x the engine's 65.3: the summary's ratio moves too
    for check in run["targets"]:
        if check["target"].startswith("llamacpp"):
            check["value"] = 2.0
    (results / "bench-defaults.json").write_text(json.dumps(run), encoding="utf-8")
    done = _check(doc, results)
    assert done.returncode == 1
    assert "-| llamacpp | 1 | 8 | 42.2 | 59.4 | 36.1 | 10.4 | 93.0 | 0.46 | yes |" in done.stdout
    assert "+| llamacpp | 1 | 8 | 42.2 | 59.4 | 36.1 | 10.4 | 130.6 | 0.46 | yes |" in done.stdout
    assert "+| llama.cpp engine faster than our PyTorch engine at 1 client | 1.27x | 2.00x | yes |" \
        in done.stdout
    assert "--write" in done.stderr
    written = subprocess.run([sys.executable, "-m", "benchmarks.report", "--write", "--doc",
                              str(doc), "--results", str(results)], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    assert "| 130.6 |" in doc.read_text(encoding="utf-8")
    assert _check(doc, results).returncode == 0


def test_a_table_edited_by_hand_fails_the_check(copy):
    doc, results = copy
    text = doc.read_text(encoding="utf-8")
    doc.write_text(text.replace("| 1.27x | 1.42x | yes |", "| 1.27x | 1.81x | yes |"),
                   encoding="utf-8")
    assert doc.read_text(encoding="utf-8") != text
    assert _check(doc, results).returncode == 1


def test_a_marker_without_a_row_and_a_table_without_its_json_are_refused(copy, tmp_path):
    doc, results = copy
    text = doc.read_text(encoding="utf-8")
    doc.write_text(text + "\n<!-- made-up:start -->\n| a | b |\n<!-- made-up:end -->\n",
                   encoding="utf-8")
    done = _check(doc, results)
    assert done.returncode == 1 and "made-up" in done.stderr
    doc.write_text(text, encoding="utf-8")
    (results / "room.json").unlink()  # a table whose run is not committed must stay empty
    assert _check(doc, results).returncode == 1
    assert tables.regenerate(text, results=results).count(
        "<!-- bench-room:start -->\n<!-- bench-room:end -->") == 1


def test_adding_a_table_is_one_row():
    extra = tables.Table("bench-room", "room.json", "benchmarks.room:table")
    text = "intro\n<!-- bench-room:start -->\nstale\n<!-- bench-room:end -->\nend\n"
    out = tables.regenerate(text, (extra,))
    assert "stale" not in out and "| sentences sent | 12 | |" in out
    assert out.startswith("intro\n<!-- bench-room:start -->\n`python -m benchmarks.bench room")
    assert out.endswith("<!-- bench-room:end -->\nend\n")


def test_every_capped_system_says_so_in_its_rows():
    text = tables.DOC.read_text(encoding="utf-8")
    for marker in ("bench", "bench-defaults"):
        body = text.split(f"<!-- {marker}:start -->")[1].split(f"<!-- {marker}:end -->")[0]
        rows = [line for line in body.splitlines() if line.startswith("| hf-cb ")]
        assert rows and all("paged cache capped at" in line for line in rows), marker
        gradio = [line for line in body.splitlines() if line.startswith("| app-gradio (")]
        assert gradio and all("repetition penalty 1.05" in line for line in gradio)
    assert "| hf-cb (paged cache capped at 30 blocks) | 8 |" in text  # at defaults, 8 x 200 tokens
