"""The JSON API's request bodies and the LibreTranslate parameters, as typed schemas.

The decoding defaults and bounds come from :class:`~hunyuan_webui.engine.DecodingOptions`; what the
schema cannot say (unknown option names, a bad combination) is left to it, whose errors list the
valid values.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.modes import MAX_ALTERNATIVES, MODE_HELP, MODES

MAX_LIST_ITEMS = 128


def _whole(value: Any) -> Any:
    """A JSON number like 20.0 is accepted where a whole number is expected."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


_DEFAULTS = DecodingOptions()
_LOW = {name: low for name, (low, _) in OPTION_BOUNDS.items()}
_HIGH = {name: high for name, (_, high) in OPTION_BOUNDS.items()}
_Whole = BeforeValidator(_whole)


REQUEST_FIELDS = ("mode", "context", "glossary", "variants")


class Options(BaseModel):
    """Decoding options; the defaults are the model card's. Unknown names are refused (400)."""

    model_config = ConfigDict(extra="allow")  # left to DecodingOptions, whose error lists the names

    deterministic: StrictBool = Field(False, description="Greedy decoding: same text, same answer.")
    temperature: float = Field(_DEFAULTS.temperature, ge=_LOW["temperature"],
                               le=_HIGH["temperature"], strict=True)
    top_p: float = Field(_DEFAULTS.top_p, ge=_LOW["top_p"], le=_HIGH["top_p"], strict=True)
    top_k: Annotated[StrictInt, _Whole] = Field(_DEFAULTS.top_k, ge=_LOW["top_k"],
                                                le=_HIGH["top_k"])
    repetition_penalty: float = Field(_DEFAULTS.repetition_penalty,
                                      ge=_LOW["repetition_penalty"],
                                      le=_HIGH["repetition_penalty"], strict=True)
    max_new_tokens: Annotated[StrictInt, Field(ge=_LOW["max_new_tokens"],
                                               le=_HIGH["max_new_tokens"]), _Whole] | None = Field(
        None, description="Cap on generated tokens per segment (default: from the input length).")
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1), _Whole] | None = Field(
        None, description="Makes sampling repeatable (torch.Generator's range).")
    # What to do rather than how to decode: the translation mode and its inputs.
    mode: Literal[MODES] | None = Field(  # type: ignore[valid-type]
        None, description="; ".join(f"{m}: {h}" for m, h in MODE_HELP.items()))
    context: StrictStr = Field("", max_length=5000,
                               description="context mode: surrounding text, not translated.")
    glossary: list[Annotated[list[StrictStr], Field(min_length=2, max_length=2)]] | dict[
        StrictStr, StrictStr] = Field(default_factory=list, description=(
            "Term pairs [[source, target], ...] or {source: target}; the answer reports which "
            "targets appear."))
    variants: StrictInt = Field(3, ge=1, le=MAX_ALTERNATIVES,
                                description="alternatives mode: how many translations.")

    def decoding(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True, exclude=set(REQUEST_FIELDS))


class TranslateBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: StrictStr | list[StrictStr] = Field(description="Text, or a list of texts.",
                                              examples=["今天天气很好。"])
    source_lang: StrictStr = Field("auto", description="Language code, or 'auto' to detect it.",
                                   examples=["auto", "zh"])
    target_lang: StrictStr = Field(description="Language code (see /v1/languages).",
                                   examples=["en"])
    options: Options = Field(default_factory=Options, examples=[{"deterministic": True}])
    mode: StrictStr = Field(TRANSLATE, description="Same as options.mode (kept for clients that "
                            "send it at the top level).")
    stream: StrictBool = Field(False, description="Answer with Server-Sent Events.")
    cache: StrictBool = Field(True, description=(
        "Answer repeated sentences from the phrase cache and share identical ones in flight "
        "(the default, whatever the decoding options). false: a fresh translation, which then "
        "replaces the cached one."))


class DetectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: StrictStr = Field(examples=["Where is the train station?"])


class ErrorBody(BaseModel):
    error: dict[str, str]


# LibreTranslate's parameters, read by hand (forms, JSON or query strings); documented here.
_LT_TEXT = {"type": "string", "examples": ["Where is the train station?"]}
LT_TRANSLATE_FIELDS: dict[str, Any] = {
    "q": {"anyOf": [_LT_TEXT, {"type": "array", "items": {"type": "string"}}]},
    "source": {"type": "string", "default": "auto", "examples": ["auto", "en"]},
    "target": {"type": "string", "examples": ["zh"]},
    "format": {"type": "string", "enum": ["text", "html"]},
    "api_key": {"type": "string"},
}
LT_DETECT_FIELDS: dict[str, Any] = {"q": _LT_TEXT, "api_key": {"type": "string"}}


def lt_body(fields: dict[str, Any]) -> dict[str, Any]:
    required = [name for name in ("q", "target") if name in fields]
    schema = {"type": "object", "properties": fields, "required": required}
    form = {**schema, "properties": {k: (_LT_TEXT if k == "q" else v) for k, v in fields.items()}}
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": schema},
        "application/x-www-form-urlencoded": {"schema": form}}}}
