"""Every body Gradio would parse is inspected, whatever its content type says.

Found in a hardening review: the Gatekeeper inspected the page's bodies only when their Content-Type did
not start with ``application/x-www``, while FastAPI parses any ``application/*+json`` as JSON. So
``POST /gradio_api/call/translate_document`` with ``Content-Type:
application/x-www-form-urlencoded+json`` and a FileData naming ``/dev/zero`` reached Gradio, which
copied the file into its cache on the event loop: ``/health`` never answered again. Here the app
runs in a process of its own (``app.py``), reached over real HTTP, with its own upload folder,
so that what it copies there can be seen.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import httpx
import pytest
from apphelpers import app_process, assert_json_error, completed, document_call, file_data

from hunyuan_webui.web.guards.visitor_files import MARKER

pytestmark = pytest.mark.slow  # a child process: not the fast lane

ZERO = "/dev/zero"
CALL = "/gradio_api/call/translate_document"
HEALTH_BOUND_S = 4.0  # under the 5 s timeout of _health_while's client, where a frozen loop ends


def _plain(payload: dict) -> bytes:
    return json.dumps(payload).encode()


def _nested(path: str) -> dict:
    """A FileData buried in lists and objects, where no listener expects one."""
    return {"data": [{"a": [{"b": [file_data(path)]}]}, "en", "en", [], True, {}]}


# (route, content type or None, body, expected status, expected error code)
VARIANTS = [
    # The exact request that was reported.
    (CALL, "application/x-www-form-urlencoded+json", _plain(document_call(ZERO)), 403,
     "file_not_uploaded"),
    # Casing and parameters do not change what FastAPI parses.
    (CALL, "Application/X-WWW-Form-Urlencoded+JSON; charset=UTF-8", _plain(document_call(ZERO)),
     403, "file_not_uploaded"),
    (CALL, "APPLICATION/JSON;charset=utf-16", json.dumps(document_call(ZERO)).encode("utf-16"),
     403, "file_not_uploaded"),
    # +json on other subtypes, and labels FastAPI does not parse but /component_server does.
    (CALL, "application/problem+json", _plain(document_call(ZERO)), 403, "file_not_uploaded"),
    (CALL, "application/vnd.anything+json; q=1", _plain(document_call(ZERO)), 403,
     "file_not_uploaded"),
    (CALL, "text/plain", _plain(document_call(ZERO)), 403, "file_not_uploaded"),
    (CALL, None, _plain(document_call(ZERO)), 403, "file_not_uploaded"),
    (CALL, "not a media type", _plain(document_call(ZERO)), 403, "file_not_uploaded"),
    # Other routes, and a FileData nested where no listener expects one.
    ("/gradio_api/queue/join", "application/x-www-form-urlencoded+json",
     _plain({"data": [file_data(ZERO)], "fn_index": 0, "session_hash": "abcdefgh"}), 403,
     "file_not_uploaded"),
    ("/gradio_api/call/v2/translate_document", "text/plain",
     _plain({"file": file_data(ZERO), "source": "en", "target": "en"}), 403, "file_not_uploaded"),
    ("/gradio_api/component_server", "text/plain",
     _plain({"data": file_data(ZERO), "component_id": 1, "session_hash": "abcdefgh",
             "fn_name": "x"}), 403, "file_not_uploaded"),
    (CALL, "application/json", _plain(_nested(ZERO)), 403, "file_not_uploaded"),
    # Forms on Gradio's endpoints (only the upload route takes multipart), and non-JSON.
    (CALL, "application/x-www-form-urlencoded",
     b"data=" + _plain(document_call(ZERO)), 415, "unsupported_media_type"),
    (CALL, "MULTIPART/form-data; boundary=b",
     b"--b\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\n/dev/zero\r\n--b--\r\n", 415,
     "unsupported_media_type"),
    ("/gradio_api/component_server", "multipart/form-data; boundary=b",
     b"--b\r\nContent-Disposition: form-data; name=\"data\"\r\n\r\n/dev/zero\r\n--b--\r\n", 415,
     "unsupported_media_type"),
    (CALL, "text/plain", b"path=/dev/zero", 400, "invalid_request"),
    # An upload route body that is not multipart is inspected like any other.
    ("/gradio_api/upload", "application/x-www-form-urlencoded+json",
     _plain({"files": [file_data(ZERO)]}), 403, "file_not_uploaded"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("uploads")
    with app_process("--upload-dir", str(folder)) as running:
        yield running, folder


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_size for p in folder.rglob("*")
            if p.is_file() and p.name != MARKER}


def _health_while(send, url: str) -> tuple[object, list[float]]:
    """Send one request in a thread; meanwhile time /health from another client, until the
    request is answered and for at least 1 s. Returns (its response or error, the timings)."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(_catch(send)), daemon=True)
    timings = []
    with httpx.Client(base_url=url, trust_env=False, timeout=5) as other:
        thread.start()
        started = time.monotonic()
        while thread.is_alive() or time.monotonic() - started < 1.0:
            t0 = time.monotonic()
            try:
                assert other.get("/health").status_code == 200
                timings.append(time.monotonic() - t0)
            except httpx.TimeoutException:
                timings.append(float("inf"))
            if time.monotonic() - started > 15:
                break
            time.sleep(0.05)
    thread.join(timeout=10)
    return (result[0] if result else "no answer"), timings


def _catch(send):
    try:
        return send()
    except httpx.HTTPError as exc:
        return exc


@pytest.mark.parametrize("route,content_type,body,status,code", VARIANTS,
                         ids=[f"{v[0].rsplit('/', 1)[-1]}-{v[1]}-{v[3]}" for v in VARIANTS])
def test_bodies_naming_a_file_are_refused_whatever_their_label(server, route, content_type, body,
                                                                status, code):
    app, folder = server
    before = _files(folder)
    with httpx.Client(base_url=app.url, trust_env=False, timeout=10) as c:
        assert c.get("/config").status_code == 200  # a visitor, with its session
        headers = {"content-type": content_type} if content_type else {}
        answer, timings = _health_while(lambda: c.post(route, content=body, headers=headers),
                                        app.url)
    assert isinstance(answer, httpx.Response), answer
    assert_json_error(answer, status, code)
    # Another client was served meanwhile. The freeze this guards against is for good (Gradio
    # copying /dev/zero on the event loop: /health never answers again, each wait runs into the
    # client's 5 s timeout); a busy machine may hold one answer for a second or two.
    assert max(timings) < HEALTH_BOUND_S, timings
    assert _files(folder) == before  # nothing copied into Gradio's folder


def test_a_chunked_body_is_inspected_too(server):
    """No Content-Length: the body still carries the FileData, and is still read first."""
    app, folder = server
    before = _files(folder)
    payload = _plain(document_call(ZERO))
    with httpx.Client(base_url=app.url, trust_env=False, timeout=10) as c:
        assert c.get("/config").status_code == 200
        r = c.post(CALL, content=iter([payload[:20], payload[20:]]),
                   headers={"content-type": "application/x-www-form-urlencoded+json"})
    assert "transfer-encoding" in r.request.headers
    assert_json_error(r, 403, "file_not_uploaded")
    assert _files(folder) == before


def test_the_page_s_own_calls_still_work(server):
    """The rule refuses what names a foreign file, not the page: an own upload translates."""
    app, _ = server
    with httpx.Client(base_url=app.url, trust_env=False, timeout=60) as c:
        assert c.get("/config").status_code == 200
        r = c.post("/gradio_api/upload", files={"files": ("hi.txt", "谢谢。\n".encode(),
                                                          "text/plain")})
        assert r.status_code == 200, r.text
        [path] = r.json()
        r = c.post(CALL, content=_plain(document_call(path, "zh", "en")),
                   headers={"content-type": "Application/Problem+JSON; charset=utf-8"})
        assert r.status_code == 200, r.text
        out, message = completed(c.get(f"{CALL}/{r.json()['event_id']}").text)
        assert "hi.en.txt" in message
        assert c.get(out["url"]).text == "Thank you.\n"


def test_an_empty_session_hash_is_a_400_not_gradios_500(server):
    """Found by the fuzz test in CI: Gradio's queue keys its messages on the session_hash a call
    names, and an empty one raised a KeyError (500). A gradio_client UUID still passes."""
    app, _ = server
    with httpx.Client(base_url=app.url, trust_env=False, timeout=30) as c:
        assert c.get("/config").status_code == 200
        for bad in ("", " ", "a/b", "x" * 101):
            r = c.post("/gradio_api/call/translate", json={"data": [], "session_hash": bad})
            assert_json_error(r, 400, "invalid_request")
        r = c.post("/gradio_api/call/translate",
                   json={"data": [], "session_hash": "3f2b1c8e-9d4a-4e6b-8c7d-1a2b3c4d5e6f"})
        assert r.status_code == 200, r.text
