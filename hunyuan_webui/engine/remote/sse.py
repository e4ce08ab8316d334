"""Reading a streamed ``/chat/completions`` answer: its server-sent-event lines, turned into text.

Each ``data:`` line is one JSON chunk (or ``[DONE]``); blank separators, ``event:`` lines and
``: keep-alive`` comments are skipped, and an ``error`` chunk ends the stream with an
:class:`~hunyuan_webui.errors.EngineError`. Every text delta counts as one token until the final
chunk's ``usage`` gives the server's own counts.

Streamed text goes through the same hygiene as local tokens (:class:`IncrementalText`): trailing
U+FFFD (half a character) and the last grapheme cluster are held back, a U+FFFD followed by more text
is dropped, leading whitespace is dropped and trailing whitespace held, so the chunks always
concatenate to exactly the final text. A model's ``<think>…</think>`` block (Hy-MT2-30B-A3B) is
removed from the stream (:class:`ReasoningFilter`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from hunyuan_webui.engine.base import Stream
from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter
from hunyuan_webui.errors import EngineError


@dataclass
class Outcome:
    """How one streamed answer ended, as far as its chunks said."""

    reason: str | None = None  # finish_reason from the server
    done: bool = False  # "[DONE]" seen
    usage: dict[str, Any] | None = None


class DeltaText:
    """Server text deltas in, always-valid chunks out (adapts :class:`IncrementalText`)."""

    def __init__(self, reasoning_tags: tuple[str, str] | None = None) -> None:
        self.deltas: list[str] = []  # delta i plays the part of token id i
        self._text: IncrementalText | ReasoningFilter = IncrementalText(
            lambda ids: "".join(self.deltas[i] for i in ids))
        if reasoning_tags:
            self._text = ReasoningFilter(self._text, reasoning_tags)

    @property
    def raw(self) -> str:
        return "".join(self.deltas)

    def add(self, delta: str) -> str:
        self.deltas.append(delta)
        return self._text.add(len(self.deltas) - 1)

    def finish(self) -> str:
        return self._text.finish()


def consume(line: str, stream: Stream, text: DeltaText, outcome: Outcome) -> int:
    """Handle one SSE line: push its text to ``stream``, note its ending in ``outcome`` (``done``
    at ``data: [DONE]``). Returns how many text chunks it carried (one token each, for now)."""
    if not line.startswith("data:"):
        return 0  # blank separators, "event:", ": keep-alive" comments
    data = line[5:].strip()
    if data == "[DONE]":
        outcome.done = True
        return 0
    event = json.loads(data)
    if "error" in event or event.get("object") == "error":
        error = event.get("error", event)
        message = error.get("message", error) if isinstance(error, dict) else error
        raise EngineError(f"The translation server failed while generating: {message}")
    if event.get("usage"):
        outcome.usage = event["usage"]
    chunks = 0
    for choice in event.get("choices") or []:
        # chat chunks carry a delta, /completions chunks (a prompt rendered here) their text
        delta = (choice.get("delta") or {}).get("content") or choice.get("text")
        if delta:
            if stream.usage.first_token_at is None:
                stream.usage.first_token_at = time.perf_counter()
            stream.usage.completion_tokens += 1  # one per chunk until the server's usage
            chunks += 1
            stream.push(text.add(delta))
        if choice.get("finish_reason"):
            outcome.reason = choice["finish_reason"]
    return chunks


def settle(stream: Stream, text: DeltaText, outcome: Outcome) -> int:
    """Push the text held back and take the server's token counts from ``outcome.usage``.

    Returns the change in completion tokens (the server's count minus the chunks counted)."""
    stream.push(text.finish())
    if not outcome.usage:
        return 0
    stream.usage.prompt_tokens = int(outcome.usage.get("prompt_tokens")
                                     or stream.usage.prompt_tokens)
    completion = outcome.usage.get("completion_tokens")
    if completion is None:
        return 0
    change = int(completion) - stream.usage.completion_tokens
    stream.usage.completion_tokens = int(completion)
    return change
