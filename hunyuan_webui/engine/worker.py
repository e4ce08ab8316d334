"""What runs inside the engine's child process (see :mod:`hunyuan_webui.engine.process`).

The child builds its engine (the factory's ``child`` class for its kind: our transformers engine,
:class:`~hunyuan_webui.engine.local.LocalEngine`, or llama.cpp's), answers the parent's
messages on its main thread, forwards each scheduler pass's text from the scheduler thread, and
sends a heartbeat (the engine's status) from a third. The messages are
:mod:`hunyuan_webui.engine.messages`' classes; errors cross the pipe as an ``ErrorPayload`` (class
name, message, attributes) and are raised again in the parent as the same
:mod:`hunyuan_webui.errors` class.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from typing import Any

from hunyuan_webui import errors
from hunyuan_webui.core import kinds
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import Stream
from hunyuan_webui.engine.messages import (
    Beat,
    Cancel,
    Close,
    Count,
    Delta,
    End,
    ErrorPayload,
    Reply,
    Step,
    Submit,
)
from hunyuan_webui.engine.threads import let_idle_threads_sleep
from hunyuan_webui.errors import TranslatorError

BEAT_INTERVAL_S = 0.5


def error_payload(exc: BaseException) -> ErrorPayload:
    if isinstance(exc, TranslatorError):
        attrs = {k: v for k, v in vars(exc).items() if k != "user_message"
                 and isinstance(v, str | int | float | bool | list | tuple | type(None))}
        return ErrorPayload(type(exc).__name__, exc.user_message, attrs)
    return ErrorPayload("TranslatorError", f"Generation failed: {exc}")


def rebuild_error(payload: ErrorPayload) -> TranslatorError:
    cls = getattr(errors, payload.name, TranslatorError)
    if not (isinstance(cls, type) and issubclass(cls, TranslatorError)):
        cls = TranslatorError
    error = cls.__new__(cls)
    TranslatorError.__init__(error, payload.message)
    error.__dict__.update(payload.attrs)
    return error


class _Forwarder:
    """Sends each scheduler pass's new text and endings to the parent, as one message."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self.send_lock = threading.Lock()
        self.lock = threading.Lock()
        self.live: dict[int, tuple[Stream, list[int]]] = {}  # key -> (stream, [chunks sent])

    def send(self, message: Step | Beat | Reply) -> None:
        with self.send_lock:
            self.conn.send(message)

    def add(self, keys: list[int], streams: list[Stream]) -> None:
        with self.lock:
            for key, stream in zip(keys, streams):
                self.live[key] = (stream, [0])

    def flush(self) -> None:
        deltas: list[Delta] = []
        ends: list[End] = []
        with self.lock:
            for key, (stream, sent) in list(self.live.items()):
                finished = stream.done
                chunks, _ = stream.read(sent[0], timeout=0)
                if chunks:
                    sent[0] += len(chunks)
                    deltas.append(Delta(key, "".join(chunks), stream.usage.completion_tokens))
                if finished:
                    del self.live[key]
                    error = None if stream.error is None else error_payload(stream.error)
                    ends.append(End(key, stream.finish_reason or "error", error,
                                    stream.usage.completion_tokens,
                                    stream.usage.first_token_at is not None))
        if deltas or ends:
            self.send(Step(deltas, ends))


def log_settings() -> dict[str, Any]:
    """The parent's logging choices, which a spawned child does not inherit."""
    from transformers.utils import logging as hf_logging

    return {"level": logging.getLogger().getEffectiveLevel(),
            "transformers": hf_logging.get_verbosity(),
            "progress_bars": hf_logging.is_progress_bar_enabled()}


def _prepare_process(log_settings: dict[str, Any], runner: str, cpu_threads: int) -> None:
    """Signals, the parent's logging, and (before torch loads) OpenMP's wait policy."""
    from transformers.utils import logging as hf_logging

    # Ctrl+C reaches the whole process group: the parent decides when this process stops (it
    # sends Close, or its end of the pipe closes when it exits).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=log_settings["level"],
                        format="%(asctime)s %(levelname)s %(name)s [engine]: %(message)s")
    hf_logging.set_verbosity(log_settings["transformers"])
    if not log_settings["progress_bars"]:
        hf_logging.disable_progress_bar()
    if kinds.of(runner).child_process:  # OpenMP reads its policy when torch or llama.cpp loads it
        let_idle_threads_sleep(cpu_threads)


def child_main(conn: Any, spec: ModelSpec, engine_kwargs: dict[str, Any],
               log_settings: dict[str, Any], runner: str = kinds.PROCESS) -> None:
    from hunyuan_webui.engine.factory import child_class

    _prepare_process(log_settings, runner, engine_kwargs.get("cpu_threads", 0))
    engine = child_class(runner)(spec, **engine_kwargs)
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
            if isinstance(message, Close):
                break
            if isinstance(message, Cancel):
                with forward.lock:
                    found = [forward.live.get(key) for key in message.keys]
                for entry in found:
                    if entry is not None:
                        entry[0].cancel()
                continue
            if not isinstance(message, Submit | Count):
                logging.getLogger(__name__).error("unknown message %r: ignored", message)
                continue
            try:
                if isinstance(message, Submit):
                    streams = engine.submit(message.prompts, message.options)
                    forward.add(message.keys, streams)
                    forward.send(Reply(message.call, [s.usage.prompt_tokens for s in streams]))
                    forward.flush()  # what the scheduler did before `add` (a 1-token answer)
                else:
                    forward.send(Reply(message.call, engine.count_tokens(message.text)))
            except Exception as exc:  # answered, so the parent raises it where it asked
                forward.send(Reply(message.call, error=error_payload(exc)))
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
            forward.send(Beat(engine.status()))
        except (OSError, ValueError):  # the parent is gone
            return
        if stop.wait(BEAT_INTERVAL_S):
            return
