"""The speech speed benchmark runs and prints its table (benchmarks/speech_rtf.py): tiny Whisper
built with random weights at its real shape, converted to CTranslate2 int8, timed."""

from __future__ import annotations

import re

import pytest

from benchmarks import speech_rtf

pytestmark = pytest.mark.slow  # builds and converts a 39M-parameter model


def test_tiny_row(tmp_path, capsys) -> None:
    assert speech_rtf.main(["--sizes", "tiny", "--repeats", "1", "--threads", "1",
                            "--work", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "| size | 3 s utterance: s / RTF | 10 s utterance: s / RTF |" in out
    row = re.search(r"\| tiny \| ([\d.]+) / ([\d.]+) \| ([\d.]+) / ([\d.]+) \|", out)
    assert row, out
    seconds_3, rtf_3 = float(row[1]), float(row[2])
    assert seconds_3 > 0 and abs(rtf_3 - seconds_3 / 3) < 0.01
    assert (tmp_path / "tiny-int8" / "model.bin").is_file()
