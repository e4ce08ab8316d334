"""The local engine in a child process of its own (``--engine process``).

Why: the scheduler thread gives up and retakes the GIL around every torch op (about 2,000 per
decoding step). In the web server's process, the event loop and the per-request reader threads
take it for each token they send, and the engine waits. A decoding step measured 30 ms there
against 26.6 ms with nothing else in the process. In a child process the model has a GIL to
itself. The web server gets each step's text from all sequences as one message, not one wake-up
per token.

One duplex pipe carries everything.

From the parent:

- ``("submit", call, ids, prompts, options)``
- ``("cancel", ids)``
- ``("count", call, text)``
- ``("close",)``

From the child:

- ``("reply", call, ok, payload)``
- ``("step", deltas, ends)``, after every scheduler pass that changed something. ``deltas`` is
  ``[(id, text, completion_tokens)]``; ``ends`` is ``[(id, reason, error, usage)]``.
- ``("beat", status)`` every :data:`BEAT_INTERVAL_S` from a thread of its own: the engine's
  status, so the parent answers ``status()`` without a round trip, and knows the child is alive.

Errors cross as (class name, message, attributes) and are raised again as the same
:mod:`hunyuan_webui.errors` class. The child is started with ``spawn``, because a forked copy of a
process with threads and a loaded torch is unsafe.

Supervision: a thread in the parent restarts the child when it exits, stops sending heartbeats, or
spends :data:`STALL_TIMEOUT_S` in one scheduler pass with work waiting (it is killed first). Its
streams end with a message that says so; meanwhile the status is "restarting". Restarts back off,
and :data:`RESTART_LIMIT` failures within :data:`RESTART_WINDOW_S` stop them with the reason.
A child that reports a failed load is not restarted: loading again would fail again.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import multiprocessing
import signal
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import asdict, replace
from typing import Any

from hunyuan_webui import errors
from hunyuan_webui.engine.base import (
    DecodingOptions,
    Engine,
    EngineState,
    EngineStatus,
    Stream,
    options_per_prompt,
)
from hunyuan_webui.errors import NotReadyError, TranslatorError
from hunyuan_webui.models import ModelSpec

log = logging.getLogger(__name__)

CALL_TIMEOUT_S = 30.0
BEAT_INTERVAL_S = 0.5
BEAT_TIMEOUT_S = 15.0  # no heartbeat for this long from a running child: it is hung
STALL_TIMEOUT_S = 180.0  # one scheduler pass this long with work waiting: it is hung
START_TIMEOUT_S = 900.0  # a new child's first heartbeat (imports, before loading starts)
RESTART_LIMIT = 5  # failures within the window before the supervisor gives up
RESTART_WINDOW_S = 600.0
BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
SUPERVISE_EVERY_S = 0.2


# -- the parent side -------------------------------------------------------------------------------
class _ChildStream(Stream):
    """A stream whose cancellation is also sent to the child generating it."""

    def __init__(self, prompt: str, options: DecodingOptions, child: _Child, key: int) -> None:
        super().__init__(prompt, options)
        self._child, self._key = child, key

    def cancel(self) -> None:
        already = self.cancelled
        super().cancel()
        if not already and not self.done:
            self._child.send_quietly(("cancel", [self._key]))


class _Child:
    """One engine process, the pipe to it, and the streams and calls it has in hand.

    Locking: ``lock`` guards ``streams``, ``calls`` and the heartbeat fields; ``send_lock`` only
    orders writes to the pipe. Neither is held while a stream is fed or finished (observers run
    then) nor while waiting for a reply.
    """

    def __init__(self, spec: ModelSpec, engine_kwargs: dict[str, Any]) -> None:
        context = multiprocessing.get_context("spawn")
        self.conn, child_end = context.Pipe()
        self.process = context.Process(target=_child_main,
                                       args=(child_end, spec, engine_kwargs, _log_settings()),
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
        streams = [_ChildStream(p, o, self, k) for p, o, k in zip(prompts, per_prompt, keys)]
        with self.lock:
            self.streams.update(zip(keys, streams))
        try:
            prompt_tokens = self.call("submit", keys, list(prompts),
                                      [asdict(o) for o in per_prompt])
        except BaseException:
            with self.lock:
                for key in keys:
                    self.streams.pop(key, None)
            self.send_quietly(("cancel", keys))  # admitted after all (a timeout)?
            raise
        for stream, count in zip(streams, prompt_tokens):
            stream.usage.prompt_tokens = count
        return streams

    def call(self, kind: str, *args: Any, timeout: float = CALL_TIMEOUT_S) -> Any:
        if self.dead:
            raise errors.EngineError(self.dead)
        future: Future[Any] = Future()
        key = next(self.keys)
        with self.lock:
            self.calls[key] = future
        try:
            self.send((kind, key, *args))
            return future.result(timeout=timeout)
        except TimeoutError:  # before OSError, which it subclasses: the child is alive but slow
            raise errors.EngineError(f"The engine process did not answer within {timeout:g}s; "
                                     "please try again.") from None
        except (OSError, ValueError):  # the pipe is closed: the child is gone
            raise errors.EngineError(self.dead or "The engine process has stopped.") from None
        finally:
            with self.lock:
                self.calls.pop(key, None)

    def send(self, message: tuple[Any, ...]) -> None:
        with self.send_lock:
            self.conn.send(message)

    def send_quietly(self, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError, ValueError):  # the child is gone: nothing runs there
            self.send(message)

    # -- health ---------------------------------------------------------------------------------
    def last_status(self) -> tuple[EngineStatus | None, float | None]:
        with self.lock:
            return self.beat, self.beat_at

    def problem(self, beat_timeout: float, stall_timeout: float) -> str:
        """Why this child needs replacing ("" if it does not)."""
        if self.exited.is_set():
            return self.death_note or _exit_words(self.process.exitcode)
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
        stalled = (beat.extra.get("stalled_s", 0.0) if beat is not None else 0.0) + now - beat_at
        if beat is not None and (beat.active or beat.queued) and stalled > stall_timeout:
            return f"was stuck in one decoding step for {stalled:.0f}s"
        return ""

    def kill(self, note: str) -> None:
        self.death_note = note
        with contextlib.suppress(OSError):
            self.process.kill()

    def close(self) -> None:
        self.closing = True
        self.send_quietly(("close",))
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
                kind = message[0]
                if kind == "step":
                    self._apply_step(message[1], message[2])
                elif kind == "beat":
                    with self.lock:
                        self.beat, self.beat_at = message[1], time.monotonic()
                elif kind == "reply":
                    self._reply(*message[1:])
        except (EOFError, OSError):
            pass
        self.process.join(timeout=2)
        self._end_all()

    def _reply(self, key: int, ok: bool, payload: Any) -> None:
        with self.lock:
            future = self.calls.get(key)
        if future is not None:
            if ok:
                future.set_result(payload)
            else:
                future.set_exception(_rebuild_error(payload))

    def _end_all(self) -> None:
        """The child is gone: end its streams and calls with a message that says what happened."""
        if self.closing:
            self.dead = "The translator is shutting down."
        else:
            self.dead = (f"The engine process {self.death_note or _exit_words(self.process.exitcode)}"
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

    def _apply_step(self, deltas: list[tuple[int, str, int]],
                    ends: list[tuple[int, str, Any, dict[str, Any]]]) -> None:
        now = time.perf_counter()
        with self.lock:
            streams = self.streams
            touched = [(streams.get(key), text, count) for key, text, count in deltas]
            ended = [(streams.pop(key, None), reason, error, usage)
                     for key, reason, error, usage in ends]
        for stream, text, count in touched:
            if stream is None:
                continue
            if stream.usage.first_token_at is None:
                stream.usage.first_token_at = now
            stream.usage.completion_tokens = count
            stream.push(text)
        for stream, reason, error, usage in ended:
            if stream is None:
                continue
            stream.usage.completion_tokens = usage["completion_tokens"]
            if stream.usage.first_token_at is None and usage["first_token"]:
                stream.usage.first_token_at = now
            stream.finish(reason, None if error is None else _rebuild_error(error))


def _exit_words(code: int | None) -> str:
    if code is not None and code < 0:
        return f"stopped unexpectedly (killed by signal {-code})"
    return f"stopped unexpectedly (exit code {code})"


class ProcessEngine(Engine):
    """:class:`~hunyuan_webui.engine.local.LocalEngine` in a supervised child process, same
    interface. The child is replaced when it dies or hangs (see the module's docstring).

    Locking: ``_lock`` guards which child is current and the supervisor's state. It is never held
    while calling into a child; a child's own lock is never held while taking this one.
    """

    def __init__(self, spec: ModelSpec, *, beat_timeout: float = BEAT_TIMEOUT_S,
                 stall_timeout: float = STALL_TIMEOUT_S, **engine_kwargs: Any) -> None:
        self.spec = spec
        self.model_id = spec.id
        self._kwargs = engine_kwargs
        self._beat_timeout, self._stall_timeout = beat_timeout, stall_timeout
        self._lock = threading.Lock()
        self._child = _Child(spec, engine_kwargs)
        self._recovering = ""  # while a replacement child loads: why the last one went
        self._given_up = ""  # the supervisor stopped restarting: why
        self._failures: deque[float] = deque()
        self.restarts = 0
        self._closing = False
        self._stop = threading.Event()
        self._supervisor = threading.Thread(target=self._supervise, name="hymt-engine-supervisor",
                                            daemon=True)
        self._supervisor.start()
        atexit.register(self.close)

    # -- Engine -----------------------------------------------------------------------------------
    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        per_prompt = options_per_prompt(prompts, options)
        child = self._usable_child()
        return child.submit(prompts, per_prompt)

    def status(self) -> EngineStatus:
        with self._lock:
            child, recovering, given_up = self._child, self._recovering, self._given_up
        extra = {"process": child.pid, "restarts": self.restarts}
        if self._closing:
            return self._own_status(EngineState.STOPPED, "The translator is shutting down.", extra)
        if given_up:
            return self._own_status(EngineState.FAILED, given_up, extra)
        beat, _ = child.last_status()
        if recovering and (beat is None or beat.state in (EngineState.LOADING, EngineState.WARMING)
                           or child.exited.is_set()):
            return self._own_status(EngineState.RESTARTING, recovering, extra)
        if child.exited.is_set():  # the supervisor is about to notice
            return self._own_status(EngineState.RESTARTING, child.dead, extra)
        if beat is None:  # the child is still importing torch
            return self._own_status(EngineState.LOADING, "", extra)
        return replace(beat, extra={**beat.extra, **extra})

    def count_tokens(self, text: str) -> int:
        return int(self._usable_child().call("count", text))

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        self._stop.set()
        atexit.unregister(self.close)
        if self._supervisor is not threading.current_thread():
            self._supervisor.join(timeout=5)
        with self._lock:
            child = self._child
        child.close()

    # -- supervision ------------------------------------------------------------------------------
    def _usable_child(self) -> _Child:
        with self._lock:
            child, recovering, given_up = self._child, self._recovering, self._given_up
        if self._closing:
            raise NotReadyError("The translator is shutting down.")
        if given_up:
            raise errors.EngineError(given_up)
        beat, _ = child.last_status()
        if child.exited.is_set() or (recovering and (beat is None or not beat.ready)):
            raise NotReadyError("The translation engine is restarting after a failure; please "
                                "try again in a few seconds.")
        return child

    def _supervise(self) -> None:
        while not self._stop.wait(SUPERVISE_EVERY_S):
            with self._lock:
                child = self._child
            beat, _ = child.last_status()
            if self._recovering and beat is not None and beat.state is not EngineState.LOADING \
                    and beat.state is not EngineState.WARMING:
                with self._lock:
                    self._recovering = ""
                log.warning("engine process restarted (pid %s): %s", child.pid, beat.state)
            problem = child.problem(self._beat_timeout, self._stall_timeout)
            if not problem or self._closing:
                continue
            if not child.exited.is_set():
                log.warning("engine process %s %s: killing it", child.pid, problem)
                child.kill(problem)
                child.exited.wait(10)
            if not self._replace(child, problem):
                return

    def _replace(self, old: _Child, problem: str) -> bool:
        """Start a new child after a backoff; False once the failures are too many."""
        now = time.monotonic()
        self._failures.append(now)
        while self._failures and now - self._failures[0] > RESTART_WINDOW_S:
            self._failures.popleft()
        if len(self._failures) > RESTART_LIMIT:
            reason = (f"The engine process failed {len(self._failures)} times within "
                      f"{RESTART_WINDOW_S / 60:g} minutes (last: it {problem}); it is not restarted "
                      "again. See the server log, then restart the translator.")
            log.error("%s", reason)
            with self._lock:
                self._given_up = reason
            return False
        delay = BACKOFF_S[min(len(self._failures), len(BACKOFF_S)) - 1]
        note = f"The engine process {problem}; restarting it."
        log.warning("engine process (pid %s) %s; starting a new one in %.1fs (failure %d of at "
                    "most %d in %g min)", old.pid, problem, delay, len(self._failures),
                    RESTART_LIMIT, RESTART_WINDOW_S / 60)
        with self._lock:
            self._recovering = note
        if self._stop.wait(delay):
            return False
        new = _Child(self.spec, self._kwargs)
        with self._lock:
            self._child = new
            self.restarts += 1
        old.conn.close()
        return True

    def _own_status(self, state: EngineState, reason: str, extra: dict[str, Any]) -> EngineStatus:
        return EngineStatus(state=state, model=self.model_id, reason=reason,
                            device=self._kwargs.get("device", ""),
                            dtype=self._kwargs.get("dtype", ""), extra=extra)


def _error_payload(exc: BaseException) -> tuple[str, str, dict[str, Any]]:
    if isinstance(exc, TranslatorError):
        attrs = {k: v for k, v in vars(exc).items() if k != "user_message"
                 and isinstance(v, str | int | float | bool | list | tuple | type(None))}
        return type(exc).__name__, exc.user_message, attrs
    return "TranslatorError", f"Generation failed: {exc}", {}


def _rebuild_error(payload: tuple[str, str, dict[str, Any]]) -> TranslatorError:
    name, message, attrs = payload
    cls = getattr(errors, name, TranslatorError)
    if not (isinstance(cls, type) and issubclass(cls, TranslatorError)):
        cls = TranslatorError
    error = cls.__new__(cls)
    TranslatorError.__init__(error, message)
    error.__dict__.update(attrs)
    return error


# -- the child side --------------------------------------------------------------------------------
class _Forwarder:
    """Sends each scheduler pass's new text and endings to the parent, as one message."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.send_lock = threading.Lock()
        self.lock = threading.Lock()
        self.live: dict[int, tuple[Stream, list[int]]] = {}  # key -> (stream, [chunks sent])

    def send(self, message: tuple[Any, ...]) -> None:
        with self.send_lock:
            self.conn.send(message)

    def add(self, keys: list[int], streams: list[Stream]) -> None:
        with self.lock:
            for key, stream in zip(keys, streams):
                self.live[key] = (stream, [0])

    def flush(self) -> None:
        deltas: list[tuple[int, str, int]] = []
        ends: list[tuple[int, str, Any, dict[str, Any]]] = []
        with self.lock:
            for key, (stream, sent) in list(self.live.items()):
                finished = stream.done
                chunks, _ = stream.read(sent[0], timeout=0)
                if chunks:
                    sent[0] += len(chunks)
                    deltas.append((key, "".join(chunks), stream.usage.completion_tokens))
                if finished:
                    del self.live[key]
                    error = None if stream.error is None else _error_payload(stream.error)
                    ends.append((key, stream.finish_reason or "error", error,
                                 {"completion_tokens": stream.usage.completion_tokens,
                                  "first_token": stream.usage.first_token_at is not None}))
        if deltas or ends:
            self.send(("step", deltas, ends))


def _log_settings() -> dict[str, Any]:
    """The parent's logging choices, which a spawned child does not inherit."""
    from transformers.utils import logging as hf_logging

    return {"level": logging.getLogger().getEffectiveLevel(),
            "transformers": hf_logging.get_verbosity(),
            "progress_bars": hf_logging.is_progress_bar_enabled()}


def _child_main(conn: Any, spec: ModelSpec, engine_kwargs: dict[str, Any],
                log_settings: dict[str, Any]) -> None:
    from transformers.utils import logging as hf_logging

    from hunyuan_webui.engine.local import LocalEngine

    # Ctrl+C reaches the whole process group: the parent decides when this process stops (it
    # sends "close", or its end of the pipe closes when it exits).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_settings["level"],
                        format="%(asctime)s %(levelname)s %(name)s [engine]: %(message)s")
    hf_logging.set_verbosity(log_settings["transformers"])
    if not log_settings["progress_bars"]:
        hf_logging.disable_progress_bar()
    engine = LocalEngine(spec, **engine_kwargs)
    forward = _Forwarder(conn)
    engine.after_step = forward.flush
    stop = threading.Event()
    threading.Thread(target=_heartbeat, args=(engine, forward, stop), name="hymt-heartbeat",
                     daemon=True).start()
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the parent is gone
                break
            kind = message[0]
            if kind == "close":
                break
            if kind == "cancel":
                with forward.lock:
                    found = [forward.live.get(key) for key in message[1]]
                for entry in found:
                    if entry is not None:
                        entry[0].cancel()
                continue
            key = message[1]
            try:
                if kind == "submit":
                    _, _, keys, prompts, options = message
                    streams = engine.submit(prompts, [DecodingOptions(**o) for o in options])
                    forward.add(keys, streams)
                    reply: Any = [s.usage.prompt_tokens for s in streams]
                    forward.send(("reply", key, True, reply))
                    forward.flush()  # what the scheduler did before `add` (a 1-token answer)
                    continue
                elif kind == "count":
                    reply = engine.count_tokens(message[2])
                else:
                    raise TranslatorError(f"unknown request {kind!r}")
                forward.send(("reply", key, True, reply))
            except Exception as exc:  # answered, so the parent raises it where it asked
                forward.send(("reply", key, False, _error_payload(exc)))
    finally:
        stop.set()
        engine.close()
        with contextlib.suppress(OSError):
            forward.flush()
        conn.close()


def _heartbeat(engine: Any, forward: _Forwarder, stop: threading.Event) -> None:
    """The engine's status to the parent, now and every :data:`BEAT_INTERVAL_S`: the parent's
    ``status()`` reads the latest, and a silence means this process is hung."""
    while True:
        try:
            forward.send(("beat", engine.status()))
        except (OSError, ValueError):  # the parent is gone
            return
        if stop.wait(BEAT_INTERVAL_S):
            return
