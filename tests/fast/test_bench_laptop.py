"""The laptop benchmark (``python -m benchmarks.cpu_laptop``): the bytes a token reads are counted
as the ceiling needs them. Its ``--quick`` smoke run, which loads tiny models through torch and
llama.cpp, is in the slow lane (tests/service/test_bench_laptop_run.py)."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks import cpu_laptop

REPO = Path(__file__).resolve().parents[2]


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
