"""What every engine shares: decoding options, the stream a request returns, and the interface.

An engine turns *user messages* (prompt text from :mod:`hunyuan_webui.prompts`) into streamed text.
It knows nothing of languages, caches, Gradio or HTTP. The one streaming primitive is
:meth:`Engine.submit`: it admits a group of prompts at once (so they batch) and returns one
:class:`Stream` per prompt. A whole translation is ``stream.result()``, derived from the stream.

A :class:`Stream` is fed by the engine's own thread and read by either a worker thread (Gradio's
sync generators) or an event loop (the HTTP API), so it supports both ``for`` and ``async for``.
``cancel()`` (or closing the consumer) frees the sequence's batch slot at the next decoding step.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from hunyuan_webui.core.decoding import GREEDY as GREEDY  # the engines' users find them here too
from hunyuan_webui.core.decoding import OPTION_BOUNDS as OPTION_BOUNDS
from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.errors import CancelledError, TranslatorError

log = logging.getLogger(__name__)


class EngineState(StrEnum):
    """Where an engine is in its life. A READY engine that is computing is shown as "busy"
    (:attr:`EngineStatus.label`), but it is still ready: busy is load, not a state change."""

    LOADING = "loading"
    WARMING = "warming"
    READY = "ready"
    RESTARTING = "restarting"  # its process died or hung; a new one is on its way
    UNRESPONSIVE = "unresponsive"  # its process's heartbeat is late: hung, or about to answer
    FAILED = "failed"
    STOPPED = "stopped"


@dataclass
class EngineStatus:
    state: EngineState
    model: str
    device: str = ""
    dtype: str = ""
    reason: str = ""
    active: int = 0  # sequences in the running batch
    queued: int = 0  # sequences waiting for a slot
    max_batch_size: int = 0
    tokens_generated: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ready(self) -> bool:
        return self.state is EngineState.READY

    @property
    def label(self) -> str:
        """What people are shown: the state, with "busy" for a ready engine that is computing."""
        if self.state is EngineState.READY and (self.active or self.queued):
            return "busy"
        return str(self.state)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["state"] = self.label
        out["ready"] = self.ready
        return out


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    submitted_at: float = field(default_factory=time.perf_counter)
    first_token_at: float | None = None
    finished_at: float | None = None

    @property
    def first_token_s(self) -> float | None:
        return None if self.first_token_at is None else self.first_token_at - self.submitted_at

    @property
    def latency_s(self) -> float | None:
        return None if self.finished_at is None else self.finished_at - self.submitted_at

    @property
    def tokens_per_s(self) -> float | None:
        if self.first_token_at is None or self.finished_at is None or self.completion_tokens < 2:
            return None
        span = self.finished_at - self.first_token_at
        return (self.completion_tokens - 1) / span if span > 0 else None


class Stream:
    """The text of one sequence as it is generated; any number of readers, threads or event loops.

    Each reader keeps its own position, so identical requests can share one sequence. When the
    last reader leaves before the end (closed tab, Stop button), the sequence is cancelled and the
    engine frees its batch slot at the next step.
    """

    def __init__(self, prompt: str, options: DecodingOptions) -> None:
        self.prompt = prompt
        self.options = options
        self.usage = Usage()
        self.finish_reason: str | None = None  # "stop", "length", "cancelled", "error"
        self.error: BaseException | None = None
        self._chunks: list[str] = []
        self._cond = threading.Condition()
        self._loops: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._callbacks: list[Callable[[Stream], None]] = []
        self._cancelled = threading.Event()
        self._ending = False  # finish() has begun: no second end
        self._finished = False  # readers see the end only after the observers ran
        self._readers = 0
        self._abandoned = False  # its last reader left: cancelled, no reader may join

    # -- producer side (the engine) -------------------------------------------------------------
    def push(self, delta: str) -> None:
        if delta:
            with self._cond:
                self._chunks.append(delta)
            self._wake()

    def finish(self, reason: str, error: BaseException | None = None) -> None:
        with self._cond:
            if self._ending:
                return
            self._ending = True
            self.finish_reason = reason
            self.error = error
            self.usage.finished_at = time.perf_counter()
            callbacks, self._callbacks = self._callbacks, []
        # Observers first (the cache write), so a reader that sees the end finds their work done.
        for callback in callbacks:
            self._call(callback)
        with self._cond:
            self._finished = True
            late, self._callbacks = self._callbacks, []
        for callback in late:
            self._call(callback)
        self._wake()

    def _call(self, callback: Callable[[Stream], None]) -> None:
        try:
            callback(self)
        except Exception:  # a failing observer (cache write) must not break decoding
            log.exception("stream callback failed")

    def add_done_callback(self, callback: Callable[[Stream], None]) -> None:
        """Run ``callback(stream)`` when the stream ends (at once if it already has)."""
        with self._cond:
            if not self._finished:
                self._callbacks.append(callback)
                return
        callback(self)

    def _wake(self) -> None:
        with self._cond:
            self._cond.notify_all()
            loops = list(self._loops)
        for loop, event in loops:
            with contextlib.suppress(RuntimeError):  # that reader's event loop is closed
                loop.call_soon_threadsafe(event.set)

    # -- reader side ------------------------------------------------------------------------------
    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    @property
    def joinable(self) -> bool:
        """Whether a reader may still join it: neither cancelled nor left by its last reader."""
        with self._cond:
            return not (self._abandoned or self._cancelled.is_set())

    @property
    def done(self) -> bool:
        return self._finished

    @property
    def text(self) -> str:
        """Text generated so far (all of it once the stream has ended)."""
        with self._cond:
            return "".join(self._chunks)

    def cancel(self) -> None:
        """Stop generating for every reader; the engine frees the slot at its next step."""
        self._cancelled.set()
        self._wake()

    def attach(self) -> bool:
        """A reader joins; False (and it has not joined) once the sequence is cancelled. A reader
        that joins a shared sequence must check this: the last reader may have left it a moment
        before, and a cancelled sequence ends short, looking like a whole answer."""
        with self._cond:
            if self._abandoned or self._cancelled.is_set():
                return False
            self._readers += 1
            return True

    def detach(self) -> None:
        """A reader leaves; the last one to leave before the end cancels the sequence (marked
        under the readers' lock, so that no reader joins it between the count and the cancel)."""
        with self._cond:
            self._readers -= 1
            last = self._readers <= 0 and not self._finished
            if last:
                self._abandoned = True
        if last:
            self.cancel()

    def raise_if_failed(self) -> None:
        """After the end: raise the user-facing error if the sequence failed."""
        if self.finish_reason == "error":
            if isinstance(self.error, TranslatorError):
                raise self.error
            raise TranslatorError(f"Generation failed: {self.error}") from self.error
        if self.finish_reason == "cancelled" and not self.cancelled:
            raise CancelledError("The request was cancelled by the server.")

    def read(self, position: int, timeout: float | None = None) -> tuple[list[str], bool]:
        """Chunks after ``position`` (waiting up to ``timeout`` for some) and whether it ended."""
        with self._cond:
            if timeout != 0 and position == len(self._chunks) and not self._finished:
                self._cond.wait(timeout)
            return self._chunks[position:], self._finished

    def follow(self, timeout: float | None = None,
               stop: Callable[[], bool] | None = None) -> Iterator[str]:
        """The one reading loop: every chunk from the start, in order, waiting up to ``timeout``
        for each read (None: until something comes); an empty string whenever a read brought
        nothing, so the reader may wait its own way or give up. Ends at the stream's end (raising
        its error, if it failed) or, before the next read, once ``stop()`` is true. It does not
        attach: the caller decides whether it is a reader that keeps the sequence alive."""
        position = 0
        while stop is None or not stop():
            new, finished = self.read(position, timeout)
            position += len(new)
            yield from new
            if finished and not self.read(position, timeout=0)[0]:
                self.raise_if_failed()
                return
            if not new:
                yield ""

    def __iter__(self) -> Iterator[str]:
        attached = self.attach()
        try:
            yield from (chunk for chunk in self.follow() if chunk)
        finally:
            if attached:
                self.detach()

    async def __aiter__(self) -> AsyncIterator[str]:
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        with self._cond:
            self._loops.append((loop, event))
        attached = self.attach()
        reader = self.follow(timeout=0)
        try:
            while True:
                event.clear()  # before the read: a chunk pushed after it sets the event again
                chunk = next(reader, None)
                if chunk is None:
                    return
                if chunk:
                    yield chunk
                else:
                    await event.wait()
        finally:
            reader.close()
            with self._cond:
                self._loops = [(lp, ev) for lp, ev in self._loops if ev is not event]
            if attached:
                self.detach()

    def result(self) -> str:
        """Block until the end and return the whole text."""
        for _ in self:
            pass
        return self.text


class Engine(ABC):
    """Generates text for user messages; one instance per (model, precision) per process."""

    model_id: str

    @abstractmethod
    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        """Admit ``prompts`` together (so they can share batches); one stream each.

        ``options`` applies to every prompt, or is a sequence with one entry per prompt.

        Raises :class:`~hunyuan_webui.errors.BusyError` when the queue is full and
        :class:`~hunyuan_webui.errors.NotReadyError` before the model is ready.
        """

    def stream(self, prompt: str, options: DecodingOptions) -> Stream:
        return self.submit([prompt], options)[0]

    def generate(self, prompt: str, options: DecodingOptions) -> str:
        return self.stream(prompt, options).result()

    @abstractmethod
    def status(self) -> EngineStatus: ...

    @abstractmethod
    def count_tokens(self, text: str) -> int: ...

    def wait_ready(self, timeout: float | None = None) -> EngineStatus:
        """Block until loading and warm-up (or a restart) end; returns the final status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status()
            if status.state not in (EngineState.LOADING, EngineState.WARMING,
                                    EngineState.RESTARTING, EngineState.UNRESPONSIVE):
                return status
            if deadline is not None and time.monotonic() > deadline:
                return status
            time.sleep(0.05)

    def close(self) -> None:  # noqa: B027 - optional hook
        pass


def options_per_prompt(prompts: Sequence[str],
                       options: DecodingOptions | Sequence[DecodingOptions]) -> list[DecodingOptions]:
    """One options object per prompt, whichever form ``submit`` was given."""
    if isinstance(options, DecodingOptions):
        return [options] * len(prompts)
    options = list(options)
    if len(options) != len(prompts):
        raise ValueError(f"{len(prompts)} prompts but {len(options)} options")
    return options
