"""The model registry: which checkpoints exist, what each one can do and what can run it.

A table, not branches. Each entry names its prompt family (which wording of the prompts it was
trained on, :mod:`hunyuan_webui.prompts`), the modes it supports, its chat format and architecture,
its own decoding defaults (the model card's), whether it ships pre-quantized, and which engines can
run it. Special tokens are never recorded here: they come from each checkpoint's tokenizer; the
chat format is recorded only to say which one a model uses.

Engines: ``transformers`` is this app's own in-process engine (``--engine local`` or ``process``);
``vllm``, ``sglang`` and ``llama.cpp`` are servers the app reaches with ``--engine openai``. Where
the installed transformers cannot run an entry (a GGUF build; an architecture newer than it), the
app says which engine can, with the commands, before anything is loaded (:func:`check_in_process`).

A local directory is a model too, and so is a ``.gguf`` file (for llama.cpp). Its family and modes
are read from an optional ``hymt.json`` beside ``config.json`` (the demo models ship one) or beside
the file; without it, the directory name is matched against the known ids (a downloaded
``HY-MT1.5-1.8B`` folder gets the HY-MT1.5 prompts), then its ``config.json``'s ``model_type``,
else the Hunyuan-MT-7B family is assumed. Its size is the model's own
(:func:`~hunyuan_webui.model_size.measure_params_b`), never the registry's guess: it is what the
GPU check and every memory estimate use. The sidecar's ``params_b`` counts only when the files
tell nothing.
"""

from __future__ import annotations

import json
from dataclasses import replace
from enum import StrEnum
from pathlib import Path

from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.core.spec import (  # noqa: F401 (defined below the engines, reached here too)
    BYTES_PER_PARAM,
    DENSE,
    ENGINE_NAMES,
    GGUF,
    HY_V3_DECODING,
    MODEL_CARD,
    SERVE,
    UNQUANTIZED_SHARE,
    ModelSpec,
    check_in_process,
    estimate_weight_gib,
    in_process_problem,
    serve_hint,
)
from hunyuan_webui.errors import InputError
from hunyuan_webui.model_size import measure_params_b
from hunyuan_webui.prompts import PromptFamily


class Mode(StrEnum):
    """The translation modes, in the order the page and the API list them. A model entry's
    ``modes`` says which of them it has its own prompt for (the others fall back, with a notice)."""

    TRANSLATE = "translate"
    CONTEXT = "context"
    FORMATTED = "formatted"
    ALTERNATIVES = "alternatives"
    ENSEMBLE = "ensemble"
    TERMINOLOGY = "terminology"
    STYLE = "style"
    INSTRUCTIONS = "instructions"
    STRUCTURED = "structured"


TRANSLATE, CONTEXT, FORMATTED = Mode.TRANSLATE, Mode.CONTEXT, Mode.FORMATTED
TERMINOLOGY, STYLE, INSTRUCTIONS, STRUCTURED = (Mode.TERMINOLOGY, Mode.STYLE, Mode.INSTRUCTIONS,
                                                Mode.STRUCTURED)
CHIMERA = "chimera"  # a capability, not a mode: it fuses candidates with the Chimera prompt

_MT = frozenset({TRANSLATE})
_CHIMERA = frozenset({TRANSLATE, CHIMERA})
_MT15 = frozenset({TRANSLATE, TERMINOLOGY, CONTEXT, FORMATTED})
_MT2 = frozenset({TRANSLATE, TERMINOLOGY, CONTEXT, STYLE, INSTRUCTIONS, STRUCTURED})
# The Hy-MT2 FP8 builds are taken to be compressed-tensors like HY-MT1.5's (not verified).
_FP8 = {"prequantized": "fp8", "runtime": "compressed-tensors"}
_HY_MT15 = {"family": PromptFamily.HY_MT15, "modes": _MT15}
_HY_MT2 = {"family": PromptFamily.HY_MT2, "modes": _MT2, "license": "Apache-2.0",
           "min_transformers": "5.6.0"}  # the Hy-MT2 README's one stated requirement
_SMALL = {"params_b": 1.8, "chat_format": "hy-1.8b", "kv_kib_per_token": None}
# Hy-MT2-30B-A3B: the Hy3 architecture (HY-MT2.md §1.3, §1.5); its format may open with a
# <think> block, and its template takes reasoning_effort ("no_think" for translation).
_HY_V3 = {**_HY_MT2, "params_b": 30.0, "active_params_b": 3.0, "architecture": "hy_v3",
          "chat_format": "hy-v3", "decoding": HY_V3_DECODING, "kv_kib_per_token": 96.0,
          "reasoning_tags": ("<think>", "</think>"),
          "chat_template_kwargs": (("reasoning_effort", "no_think"),)}
_GGUF = {"prequantized": "gguf", "engines": GGUF, "runtime": None}

REGISTRY: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in (
        ModelSpec("tencent/Hunyuan-MT-7B", PromptFamily.HUNYUAN_MT, _MT,
                  description="Hunyuan-MT 7B, bf16"),
        ModelSpec("tencent/Hunyuan-MT-7B-fp8", PromptFamily.HUNYUAN_MT, _MT, **_FP8,
                  description="Hunyuan-MT 7B, static FP8 W8A8"),
        ModelSpec("tencent/Hunyuan-MT-Chimera-7B", PromptFamily.HUNYUAN_MT, _CHIMERA,
                  description="Fuses up to 6 candidate translations into one"),
        ModelSpec("tencent/Hunyuan-MT-Chimera-7B-fp8", PromptFamily.HUNYUAN_MT, _CHIMERA, **_FP8,
                  description="Chimera 7B, static FP8"),
        ModelSpec("tencent/HY-MT1.5-7B", **_HY_MT15,
                  description="HY-MT1.5 7B: terminology, context and formatted prompts"),
        ModelSpec("tencent/HY-MT1.5-7B-FP8", **_HY_MT15, **_FP8, description="HY-MT1.5 7B, FP8"),
        ModelSpec("tencent/HY-MT1.5-1.8B", **_HY_MT15, **_SMALL,
                  description="HY-MT1.5 1.8B: small enough for laptops"),
        ModelSpec("tencent/HY-MT1.5-1.8B-FP8", **_HY_MT15, **_SMALL, **_FP8,
                  description="HY-MT1.5 1.8B, FP8"),
        ModelSpec("tencent/HY-MT1.5-1.8B-GPTQ-Int4", **_HY_MT15, **_SMALL,
                  prequantized="gptq-int4", runtime="gptqmodel",
                  description="HY-MT1.5 1.8B, GPTQ int4"),
        ModelSpec("tencent/Hy-MT2-7B", **_HY_MT2,
                  description="Hy-MT2 7B: the best 7B (XCOMET XX⇔XX 86.89 vs 78.29 for "
                              "Hunyuan-MT-7B); style, instructions, structured data"),
        ModelSpec("tencent/Hy-MT2-7B-FP8", **_HY_MT2, **_FP8, description="Hy-MT2 7B, FP8"),
        ModelSpec("tencent/Hy-MT2-7B-GGUF", **_HY_MT2, **_GGUF,
                  description="Hy-MT2 7B for llama.cpp (several quantizations)"),
        ModelSpec("tencent/Hy-MT2-1.8B", **_HY_MT2, **_SMALL,
                  description="Hy-MT2 1.8B: for laptops and CPUs"),
        ModelSpec("tencent/Hy-MT2-1.8B-FP8", **_HY_MT2, **_SMALL, **_FP8,
                  description="Hy-MT2 1.8B, FP8"),
        ModelSpec("tencent/Hy-MT2-1.8B-GGUF", **_HY_MT2, **_SMALL, **_GGUF,
                  description="Hy-MT2 1.8B for llama.cpp: the CPU choice once a GGUF engine "
                              "is built in"),
        ModelSpec("tencent/Hy-MT2-30B-A3B", **_HY_V3,
                  description="Hy-MT2 30B mixture of experts (3B active): the best quality"),
        ModelSpec("tencent/Hy-MT2-30B-A3B-FP8", **_HY_V3, **_FP8,
                  description="Hy-MT2 30B-A3B, FP8"),
    )
}
DEFAULT_MODEL = "tencent/Hunyuan-MT-7B"  # what an unknown hub id or directory is taken for
SIDECAR = "hymt.json"
# A directory or an unlisted hub id whose name starts like this is taken for this entry.
NAME_PREFIXES = (("hy-mt2-30b", "tencent/Hy-MT2-30B-A3B"), ("hy-mt2-1.8b", "tencent/Hy-MT2-1.8B"),
                 ("hy-mt2", "tencent/Hy-MT2-7B"), ("hy-mt1.5-1.8b", "tencent/HY-MT1.5-1.8B"),
                 ("hy-mt1.5", "tencent/HY-MT1.5-7B"))
# A directory without a sidecar or a known name, by its config.json's model_type.
ARCHITECTURES = {"hy_v3": "tencent/Hy-MT2-30B-A3B"}


def resolve(name: str) -> ModelSpec:
    """The spec for a registry id or a local directory."""
    if name == "auto":
        raise InputError("--model auto is chosen at start-up (hunyuan_webui.choice); name a "
                         "model here, or start through `bash launch.sh` / app.py.")
    path = Path(name).expanduser()
    if path.is_dir() or (path.is_file() and path.suffix.lower() == ".gguf"):
        return _local_spec(path)
    if name in REGISTRY:
        return REGISTRY[name]
    if name.count("/") == 1 and not name.startswith((".", "/", "~")):
        # An unlisted hub id (a fine-tune, a mirror): guess its family from the name.
        return replace(_by_name(name), id=name, description="unlisted hub model")
    raise InputError(
        f"No model directory at {name!r} and it is not a known model id. "
        f"Known ids: {', '.join(REGISTRY)}; or pass --model /path/to/checkpoint, or --demo.")


def _local_spec(path: Path) -> ModelSpec:
    """A checkpoint directory, or a GGUF file (its sidecar, if any, beside it)."""
    base = _by_name(path.name)
    if path.is_file():  # a .gguf file: llama.cpp runs it
        base = replace(base, prequantized="gguf", runtime=None, engines=GGUF)
    elif base.id == DEFAULT_MODEL:
        base = REGISTRY.get(ARCHITECTURES.get(_model_type(path), ""), base)
    sidecar = (path if path.is_dir() else path.parent) / SIDECAR
    measured = measure_params_b(path)
    if measured is not None:
        base = replace(base, params_b=measured)
    if sidecar.is_file():
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        base = replace(
            base,
            family=PromptFamily(meta.get("family", base.family)),
            modes=frozenset(meta.get("modes", base.modes)),
            params_b=measured if measured is not None else float(meta.get("params_b",
                                                                          base.params_b)),
            description=meta.get("description", base.description),
            chat_format=meta.get("chat_format", base.chat_format),
            decoding=DecodingOptions.from_mapping(meta["decoding"]) if "decoding" in meta
            else base.decoding,
            demo=bool(meta.get("demo", base.demo)),
        )
    return replace(base, id=str(path.resolve()), local_path=str(path.resolve()))


def _model_type(path: Path) -> str:
    try:
        return str(json.loads((path / "config.json").read_text(encoding="utf-8"))["model_type"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def _by_name(name: str) -> ModelSpec:
    """The registry entry whose id ends like ``name`` (case-insensitive), else one whose name
    starts like it, else Hunyuan-MT-7B's."""
    tail = name.rsplit("/", 1)[-1].lower()
    for spec in REGISTRY.values():
        if spec.id.rsplit("/", 1)[-1].lower() == tail:
            return spec
    for prefix, model_id in NAME_PREFIXES:
        if tail.startswith(prefix):
            return REGISTRY[model_id]
    return REGISTRY[DEFAULT_MODEL]


# -- the README's model table -------------------------------------------------------------------
TABLE_HEADER = ("| model | prompts · chat format | modes | decoding (temp / top-p / top-k / rep.) "
                "| weights | engines |")


def memory_text(spec: ModelSpec) -> str:
    """Approximate weight memory, by format, and the KV cache per token where it is known."""
    def gib(dtype: str) -> str:
        return f"{estimate_weight_gib(spec.params_b, dtype):.1f}"

    if spec.prequantized == "gguf":
        text = f"Q4_K_M {gib('q4_k_m')} · Q8_0 {gib('q8_0')} GiB"
    elif spec.prequantized:
        text = f"{spec.prequantized} {gib(spec.prequantized)} GiB"
    else:
        text = f"bf16 {gib('bf16')} · int8 {gib('int8')} · int4 {gib('int4')} GiB"
    if spec.active_params_b:
        text += f" ({spec.active_params_b:g}B active)"
    if spec.kv_kib_per_token and spec.prequantized != "gguf":
        text += f"; KV {spec.kv_kib_per_token:g} KiB/token"
    return text


def decoding_text(options: DecodingOptions) -> str:
    top_k = str(options.top_k) if options.top_k else "off"
    return (f"{float(options.temperature)} / {float(options.top_p)} / {top_k} / "
            f"{float(options.repetition_penalty)}")


def markdown_table() -> str:
    """The README's model table, generated from :data:`REGISTRY` so the two cannot drift."""
    order = [TRANSLATE, TERMINOLOGY, CONTEXT, FORMATTED, STYLE, INSTRUCTIONS, STRUCTURED, CHIMERA]
    rows = [TABLE_HEADER, "|---|---|---|---|---|---|"]
    for spec in REGISTRY.values():
        modes = ", ".join(m for m in order if m in spec.modes)
        engines = ", ".join(ENGINE_NAMES[e].replace("this app (transformers)", "in-process")
                            for e in spec.engines)
        if spec.min_transformers and "transformers" in spec.engines:
            engines = engines.replace("in-process", f"in-process (transformers ≥ "
                                      f"{spec.min_transformers})")
        rows.append(f"| `{spec.id}` | {spec.family.value} · {spec.chat_format} | {modes} | "
                    f"{decoding_text(spec.decoding)} | {memory_text(spec)} | {engines} |")
    return "\n".join(rows)
