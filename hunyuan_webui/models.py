"""The model registry: which checkpoints exist and what each one can do.

A table, not branches. Each entry names its prompt family (which wording of the prompts it was
trained on), the extra modes it supports and whether it ships pre-quantized. Special tokens and the
chat format are never recorded here: they come from each checkpoint's tokenizer.

A local directory is a model too, and so is a ``.gguf`` file (for llama.cpp). Its family and modes
are read from an optional ``hymt.json`` beside ``config.json`` (the demo model ships one) or beside
the file; without it, the directory name is matched against the known ids (a downloaded
``HY-MT1.5-1.8B`` folder gets the HY-MT1.5 prompts), else the Hunyuan-MT-7B family is assumed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from hunyuan_webui.errors import InputError
from hunyuan_webui.prompts import PromptFamily

TRANSLATE = "translate"
CHIMERA = "chimera"  # fuse candidates with the Chimera prompt
TERMINOLOGY = "terminology"
CONTEXT = "context"
FORMATTED = "formatted"


@dataclass(frozen=True)
class ModelSpec:
    id: str
    family: PromptFamily
    modes: frozenset[str] = field(default_factory=lambda: frozenset({TRANSLATE}))
    params_b: float = 7.5
    prequantized: str | None = None  # "fp8" or "gptq-int4": loaded as shipped
    runtime: str | None = None  # the pip package a pre-quantized checkpoint needs
    description: str = ""
    local_path: str | None = None

    @property
    def source(self) -> str:
        """What ``from_pretrained`` is given: the local directory or the hub id."""
        return self.local_path or self.id

    @property
    def public_id(self) -> str:
        """The name shown to users: the hub id, or a local checkpoint's directory name (never
        the path: that would tell every visitor where the server keeps its files)."""
        return Path(self.local_path).name if self.local_path else self.id

    def supports(self, mode: str) -> bool:
        return mode in self.modes


_MT = frozenset({TRANSLATE})
_CHIMERA = frozenset({TRANSLATE, CHIMERA})
_MT15 = frozenset({TRANSLATE, TERMINOLOGY, CONTEXT, FORMATTED})

REGISTRY: dict[str, ModelSpec] = {
    spec.id: spec
    for spec in (
        ModelSpec("tencent/Hunyuan-MT-7B", PromptFamily.HUNYUAN_MT, _MT,
                  description="Hunyuan-MT 7B, bf16 (default)"),
        ModelSpec("tencent/Hunyuan-MT-7B-fp8", PromptFamily.HUNYUAN_MT, _MT, prequantized="fp8",
                  runtime="compressed-tensors", description="Hunyuan-MT 7B, static FP8 W8A8"),
        ModelSpec("tencent/Hunyuan-MT-Chimera-7B", PromptFamily.HUNYUAN_MT, _CHIMERA,
                  description="Fuses up to 6 candidate translations into one"),
        ModelSpec("tencent/Hunyuan-MT-Chimera-7B-fp8", PromptFamily.HUNYUAN_MT, _CHIMERA,
                  prequantized="fp8", runtime="compressed-tensors",
                  description="Chimera 7B, static FP8"),
        ModelSpec("tencent/HY-MT1.5-7B", PromptFamily.HY_MT15, _MT15,
                  description="HY-MT1.5 7B: terminology, context and formatted prompts"),
        ModelSpec("tencent/HY-MT1.5-7B-FP8", PromptFamily.HY_MT15, _MT15, prequantized="fp8",
                  runtime="compressed-tensors", description="HY-MT1.5 7B, FP8"),
        ModelSpec("tencent/HY-MT1.5-1.8B", PromptFamily.HY_MT15, _MT15, params_b=1.8,
                  description="HY-MT1.5 1.8B: small enough for laptops"),
        ModelSpec("tencent/HY-MT1.5-1.8B-FP8", PromptFamily.HY_MT15, _MT15, params_b=1.8,
                  prequantized="fp8", runtime="compressed-tensors", description="HY-MT1.5 1.8B, FP8"),
        ModelSpec("tencent/HY-MT1.5-1.8B-GPTQ-Int4", PromptFamily.HY_MT15, _MT15, params_b=1.8,
                  prequantized="gptq-int4", runtime="gptqmodel",
                  description="HY-MT1.5 1.8B, GPTQ int4"),
    )
}
DEFAULT_MODEL = "tencent/Hunyuan-MT-7B"
SIDECAR = "hymt.json"


def resolve(name: str) -> ModelSpec:
    """The spec for a registry id or a local directory."""
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
    if path.is_file():
        base = replace(base, prequantized="gguf", runtime=None)
    sidecar = (path if path.is_dir() else path.parent) / SIDECAR
    if sidecar.is_file():
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
        base = replace(
            base,
            family=PromptFamily(meta.get("family", base.family)),
            modes=frozenset(meta.get("modes", base.modes)),
            params_b=float(meta.get("params_b", base.params_b)),
            description=meta.get("description", base.description),
        )
    return replace(base, id=str(path.resolve()), local_path=str(path.resolve()))


def _by_name(name: str) -> ModelSpec:
    """The registry entry whose id ends like ``name`` (case-insensitive), else Hunyuan-MT-7B's."""
    tail = name.rsplit("/", 1)[-1].lower()
    for spec in REGISTRY.values():
        if spec.id.rsplit("/", 1)[-1].lower() == tail:
            return spec
    if tail.startswith("hy-mt1.5"):
        return REGISTRY["tencent/HY-MT1.5-7B"]
    return REGISTRY[DEFAULT_MODEL]
