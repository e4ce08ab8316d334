"""OpenAI's schemas: the chat and legacy completions requests, the answers' shapes (a completion,
a streamed chunk) and OpenAI's error shape, ``{"error": {"message", "type", "param", "code"}}``,
which every error of these routes takes (:data:`OpenAIRoute`)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Literal

import regex
from pydantic import BaseModel, ConfigDict, Field

from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions
from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.web.responses import ShapedErrorRoute

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
        asked = self.max_completion_tokens or self.max_tokens
        if asked is not None:  # tools ask generously; the engine's own --max-new-tokens applies
            values["max_new_tokens"] = min(asked, int(OPTION_BOUNDS["max_new_tokens"][1]))
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


# -- the answer ------------------------------------------------------------------------------------


# -- the answer ------------------------------------------------------------------------------------
class Answer:
    """The fields every chunk and the whole answer share."""

    def __init__(self, model: str, redact: Callable[[str], str] = str) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.model = model
        self.redact = redact  # an error's text, with a local model path named, not located

    def completion(self, text: str, finish: str, usage: dict[str, int],
                   **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion", "created": self.created,
                "model": self.model, "choices": [{
                    "index": 0, "message": {"role": "assistant", "content": text},
                    "logprobs": None, "finish_reason": finish}],
                "usage": usage, **extra}

    def chunk(self, delta: dict[str, Any] | None, finish: str | None = None,
              **extra: Any) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "logprobs": None,
                                             "finish_reason": finish}]
        return data({"id": self.id, "object": "chat.completion.chunk", "created": self.created,
                      "model": self.model, "choices": choices, **extra})


class TextAnswer(Answer):
    """The legacy completions' shape: ``text_completion`` objects with ``choices[].text``."""

    def __init__(self, model: str, redact: Callable[[str], str] = str) -> None:
        super().__init__(model, redact)
        self.id = f"cmpl-{uuid.uuid4().hex[:24]}"

    def completion(self, text: str, finish: str, usage: dict[str, int],
                   **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "text_completion", "created": self.created,
                "model": self.model, "choices": [{
                    "index": 0, "text": text, "logprobs": None, "finish_reason": finish}],
                "usage": usage, **extra}

    def chunk(self, delta: dict[str, Any] | None, finish: str | None = None,
              **extra: Any) -> str:
        choices = [] if delta is None else [{"index": 0, "text": delta.get("content", ""),
                                             "logprobs": None, "finish_reason": finish}]
        return data({"id": self.id, "object": "text_completion", "created": self.created,
                      "model": self.model, "choices": choices, **extra})


def data(payload: dict[str, Any] | str) -> str:
    text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {text}\n\n"


def error_body(status: int, message: str, code: str) -> dict[str, Any]:
    kind = "invalid_request_error"
    if status == 401:
        code = "invalid_api_key"
    elif status == 429:
        kind, code = "requests", "rate_limit_exceeded"
    elif status >= 500:
        kind = "server_error"
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """OpenAI's error object, for a refusal made before the route runs (the Gatekeeper)."""
    return exc.http_status, error_body(exc.http_status, exc.user_message, exc.code)


# Every error of these routes in OpenAI's shape, whatever raised it (a dependency, the body's
# validation or the translator).
OpenAIRoute = ShapedErrorRoute.shaped("OpenAIRoute", error_shape, validation=True)


class ModelNotFoundError(TranslatorError):
    code = "model_not_found"
    http_status = 404
