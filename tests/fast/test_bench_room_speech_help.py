"""``python -m benchmarks.bench room --speech --help`` (issue 38's must-show) answers at once:
it loads no model, no torch and no recogniser; and the table is made from the JSON alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from benchmarks import room_speech

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import sys
from benchmarks import bench
try:
    bench.main(["room", "--speech", "--help"])
except SystemExit as exc:
    assert exc.code == 0, exc.code
heavy = sorted(m for m in ("torch", "ctranslate2", "faster_whisper", "transformers") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
"""


def test_help_works_without_loading_models() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "python -m benchmarks.bench room --speech" in done.stdout
    for option in ("--students", "--languages", "--sentences", "--silence-s", "--out", "--doc"):
        assert option in done.stdout
    assert done.stdout.strip().endswith("HEAVY:"), done.stdout[-300:]


def test_the_room_help_names_the_speech_benchmark() -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench", "room", "--help"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--speech" in done.stdout


def test_the_kept_results_render_as_the_documented_table() -> None:
    """benchmarks/results/room-speech.json is the run docs/PERFORMANCE.md shows."""
    data = json.loads((ROOT / "benchmarks/results/room-speech.json").read_text(encoding="utf-8"))
    doc = (ROOT / "docs/PERFORMANCE.md").read_text(encoding="utf-8")
    block = doc.split(room_speech.DOC_START, 1)[1].split(room_speech.DOC_END, 1)[0]
    assert block.strip() == room_speech.render(data).strip()
    assert "end of utterance -> caption on a phone" in block


def test_the_kept_pace_results_render_as_the_documented_table() -> None:
    from benchmarks import pace

    data = json.loads((ROOT / "benchmarks/results/pace.json").read_text(encoding="utf-8"))
    doc = (ROOT / "docs/PERFORMANCE.md").read_text(encoding="utf-8")
    block = doc.split(pace.DOC_START, 1)[1].split(pace.DOC_END, 1)[0]
    assert block.strip() == pace.render(data).strip()
    assert "| system | cores | languages kept within 2 s |" in block
