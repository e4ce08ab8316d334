"""OpenAI's chat messages: the request schema and ``stop`` strings applied to streamed text. What
a message asks for (a translation, a tool's batch, generation from the folded conversation) is
the service's reading (:mod:`hunyuan_webui.service.operations.chat`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field

from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions
from hunyuan_webui.errors import InputError
from hunyuan_webui.service.operations.chat import fold

__all__ = ["ChatMessage", "ChatRequest", "CompletionRequest", "Sampling", "StopText", "fold"]
# OpenAI's temperature runs from 0 (greedy); ours starts where sampling still means something.
GREEDY_BELOW = OPTION_BOUNDS["temperature"][0]


# -- the request -----------------------------------------------------------------------------------
class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None

    def text(self) -> str:
        if self.content is None or isinstance(self.content, str):
            return self.content or ""
        if any(part.type != "text" for part in self.content):
            raise InputError("Only text content is supported (no images, audio or files).")
        return "".join(part.text or "" for part in self.content)


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class Sampling(BaseModel):
    """The fields chat and legacy completions share; others (user, metadata,
    presence_penalty...) are accepted and ignored."""

    model_config = ConfigDict(extra="allow")

    model: str = Field("", description="Any name: one model is served (see /v1/models).")
    stream: bool = False
    stream_options: StreamOptions | None = None
    temperature: float | None = Field(None, ge=0, le=2, description="0 = greedy (cached).")
    top_p: float | None = Field(None, ge=0, le=1)
    top_k: int | None = Field(None, description="vLLM's extra field.")
    repetition_penalty: float | None = Field(None, description="vLLM's extra field.")
    max_tokens: int | None = Field(None, ge=1, description="Per sentence for translations.")
    max_completion_tokens: int | None = Field(None, ge=1)
    seed: int | None = None
    n: int = Field(1, ge=1, le=1, description="One answer per request.")
    stop: str | list[str] | None = None
    logprobs: bool | None = None
    tools: list[Any] | None = None
    response_format: dict[str, Any] | None = None

    def decoding(self, defaults: DecodingOptions | None = None) -> DecodingOptions:
        """The model card's decoding (``defaults``: the loaded model's), changed where the request
        says otherwise."""
        if self.logprobs:
            raise InputError("logprobs are not supported.")
        if self.tools:
            raise InputError("Tools (function calling) are not supported.")
        if self.response_format and self.response_format.get("type", "text") != "text":
            raise InputError("Only the text response_format is supported.")
        values: dict[str, Any] = {}
        if self.temperature is not None:
            if self.temperature < GREEDY_BELOW:
                values["deterministic"] = True
            else:
                values["temperature"] = self.temperature
        if self.top_p is not None:
            values["top_p"] = max(self.top_p, OPTION_BOUNDS["top_p"][0])
        for name in ("top_k", "repetition_penalty", "seed"):
            if getattr(self, name) is not None:
                values[name] = getattr(self, name)
        cap = self.max_completion_tokens or self.max_tokens
        if cap is not None:  # tools ask for generous caps; the engine's own cap applies anyway
            values["max_new_tokens"] = min(cap, int(OPTION_BOUNDS["max_new_tokens"][1]))
        return DecodingOptions.from_mapping(values, defaults)  # the rest: the model's defaults

    def stops(self) -> list[str]:
        stops = [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
        return [s for s in stops if s]

    def tool_decoding(self, defaults: DecodingOptions | None = None) -> DecodingOptions:
        """:meth:`decoding` for a tool's translation request: greedy (and so cached) unless the
        request sets a temperature itself."""
        options = self.decoding(defaults)
        return options if self.temperature is not None else replace(options, deterministic=True)


class ChatRequest(Sampling):
    """OpenAI's chat completions request."""

    messages: list[ChatMessage] = Field(min_length=1, examples=[[{
        "role": "user", "content": "Translate the following segment into English, without "
        "additional explanation.\n\nBonjour."}]])
    translation_options: dict[str, Any] | None = Field(
        None, description="Qwen-MT's convention: source_lang, target_lang, terms, domains; the "
        "user message is then the text.")


class CompletionRequest(Sampling):
    """OpenAI's legacy completions request: one prompt (a list of one is accepted)."""

    prompt: str | list[str] = Field(examples=["Translate to German: Good morning."])
    echo: bool = False
    suffix: str | None = None
    translation_options: dict[str, Any] | None = None

    def text(self) -> str:
        if self.echo or self.suffix:
            raise InputError("echo and suffix are not supported.")
        if isinstance(self.prompt, list):
            if len(self.prompt) != 1:
                raise InputError("Send one prompt per request.")
            return unwrap(self.prompt[0])
        return unwrap(self.prompt)


# openai-translator's legacy-completions wrapping of its chat message (abstract-openai.ts).
_IM_WRAP = regex.compile(r"\s*<\|im_start\|>user\n(?P<body>.*?)\n?<\|im_end\|>\s*"
                         r"(?:<\|im_start\|>assistant\n?)?\s*", regex.S)


def unwrap(prompt: str) -> str:
    """A legacy prompt without a ChatML wrapper around one user message."""
    match = _IM_WRAP.fullmatch(prompt)
    return match["body"] if match else prompt


class StopText:
    """Cuts streamed text at the first stop string, holding back a tail that may start one."""

    def __init__(self, stops: list[str]) -> None:
        self.stops = stops
        self.held = ""
        self.stopped = False

    def feed(self, delta: str) -> str:
        if not self.stops:
            return delta
        if self.stopped:
            return ""
        text = self.held + delta
        found = [i for i in (text.find(s) for s in self.stops) if i >= 0]
        if found:
            self.stopped, self.held = True, ""
            return text[:min(found)]
        keep = next((k for k in range(min(len(text), max(map(len, self.stops)) - 1), 0, -1)
                     if any(s.startswith(text[-k:]) for s in self.stops)), 0)
        self.held = text[len(text) - keep:] if keep else ""
        return text[:len(text) - keep]

    def flush(self) -> str:
        held, self.held = ("" if self.stopped else self.held), ""
        return held


# -- the answer ------------------------------------------------------------------------------------
