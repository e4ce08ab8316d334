"""One client address cannot fill everyone's upload space (issue 32, finding 6: with fresh
sessions, one client filled 954 MB in 16 s, and everyone's uploads were refused for an hour).

Beside each session's quota and the server's total, the sessions of one address hold at most
``--upload-address-mb``. Over HTTP, one address uploading from a fresh session each time is
refused with 429 and words once its share is full, while a client at another loopback address
(127.0.0.2: the server sees the socket's peer, never a forwarded header unless a proxy is
trusted) still uploads. The accounting itself is checked on :class:`VisitorFiles` directly:
reservations, files, their expiry and a refused file given up.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from apphelpers import assert_json_error, running_app

from hunyuan_webui.errors import RateLimitError
from hunyuan_webui.web.guards.visitor_files import VisitorFiles


def _file(folder: Path, name: str, size: int) -> Path:
    path = folder / name
    path.write_bytes(b"x" * size)
    return path


def test_an_address_holds_its_share_across_its_sessions(tmp_path):
    now = [0.0]
    files = VisitorFiles(tmp_path, ttl=100, clock=lambda: now[0], session_quota=300,
                         address_quota=500, total_quota=10_000)
    for i, session in enumerate(("s1", "s2")):
        files.reserve(session, 200, "10.0.0.1")()
        files.add(session, _file(tmp_path, f"a{i}", 200), "10.0.0.1")
    release = files.reserve("s3", 100, "10.0.0.1")  # 500 of 500, counting what is arriving
    with pytest.raises(RateLimitError, match="one address may hold") as refused:
        files.reserve("s4", 1, "10.0.0.1")
    assert refused.value.retry_after == 100  # when its first file expires
    release()
    files.reserve("s4", 100, "10.0.0.1")()  # the arrival that failed gave its room back
    files.reserve("s5", 300, "10.0.0.2")()  # another address has its own share
    now[0] = 101.0
    assert files.sweep(force=True) == 2 and files.usage() == 0
    files.reserve("s6", 300, "10.0.0.1")  # expired files free the address's share
    files.reserve("s7", 200, "10.0.0.1")


def test_a_file_given_up_is_deleted_and_frees_its_share(tmp_path):
    files = VisitorFiles(tmp_path, ttl=100, address_quota=300)
    (tmp_path / "up").mkdir()
    path = files.add("s1", _file(tmp_path / "up", "bomb.docx", 300), "10.0.0.1")
    with pytest.raises(RateLimitError):
        files.reserve("s2", 1, "10.0.0.1")
    files.forget("s1", path)
    assert not Path(path).exists() and files.usage() == 0
    files.reserve("s2", 300, "10.0.0.1")()


# -- over HTTP ---------------------------------------------------------------------------------------
@contextmanager
def fresh_visitor(app, address: str):
    """A client at ``address`` with a new session (no cookie) for every use."""
    transport = httpx.HTTPTransport(local_address=address)
    with httpx.Client(base_url=app.url, transport=transport, timeout=60,
                      trust_env=False) as client:
        yield client


def _upload(app, address: str, size: int) -> httpx.Response:
    with fresh_visitor(app, address) as c:
        assert c.get("/config").status_code == 200  # the page hands it a session
        data = os.urandom(size // 2).hex().encode()
        return c.post("/gradio_api/upload", files={"files": ("part.txt", data, "text/plain")})


@pytest.mark.slow
def test_one_address_with_fresh_sessions_cannot_fill_everyones_space(engine):
    with running_app(engine, upload_quota_mb=1, upload_address_mb=2, upload_total_mb=10,
                     visitor_rpm=0) as app:
        answers = [_upload(app, "127.0.0.1", 450_000) for _ in range(6)]
        assert [r.status_code for r in answers[:4]] == [200] * 4, answers[3].text
        message = assert_json_error(answers[4], 429, "rate_limited")
        assert "one address may hold 2 MB" in message, message
        assert 1 <= int(answers[4].headers["retry-after"]) <= app.settings.files_ttl
        assert answers[5].status_code == 429
        # Another client's address still has its share, and the server its space.
        assert [_upload(app, "127.0.0.2", 450_000).status_code for _ in range(4)] == [200] * 4
        # A forwarded header does not make the first client someone else.
        with fresh_visitor(app, "127.0.0.1") as c:
            c.get("/config")
            forged = c.post("/gradio_api/upload", headers={"X-Forwarded-For": "10.9.8.7"},
                            files={"files": ("p.txt", b"x" * 450_000, "text/plain")})
        assert forged.status_code == 429
