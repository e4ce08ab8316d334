"""The messages on the pipe between the engine process and its parent, one class each.

Both ends build and read them by field name (:mod:`~hunyuan_webui.engine.child` in the parent,
:mod:`~hunyuan_webui.engine.worker` in the child); a message of a type a side does not know is
refused, not read by position. They cross the pipe pickled, so they hold plain data only: an
error crosses as an :class:`ErrorPayload` and is raised again on the other side as the same
:mod:`hunyuan_webui.errors` class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.engine.base import EngineStatus


@dataclass(frozen=True)
class ErrorPayload:
    name: str  # the errors class's name
    message: str  # what the user is told
    attrs: dict[str, Any] = field(default_factory=dict)  # its plain attributes (a limit, a code)


# -- from the parent ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Submit:
    """Start one sequence per prompt; answered by a :class:`Reply` of their prompt lengths."""

    call: int
    keys: list[int]  # the streams' ids in :class:`Step` and :class:`Cancel`
    prompts: list[str]
    options: list[DecodingOptions]


@dataclass(frozen=True)
class Count:
    """Count ``text``'s tokens; answered by a :class:`Reply` of the count."""

    call: int
    text: str


@dataclass(frozen=True)
class Cancel:
    keys: list[int]


@dataclass(frozen=True)
class Close:
    pass


# -- from the child -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Reply:
    call: int
    value: Any = None
    error: ErrorPayload | None = None  # raised where the call was made, instead of a value


@dataclass(frozen=True)
class Delta:
    key: int
    text: str  # new since the last step
    completion_tokens: int


@dataclass(frozen=True)
class End:
    key: int
    reason: str  # the stream's finish reason ("stop", "length", "cancelled", "error")
    error: ErrorPayload | None
    completion_tokens: int
    first_token: bool  # whether it produced any token (for its time to first token)


@dataclass(frozen=True)
class Step:
    """What one scheduler pass changed: new text, and the streams that ended."""

    deltas: list[Delta]
    ends: list[End]


@dataclass(frozen=True)
class Beat:
    """The engine's status, twice a second: a silence means the process is hung."""

    status: EngineStatus
