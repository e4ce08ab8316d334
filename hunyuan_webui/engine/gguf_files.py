"""GGUF checkpoints: which file to load, and writing one from a transformers checkpoint.

A GGUF model is a local ``.gguf`` file, a directory holding some, or a hub repository of them
(Tencent's ``tencent/HY-MT1.5-1.8B-GGUF``, ``tencent/Hy-MT2-7B-GGUF``...). A repository holds one
file per quantization; :func:`pick_file` takes the one whose name ends in the quantization asked
for (``--gguf-quant``; its default ``auto`` takes ``Q4_K_M``, else ``Q8_0``), or the only one
there is. File names differ in case between repositories, so they are matched
case-insensitively, never hard-coded.

:func:`write_gguf` writes a ``hunyuan-dense`` GGUF (llama.cpp's name for
``HunYuanDenseV1ForCausalLM``) from a checkpoint with a byte-level BPE tokenizer, with the
``gguf`` package, the way llama.cpp's ``convert_hf_to_gguf.py`` does for this architecture. It
exists for the demo model: that converter accepts only tokenizers whose pre-tokenizer it knows by
a hash of their output, and the demo's (GPT-2's byte-level split) is declared here by name
instead. Tensors are written as they are stored (F32 for the demo), so nothing is quantized.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.errors import ModelLoadError
from hunyuan_webui.model_size import quant_of

__all__ = ["AUTO_QUANTS", "DEFAULT_QUANT", "LLAMA_FTYPES", "is_gguf", "locate",
           "pick_file", "quant_of", "quantize_gguf", "write_gguf"]

log = logging.getLogger(__name__)

DEFAULT_QUANT = "Q4_K_M"
AUTO_QUANTS = ("Q4_K_M", "Q8_0")  # what --gguf-quant auto takes from a repository, in order
LLAMA_FTYPES = {"F16": 1, "Q8_0": 7, "Q4_K_M": 15}  # llama.cpp's LLAMA_FTYPE_MOSTLY_*
WRITER_VERSION = "2"  # part of the demo GGUF's cache key: a changed writer writes it again
# Files in a GGUF repository that are not the language model.
_NOT_MODELS = re.compile(r"mmproj|vision|draft|imatrix", re.IGNORECASE)
_SHARD = re.compile(r"-(\d{5})-of-(\d{5})\.gguf$", re.IGNORECASE)


def is_gguf(spec: ModelSpec) -> bool:
    """Whether ``spec`` is a GGUF checkpoint (a .gguf file, or a repository named ...-GGUF)."""
    source = spec.source.lower().rstrip("/")
    if getattr(spec, "prequantized", None) == "gguf" or source.endswith((".gguf", "-gguf")):
        return True
    path = Path(spec.source)
    return path.is_dir() and next(path.glob("*.gguf"), None) is not None


def pick_file(files: Iterable[str], quant: str = DEFAULT_QUANT) -> str:
    """The file of a GGUF repository to load for ``quant`` (first shard of a split model).

    Raises :class:`ModelLoadError` listing the quantizations there are when none matches."""
    models = sorted(f for f in files if f.lower().endswith(".gguf")
                    and not _NOT_MODELS.search(Path(f).name)
                    and (_SHARD.search(f) is None or _SHARD.search(f).group(1) == "00001"))
    if not models:
        raise ModelLoadError("There is no .gguf model file there.")
    for wanted in AUTO_QUANTS if quant.lower() == "auto" else (quant.upper(),):
        matches = [f for f in models if quant_of(f).upper() == wanted]
        if matches:
            return matches[0]
    quant = DEFAULT_QUANT if quant.lower() == "auto" else quant
    if len(models) == 1:  # a one-file repository (the 2-bit builds): its only file
        log.info("taking %s, the only GGUF file there (asked for %s)", models[0], quant)
        return models[0]
    found = ", ".join(sorted({quant_of(f) for f in models}))
    raise ModelLoadError(f"No {quant} file among the GGUF files there; choose one of {found} "
                         "with --gguf-quant.")


def locate(spec: ModelSpec, quant: str = DEFAULT_QUANT) -> Path:
    """The local path of the GGUF file to load for ``spec``, downloaded from the hub if need be
    (into the hub cache, where ``HF_HUB_OFFLINE=1`` finds it later)."""
    path = Path(spec.source).expanduser()
    if path.is_file():
        return path
    if path.is_dir():
        files = [str(p.relative_to(path)) for p in path.rglob("*.gguf")]
        try:
            return path / pick_file(files, quant)
        except ModelLoadError as exc:
            raise ModelLoadError(f"{path}: {exc.user_message}") from None
    return _from_hub(spec.source, quant)


def _from_hub(repo: str, quant: str) -> Path:
    try:
        from huggingface_hub import HfApi, hf_hub_download, snapshot_download
    except ImportError:  # pragma: no cover - a dependency of transformers
        raise ModelLoadError("huggingface_hub is needed to download GGUF files.") from None
    try:
        files = HfApi().list_repo_files(repo)
    except Exception as exc:  # offline, or no such repository: what the cache holds
        try:
            local = Path(snapshot_download(repo, allow_patterns=["*.gguf"],
                                           local_files_only=True))
        except Exception:
            raise ModelLoadError(f"Could not list the files of {repo} ({exc}), and none are "
                                 "cached. Check the name, or download a .gguf file and pass "
                                 "its path with --model.") from None
        files = [str(p.relative_to(local)) for p in local.rglob("*.gguf")]
        return local / _picked(repo, files, quant)
    name = _picked(repo, files, quant)
    log.info("downloading %s from %s (once; later starts read the hub cache)", name, repo)
    try:
        return Path(hf_hub_download(repo, name))
    except Exception as exc:
        raise ModelLoadError(f"Downloading {name} from {repo} failed: {exc}") from None


def _picked(repo: str, files: list[str], quant: str) -> str:
    try:
        return pick_file(files, quant)
    except ModelLoadError as exc:
        raise ModelLoadError(f"{repo}: {exc.user_message}") from None


# -- writing ---------------------------------------------------------------------------------
def write_gguf(checkpoint: str | os.PathLike[str], out: str | os.PathLike[str],
               ftype: str = "F32") -> Path:
    """Write ``checkpoint`` (a ``hunyuan_v1_dense`` directory with a byte-level BPE
    ``tokenizer.json``) as a ``hunyuan-dense`` GGUF file at ``out``; ``ftype`` ``F16`` stores the
    matrices in 16 bits (norms stay F32, as llama.cpp's converter does), the input of its
    quantizer."""
    import gguf
    from safetensors.numpy import load_file

    src = Path(checkpoint)
    config = json.loads((src / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "hunyuan_v1_dense":
        raise ValueError(f"{src}: only hunyuan_v1_dense checkpoints are written here; use "
                         "llama.cpp's convert_hf_to_gguf.py for others")
    out = Path(out)
    arch = gguf.MODEL_ARCH_NAMES[gguf.MODEL_ARCH.HUNYUAN_DENSE]
    writer = gguf.GGUFWriter(str(out), arch)
    _write_hparams(writer, config, src.name, ftype)
    _write_vocab(writer, src, config)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.HUNYUAN_DENSE, config["num_hidden_layers"])
    tensors: dict[str, Any] = {}
    for shard in sorted(src.glob("*.safetensors")):
        tensors.update(load_file(str(shard)))
    for name, data in tensors.items():
        if name == "lm_head.weight" and config.get("tie_word_embeddings"):
            continue
        mapped = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if mapped is None:
            raise ValueError(f"{src}: no GGUF name for tensor {name}")
        half = ftype == "F16" and data.ndim > 1
        writer.add_tensor(mapped, data.astype("float16" if half else "float32"))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return out


def quantize_gguf(src: str | os.PathLike[str], out: str | os.PathLike[str], quant: str,
                  threads: int = 0) -> Path:
    """``src`` (an F32 or F16 GGUF) quantized to ``quant`` (a key of :data:`LLAMA_FTYPES`) at
    ``out`` by llama.cpp's own quantizer (``llama_model_quantize``, through llama-cpp-python)."""
    import llama_cpp

    from hunyuan_webui.engine.threads import engine_threads

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = LLAMA_FTYPES[quant.upper()]
    params.nthread = threads or engine_threads()
    out = Path(out)
    partial = out.with_name(f".{out.name}.{os.getpid()}")
    failed = llama_cpp.llama_model_quantize(str(src).encode(), str(partial).encode(),
                                            llama_cpp.byref(params))
    if failed:
        partial.unlink(missing_ok=True)
        raise ModelLoadError(f"llama.cpp could not quantize {Path(src).name} to {quant}.")
    os.replace(partial, out)
    return out


def _write_hparams(writer: Any, config: dict[str, Any], name: str, ftype: str = "F32") -> None:
    import gguf

    head_dim = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    rope = config.get("rope_parameters") or {**(config.get("rope_scaling") or {}),
                                             "rope_theta": config.get("rope_theta", 10000.0)}
    base = float(rope.get("rope_theta", 10000.0))
    if rope.get("rope_type", rope.get("type")) == "dynamic" and rope.get("alpha"):
        # HunYuan's NTK alpha scaling stretches the base once (transformers' "ntk_alpha").
        base *= float(rope["alpha"]) ** (head_dim / (head_dim - 2))
    writer.add_name(name)
    writer.add_context_length(config["max_position_embeddings"])
    writer.add_embedding_length(config["hidden_size"])
    writer.add_block_count(config["num_hidden_layers"])
    writer.add_feed_forward_length(config["intermediate_size"])
    writer.add_head_count(config["num_attention_heads"])
    writer.add_head_count_kv(config.get("num_key_value_heads", config["num_attention_heads"]))
    writer.add_key_length(head_dim)
    writer.add_value_length(head_dim)
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(config["rms_norm_eps"])
    writer.add_rope_freq_base(base)
    writer.add_rope_scaling_type(gguf.RopeScalingType.NONE)
    writer.add_vocab_size(config["vocab_size"])
    writer.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if ftype == "F16"
                         else gguf.LlamaFileType.ALL_F32)


def _write_vocab(writer: Any, src: Path, config: dict[str, Any]) -> None:
    import gguf

    tok = json.loads((src / "tokenizer.json").read_text(encoding="utf-8"))
    pre, model = tok.get("pre_tokenizer") or {}, tok["model"]
    if (model.get("type") != "BPE" or pre.get("type") != "ByteLevel" or tok.get("normalizer")
            or pre.get("add_prefix_space") or not pre.get("use_regex", True)):
        raise ValueError(f"{src}: only byte-level BPE tokenizers with GPT-2's split (like the "
                         "demo model's) are written here")
    specials = {t["id"]: t["content"] for t in tok.get("added_tokens", [])}
    by_id = {i: t for t, i in model["vocab"].items()} | specials
    size = config["vocab_size"]
    tokens = [by_id.get(i, f"[PAD{i}]") for i in range(size)]
    types = [gguf.TokenType.CONTROL if i in specials else gguf.TokenType.NORMAL
             if i in by_id else gguf.TokenType.UNUSED for i in range(size)]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    settings = json.loads((src / "tokenizer_config.json").read_text(encoding="utf-8"))
    ids = {t: i for i, t in specials.items()}
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")  # GPT-2's byte-level regex: what ByteLevel(use_regex) does
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_bos_token_id(ids.get(settings.get("bos_token"), config.get("bos_token_id")))
    eos = config.get("eod_token_id", config.get("eos_token_id"))
    writer.add_eos_token_id(eos)
    writer.add_eot_token_id(eos)  # the end of the assistant's turn, which is what it ends with
    if settings.get("pad_token") in ids:
        writer.add_pad_token_id(ids[settings["pad_token"]])
    writer.add_add_bos_token(False)  # the chat template writes it
    if settings.get("chat_template"):
        writer.add_chat_template(settings["chat_template"])


# -- reading ---------------------------------------------------------------------------------
# GGUF value types and the size of the fixed-size ones (gguf.GGUFValueType).
_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
_STRING, _ARRAY = 8, 9


def vocabulary(path: str | os.PathLike[str]) -> list[str]:
    """The token texts of a GGUF file (``tokenizer.ggml.tokens``), read from its header without
    the ``gguf`` package (a managed llama-server needs them, and its users may not have it)."""
    import struct

    with open(path, "rb") as f:
        def read(fmt: str) -> Any:
            return struct.unpack("<" + fmt, f.read(struct.calcsize(fmt)))[0]

        def string() -> str:
            return f.read(read("Q")).decode("utf-8", "replace")

        def skip(kind: int) -> None:
            if kind == _STRING:
                f.seek(read("Q"), 1)
            elif kind == _ARRAY:
                item, count = read("I"), read("Q")
                if item in _SIZES:
                    f.seek(_SIZES[item] * count, 1)
                else:
                    for _ in range(count):
                        skip(item)
            else:
                f.seek(_SIZES[kind], 1)

        if f.read(4) != b"GGUF":
            raise ModelLoadError(f"{Path(path).name} is not a GGUF file.")
        read("I")  # version
        read("Q")  # tensors
        for _ in range(read("Q")):
            key, kind = string(), read("I")
            if key == "tokenizer.ggml.tokens" and kind == _ARRAY and read("I") == _STRING:
                return [string() for _ in range(read("Q"))]
            if key == "tokenizer.ggml.tokens":
                break
            skip(kind)
    raise ModelLoadError(f"{Path(path).name} has no vocabulary (tokenizer.ggml.tokens).")


def token_ids(path: str | os.PathLike[str], texts: Iterable[str]) -> dict[str, int]:
    """The ids of the tokens written ``texts`` in a GGUF's vocabulary (special tokens: the chat
    format's markers and stop tokens); raises :class:`ModelLoadError` naming any missing."""
    wanted = list(texts)
    found: dict[str, int] = {}
    for i, token in enumerate(vocabulary(path)):
        if token in wanted and token not in found:
            found[token] = i
    missing = [t for t in wanted if t not in found]
    if missing:
        raise ModelLoadError(f"{Path(path).name} has no {', '.join(missing)} token: is it a model "
                             "of the family named? (A hymt.json beside it can name its "
                             "chat_format.)")
    return found
