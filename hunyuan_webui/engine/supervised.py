"""What an engine whose model runs in another process shares: a supervisor that watches the process
and replaces it (:class:`~hunyuan_webui.engine.restarts.Supervisor`), closing once, refusing work
while closing or after the supervisor gave up, and the status it shows while not serving.

:class:`~hunyuan_webui.engine.process.ProcessEngine` (our own engine in a child process) and
:class:`~hunyuan_webui.engine.managed.ManagedEngine` (a server the app starts) specialise it.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from hunyuan_webui import errors
from hunyuan_webui.engine.base import Engine, EngineState, EngineStatus
from hunyuan_webui.engine.restarts import SHUTTING_DOWN, Failure, RestartPolicy, Supervisor


class SupervisedEngine(Engine):
    close_timeout_s = 5.0  # how long close() waits for the supervisor's thread
    shown_device = ""  # the status's device and dtype while no process serves
    shown_dtype = ""

    def _supervise(self, what: str, *, watch: Callable[[], Failure | None], name: str,
                   replace: Callable[[], None] | None = None) -> None:
        """Start supervising (the last step of a subclass's ``__init__``): ``what`` names the
        process in messages ("The engine process"); ``watch`` and ``replace`` are the
        :class:`~hunyuan_webui.engine.restarts.Supervisor`'s."""
        self._supervisor = Supervisor(RestartPolicy(what), watch=watch, replace=replace,
                                      restarting=self._restarting, give_up=self._give_up,
                                      name=name)
        self._supervisor.start(at_exit=self.close)

    @property
    def restarts(self) -> int:
        return self._supervisor.restarts

    def close(self) -> None:
        if self._supervisor.close(timeout=self.close_timeout_s):
            self._stop()

    @abstractmethod
    def _stop(self) -> None:
        """After the supervisor stopped (once): stop the process and what talks to it."""

    @abstractmethod
    def _restarting(self, reason: str) -> None:
        """The process failed and a replacement is on its way: ``reason`` says why."""

    @abstractmethod
    def _give_up(self, reason: str) -> None:
        """The supervisor stopped replacing the process: ``reason`` says why."""

    def _refuse_if_down(self, failed: str) -> None:
        """Refuse work while closing, or once the engine has failed for good (``failed``: why)."""
        if self._supervisor.closing:
            raise errors.NotReadyError(SHUTTING_DOWN)
        if failed:
            raise errors.EngineError(failed)

    def _own_status(self, state: EngineState, reason: str,
                    extra: dict[str, Any]) -> EngineStatus:
        """The status while no process serves (while closing: stopped, shutting down)."""
        if self._supervisor.closing:
            state, reason = EngineState.STOPPED, SHUTTING_DOWN
        return EngineStatus(state=state, model=self.model_id, reason=reason,
                            device=self.shown_device, dtype=self.shown_dtype, extra=extra)
