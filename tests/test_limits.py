"""Limits that hold before anything is stored or read.

Issue 11, finding 3: a 300 MB upload was stored, read whole into memory (server RSS 216 -> 503 MB)
and only then refused. The upload is measured on a server in a process of its own
(``app_process``), so that its memory is the server's alone.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx
from apphelpers import app_process, assert_json_error, document_call, run_event

MB = 1 << 20


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
    """Issue finding 3: /gradio_api/upload was exempt from the body limit and Gradio's own limit
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
        if declared.status_code == 200:  # accepted: then use it, as the visitor did
            run_event(c, "translate_document", document_call(declared.json()[0]))
        chunked = c.post("/gradio_api/upload", content=body(), headers=headers)  # no length
        grown_mib = (server.rss_kib() - before) / 1024

    assert declared.status_code == 413 and grown_mib < 8, (declared.status_code, grown_mib)
    assert "5,000,000 bytes" in assert_json_error(declared, 413, "body_too_large")
    assert_json_error(chunked, 411, "length_required")
