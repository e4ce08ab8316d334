"""How many CPU threads our transformers engine takes, and how its idle threads wait.

torch runs a forward pass on OpenMP threads. Between two parallel regions (dozens per decoding
step), an idle OpenMP thread spins for a while before it sleeps (libgomp's default). That is the
fastest choice on a machine with nothing else to do, and a disaster on one where the web server,
or anything else, needs a core: a spinning thread burns the core its busy sibling is waiting to
be scheduled on. Measured on 2 cores at batch 8 (``python -m benchmarks.threads``, the table in
``docs/PERFORMANCE.md``): beside one process that never sleeps, 2 spinning threads stepped at
0.63x the speed of 1 thread; with one such process per core, at 0.09x.

So the engine used to leave one core to the web server, which on a 2-core machine leaves it a
single thread. With ``OMP_WAIT_POLICY=PASSIVE`` idle threads sleep at once instead: on the same
machine 2 passive threads were 1.27x 1 thread alone, and 0.98-1.38x it under those loads.

The rule (``--cpu-threads 0``): all cores but one, except on a 2-core machine, where the engine
takes both cores once its idle threads sleep. OpenMP reads its wait policy once, when torch loads
it, so :func:`let_idle_threads_sleep` must run before ``import torch`` in the engine's process;
``app.py`` calls it first thing for ``--engine local``, and the engine process before its engine
loads. Where torch is already loaded (the in-process engine in a notebook), the policy cannot
change and the engine keeps to one core fewer; set ``OMP_WAIT_POLICY=PASSIVE`` before starting
Python to get both cores there. A policy the user set is kept.

No torch import here: this module is used before torch is loaded.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping

log = logging.getLogger(__name__)

POLICY = "OMP_WAIT_POLICY"


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, as ``taskset`` or a container's cpuset
    sets it), else the machine's count."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 2


def idle_threads_sleep(env: MutableMapping[str, str] | None = None) -> bool:
    """Is OpenMP told to let idle threads sleep (``OMP_WAIT_POLICY=PASSIVE``)?"""
    env = os.environ if env is None else env
    return env.get(POLICY, "").strip().upper() == "PASSIVE"


def engine_threads(requested: int = 0, cores: int | None = None,
                   env: MutableMapping[str, str] | None = None) -> int:
    """The engine's thread count: ``requested`` (``--cpu-threads``) when set, else the rule above."""
    if requested > 0:
        return requested
    cores = cores or usable_cores()
    if cores == 2 and idle_threads_sleep(env):
        return 2
    return max(1, cores - 1)


def let_idle_threads_sleep(requested: int = 0, cores: int | None = None,
                           env: MutableMapping[str, str] | None = None) -> bool:
    """Before torch loads: when the engine would take every core, set ``OMP_WAIT_POLICY=PASSIVE``
    in ``env`` (this process's environment), unless the user chose a policy. Returns whether idle
    threads now sleep."""
    env = os.environ if env is None else env
    cores = cores or usable_cores()
    takes_every_core = requested >= cores if requested > 0 else cores == 2
    if takes_every_core and POLICY not in env:
        if "torch" in sys.modules:
            log.debug("torch is already loaded: OpenMP's wait policy stays as it is")
            return False
        env[POLICY] = "PASSIVE"
    return idle_threads_sleep(env)
