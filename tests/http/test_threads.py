"""The engine's CPU threads: how many, and that its idle OpenMP threads sleep when it takes every core.

OpenMP (libgomp, which torch loads) prints the policy it runs with when ``OMP_DISPLAY_ENV=VERBOSE``:
``GOMP_SPINCOUNT = '0'`` means an idle thread sleeps at once; the default spins 300000 times first.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest
from apphelpers import free_port

from hunyuan_webui.engine.threads import engine_threads, let_idle_threads_sleep

REPO = Path(__file__).resolve().parents[2]
SLEEPS = "GOMP_SPINCOUNT = '0'"
SPINS = "GOMP_SPINCOUNT = '300000'"


@pytest.mark.parametrize(("requested", "cores", "env", "threads"), [
    (0, 2, {"OMP_WAIT_POLICY": "PASSIVE"}, 2),  # a 2-core machine: both, once idle threads sleep
    (0, 2, {"OMP_WAIT_POLICY": "passive"}, 2),
    (0, 2, {}, 1),  # spinning threads: one core stays free
    (0, 2, {"OMP_WAIT_POLICY": "ACTIVE"}, 1),
    (0, 1, {"OMP_WAIT_POLICY": "PASSIVE"}, 1),
    (0, 8, {"OMP_WAIT_POLICY": "PASSIVE"}, 7),  # all cores but one elsewhere
    (0, 8, {}, 7),
    (3, 2, {}, 3),  # --cpu-threads wins
])
def test_the_thread_count_follows_the_cores_and_the_wait_policy(requested, cores, env, threads):
    assert engine_threads(requested, cores, env) == threads


def test_with_torch_loaded_the_policy_is_left_alone():
    import torch  # noqa: F401  (this process's OpenMP has read its policy already)

    env: dict[str, str] = {}
    assert let_idle_threads_sleep(0, 2, env) is False
    assert env == {} and engine_threads(0, 2, env) == 1
    chosen = {"OMP_WAIT_POLICY": "ACTIVE"}
    assert let_idle_threads_sleep(0, 2, chosen) is False and chosen["OMP_WAIT_POLICY"] == "ACTIVE"


SLEEP_CASES = [
    (0, 2, True),  # the default on 2 cores takes both
    (4, 4, True),  # --cpu-threads equal to the cores
    (0, 8, False),  # one core is left free: spinning is fine
    (2, 8, False),
]
USER_CHOSE = ("import os\nos.environ['OMP_WAIT_POLICY'] = 'ACTIVE'\n"
              "from hunyuan_webui.engine.threads import let_idle_threads_sleep\n"
              "assert let_idle_threads_sleep(0, 2) is False")


def _sleep_code(requested: int, cores: int, sleeps: bool) -> str:
    return ("from hunyuan_webui.engine.threads import let_idle_threads_sleep\n"
            f"assert let_idle_threads_sleep({requested}, {cores}) is {sleeps}")


# How a probe's process then loads OpenMP: torch's own libgomp, which reads the environment as it
# loads exactly as it does under torch (the test below checks that it is the library torch runs
# on), without the seconds a torch import takes (five of them took a tenth of the fast lane).
LIBGOMP = ("import importlib.util, os\n"
           "LIBGOMP = os.path.join(os.path.dirname(importlib.util.find_spec('torch').origin), "
           "'lib', 'libgomp.so.1')\n")
LOAD_TORCH_OPENMP = LIBGOMP + "import ctypes\nctypes.CDLL(LIBGOMP)"


def test_the_probes_load_the_openmp_library_torch_runs_on():
    import torch

    names: dict[str, str] = {}
    exec(LIBGOMP, names)  # noqa: S102  (the probes' own lines)
    torch.ones(1)
    with open("/proc/self/maps", encoding="utf-8") as maps:
        loaded = {line.split()[-1] for line in maps if "libgomp" in line}
    # (other libraries bring their own OpenMP too: CTranslate2's, where speech tests ran here)
    assert os.path.realpath(names["LIBGOMP"]) in loaded, loaded


@pytest.fixture(scope="module")
def openmp_policies() -> dict[str, str]:
    """For each probe, what OpenMP says it runs with in a fresh Python that runs the probe and
    then loads torch's OpenMP library. The probes run side by side."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    codes = [_sleep_code(*case) for case in SLEEP_CASES] + [USER_CHOSE]
    procs = {code: subprocess.Popen([sys.executable, "-c", f"{code}\n{LOAD_TORCH_OPENMP}"],
                                    cwd=REPO, env={**env, "OMP_DISPLAY_ENV": "VERBOSE"},
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for code in codes}
    out = {}
    for code, proc in procs.items():
        _, stderr = proc.communicate(timeout=120)
        assert proc.returncode == 0, stderr[-2000:]
        out[code] = stderr
    return out


@pytest.mark.parametrize(("requested", "cores", "sleeps"), SLEEP_CASES)
def test_before_torch_loads_taking_every_core_makes_idle_threads_sleep(openmp_policies, requested,
                                                                      cores, sleeps):
    stderr = openmp_policies[_sleep_code(requested, cores, sleeps)]
    assert (SLEEPS if sleeps else SPINS) in stderr


def test_a_policy_the_user_chose_is_kept(openmp_policies):
    assert SLEEPS not in openmp_policies[USER_CHOSE]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["process", "local", "llamacpp"])
def test_the_app_on_two_cores_decodes_on_both_with_sleeping_idle_threads(engine):
    """``python app.py --demo`` at its defaults (the engine in its own process), in-process, and
    through llama.cpp (the demo as a GGUF; llama.cpp's CPU build runs on OpenMP too), held to two
    CPUs: the engine says it takes both, OpenMP runs passive, and it translates."""
    port = free_port()
    cmd = [sys.executable, str(REPO / "app.py"), "--demo", "--no-warmup", "--port", str(port),
           "--engine", engine, "--log-level", "info"]
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_NUM_THREADS")}
    env.update(HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false", OMP_DISPLAY_ENV="VERBOSE")
    two = set(sorted(os.sched_getaffinity(0))[:2])
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True,
                                preexec_fn=lambda: os.sched_setaffinity(0, two))
        try:
            url = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 240
            while True:
                assert proc.poll() is None and time.monotonic() < deadline, _tail(log)
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/ready", timeout=2, trust_env=False).status_code == 200:
                        break
                time.sleep(0.25)
            r = httpx.post(f"{url}/v1/translate", trust_env=False, timeout=60,
                           json={"text": "Good morning.", "source_lang": "en",
                                 "target_lang": "zh"})
            assert r.status_code == 200, r.text
            assert r.json()["translation"] == "早上好。"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)
        text = _tail(log, 200_000)
    assert "CPU threads: 2 of 2 cores (idle threads sleep)" in text, text[-3000:]
    assert SLEEPS in text, text[-3000:]  # where the engine runs


def _tail(log, size: int = 3000) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-size:]
