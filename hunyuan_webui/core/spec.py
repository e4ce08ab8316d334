"""What a checkpoint is, as the engines need to know it: :class:`ModelSpec`, the memory its weights
take, and whether this app's own transformers engine can run it.

The registry of known models (:mod:`hunyuan_webui.models`) is a table of these; the engines read
them without importing the registry. ``family`` holds a :class:`hunyuan_webui.prompts.PromptFamily`
(a ``str``) and ``modes`` the :class:`hunyuan_webui.models.Mode` values (also ``str``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hunyuan_webui.core import kinds
from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.errors import ModelLoadError

# The model cards' decoding: Hunyuan-MT, HY-MT1.5 and Hy-MT2 1.8B/7B (0.7 / 0.6 / 20 / 1.05), and
# Hy-MT2-30B-A3B's (0.7 / 1.0 / no top-k / no repetition penalty).
MODEL_CARD = DecodingOptions()
HY_V3_DECODING = DecodingOptions(temperature=0.7, top_p=1.0, top_k=0, repetition_penalty=1.0)

DENSE = ("transformers", kinds.VLLM, kinds.SGLANG)
GGUF = ("llama.cpp",)
ENGINE_NAMES = {"transformers": "this app (transformers)", kinds.VLLM: "vLLM",
                kinds.SGLANG: "SGLang", "llama.cpp": "llama.cpp"}
# How to serve a model with each external engine, and the --endpoint that reaches it.
SERVE = {
    kinds.VLLM: ("vllm serve {id}", "http://127.0.0.1:8000/v1"),
    kinds.SGLANG: ("python3 -m sglang.launch_server --model-path {id} --port 30000",
                   "http://127.0.0.1:30000/v1"),
    "llama.cpp": ("llama-server -hf {id} --jinja --port 8080", "http://127.0.0.1:8080/v1"),
}


@dataclass(frozen=True)
class ModelSpec:
    id: str
    family: str  # a hunyuan_webui.prompts.PromptFamily
    modes: frozenset[str] = field(default_factory=lambda: frozenset({"translate"}))
    params_b: float = 7.5
    prequantized: str | None = None  # "fp8", "gptq-int4", "gguf": loaded as shipped
    runtime: str | None = None  # the pip package a pre-quantized checkpoint needs
    description: str = ""
    local_path: str | None = None
    decoding: DecodingOptions = MODEL_CARD
    architecture: str = "hunyuan_v1_dense"  # config.json's model_type
    chat_format: str = "hunyuan-7b"  # hunyuan-7b, hy-1.8b or hy-v3 (see README)
    engines: tuple[str, ...] = DENSE
    min_transformers: str | None = None
    active_params_b: float | None = None  # mixture of experts: parameters used per token
    kv_kib_per_token: float | None = 128.0  # bf16 KV cache; None: not verified
    # A block the model may write before its answer, which never reaches the user.
    reasoning_tags: tuple[str, str] | None = None
    chat_template_kwargs: tuple[tuple[str, str], ...] = ()  # passed to apply_chat_template
    license: str = "Tencent Hunyuan Community"
    demo: bool = False  # a tiny model that knows only its phrase table

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



# -- memory ----------------------------------------------------------------------------------
# Bytes per parameter of the weights, for memory estimates in messages, the README and the launch
# choice. GGUF: llama.cpp's Q4_K_M (about 4.85 bits) and Q8_0 (8.5 bits).
BYTES_PER_PARAM = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0, "int8": 1.0, "int4": 0.5, "fp8": 1.0,
                   "gptq-int4": 0.5, "q4_k_m": 4.85 / 8, "q8_0": 8.5 / 8}
# bitsandbytes leaves the embeddings and lm_head in 16 bits: about 14% of the 7B model's parameters.
UNQUANTIZED_SHARE = 0.14


def estimate_weight_gib(params_b: float, dtype: str) -> float:
    """Approximate weight memory; the 8- and 4-bit formats of transformers keep embeddings and
    lm_head in 16 bits (GGUF quantizes them too)."""
    per_param = BYTES_PER_PARAM.get(dtype, 2.0)
    if per_param < 2.0 and dtype not in ("q4_k_m", "q8_0"):
        per_param = (1 - UNQUANTIZED_SHARE) * per_param + UNQUANTIZED_SHARE * 2.0
    return params_b * 1e9 * per_param / 2**30


# -- what can run a model ----------------------------------------------------------------------


def serve_hint(spec: ModelSpec) -> str:
    """How to run ``spec`` with each external engine that can, as commands to paste."""
    lines = []
    for engine in spec.engines:
        if engine in SERVE:
            command, endpoint = SERVE[engine]
            lines.append(f"{ENGINE_NAMES[engine]}: `{command.format(id=spec.id)}`, then `bash "
                         f"launch.sh --engine openai --endpoint {endpoint} --model {spec.id}`")
    return "; or ".join(lines)


def in_process_problem(spec: ModelSpec, transformers_version: str | None = None,
                       architectures: Any = None) -> str | None:
    """Why the installed transformers cannot run ``spec`` in this process, or None if it can.

    ``transformers_version`` and ``architectures`` (the model types it knows) default to the
    installed library's."""
    if "transformers" not in spec.engines:
        kind = f"a {spec.prequantized.upper()} build" if spec.prequantized else "this model"
        return f"{spec.id} is {kind}, which transformers does not run"
    if transformers_version is None:
        from importlib.metadata import version

        transformers_version = version("transformers")
    if spec.min_transformers and _version(transformers_version) < _version(spec.min_transformers):
        return (f"{spec.id} needs transformers >= {spec.min_transformers} and this install has "
                f"{transformers_version}")
    if architectures is None:
        from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

        architectures = CONFIG_MAPPING_NAMES
    if spec.architecture not in architectures:
        return (f"{spec.id} (model type {spec.architecture}) is not known to transformers "
                f"{transformers_version}")
    return None


def check_in_process(spec: ModelSpec, **probe: Any) -> None:
    """Raise a :class:`ModelLoadError` naming the engines that can run ``spec`` when this app's
    own engine cannot."""
    problem = in_process_problem(spec, **probe)
    if problem is None:
        return
    others = [ENGINE_NAMES[e] for e in spec.engines if e != "transformers"]
    hint = serve_hint(spec)
    raise ModelLoadError(
        f"{problem}. Engines that can run it: {', '.join(others) or 'none known'}."
        + (f" {hint}." if hint else ""))


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
