"""Load a checkpoint once: pick the device and precision, and explain every failure.

The same ``from_pretrained`` path serves the 7B model from the hub cache, a local directory and
the bundled demo model. Each failure becomes a :class:`ModelLoadError` whose message says what was
tried and what to do next (``--model PATH``, ``--dtype int4``, ``--demo``), never a bare traceback.
"""

from __future__ import annotations

import importlib.util
import logging
import os
from dataclasses import dataclass
from typing import Any

import torch

from hunyuan_webui.core.spec import ModelSpec, check_in_process, estimate_weight_gib
from hunyuan_webui.engine.cpu import tune_linears
from hunyuan_webui.engine.decode import DecodeStep, decode_step
from hunyuan_webui.errors import ModelLoadError

__all__ = ["LoadedModel", "estimate_weight_gib", "load", "pick_device", "resolve_dtype"]

log = logging.getLogger(__name__)

_TORCH_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


@dataclass
class LoadedModel:
    model: Any
    tokenizer: Any
    device: torch.device
    dtype: str  # what was actually used: bf16, fp16, fp32, int8, int4, fp8, gptq-int4
    compute_dtype: torch.dtype
    eos_token_ids: frozenset[int]
    # A batched decoding step without transformers' per-call machinery, where it is exact
    # (:mod:`hunyuan_webui.engine.decode`); None: the model's forward decodes.
    decode: DecodeStep | None = None

    def next_logits(self, inputs: dict[str, Any]) -> torch.Tensor:
        """The logits ``[rows, vocab]`` of one decoding step (``Batch.step_inputs()``)."""
        if self.decode is not None:
            return self.decode(inputs)[:, -1, :]
        return self.model(**inputs).logits[:, -1, :]


def pick_device(requested: str = "auto") -> torch.device:
    if requested == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError("--device cuda was asked for, but PyTorch sees no CUDA GPU. "
                             "Install the CUDA build of torch (see README) or use --device cpu.")
    if requested == "mps" and not torch.backends.mps.is_available():
        raise ModelLoadError("--device mps was asked for, but MPS is not available here.")
    if requested != "auto":
        return torch.device(requested)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def resolve_dtype(requested: str, device: torch.device) -> tuple[str, torch.dtype]:
    """The precision name actually used and the dtype activations are computed in."""
    if device.type == "cuda":
        float_name = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
    elif device.type == "mps":
        float_name = "fp16"
    else:
        float_name = "fp32"
    if requested == "auto":
        return float_name, _TORCH_DTYPES[float_name]
    if requested in _TORCH_DTYPES:
        if requested == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
            raise ModelLoadError("This GPU does not support bf16. Use --dtype fp16 (or auto).")
        return requested, _TORCH_DTYPES[requested]
    # int8 / int4 quantize weights; activations stay in the float dtype of the device, except
    # that LLM.int8 on a GPU computes in fp16 (its kernels cast every other dtype to fp16 first).
    if requested == "int8" and device.type == "cuda":
        return requested, torch.float16
    return requested, _TORCH_DTYPES[float_name]


class _Once(logging.Filter):
    """Lets each message of a logger through once: bitsandbytes logs "MatMul8bitLt: inputs will
    be cast from torch.float32 to float16" on every int8 matrix product of a CPU model, tens of
    thousands of lines per translation."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        first = record.msg not in self.seen
        self.seen.add(str(record.msg))
        return first


def _quiet_int8_casts() -> None:
    logger = logging.getLogger("bitsandbytes.autograd._functions")
    if not any(isinstance(f, _Once) for f in logger.filters):
        logger.addFilter(_Once())


def _quantization_config(dtype: str, compute: torch.dtype) -> Any:
    if dtype not in ("int8", "int4"):
        return None
    if importlib.util.find_spec("bitsandbytes") is None:
        raise ModelLoadError(f"--dtype {dtype} needs the bitsandbytes package: "
                             "pip install bitsandbytes (or choose --dtype auto).")
    from transformers import BitsAndBytesConfig

    if dtype == "int8":
        _quiet_int8_casts()
        return BitsAndBytesConfig(load_in_8bit=True)
    return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                              bnb_4bit_compute_dtype=compute, bnb_4bit_use_double_quant=True)


def _prequantized_config(spec: ModelSpec) -> Any:
    """Config of a pre-quantized checkpoint, patched where transformers needs it."""
    if spec.runtime and importlib.util.find_spec(spec.runtime.replace("-", "_")) is None:
        raise ModelLoadError(
            f"{spec.id} ships {spec.prequantized} weights and needs the {spec.runtime} package: "
            f"pip install {spec.runtime}. Or load the bf16 model with --dtype int8/int4.")
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(spec.source)
    quant = getattr(config, "quantization_config", None)
    # Tencent's FP8 configs name the skipped layers `ignored_layers`; compressed-tensors reads `ignore`.
    if isinstance(quant, dict) and "ignored_layers" in quant and "ignore" not in quant:
        quant["ignore"] = quant.pop("ignored_layers")
    return config


def load(spec: ModelSpec, dtype: str = "auto", device: str = "auto") -> LoadedModel:
    """Load tokenizer and weights; raise :class:`ModelLoadError` with advice on any failure."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    check_in_process(spec)
    dev = pick_device(device)
    if spec.prequantized and dtype in ("int8", "int4"):
        raise ModelLoadError(f"{spec.id} is already quantized ({spec.prequantized}); "
                             f"leave --dtype at auto.")
    name, compute = resolve_dtype(dtype, dev)
    quant = _quantization_config(name, compute)
    kwargs: dict[str, Any] = {"dtype": compute}
    if spec.prequantized:
        kwargs["config"] = _prequantized_config(spec)
        name = spec.prequantized
    if quant is not None:
        kwargs["quantization_config"] = quant
    if dev.type == "cuda":
        # Several GPUs: accelerate spreads the layers; one GPU: everything on it.
        kwargs["device_map"] = "auto" if torch.cuda.device_count() > 1 else {"": dev.index or 0}
    elif quant is not None:
        kwargs["device_map"] = {"": "cpu"}

    offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    try:
        tokenizer = AutoTokenizer.from_pretrained(spec.source)
        model = AutoModelForCausalLM.from_pretrained(spec.source, **kwargs)
    except ModelLoadError:
        raise
    except torch.OutOfMemoryError as exc:
        need = estimate_weight_gib(spec.params_b, name)
        raise ModelLoadError(
            f"Not enough memory to load {spec.id} in {name} (the weights alone need about "
            f"{need:.1f} GiB). Try --dtype int4 or int8, a smaller model "
            f"(--model tencent/HY-MT1.5-1.8B), or --demo.") from exc
    except (OSError, ValueError) as exc:
        where = "offline (HF_HUB_OFFLINE is set)" if offline else "locally or on the hub"
        raise ModelLoadError(
            f"Could not load {spec.id!r} {where}: {_first_line(exc)}. "
            f"Download it first (hf download {spec.id}), pass a local checkpoint "
            f"with --model PATH, or try the bundled model with --demo.") from exc
    except ImportError as exc:
        raise ModelLoadError(f"Loading {spec.id} needs a package that is missing: "
                             f"{_first_line(exc)}") from exc
    except RuntimeError as exc:
        if "out of memory" in str(exc).lower():
            need = estimate_weight_gib(spec.params_b, name)
            raise ModelLoadError(
                f"Not enough memory to load {spec.id} in {name} (about {need:.1f} GiB of weights)."
                f" Try --dtype int4 or int8, a smaller model, or --demo.") from exc
        raise ModelLoadError(f"Loading {spec.id} failed: {_first_line(exc)}") from exc

    if quant is None and "device_map" not in kwargs:
        model.to(dev)
    model.eval()
    fp32_cpu = dev.type == "cpu" and quant is None and compute == torch.float32
    decode = _tune_for_cpu(model) if fp32_cpu else None
    return LoadedModel(model=model, tokenizer=tokenizer, device=_input_device(model, dev),
                       dtype=name, compute_dtype=compute, eos_token_ids=_eos_ids(model, tokenizer),
                       decode=decode)


def _tune_for_cpu(model: Any) -> DecodeStep | None:
    """fp32 on a CPU: the faster multiplies, and the direct decoding step where it is exact."""
    log.info("CPU matrix multiplies: %s", tune_linears(model))
    decode = decode_step(model)
    log.info("batched decoding steps: %s", "direct (checked equal to the model's forward)"
             if decode is not None else "the model's forward")
    return decode


def _input_device(model: Any, fallback: torch.device) -> torch.device:
    try:
        return model.get_input_embeddings().weight.device
    except AttributeError:
        return fallback


def _eos_ids(model: Any, tokenizer: Any) -> frozenset[int]:
    """Stop tokens: the generation config's and the tokenizer's, never hard-coded strings."""
    ids: set[int] = set()
    config_eos = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in (config_eos, tokenizer.eos_token_id):
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list | tuple):
            ids.update(int(v) for v in value)
    if not ids:
        raise ModelLoadError("The checkpoint defines no end-of-sequence token; cannot stop decoding.")
    return frozenset(ids)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
