"""The laptop benchmark (``python -m benchmarks.cpu_laptop``): its ``--quick`` smoke run goes the
whole way (checkpoint, F16 GGUF, llama.cpp's quantizer, both engines, the copy benchmark) on a
tiny shape, and the bytes a token reads are counted as the ceiling needs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import cpu_laptop

REPO = Path(__file__).resolve().parents[2]


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


def test_a_token_reads_one_row_of_the_input_embedding(tmp_path: Path) -> None:
    """The ceiling counts the bytes a token actually reads: the output layer whole, the input
    embedding table one row."""
    from hunyuan_webui.demo_model import demo_dir

    config = json.loads((demo_dir() / "config.json").read_text())
    vocab, hidden = config["vocab_size"], config["hidden_size"]
    params = 689_920  # the demo checkpoint's
    assert cpu_laptop.torch_bytes_per_token(demo_dir(), 4) == 4 * (
        params - vocab * hidden + hidden)


def test_q4_k_block_weights_are_named_for_llama_cpps_repack_layout(tmp_path: Path) -> None:
    """On AMX CPUs the engine loads without llama.cpp's extra buffer types (its AMX kernels crash)
    and gives the Q4_K repacking back by name: exactly the Q4_K matrices of the decoder blocks,
    never the embeddings nor a Q6_K or F32 tensor (a forced placement there crashes)."""
    import gguf

    from hunyuan_webui.engine.llama_repack import REPACK_BUFFER, repack_overrides

    _, files = cpu_laptop.prepare(tmp_path, cpu_laptop.QUICK_SHAPE, lambda _: None)
    reader = gguf.GGUFReader(files["Q4_K_M"])
    q4k = sorted(t.name for t in reader.tensors if t.tensor_type == gguf.GGMLQuantizationType.Q4_K
                 and t.name.startswith("blk."))
    assert q4k, "the quantizer made no Q4_K block weight"
    overrides = repack_overrides(files["Q4_K_M"])
    assert overrides is not None, f"this llama.cpp build has no {REPACK_BUFFER} buffer type"
    assert sorted(overrides.names) == q4k
    assert repack_overrides(files["F16"]) is None  # nothing to repack in an F16 file
