"""The JSON API's schemas: its request bodies, typed, and its error shape.

The decoding defaults and bounds come from :class:`~hunyuan_webui.engine.DecodingOptions`; what the
schema cannot say (unknown option names, a bad combination) is left to it, whose errors list the
valid values. Errors are the app's own shape, ``{"error": {"code", "message", "request_id"}}``
(:mod:`hunyuan_webui.web.responses` writes it for every route without a shape of its own).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from hunyuan_webui.engine import OPTION_BOUNDS
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.modes import MAX_ALTERNATIVES, MAX_STYLE_CHARS, MODE_HELP, MODES
from hunyuan_webui.structured import FORMATS


def _whole(value: Any) -> Any:
    """A JSON number like 20.0 is accepted where a whole number is expected."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


_LOW = {name: low for name, (low, _) in OPTION_BOUNDS.items()}
_HIGH = {name: high for name, (_, high) in OPTION_BOUNDS.items()}
_Whole = BeforeValidator(_whole)


REQUEST_FIELDS = ("mode", "context", "glossary", "variants", "style", "instructions",
                  "data_format")
_MODEL_DEFAULT = "Default: the loaded model's (its model card's; see GET /v1/model)."


class Options(BaseModel):
    """Decoding options; what is left out is the loaded model's default (its model card's).
    Unknown names are refused (400)."""

    model_config = ConfigDict(extra="allow")  # left to DecodingOptions, whose error lists the names

    deterministic: StrictBool = Field(False, description="Greedy decoding: same text, same answer.")
    # Left out, these are the model's; an explicit null is refused (the None default is never
    # validated and never reaches DecodingOptions: decoding() keeps only what was given).
    temperature: float = Field(None, ge=_LOW["temperature"], le=_HIGH["temperature"],  # type: ignore[assignment]
                               strict=True, description=_MODEL_DEFAULT)
    top_p: float = Field(None, ge=_LOW["top_p"], le=_HIGH["top_p"], strict=True,  # type: ignore[assignment]
                         description=_MODEL_DEFAULT)
    top_k: Annotated[StrictInt, _Whole] = Field(None, ge=_LOW["top_k"], le=_HIGH["top_k"],  # type: ignore[assignment]
                                                description="0: no top-k cut. " + _MODEL_DEFAULT)
    repetition_penalty: float = Field(None, ge=_LOW["repetition_penalty"],  # type: ignore[assignment]
                                      le=_HIGH["repetition_penalty"], strict=True,
                                      description=_MODEL_DEFAULT)
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
    style: StrictStr = Field("", max_length=MAX_STYLE_CHARS,
                             description="style mode: the style, in free text.")
    instructions: list[StrictStr] | StrictStr = Field(
        default_factory=list, description="instructions mode: your instructions, a list or one "
                                          "per line (the prompt numbers them).")
    data_format: Literal[tuple(FORMATS)] | None = Field(  # type: ignore[valid-type]
        None, description="structured mode: the data's format (default: detected).")

    def decoding(self) -> dict[str, Any]:
        """The decoding options the client gave (the rest are the model's defaults)."""
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
    previous: StrictStr | list[StrictStr] = Field("", description=(
        "The previous translation of this text (of each text, for a list), when it is a "
        "re-translation: a speech transcript that grew, text translated as it is typed, a "
        "corrected sentence. The model drafts from it (speculative decoding), which makes the "
        "answer faster where it repeats it; the answer itself is the same."),
        examples=["The weather"])


class DetectBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: StrictStr = Field(examples=["Where is the train station?"])


class ErrorBody(BaseModel):
    error: dict[str, str]
