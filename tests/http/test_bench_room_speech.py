"""The spoken-class benchmark (``python -m benchmarks.bench room --speech``), end to end on a tiny
class: app.py --demo in a process of its own, the teacher's espeak-ng voice in real time over the
microphone's WebSocket, every sentence captioned and translated on every phone, nothing from
silence or noise, nothing doubled after a drop; its JSON has the shape the table is made from."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import room_speech

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_a_tiny_spoken_class_is_captioned_and_translated_end_to_end(tmp_path: Path) -> None:
    out, doc = tmp_path / "room-speech.json", tmp_path / "PERF.md"
    doc.write_text("# Performance\n\nbefore\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "benchmarks.bench", "room", "--speech",
                           "--students", "3", "--languages", "2", "--sentences", "2",
                           "--silence-s", "2", "--out", str(out), "--doc", str(doc)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["config"]["students"] == 3 and data["config"]["languages"] == 2
    lesson = data["lesson"]
    assert lesson["utterances"] == lesson["captioned"] == lesson["recognised_exactly"] == 2
    assert sorted(lesson["by_language"]) == ["en", "fr"]
    assert {k: (v["delivered"], v["expected"]) for k, v in lesson["by_language"].items()} == \
        {"en": (4, 4), "fr": (2, 2)}  # 3 phones: two read English, one French
    assert lesson["deliveries"] == lesson["expected_deliveries"] == 6
    assert lesson["errors"] == 0, lesson["error_samples"]
    for key in ("caption_p50_s", "caption_p95_s", "translation_p50_s", "translation_p95_s"):
        assert 0 < lesson[key] < 60
    assert lesson["caption_p50_s"] <= lesson["translation_p50_s"]
    assert set(lesson["cpu_share"]) == {"server", "engine"}
    assert data["recogniser"]["rtf"] > 0 and data["recogniser"]["recognised_exactly"]
    assert data["silence"]["sentences"] == data["noise"]["sentences"] == 0
    drop = data["drop"]
    assert (drop["sentences"], drop["duplicates"], drop["lost"]) == (2, 0, 0)
    assert drop["as_said"] and drop["reconnects"] == 1 and drop["translations_missing"] == 0
    assert data["room_sentences"] == 4 and data["stopped_cleanly"]
    assert {t["target"] for t in data["targets"]} >= {"caption p95 (s)",
                                                      "sentences from silence"}
    assert data["machine"]["cores"] >= 1 and "load_before" in data["machine"]
    assert data["versions"]["python"] and data["speech"]["model"] == "demo-asr"
    text = doc.read_text(encoding="utf-8")
    assert text.startswith("# Performance\n\nbefore\n")
    assert room_speech.DOC_START in text and room_speech.render(data) in text
