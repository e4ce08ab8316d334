"""Decoding options: what one request asks of the sampler, and the bounds the page and the API
accept. The engines read them; the model registry records each model's own defaults as one."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from hunyuan_webui.errors import InputError

# Model card defaults and the bounds the UI sliders and the API accept.
OPTION_BOUNDS: dict[str, tuple[float, float]] = {
    "temperature": (0.05, 2.0),
    "top_p": (0.05, 1.0),
    "top_k": (0, 200),  # 0: no top-k cut (Hy-MT2-30B-A3B's card says -1, vLLM's spelling)
    "repetition_penalty": (1.0, 2.0),
    "max_new_tokens": (1, 4096),
}


@dataclass(frozen=True)
class DecodingOptions:
    """Decoding settings for one request; the defaults are the Hunyuan-MT / HY-MT1.5 / Hy-MT2
    (1.8B, 7B) model cards'. A model with other defaults carries its own (``ModelSpec.decoding``),
    and requests start from the loaded model's."""

    deterministic: bool = False
    temperature: float = 0.7
    top_p: float = 0.6
    top_k: int = 20
    repetition_penalty: float = 1.05
    max_new_tokens: int | None = None  # None: derived from the prompt length, capped by settings
    seed: int | None = None
    # Text the answer is likely to repeat in part (the previous translation of this text: a growing
    # speech draft, translate-as-you-type, a corrected sentence), set by the service: a source of
    # drafts for speculative decoding (hunyuan_webui.engine.drafts). It never changes the answer,
    # so it is no part of a cache key and no user option.
    draft: str = ""

    def __post_init__(self) -> None:
        for f in fields(self):
            if f.name not in OPTION_BOUNDS:
                continue
            value = getattr(self, f.name)
            if value is None and f.name == "max_new_tokens":
                continue
            low, high = OPTION_BOUNDS[f.name]
            if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
                raise InputError(f"Option {f.name} must be a number between {low:g} and {high:g}; "
                                 f"got {value!r}.")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)
                                      or not 0 <= self.seed < 2**63):
            raise InputError(f"Option seed must be an integer from 0 to 2**63-1; got {self.seed!r}.")
        if not isinstance(self.deterministic, bool):
            raise InputError("Option deterministic must be true or false.")
        if not isinstance(self.draft, str):
            raise InputError("A draft hint must be text.")

    @classmethod
    def from_mapping(cls, data: dict[str, Any] | None,
                     defaults: DecodingOptions | None = None) -> DecodingOptions:
        """Build from user input (API JSON, UI controls), rejecting unknown names with the list;
        what ``data`` leaves out comes from ``defaults`` (the loaded model's)."""
        data = dict(data or {})
        names = {f.name for f in fields(cls)} - NOT_OPTIONS
        unknown = sorted(set(data) - names)
        if unknown:
            raise InputError(f"Unknown option(s) {', '.join(unknown)}. Valid: {', '.join(sorted(names))}.")
        if "deterministic" in data and not isinstance(data["deterministic"], bool):
            raise InputError("Option deterministic must be true or false.")
        if isinstance(data.get("top_k"), float) and data["top_k"].is_integer():
            data["top_k"] = int(data["top_k"])
        if isinstance(data.get("max_new_tokens"), float) and data["max_new_tokens"].is_integer():
            data["max_new_tokens"] = int(data["max_new_tokens"])
        for name in ("top_k", "max_new_tokens"):
            if data.get(name) is not None and not isinstance(data[name], int):
                raise InputError(f"Option {name} must be an integer; got {data[name]!r}.")
        return cls(**{**(defaults or cls()).settings(), **data})

    def settings(self) -> dict[str, Any]:
        """The options a request sets (the draft hint left out)."""
        out = asdict(self)
        for name in NOT_OPTIONS:
            out.pop(name)
        return out

    def cache_fields(self) -> dict[str, Any]:
        """What makes two results interchangeable (the seed only matters when sampling)."""
        out = self.settings()
        if self.deterministic:
            for name in ("temperature", "top_p", "top_k", "seed"):
                out.pop(name)
        return out


NOT_OPTIONS = frozenset({"draft"})  # fields the service sets, never a request
GREEDY = DecodingOptions(deterministic=True)
