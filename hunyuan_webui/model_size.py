"""A local model's size, from the model itself: what the GPU check and every memory estimate use.

A checkpoint directory: the tensor shapes in its safetensors headers (a few KB read per file), else
its weight files' bytes over ``config.json``'s dtype, else a ``.gguf`` file in it, else the
parameters its ``config.json`` shape implies. A ``.gguf`` file: its size over the bytes per weight
of its quantization, read from its name (:func:`quant_of`, which the GGUF loader uses too).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

_SHARD = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)


def quant_of(filename: str) -> str:
    """``Hy-MT2-7B-Q4_K_M.gguf`` -> ``Q4_K_M`` (the part after the model name)."""
    stem = _SHARD.sub(".gguf", Path(filename).name)[: -len(".gguf")]
    match = re.search(r"[-_.]((?:I?Q|F|BF|TQ)\d[\w]*|\d+(?:\.\d+)?[Bb]it)$", stem)
    return match.group(1) if match else stem


# Bytes per weight of a GGUF file by its quantization (llama.cpp's block sizes; K-quant mixes as
# llama.cpp reports them): a GGUF's parameters are its file size over this.
GGUF_BYTES_PER_PARAM = {"F32": 4.0, "F16": 2.0, "BF16": 2.0, "Q8_0": 8.5 / 8, "Q6_K": 6.56 / 8,
                        "Q5_K_M": 5.69 / 8, "Q5_K_S": 5.54 / 8, "Q5_0": 5.5 / 8,
                        "Q4_K_M": 4.85 / 8, "Q4_K_S": 4.58 / 8, "Q4_0": 4.5 / 8,
                        "Q3_K_M": 3.91 / 8, "Q2_K": 2.63 / 8}
# Bytes per parameter of a weight file's dtype (safetensors names, and config.json's).
_DTYPE_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I64": 8,
                "I32": 4, "I16": 2, "I8": 1, "U8": 1, "BOOL": 1, "float32": 4, "float16": 2,
                "bfloat16": 2}


def measure_params_b(path: str | Path) -> float | None:
    """A local model's parameters, in billions, from its own files; None when they tell nothing.

    A directory: the tensor shapes in its safetensors headers (a few KB read per file), else its
    ``*.bin`` / ``*.pt`` weights' bytes over ``config.json``'s dtype, else a ``.gguf`` file in it,
    else the parameters its ``config.json`` shape implies. A ``.gguf`` file: its size over the
    bytes per weight of its quantization (from the file name; 1 byte when not known)."""
    path = Path(path)
    if path.is_file():
        return _gguf_params_b(path) if path.suffix.lower() == ".gguf" else None
    if not path.is_dir():
        return None
    shards = sorted(path.glob("*.safetensors"))
    if shards:
        try:
            return sum(_safetensors_params(s) for s in shards) / 1e9
        except (OSError, ValueError):
            pass  # a damaged header: the bytes below
    config = _read_config(path)
    per_param = _DTYPE_BYTES.get(str(config.get("torch_dtype") or config.get("dtype")), 2)
    weights = [*path.glob("*.safetensors"), *path.glob("*.bin"), *path.glob("*.pt")]
    size = sum(w.stat().st_size for w in weights if w.is_file())
    if size:
        return size / per_param / 1e9
    ggufs = sorted(path.glob("*.gguf"))
    if ggufs:
        return max(_gguf_params_b(g) for g in ggufs)
    return _config_params_b(config)


def _safetensors_params(path: Path) -> int:
    """Elements of every tensor in a safetensors file, from its JSON header alone."""
    with path.open("rb") as f:
        length = int.from_bytes(f.read(8), "little")
        if not 0 < length < 100_000_000:
            raise ValueError(f"{path}: not a safetensors header")
        header = json.loads(f.read(length))
    total = 0
    for name, info in header.items():
        if name == "__metadata__":
            continue
        count = 1
        for dim in info["shape"]:
            count *= int(dim)
        total += count
    return total


def _gguf_params_b(path: Path) -> float:
    per_param = GGUF_BYTES_PER_PARAM.get(quant_of(path.name).upper(), 1.0)
    return path.stat().st_size / per_param / 1e9


def _read_config(path: Path) -> dict[str, Any]:
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return config if isinstance(config, dict) else {}


def _config_params_b(config: dict[str, Any]) -> float | None:
    """A dense decoder's parameters from its shape (embeddings, attention, MLP), or None."""
    try:
        hidden, layers = int(config["hidden_size"]), int(config["num_hidden_layers"])
        vocab, inter = int(config["vocab_size"]), int(config["intermediate_size"])
        heads = int(config["num_attention_heads"])
        head_dim = int(config.get("head_dim") or hidden // heads)
        kv = int(config.get("num_key_value_heads") or heads)
    except (KeyError, TypeError, ValueError):
        return None
    embeddings = vocab * hidden * (1 if config.get("tie_word_embeddings") else 2)
    attention = hidden * head_dim * (2 * heads + 2 * kv)
    return (embeddings + layers * (attention + 3 * hidden * inter)) / 1e9
