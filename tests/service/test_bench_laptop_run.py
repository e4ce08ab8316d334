"""The laptop benchmark's ``--quick`` smoke run (``python -m benchmarks.cpu_laptop --quick``) goes
the whole way (checkpoint, F16 GGUF, llama.cpp's quantizer, both engines, the copy benchmark) on
a tiny shape. It loads models through torch and llama.cpp, so it is in the slow lane."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import cpu_laptop

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_quick_run_measures_every_format_against_its_ceiling(tmp_path: Path) -> None:
    out, doc = tmp_path / "laptop.json", tmp_path / "PERFORMANCE.md"
    doc.write_text(f"Before.\n\n{cpu_laptop.DOC_START}\nold\n{cpu_laptop.DOC_END}\n\nAfter.\n")
    done = subprocess.run([sys.executable, "-m", "benchmarks.cpu_laptop", "--quick",
                           "--work-dir", str(tmp_path / "work"), "--out", str(out),
                           "--doc", str(doc)], cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    rows = {r["system"]: r for r in result["results"]}
    assert list(rows) == list(cpu_laptop.SYSTEMS)
    for row in rows.values():
        assert not row["error"] and row["tokens_ok"], row
        assert row["single"] > 0 and row["clients8"] > 0 and row["share"] > 0
        assert row["ceiling"] == pytest.approx(result["bandwidth"] / row["weight_bytes"])
    # Fewer bits, fewer bytes read per token: fp32 > bf16 ≈ F16 > Q8_0 > Q4_K_M.
    weights = {name: row["weight_bytes"] for name, row in rows.items()}
    assert weights["torch-fp32"] == 2 * weights["torch-bf16"]
    assert weights["llamacpp-F16"] == pytest.approx(weights["torch-bf16"], rel=0.02)
    assert weights["llamacpp-F16"] > weights["llamacpp-Q8_0"] > weights["llamacpp-Q4_K_M"]
    text = doc.read_text()
    assert text.startswith("Before.") and text.endswith("After.\n") and "old" not in text
    assert "| llamacpp-Q4_K_M |" in text and "ceiling = bandwidth / weight bytes" in text
