"""A real, throwaway ``redis-server`` for tests.

    from redis_server import redis_server, requires_redis_server

    @requires_redis_server
    def test_something():
        with redis_server() as url:          # redis://127.0.0.1:<free port>/0
            ...

The server listens on a free loopback port, keeps its files in a temporary directory, persists
nothing (no RDB, no AOF) and is stopped (and the directory removed) when the block ends.
:class:`RedisServer` is the same thing with ``stop()``/``start()`` for tests that take the server
away mid-run and bring it back on the same port. Needs Debian's ``redis-server`` package on PATH;
``requires_redis_server`` skips with a clear reason when it is missing.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator

import pytest
from apphelpers import free_port

REDIS_SERVER = shutil.which("redis-server")

requires_redis_server = pytest.mark.skipif(
    REDIS_SERVER is None,
    reason="redis-server is not on PATH (apt-get install redis-server) - Redis tests skipped")


def _ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


class RedisServer:
    """One ``redis-server`` process; ``with RedisServer() as server: server.url``."""

    def __init__(self, startup_timeout: float = 10.0) -> None:
        if REDIS_SERVER is None:
            raise RuntimeError("redis-server is not on PATH (apt-get install redis-server).")
        self.startup_timeout = startup_timeout
        self.port = 0
        self.directory: str | None = None
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        """Starts the server (on the same port again after :meth:`stop`)."""
        if self.process is not None and self.process.poll() is None:
            return self
        if self.directory is None:
            self.directory = tempfile.mkdtemp(prefix="redis-test-")
        fixed_port = self.port != 0
        for _attempt in range(5):
            if not fixed_port:
                self.port = free_port()
            self.process = subprocess.Popen(
                [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1",
                 "--dir", self.directory, "--save", "", "--appendonly", "no",
                 "--daemonize", "no", "--loglevel", "warning", "--logfile", "redis.log"],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + self.startup_timeout
            while time.monotonic() < deadline and self.process.poll() is None:
                if _ping(self.port):
                    return self
                time.sleep(0.05)
            self._reap()  # lost a race for the port, or too slow: try again
            if fixed_port:
                time.sleep(0.5)
        raise RuntimeError(f"redis-server did not start on 127.0.0.1:{self.port}; see "
                           f"{self.directory}/redis.log")

    def stop(self, *, kill: bool = False) -> None:
        """Stops the server: SIGTERM, or SIGKILL with ``kill=True`` (a crash)."""
        if self.process is None:
            return
        if kill:
            self.process.kill()
        self._reap()

    def _reap(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)

    def close(self) -> None:
        self.stop()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@contextlib.contextmanager
def redis_server() -> Iterator[str]:
    """A running server for the block; yields its URL."""
    with RedisServer() as server:
        yield server.url
