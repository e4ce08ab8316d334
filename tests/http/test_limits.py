"""Limits that hold before anything is stored or read, for uploads, passwords and slow clients.

Found in a security review: a 300 MB upload was stored, read whole into memory (server RSS 216 ->
503 MB) and only then refused; 30 wrong passwords went through in 2.2 s; 50 connections that sent
half their headers were still open after 35 s. The upload is measured on a server in a process
of its own (``app_process``), so that its memory is the server's alone.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import httpx
import pytest
from apphelpers import app_process, assert_json_error, document_call, run_event, running_app

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

MB = 1 << 20


@pytest.fixture(scope="module")
def login_app(engine):
    with running_app(engine, auth="teacher:pw-s3cret") as running:
        yield running


def multipart(size: int, boundary: str = "hymt-test-boundary") -> tuple[Callable, int, dict]:
    """A one-file multipart body of ``size`` bytes, generated as it is sent."""
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; "
            f"filename=\"big.txt\"\r\nContent-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():
        yield head
        chunk, sent = b"a" * MB, 0
        while sent < size:
            yield chunk[:min(MB, size - sent)]
            sent += min(MB, size - sent)
        yield tail

    headers = {"content-type": f"multipart/form-data; boundary={boundary}"}
    return body, len(head) + size + len(tail), headers


def test_a_300_mb_upload_is_refused_before_it_reaches_memory():
    """Found in review: /gradio_api/upload was exempt from the body limit and Gradio's own limit
    was unset: 300 MB were stored, read whole (server RSS 216 -> 503 MB) and only then refused."""
    with app_process() as server, httpx.Client(base_url=server.url, trust_env=False,
                                               timeout=120) as c:
        assert c.get("/config").status_code == 200
        small, length, headers = multipart(1000)
        assert c.post("/gradio_api/upload", content=small(),
                      headers={**headers, "content-length": str(length)}).status_code == 200
        before = server.rss_kib()

        body, length, headers = multipart(300 * MB)
        declared = c.post("/gradio_api/upload", content=body(),
                          headers={**headers, "content-length": str(length)})
        if declared.status_code == 200:  # accepted: then use it, as the reported visitor did
            run_event(c, "translate_document", document_call(declared.json()[0]))
        chunked = c.post("/gradio_api/upload", content=body(), headers=headers)  # no length
        grown_mib = (server.rss_kib() - before) / 1024

    assert declared.status_code == 413 and grown_mib < 8, (declared.status_code, grown_mib)
    assert "5,000,000 bytes" in assert_json_error(declared, 413, "body_too_large")
    assert_json_error(chunked, 411, "length_required")


def test_failed_logins_slow_down(login_app):
    """Found in review: 30 wrong passwords in 2.2 s, with no slowdown or lockout."""
    with login_app.client() as c:
        statuses = [c.post("/login", data={"username": "teacher", "password": f"guess{i}"})
                    for i in range(30)]
        codes = [r.status_code for r in statuses]
        assert codes.count(400) <= 6 and codes.count(429) >= 24, codes
        refused = next(r for r in statuses if r.status_code == 429)
        assert "sign-ins" in assert_json_error(refused, 429, "rate_limited")
        wait = int(refused.headers["retry-after"])
        # Even the right password waits its turn...
        r = c.post("/login", data={"username": "teacher", "password": "pw-s3cret"})
        assert r.status_code == 429
        time.sleep(wait + 0.2)
        # ...and then gets in.
        r = c.post("/login", data={"username": "teacher", "password": "pw-s3cret"})
        assert r.status_code == 200 and r.json() == {"success": True}


def test_half_sent_headers_are_cut_off(engine):
    """Found in review: 50 connections sending half their headers stayed open after 35 s."""
    with running_app(engine, header_timeout=1.0) as app:
        port = int(app.url.rsplit(":", 1)[1])
        slow = []
        for _ in range(50):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            slow.append(sock)
        time.sleep(2.5)
        for sock in slow:
            try:
                assert sock.recv(1024) == b""  # closed by the server
            except ConnectionResetError:
                pass
            finally:
                sock.close()
        with app.client() as c:  # a normal client, keep-alive included, is untouched
            assert [c.get("/health").status_code for _ in range(3)] == [200] * 3


@pytest.mark.parametrize("mode", ["translate", "formatted"])
def test_a_short_text_of_many_tokens_is_held_to_the_token_limit(make_translator, mode):
    """Characters do not bound tokens: each of these rare characters is three byte tokens, so 40
    characters are 120 tokens, and the limit of 100 must refuse them in plain words (it used to
    skip the count for any text of at most 100 characters)."""
    from hunyuan_webui.engine import GREEDY
    from hunyuan_webui.errors import InputTooLongError
    from hunyuan_webui.service import TranslationRequest

    translator = make_translator(max_input_tokens=100)
    text = "龘" * 40
    with pytest.raises(InputTooLongError) as refused:
        translator.start(TranslationRequest(text=text, source_lang="zh", target_lang="en",
                                            mode=mode))
    assert refused.value.user_message.startswith("The text is 120 tokens long; the limit is 100.")
    with pytest.raises(InputTooLongError, match="120 tokens long"):
        translator.generate(text, GREEDY)  # the OpenAI route's plain generation
