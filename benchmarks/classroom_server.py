"""The server under the classroom soak: ``app.py --demo`` in a process of its own on a free
loopback port, its ``/ready`` answers, the engine child's pid and the resident memory of both
(from /proc), and a stop that makes sure no engine process outlives the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hunyuan_webui.urls import free_port

if TYPE_CHECKING:  # the tables' check imports the room benchmark with the standard library alone
    import httpx

ROOT = Path(__file__).resolve().parent.parent


class SoakError(RuntimeError):
    """The soak could not run (the server did not start): a message for the terminal."""


def rss_mib(pid: int | None) -> float | None:
    """Resident memory of a process (VmRSS), None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def spawned_child(ppid: int) -> int | None:
    """The live multiprocessing child of ``ppid`` (the engine), found through /proc."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if parent == ppid and b"spawn_main" in command and alive(int(entry.name)):
            return int(entry.name)
    return None


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """A child started while SIGINT is ignored (a background job) would ignore it too."""
    ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if ignored:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        if ignored:
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class ServerProcess:
    """``app.py --demo`` in a process of its own (its own session: Ctrl+C reaches the soak,
    which stops the server itself)."""

    def __init__(self, engine: str, log_path: Path, root: Path = ROOT) -> None:
        """``root``: the checkout whose app.py runs (another one, to compare)."""
        self.port, self.log_path, self.root = free_port(), log_path, root
        self.url = f"http://127.0.0.1:{self.port}"
        self.command = [sys.executable, str(root / "app.py"), "--demo", "--port", str(self.port),
                        "--log-level", "warning", "--engine", engine]
        self.proc: subprocess.Popen[bytes] | None = None
        self.engine_pids: set[int] = set()

    def start(self) -> None:
        with self.log_path.open("wb") as log, _interruptible():
            self.proc = subprocess.Popen(self.command, cwd=self.root, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True,
                                         env={**os.environ, "PYTHONUNBUFFERED": "1",
                                              "PYTHONPATH": str(self.root)})

    def log_tail(self, chars: int = 2000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    async def ready(self, http: httpx.AsyncClient) -> tuple[int | None, dict[str, Any]]:
        """/ready's status code and JSON (None, {} when it does not answer within 5 s)."""
        import httpx

        try:
            r = await http.get(self.url + "/ready", timeout=5)
            return r.status_code, r.json()
        except (httpx.HTTPError, ValueError):
            return None, {}

    async def wait_ready(self, http: httpx.AsyncClient, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise SoakError(f"the server exited with status {self.proc.returncode}:\n"
                                f"{self.log_tail()}")
            code, body = await self.ready(http)
            if code == 200:
                return body
            await asyncio.sleep(0.5)
        raise SoakError(f"the server was not ready within {timeout:g} s:\n{self.log_tail()}")

    def engine_pid(self, status: dict[str, Any]) -> int | None:
        pid = (status.get("extra") or {}).get("process")
        if pid is None and self.proc is not None:
            pid = spawned_child(self.proc.pid)
        if pid is not None:
            self.engine_pids.add(int(pid))
        return pid

    def stop(self) -> dict[str, Any]:
        """Ctrl+C, then SIGTERM, then SIGKILL; then check no engine child is left behind."""
        if self.proc is None:
            return {"clean": None, "note": "not started"}
        if self.proc.pid:
            self.engine_pid({})
        notes = []
        for sig, wait in ((signal.SIGINT, 20), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            if self.proc.poll() is not None:
                break
            if sig != signal.SIGINT:
                notes.append(f"needed {sig.name}")
            self.proc.send_signal(sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait)
        deadline = time.monotonic() + 10
        while any(alive(p) for p in self.engine_pids) and time.monotonic() < deadline:
            time.sleep(0.2)
        left = [p for p in self.engine_pids if alive(p)]
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if left:
            notes.append(f"engine process {left} outlived the server")
        return {"exit_code": self.proc.returncode, "clean": not left and not notes,
                "note": "; ".join(notes)}
