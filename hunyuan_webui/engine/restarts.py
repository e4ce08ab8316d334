"""When a supervised engine process may be started again, and when to stop trying.

Shared by the two supervisors: :mod:`~hunyuan_webui.engine.process` (our own engine in a child
process) and :mod:`~hunyuan_webui.engine.managed` (a vLLM, SGLang, llama.cpp or transformers
server). A failure waits a backoff that grows with the failures in the window; more than
``limit`` failures within ``window_s`` seconds stop the restarts, with a reason that says so.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Sequence

log = logging.getLogger(__name__)

RESTART_LIMIT = 5  # failures within the window before the supervisor gives up
RESTART_WINDOW_S = 600.0
BACKOFF_S = (0.5, 1.0, 2.0, 5.0, 10.0, 30.0)


class RestartPolicy:
    """Counts one process's failures; says how long to wait before the next start, or stop.

    ``what`` names the process in messages ("The engine process", "The vLLM server")."""

    def __init__(self, what: str, *, limit: int = RESTART_LIMIT,
                 window_s: float = RESTART_WINDOW_S,
                 backoff_s: Sequence[float] = BACKOFF_S) -> None:
        self.what = what
        self.limit = limit
        self.window_s = window_s
        self.backoff_s = tuple(backoff_s)
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
