"""The local engine in a child process of its own (``--engine process``).

Why: the scheduler thread gives up and retakes the GIL around every torch op (about 2,000 per
decoding step). In the web server's process, the event loop and the per-request reader threads
take it for each token they send, and the engine waits. A decoding step measured 30 ms there
against 26.6 ms with nothing else in the process. In a child process the model has a GIL to
itself. The web server gets each step's text from all sequences as one message, not one wake-up
per token.

One duplex pipe carries everything, as the classes of :mod:`~hunyuan_webui.engine.messages`.
From the parent: ``Submit`` (prompts and their options, answered by a ``Reply`` of their prompt
lengths), ``Count`` (answered by a ``Reply`` of the count), ``Cancel`` and ``Close``. From the
child: ``Reply``; a ``Step`` after every scheduler pass that changed something (each stream's new
text, and the streams that ended, how and why); and a ``Beat`` twice a second from a thread of its
own: the engine's status, so the parent answers ``status()`` without a round trip, and knows the
child is alive.

The code is in three modules: this one (the supervisor, which is the engine the service sees),
:mod:`~hunyuan_webui.engine.child` (the parent's handle on one child) and
:mod:`~hunyuan_webui.engine.worker` (what runs in the child).

Errors cross as an ``ErrorPayload`` (class name, message, attributes) and are raised again as
the same :mod:`hunyuan_webui.errors` class. The child is started with ``spawn``, because a forked copy of a
process with threads and a loaded torch is unsafe.

Supervision: a thread in the parent restarts the child when it exits, stops sending heartbeats, or
spends :data:`STALL_TIMEOUT_S` in one scheduler pass with work waiting (it is killed first). Its
streams end with a message that says so; meanwhile the status is "restarting". Restarts back off,
and :data:`~hunyuan_webui.engine.restarts.RESTART_LIMIT` failures within
:data:`~hunyuan_webui.engine.restarts.RESTART_WINDOW_S` stop them with the reason.
A child that reports a failed load is not restarted: loading again would fail again.
"""


from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hunyuan_webui.core import kinds
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import (
    DecodingOptions,
    EngineState,
    EngineStatus,
    Stream,
    options_per_prompt,
)
from hunyuan_webui.engine.child import Child
from hunyuan_webui.engine.restarts import Failure
from hunyuan_webui.engine.supervised import SupervisedEngine
from hunyuan_webui.errors import NotReadyError

log = logging.getLogger(__name__)

BEAT_TIMEOUT_S = 15.0  # no heartbeat for this long from a running child: it is hung
# A ready child's heartbeat this late (four beats missed): "unresponsive" at once, so that /ready
# stops sending it work, before the supervisor decides at BEAT_TIMEOUT_S that it is hung.
BEAT_LATE_S = 2.0
STALL_TIMEOUT_S = 180.0  # one scheduler pass this long with work waiting: it is hung
__all__ = ["ProcessEngine"]


class ProcessEngine(SupervisedEngine):
    """:class:`~hunyuan_webui.engine.local.LocalEngine` in a supervised child process, same
    interface. The child is replaced when it dies or hangs (see the module's docstring).

    Locking: ``_lock`` guards which child is current and the supervisor's state. It is never held
    while calling into a child; a child's own lock is never held while taking this one. The
    :class:`~hunyuan_webui.engine.restarts.Supervisor` calls in here holding no lock of its own.
    """

    def __init__(self, spec: ModelSpec, *, runner: str = kinds.PROCESS,
                 beat_timeout: float = BEAT_TIMEOUT_S, stall_timeout: float = STALL_TIMEOUT_S,
                 beat_late: float = BEAT_LATE_S, **engine_kwargs: Any) -> None:
        self.spec = spec
        self.model_id = spec.id
        self._runner = runner  # which engine the child runs: the factory's child class for it
        self._kwargs = engine_kwargs
        self.shown_device = engine_kwargs.get("device", "")
        self.shown_dtype = engine_kwargs.get("dtype", "")
        self._beat_timeout, self._stall_timeout = beat_timeout, stall_timeout
        self._beat_late = min(beat_late, beat_timeout)
        self._lock = threading.Lock()
        self._child = Child(spec, engine_kwargs, runner)
        self._recovering = ""  # while a replacement child loads: why the last one went
        self._given_up = ""  # the supervisor stopped restarting: why
        self._supervise("The engine process", watch=self._watch, replace=self._new_child,
                        name="hymt-engine-supervisor")

    # -- Engine -----------------------------------------------------------------------------------
    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        per_prompt = options_per_prompt(prompts, options)
        child = self._usable_child()
        return child.submit(prompts, per_prompt)

    def status(self) -> EngineStatus:
        with self._lock:
            child, recovering, given_up = self._child, self._recovering, self._given_up
        extra = {"process": child.pid, **self._supervisor.status_extra()}
        if self._supervisor.closing or given_up:
            return self._own_status(EngineState.FAILED, given_up, extra)
        beat, beat_at = child.last_status()
        if recovering and (beat is None or beat.state in (EngineState.LOADING, EngineState.WARMING)
                           or child.exited.is_set()):
            return self._own_status(EngineState.RESTARTING, recovering, extra)
        if child.exited.is_set():  # the supervisor is about to notice
            return self._own_status(EngineState.RESTARTING, child.dead, extra)
        if beat is None or beat_at is None:  # the child is still importing torch
            return self._own_status(EngineState.LOADING, "", extra)
        late = time.monotonic() - beat_at
        if beat.ready and late > self._beat_late:
            return self._own_status(EngineState.UNRESPONSIVE, (
                f"The engine process has not answered for {late:.0f}s; it is restarted if it "
                f"does not answer within {self._beat_timeout:g}s."), extra)
        return replace(beat, extra={**beat.extra, **extra})

    def count_tokens(self, text: str) -> int:
        return self._usable_child().count(text)

    def _stop(self) -> None:
        with self._lock:
            child = self._child
        child.close()

    # -- supervision ------------------------------------------------------------------------------
    def _usable_child(self) -> Child:
        with self._lock:
            child, recovering, given_up = self._child, self._recovering, self._given_up
        self._refuse_if_down(given_up)
        beat, _ = child.last_status()
        if child.exited.is_set() or (recovering and (beat is None or not beat.ready)):
            raise NotReadyError("The translation engine is restarting after a failure; please "
                                "try again in a few seconds.")
        return child

    def _watch(self) -> Failure | None:
        """Watch the current child until it dies or hangs (a hung one is killed): why, and its
        pid. None when closing. A child that reports a failed load is left as it is."""
        with self._lock:
            child = self._child
        problem = self._supervisor.poll(lambda: self._problem(child))
        if not problem:
            return None
        if not child.exited.is_set():
            log.warning("engine process %s %s: killing it", child.pid, problem)
            child.kill(problem)
            child.exited.wait(10)
        return problem, child.pid

    def _problem(self, child: Child) -> str:
        """One look at the child: what is wrong with it, if anything ("" while closing)."""
        beat, _ = child.last_status()
        if self._recovering and beat is not None and beat.state is not EngineState.LOADING \
                and beat.state is not EngineState.WARMING:
            with self._lock:
                self._recovering = ""
            log.warning("engine process restarted (pid %s): %s", child.pid, beat.state)
        if self._supervisor.closing:
            return ""
        return child.problem(self._beat_timeout, self._stall_timeout)

    def _restarting(self, reason: str) -> None:
        with self._lock:
            self._recovering = reason

    def _give_up(self, reason: str) -> None:
        with self._lock:
            self._given_up = reason

    def _new_child(self) -> None:
        """After the backoff: the replacement child; the old one's pipe is closed."""
        new = Child(self.spec, self._kwargs, self._runner)
        with self._lock:
            old, self._child = self._child, new
        old.conn.close()
