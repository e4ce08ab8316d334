"""How a supervised engine process is watched, started again, and given up on.

Shared by the two supervisors: :mod:`~hunyuan_webui.engine.process` (our own engine in a child
process) and :mod:`~hunyuan_webui.engine.managed` (a vLLM, SGLang, llama.cpp or transformers
server). :class:`RestartPolicy` counts failures: each one waits a backoff that grows with the
failures in the window; more than ``limit`` failures within ``window_s`` seconds stop the restarts,
with a reason that says so. :class:`Supervisor` is the thread that runs that loop: watch until the
process fails, wait the backoff, start the next one, or give up; the engines supply what watching
and starting mean for their kind of process.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

log = logging.getLogger(__name__)

RESTART_LIMIT = 5  # failures within the window before the supervisor gives up
RESTART_WINDOW_S = 600.0
BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)
SUPERVISE_EVERY_S = 0.2  # how often a supervisor looks at its process
SHUTTING_DOWN = "The translator is shutting down."
# In a status's ``extra``: the supervisor has stopped restarting the engine, so only restarting
# the whole app can bring it back (``/health`` then fails, for a liveness probe to do just that).
GIVEN_UP = "given_up"

# What one watched run ended with: why the process failed, and its pid; None for no restart
# (closing, or a failure the engine has reported as final).
Failure = tuple[str, int | None]


class RestartPolicy:
    """Counts one process's failures; says how long to wait before the next start, or stop.

    ``what`` names the process in messages ("The engine process", "The vLLM server"). What is
    not given is this module's constant, read at construction so that tests can lower them."""

    def __init__(self, what: str, *, limit: int | None = None, window_s: float | None = None,
                 backoff_s: Sequence[float] | None = None) -> None:
        self.what = what
        self.limit = RESTART_LIMIT if limit is None else limit
        self.window_s = RESTART_WINDOW_S if window_s is None else window_s
        self.backoff_s = tuple(BACKOFF_S if backoff_s is None else backoff_s)
        self.failures: deque[float] = deque()
        self.given_up = ""  # why restarts stopped, once they have

    def failed(self, problem: str, pid: int | None = None) -> float | None:
        """Record a failure (``problem``: "stopped unexpectedly (exit code 1)"); the seconds to
        wait before starting again, or None when that was one failure too many."""
        now = time.monotonic()
        self.failures.append(now)
        while self.failures and now - self.failures[0] > self.window_s:
            self.failures.popleft()
        count = len(self.failures)
        if count > self.limit:
            self.given_up = (f"{self.what} failed {count} times within {self.window_s / 60:g} "
                             f"minutes (last: it {problem}); it is not restarted again. See the "
                             "server log, then restart the translator.")
            log.error("%s", self.given_up)
            return None
        delay = self.backoff_s[min(count, len(self.backoff_s)) - 1]
        log.warning("%s (pid %s) %s; starting a new one in %.1fs (failure %d of at most %d in "
                    "%g min)", self.what.lower().removeprefix("the "), pid, problem, delay, count,
                    self.limit, self.window_s / 60)
        return delay

    def restarting(self, problem: str) -> str:
        """The status while a replacement starts: "The engine process ...; restarting it."."""
        return f"{self.what} {problem}; restarting it."


class Supervisor:
    """A thread that keeps one engine process running: ``watch()`` runs (or watches) it until it
    fails; then the policy's backoff, ``replace()`` in this thread, and ``watch()`` again, until
    the policy gives up or :meth:`close` is called. The engine hears of it through
    ``restarting(reason)`` and ``give_up(reason)``.

    The hooks are called without any lock of the supervisor's held; ``_lock`` only makes the
    closing flag a one-time switch and is never held while calling out or taking another lock.
    Every wait ends at :meth:`close` (``sleep``) or at a deadline the hooks set.
    """

    def __init__(self, policy: RestartPolicy, *, watch: Callable[[], Failure | None],
                 restarting: Callable[[str], None], give_up: Callable[[str], None],
                 replace: Callable[[], None] | None = None, name: str,
                 poll_every_s: float = SUPERVISE_EVERY_S) -> None:
        self.policy = policy
        self._watch, self._replace = watch, replace
        self._restarting, self._give_up = restarting, give_up
        self.poll_every_s = poll_every_s
        self.restarts = 0  # replacements started so far
        self.closing = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._at_exit: Callable[[], None] | None = None
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self, at_exit: Callable[[], None]) -> None:
        """Start the thread; ``at_exit`` (the engine's close) runs at interpreter exit."""
        self._at_exit = at_exit
        self._thread.start()
        atexit.register(at_exit)

    def close(self, timeout: float) -> bool:
        """Stop supervising and wait up to ``timeout`` seconds for the thread (unless this is it).
        False when an earlier call already did: the caller has nothing left to close."""
        with self._lock:
            if self.closing:
                return False
            self.closing = True
        self._stop.set()
        if self._at_exit is not None:
            atexit.unregister(self._at_exit)
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=timeout)
        return True

    def status_extra(self) -> dict[str, object]:
        """What an engine's status says of its supervision: the restarts so far, and whether
        they have stopped (``GIVEN_UP``, only once they have)."""
        extra: dict[str, object] = {"restarts": self.restarts}
        if self.policy.given_up:
            extra[GIVEN_UP] = True
        return extra

    def sleep(self, seconds: float) -> bool:
        """Wait ``seconds``; True (at once) when closing."""
        return self._stop.wait(seconds)

    def poll(self, problem: Callable[[], str]) -> str:
        """Ask ``problem()`` every ``poll_every_s`` until it names one; "" when closing."""
        while not self._stop.wait(self.poll_every_s):
            if found := problem():
                return found
        return ""

    def _run(self) -> None:
        while not self._stop.is_set():
            failure = self._watch()
            if failure is None:
                return
            problem, pid = failure
            delay = self.policy.failed(problem, pid)
            if delay is None:
                self._give_up(self.policy.given_up)
                return
            self._restarting(self.policy.restarting(problem))
            if self._stop.wait(delay):
                return
            if self._replace is not None:
                self._replace()
            self.restarts += 1
