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
- ``("status", call)``
- ``("count", call, text)``
- ``("close",)``

From the child:

- ``("reply", call, ok, payload)``
- ``("step", deltas, ends)``, after every scheduler pass that changed something. ``deltas`` is
  ``[(id, text, completion_tokens)]``; ``ends`` is ``[(id, reason, error, usage)]``.

Errors cross as (class name, message, attributes) and are raised again as the same
:mod:`hunyuan_webui.errors` class. The child is started with ``spawn``, because a forked copy of a
process with threads and a loaded torch is unsafe. If the child dies, every stream ends with an
error and the status says so.
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
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import asdict
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
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.models import ModelSpec

log = logging.getLogger(__name__)

CALL_TIMEOUT_S = 30.0
STATUS_TIMEOUT_S = 2.0  # the child is still importing torch: report "loading" meanwhile


# -- the parent side -------------------------------------------------------------------------------
class _ChildStream(Stream):
    """A stream whose cancellation is also sent to the child."""

    def __init__(self, prompt: str, options: DecodingOptions, engine: ProcessEngine,
                 key: int) -> None:
        super().__init__(prompt, options)
        self._engine, self._key = engine, key

    def cancel(self) -> None:
        already = self.cancelled
        super().cancel()
        if not already and not self.done:
            with contextlib.suppress(OSError, ValueError):  # the child is gone: nothing runs
                self._engine._send(("cancel", [self._key]))


class ProcessEngine(Engine):
    """:class:`~hunyuan_webui.engine.local.LocalEngine` in a child process, same interface."""

    def __init__(self, spec: ModelSpec, **engine_kwargs: Any) -> None:
        self.spec = spec
        self.model_id = spec.id
        self._kwargs = engine_kwargs
        context = multiprocessing.get_context("spawn")
        self._conn, child_end = context.Pipe()
        self._process = context.Process(target=_child_main,
                                        args=(child_end, spec, engine_kwargs, _log_settings()),
                                        name="hymt-engine", daemon=True)
        self._process.start()
        child_end.close()
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._streams: dict[int, Stream] = {}
        self._calls: dict[int, Future[Any]] = {}
        self._keys = itertools.count()
        self._dead = ""  # why the child is gone, once it is
        self._closing = False
        self._receiver = threading.Thread(target=self._receive, name="hymt-engine-pipe",
                                          daemon=True)
        self._receiver.start()
        atexit.register(self.close)

    # -- Engine -----------------------------------------------------------------------------------
    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        per_prompt = options_per_prompt(prompts, options)
        keys = [next(self._keys) for _ in prompts]
        streams = [_ChildStream(p, o, self, k) for p, o, k in zip(prompts, per_prompt, keys)]
        with self._lock:
            self._streams.update(zip(keys, streams))
        try:
            prompt_tokens = self._call("submit", keys, list(prompts),
                                       [asdict(o) for o in per_prompt])
        except BaseException:
            with self._lock:
                for key in keys:
                    self._streams.pop(key, None)
            with contextlib.suppress(OSError, ValueError):  # admitted after all (a timeout)?
                self._send(("cancel", keys))
            raise
        for stream, count in zip(streams, prompt_tokens):
            stream.usage.prompt_tokens = count
        return streams

    def status(self) -> EngineStatus:
        if self._dead:
            return self._failed_status()
        try:
            data = self._call("status", timeout=STATUS_TIMEOUT_S)
        except TranslatorError:
            return self._failed_status() if self._dead else EngineStatus(
                state=EngineState.LOADING, model=self.model_id,
                device=self._kwargs.get("device", ""), dtype=self._kwargs.get("dtype", ""))
        data["state"] = EngineState(data["state"])
        data["extra"] = {**data.get("extra", {}), "process": self._process.pid}
        return EngineStatus(**data)

    def count_tokens(self, text: str) -> int:
        return int(self._call("count", text))

    def close(self) -> None:
        if self._closing:
            return
        self._closing = True
        atexit.unregister(self.close)
        with contextlib.suppress(OSError, ValueError):
            self._send(("close",))
        self._process.join(timeout=15)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join(timeout=5)
        self._conn.close()
        self._receiver.join(timeout=5)

    # -- plumbing ---------------------------------------------------------------------------------
    def _send(self, message: tuple[Any, ...]) -> None:
        with self._send_lock:
            self._conn.send(message)

    def _call(self, kind: str, *args: Any, timeout: float = CALL_TIMEOUT_S) -> Any:
        if self._dead:
            raise errors.EngineError(self._dead)
        future: Future[Any] = Future()
        key = next(self._keys)
        with self._lock:
            self._calls[key] = future
        try:
            self._send((kind, key, *args))
            return future.result(timeout=timeout)
        except (OSError, ValueError):  # the pipe is closed: the child is gone
            raise errors.EngineError(self._dead or "The engine process has stopped.") from None
        except TimeoutError:
            raise errors.EngineError(f"The engine process did not answer within {timeout:g}s.") \
                from None
        finally:
            with self._lock:
                self._calls.pop(key, None)

    def _receive(self) -> None:
        try:
            while True:
                message = self._conn.recv()
                if message[0] == "step":
                    self._apply_step(message[1], message[2])
                elif message[0] == "reply":
                    _, key, ok, payload = message
                    with self._lock:
                        future = self._calls.get(key)
                    if future is not None:
                        if ok:
                            future.set_result(payload)
                        else:
                            future.set_exception(_rebuild_error(payload))
        except (EOFError, OSError):
            pass
        self._process.join(timeout=2)
        code = self._process.exitcode
        self._dead = ("The translator is shutting down." if self._closing else
                      f"The engine process stopped unexpectedly (exit code {code}); "
                      "restart the translator.")
        if not self._closing:
            log.error("%s", self._dead)
        with self._lock:
            streams, self._streams = list(self._streams.values()), {}
            calls, self._calls = list(self._calls.values()), {}
        for stream in streams:
            if not stream.done:
                stream.finish("cancelled" if self._closing else "error",
                              None if self._closing else errors.EngineError(self._dead))
        for future in calls:
            future.set_exception(errors.EngineError(self._dead))

    def _apply_step(self, deltas: list[tuple[int, str, int]],
                    ends: list[tuple[int, str, Any, dict[str, Any]]]) -> None:
        now = time.perf_counter()
        with self._lock:
            streams = self._streams
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

    def _failed_status(self) -> EngineStatus:
        state = EngineState.STOPPED if self._closing else EngineState.FAILED
        return EngineStatus(state=state, model=self.model_id, reason=self._dead,
                            device=self._kwargs.get("device", ""),
                            dtype=self._kwargs.get("dtype", ""))


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
                elif kind == "status":
                    reply = engine.status().to_dict()
                elif kind == "count":
                    reply = engine.count_tokens(message[2])
                else:
                    raise TranslatorError(f"unknown request {kind!r}")
                forward.send(("reply", key, True, reply))
            except Exception as exc:  # answered, so the parent raises it where it asked
                forward.send(("reply", key, False, _error_payload(exc)))
    finally:
        engine.close()
        with contextlib.suppress(OSError):
            forward.flush()
        conn.close()
