"""A real ``transformers serve`` on a loopback port, for tests and benchmarks of the remote engine.

``transformers serve`` is transformers' own OpenAI-compatible server (``POST /v1/chat/completions``
with SSE streaming). Pinned to a local checkpoint directory it needs no hub access, so on a CPU it is
a real peer for :class:`hunyuan_webui.engine.remote.OpenAIEngine`::

    with transformers_serve(model_dir) as base_url:   # "http://127.0.0.1:PORT/v1"
        ...

It needs the ``serving`` extra of transformers (``openai`` is the one package a plain install
lacks; ``fastapi``, ``uvicorn``, ``pydantic``, ``starlette``, ``rich`` and ``typer`` come with the
web stack). The server is started with the hub switched off, bound to 127.0.0.1 only, and stopped
(SIGTERM, then SIGKILL) on exit; its output is kept in a temporary log that an error quotes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from apphelpers import free_port

START_TIMEOUT_S = 180.0
# Continuous batching sizes its paged KV cache from "free accelerator memory"; on a CPU that is
# most of the RAM (13 GB resident for the 3 MB demo model here, until the OOM killer came). A fixed
# small cache instead; pass any --cb-* argument in ``extra_args`` to choose your own.
CPU_CB_ARGS = ("--cb-num-blocks", "128", "--cb-max-batch-tokens", "2048")


class ServeUnavailable(RuntimeError):
    """``transformers serve`` cannot run here (a missing package) or did not come up."""


def serve_missing_packages() -> list[str]:
    """The packages ``transformers serve`` needs that are not importable ([] when it can run)."""
    import importlib.util

    return [name for name in ("openai", "fastapi", "uvicorn", "pydantic", "typer")
            if importlib.util.find_spec(name) is None]


@contextlib.contextmanager
def transformers_serve(model_dir: str | os.PathLike[str], *, continuous_batching: bool = False,
                       device: str = "cpu", threads: int | None = 1,
                       extra_args: tuple[str, ...] = (),
                       timeout: float = START_TIMEOUT_S) -> Iterator[str]:
    """Serve ``model_dir`` with ``transformers serve``; yields its base URL (ending in ``/v1``).

    The model name to put in requests is ``str(Path(model_dir).resolve())``: the server is pinned
    to it and refuses any other. ``threads`` sets the server's OpenMP/MKL threads (None: inherit
    the environment). One is the default because a tiny model gains nothing from more, and on a
    busy two-core machine spinning OpenMP threads made the 50 demo phrases take 40 s instead of 4.
    """
    missing = serve_missing_packages()
    if missing:
        raise ServeUnavailable(f"`transformers serve` needs {', '.join(missing)}: "
                               "pip install 'transformers[serving]' (or just: pip install openai)")
    model = str(Path(model_dir).resolve())
    port = free_port()
    cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", model,
           "--host", "127.0.0.1", "--port", str(port), "--device", device,
           "--log-level", "warning"]
    if continuous_batching:
        cmd.append("--continuous-batching")
        if not any(arg.startswith("--cb-") for arg in extra_args):
            cmd.extend(CPU_CB_ARGS)
    cmd.extend(extra_args)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false"}
    if threads is not None:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    with tempfile.TemporaryDirectory(prefix="transformers-serve-") as tmp:
        log_path = os.path.join(tmp, "serve.log")
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                    start_new_session=True)
        try:
            _wait_until_up(proc, f"http://127.0.0.1:{port}/health", timeout, log_path)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            _stop(proc)


def _wait_until_up(proc: subprocess.Popen[bytes], health_url: str, timeout: float,
                   log_path: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServeUnavailable(f"`transformers serve` exited with {proc.returncode}:\n"
                                   f"{_tail(log_path)}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(health_url, timeout=2.0, trust_env=False).status_code == 200:
                return
        time.sleep(0.25)
    raise ServeUnavailable(f"`transformers serve` did not answer within {timeout:.0f}s:\n"
                           f"{_tail(log_path)}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)  # its own session: the server and nothing else
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=15)


def _tail(path: str, lines: int = 40) -> str:
    try:
        return "\n".join(Path(path).read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
