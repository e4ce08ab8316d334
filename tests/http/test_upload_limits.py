"""Disk and time are bounded for uploads and request bodies.

Found in a hardening review: one session stored 981 MB of uploads in 5.4 s; uploads had no quota and did
not count against the visitor limits; an aborted upload (declare 5 MB, send 4.9 MB, hang up)
stayed on disk, after the expiry sweep and after shutdown. Finding 3: 2,000 connections trickling
a body one byte every 2 s stayed open indefinitely. Here: quotas per session and in all, uploads
counted as requests, unfinished uploads removed at once, the app's own folder emptied at start
(after a ``kill -9``) and at stop, and a deadline and a minimum rate for request bodies.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from apphelpers import (
    app_process,
    assert_json_error,
    machine_stalls,
    running_app,
    visitor,
    wait_until,
)
from gradio.utils import get_upload_folder

from hunyuan_webui.web.guards.visitor_files import MARKER

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

BOUNDARY = "hymt-test-boundary"


def _files(folder: str | Path) -> set[str]:
    return {str(p) for p in Path(folder).rglob("*") if p.is_file() and p.name != MARKER}


def _multipart_parts(size: int) -> tuple[bytes, bytes, bytes]:
    head = (f"--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename=\"part.txt\"\r\nContent-Type: text/plain\r\n\r\n").encode()
    return head, b"a" * size, f"\r\n--{BOUNDARY}--\r\n".encode()


def _upload_bytes(c: httpx.Client, size: int) -> httpx.Response:
    """An upload of ``size`` bytes of its own (Gradio stores equal contents once)."""
    data = os.urandom(size // 2).hex().encode()
    return c.post("/gradio_api/upload", files={"files": ("part.txt", data, "text/plain")})


def _raw_upload_head(port: int, length: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall((f"POST /gradio_api/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                  f"Content-Type: multipart/form-data; boundary={BOUNDARY}\r\n"
                  f"Content-Length: {length}\r\n\r\n").encode())
    return sock


def _read_all(sock: socket.socket, timeout: float) -> bytes:
    sock.settimeout(timeout)
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, TimeoutError):
        pass
    return data


# -- quotas and visitor limits ---------------------------------------------------------------------
def test_uploads_are_held_to_a_quota_per_session_and_in_all(engine):
    with running_app(engine, upload_quota_mb=1, upload_total_mb=2) as app, \
            visitor(app) as alice, visitor(app) as bob, visitor(app) as carol:
        assert [_upload_bytes(alice, 450_000).status_code for _ in range(2)] == [200, 200]
        refused = _upload_bytes(alice, 450_000)
        message = assert_json_error(refused, 413, "upload_quota")
        assert "quota of 1 MB" in message and "0.9 MB used" in message, message
        # Other sessions have their own quota, up to the server's total...
        assert [_upload_bytes(bob, 450_000).status_code for _ in range(2)] == [200, 200]
        full = _upload_bytes(carol, 450_000)
        assert "space for uploads (2 MB) is full" in assert_json_error(full, 429, "rate_limited")
        assert full.headers["retry-after"] == "60"
        assert _upload_bytes(carol, 10_000).status_code == 200  # ...which still has room for this


def test_files_past_their_time_free_the_quota(engine):
    with running_app(engine, upload_quota_mb=1, files_ttl=1) as app, visitor(app) as c:
        assert _upload_bytes(c, 900_000).status_code == 200
        assert_json_error(_upload_bytes(c, 200_000), 413, "upload_quota")
        time.sleep(1.3)
        assert c.get("/health").status_code == 200  # any request sweeps what has expired
        assert wait_until(lambda: _upload_bytes(c, 200_000).status_code == 200, 5)


def test_an_upload_counts_as_a_request_of_its_visitor(engine):
    with running_app(engine, visitor_rpm=2) as app, visitor(app) as c:
        assert [_upload_bytes(c, 100).status_code for _ in range(2)] == [200, 200]
        refused = _upload_bytes(c, 100)
        assert "2 requests per minute for this visitor" in assert_json_error(refused, 429,
                                                                             "rate_limited")


# -- unfinished uploads ----------------------------------------------------------------------------
def test_an_upload_cut_short_by_a_hang_up_leaves_no_file(engine):
    """The reported probe: declare 5 MB, send 4.9 MB, hang up."""
    with running_app(engine) as app:
        folder = get_upload_folder()
        before = _files(folder)
        head, data, tail = _multipart_parts(4_900_000)
        sock = _raw_upload_head(int(app.url.rsplit(":", 1)[1]),
                                len(head) + 5_000_000 + len(tail))
        sock.sendall(head + data)
        # Gradio is writing it (the test would pass trivially if nothing were ever stored)...
        assert wait_until(lambda: _files(folder) - before, 10), "no partial file was written"
        sock.close()  # ...and the client hangs up
        assert wait_until(lambda: not (_files(folder) - before), 10), _files(folder) - before
        with app.client() as c:
            assert c.get("/health").status_code == 200


def test_an_upload_that_stalls_is_cut_off_and_leaves_no_file(engine):
    with running_app(engine, body_timeout=2.0) as app:
        folder = get_upload_folder()
        before = _files(folder)
        head, data, tail = _multipart_parts(1_000_000)
        sock = _raw_upload_head(int(app.url.rsplit(":", 1)[1]), len(head) + 2_000_000 + len(tail))
        sock.sendall(head + data)  # half of it, then nothing
        answer = _read_all(sock, 6)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b'"request_timeout"' in answer
        assert wait_until(lambda: not (_files(folder) - before), 10), _files(folder) - before


# -- the app's own folder --------------------------------------------------------------------------
def test_a_start_after_kill_9_removes_what_the_crash_left(tmp_path):
    folder = tmp_path / "uploads"
    with app_process("--upload-dir", str(folder)) as server, \
            httpx.Client(base_url=server.url, trust_env=False, timeout=30) as c:
        assert c.get("/config").status_code == 200
        r = _upload_bytes(c, 1000)
        assert r.status_code == 200
        [left] = r.json()
        assert Path(left).is_file() and Path(left).is_relative_to(folder)
        os.killpg(server.pid, signal.SIGKILL)  # no shutdown at all
        assert wait_until(lambda: not Path(f"/proc/{server.pid}").exists() or
                          "zombie" in Path(f"/proc/{server.pid}/status").read_text().lower(), 10)
    assert Path(left).is_file()  # the crash left it behind
    with app_process("--upload-dir", str(folder)):
        assert not Path(left).exists() and _files(folder) == set()
        assert (folder / MARKER).exists()
    assert not folder.exists()  # and a normal stop removes the whole folder


def test_a_folder_of_someone_else_s_is_never_emptied(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work")
    repo = Path(__file__).resolve().parents[2]
    run = subprocess.run([sys.executable, str(repo / "app.py"), "--demo", "--upload-dir",
                          str(folder), "--port", "1"], capture_output=True, text=True, timeout=120,
                         cwd=repo, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert run.returncode == 2 and "not empty and was not made by this app" in run.stderr
    assert (folder / "thesis.tex").read_text() == "years of work"


# -- slow bodies -----------------------------------------------------------------------------------
def _trickle(port: int, every: float, stop: threading.Event) -> tuple[bytes, float]:
    """A body declared as 1,000 bytes and sent one byte every ``every`` seconds: (the answer,
    seconds until the server closed the connection)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(b"POST /v1/translate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                 b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    started = time.monotonic()
    sock.settimeout(every)
    answer = b""
    try:
        while not stop.is_set() and time.monotonic() - started < 30:
            try:
                sock.sendall(b" ")
            except (BrokenPipeError, ConnectionResetError):
                break
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except ConnectionResetError:
                break
            if not chunk:
                break
            answer += chunk
    finally:
        sock.close()
    return answer, time.monotonic() - started


@pytest.mark.parametrize("limits,cut_after", [({"body_timeout": 2.0, "body_min_rate": 0}, 2.0),
                                              ({"body_timeout": 60.0, "body_min_rate": 1000}, 5.0)],
                         ids=["deadline", "min-rate"])
def test_a_trickled_body_is_cut_off_while_others_are_served(engine, limits, cut_after):
    with running_app(engine, **limits) as app, app.client(timeout=5) as other:
        port = int(app.url.rsplit(":", 1)[1])
        stop, result = threading.Event(), []
        trickler = threading.Thread(target=lambda: result.append(_trickle(port, 0.5, stop)))
        trickler.start()
        timings = []
        with machine_stalls() as stalled:
            while trickler.is_alive() and len(timings) < 200:
                t0 = time.monotonic()
                assert other.get("/health").status_code == 200
                timings.append(time.monotonic() - t0)
                time.sleep(0.1)
        stop.set()
        trickler.join(timeout=10)
        answer, closed_after = result[0]
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert b"too slowly" in answer and b"connection: close" in answer.lower()
        assert cut_after - 0.2 <= closed_after <= cut_after + 1.5, closed_after
        # Another client is served meanwhile (CI failed once on a 1.7 s answer: its machine's).
        assert max(timings) < 1.0 + stalled[0], (timings, stalled)
        # The same server takes a normal body, and a large upload, within the deadline.
        r = other.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh",
                                              "target_lang": "en"})
        assert r.status_code == 200 and r.json()["translation"] == "Thank you."
        with visitor(app) as c:
            assert _upload_bytes(c, 4_000_000).status_code == 200
