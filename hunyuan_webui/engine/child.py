"""The parent's handle on one engine child process: the pipe, the streams and calls it has in
hand, and the heartbeat it last sent (see :mod:`hunyuan_webui.engine.process` for the protocol).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any

from hunyuan_webui import errors
from hunyuan_webui.core import kinds
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import DecodingOptions, EngineState, EngineStatus, Stream
from hunyuan_webui.engine.messages import (
    Beat,
    Cancel,
    Close,
    Count,
    Delta,
    End,
    Reply,
    Step,
    Submit,
)
from hunyuan_webui.engine.restarts import SHUTTING_DOWN
from hunyuan_webui.engine.worker import child_main, log_settings, rebuild_error

CALL_TIMEOUT_S = 30.0
START_TIMEOUT_S = 900.0  # a new child's first heartbeat (imports, before loading starts)


class ChildStream(Stream):
    """A stream whose cancellation is also sent to the child generating it."""

    def __init__(self, prompt: str, options: DecodingOptions, child: Child, key: int) -> None:
        super().__init__(prompt, options)
        self._child, self._key = child, key

    def cancel(self) -> None:
        already = self.cancelled
        super().cancel()
        if not already and not self.done:
            self._child.send_quietly(Cancel([self._key]))


class Child:
    """One engine process, the pipe to it, and the streams and calls it has in hand.

    Locking: ``lock`` guards ``streams``, ``calls`` and the heartbeat fields; ``send_lock`` only
    orders writes to the pipe. Neither is held while a stream is fed or finished (observers run
    then) nor while waiting for a reply.
    """

    def __init__(self, spec: ModelSpec, engine_kwargs: dict[str, Any],
                 runner: str = kinds.PROCESS) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child_end = context.Pipe()
        self.process = context.Process(
            target=child_main, args=(child_end, spec, engine_kwargs, log_settings(), runner),
            name="hymt-engine", daemon=True)
        self.process.start()
        child_end.close()
        self.started_at = time.monotonic()
        self.send_lock = threading.Lock()
        self.lock = threading.Lock()
        self.streams: dict[int, Stream] = {}
        self.calls: dict[int, Future[Any]] = {}
        self.keys = itertools.count()
        self.beat: EngineStatus | None = None
        self.beat_at: float | None = None
        self.closing = False
        self.death_note = ""  # why the supervisor killed it, when it did
        self.dead = ""  # the message its streams and callers get once it is gone
        self.exited = threading.Event()
        self.receiver = threading.Thread(target=self._receive, name="hymt-engine-pipe",
                                         daemon=True)
        self.receiver.start()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    # -- requests -------------------------------------------------------------------------------
    def submit(self, prompts: Sequence[str], per_prompt: list[DecodingOptions]) -> list[Stream]:
        keys = [next(self.keys) for _ in prompts]
        streams = [ChildStream(p, o, self, k) for p, o, k in zip(prompts, per_prompt, keys)]
        with self.lock:
            self.streams.update(zip(keys, streams))
        try:
            prompt_tokens = self.call(lambda call: Submit(call, keys, list(prompts),
                                                          list(per_prompt)))
        except BaseException:
            with self.lock:
                for key in keys:
                    self.streams.pop(key, None)
            self.send_quietly(Cancel(keys))  # admitted after all (a timeout)?
            raise
        for stream, count in zip(streams, prompt_tokens):
            stream.usage.prompt_tokens = count
        return streams

    def count(self, text: str) -> int:
        return int(self.call(lambda call: Count(call, text)))

    def call(self, message: Callable[[int], Submit | Count],
             timeout: float = CALL_TIMEOUT_S) -> Any:
        """Sends ``message(call)`` and waits for the child's :class:`Reply` to that call."""
        if self.dead:
            raise errors.EngineError(self.dead)
        future: Future[Any] = Future()
        key = next(self.keys)
        with self.lock:
            self.calls[key] = future
        try:
            self.send(message(key))
            return future.result(timeout=timeout)
        except TimeoutError:  # before OSError, which it subclasses: the child is alive but slow
            raise errors.EngineError(f"The engine process did not answer within {timeout:g}s; "
                                     "please try again.") from None
        except (OSError, ValueError):  # the pipe is closed: the child is gone
            raise errors.EngineError(self.dead or "The engine process has stopped.") from None
        finally:
            with self.lock:
                self.calls.pop(key, None)

    def send(self, message: Submit | Count | Cancel | Close) -> None:
        with self.send_lock:
            self.conn.send(message)

    def send_quietly(self, message: Cancel | Close) -> None:
        with contextlib.suppress(OSError, ValueError):  # the child is gone: nothing runs there
            self.send(message)

    # -- health ---------------------------------------------------------------------------------
    def last_status(self) -> tuple[EngineStatus | None, float | None]:
        with self.lock:
            return self.beat, self.beat_at

    def problem(self, beat_timeout: float, stall_timeout: float) -> str:
        """Why this child needs replacing ("" if it does not)."""
        if self.exited.is_set():
            return self.death_note or exit_words(self.process.exitcode)
        now = time.monotonic()
        beat, beat_at = self.last_status()
        if beat_at is None:
            if now - self.started_at > START_TIMEOUT_S:
                return f"did not start within {START_TIMEOUT_S:g}s"
            return ""
        if beat is not None and beat.state is EngineState.FAILED:
            return ""  # a failed load: reported as such, not restarted
        if now - beat_at > beat_timeout:
            return f"stopped answering (no heartbeat for {now - beat_at:.0f}s)"
        in_pass = beat.extra.get("stalled_s", 0.0) if beat is not None else 0.0
        if in_pass and in_pass + now - beat_at > stall_timeout:  # one scheduler pass, this long
            return f"was stuck in one decoding step for {in_pass + now - beat_at:.0f}s"
        return ""

    def kill(self, note: str) -> None:
        self.death_note = note
        with contextlib.suppress(OSError):
            self.process.kill()

    def close(self) -> None:
        self.closing = True
        self.send_quietly(Close())
        self.process.join(timeout=15)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()
        self.receiver.join(timeout=5)

    # -- the receiving thread -------------------------------------------------------------------
    def _receive(self) -> None:
        try:
            while True:
                message = self.conn.recv()
                if isinstance(message, Step):
                    self._apply_step(message.deltas, message.ends)
                elif isinstance(message, Beat):
                    with self.lock:
                        self.beat, self.beat_at = message.status, time.monotonic()
                elif isinstance(message, Reply):
                    self._reply(message)
        except (EOFError, OSError):
            pass
        self.process.join(timeout=2)
        self._end_all()

    def _reply(self, reply: Reply) -> None:
        with self.lock:
            future = self.calls.get(reply.call)
        if future is not None:
            if reply.error is None:
                future.set_result(reply.value)
            else:
                future.set_exception(rebuild_error(reply.error))

    def _end_all(self) -> None:
        """The child is gone: end its streams and calls with a message that says what happened."""
        if self.closing:
            self.dead = SHUTTING_DOWN
        else:
            self.dead = (f"The engine process {self.death_note or exit_words(self.process.exitcode)}"
                         " while this was being translated. It is being restarted; please try "
                         "again in a few seconds.")
        with self.lock:
            streams, self.streams = list(self.streams.values()), {}
            calls, self.calls = list(self.calls.values()), {}
        for stream in streams:
            if not stream.done:
                stream.finish("cancelled" if self.closing else "error",
                              None if self.closing else errors.EngineError(self.dead))
        for future in calls:
            future.set_exception(errors.EngineError(self.dead))
        self.exited.set()

    def _apply_step(self, deltas: list[Delta], ends: list[End]) -> None:
        now = time.perf_counter()
        with self.lock:
            streams = self.streams
            touched = [(streams.get(delta.key), delta) for delta in deltas]
            ended = [(streams.pop(end.key, None), end) for end in ends]
        for stream, delta in touched:
            if stream is None:
                continue
            if stream.usage.first_token_at is None:
                stream.usage.first_token_at = now
            stream.usage.completion_tokens = delta.completion_tokens
            stream.push(delta.text)
        for stream, end in ended:
            if stream is None:
                continue
            stream.usage.completion_tokens = end.completion_tokens
            if stream.usage.first_token_at is None and end.first_token:
                stream.usage.first_token_at = now
            stream.finish(end.reason, None if end.error is None else rebuild_error(end.error))


def exit_words(code: int | None) -> str:
    if code is not None and code < 0:
        return f"stopped unexpectedly (killed by signal {-code})"
    return f"stopped unexpectedly (exit code {code})"
