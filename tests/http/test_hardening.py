"""What the HTTP answers give away: CORS, framing, error bodies, model paths, exception text.

Found in a security review: Gradio's CORS middleware echoed origins with credentials; the page had
no Content-Security-Policy and could be framed; LibreTranslate's routes answered a bare 500 to
deeply nested JSON and 5,000-digit numbers; every answer carried the local model path; the page
showed raw exception text. Checked over real HTTP on a running app.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from apphelpers import assert_json_error, run_event, running_app, visitor
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane


@pytest.fixture(scope="module")
def open_app(engine):
    with running_app(engine) as running:
        yield running


@pytest.mark.parametrize("path", ["/", "/config", "/gradio_api/info", "/v1/languages"])
def test_no_cors_headers_unless_configured(open_app, path):
    """Found in review: Gradio's middleware echoed any localhost Origin with credentials, and any
    origin at all when the Host was not localhost (as behind --host 0.0.0.0)."""
    with open_app.client() as c:
        for headers in ({"Origin": "http://localhost:9999"},
                        {"Origin": "https://evil.example", "Host": "translator.school.example"},
                        {"Origin": "null"}):
            r = c.get(path, headers=headers)
            assert r.status_code == 200
            assert not [h for h in r.headers if h.startswith("access-control-")], r.headers
            r = c.options(path, headers={**headers, "Access-Control-Request-Method": "POST"})
            assert not [h for h in r.headers if h.startswith("access-control-allow-origin")]


def test_configured_cors_origins_apply_to_the_page_too(engine):
    with running_app(engine, cors_origins="https://ok.example") as app, app.client() as c:
        r = c.get("/config", headers={"Origin": "https://ok.example"})
        assert r.headers["access-control-allow-origin"] == "https://ok.example"
        r = c.get("/config", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers


def test_the_page_has_a_content_security_policy_and_cannot_be_framed(open_app):
    with open_app.client() as c:
        r = c.get("/")
    policy = r.headers["content-security-policy"]
    assert "frame-ancestors 'self'" in policy and "object-src 'none'" in policy
    assert "connect-src 'self'" in policy and "default-src 'self'" in policy
    assert r.headers["x-frame-options"] == "SAMEORIGIN"
    assert r.headers["x-content-type-options"] == "nosniff"


DEEP = b"[" * 50_000 + b"]" * 50_000
HUGE_NUMBER = b'{"q": "hi", "text": "hi", "target": "en", "target_lang": "en", "data": [' + \
    b"9" * 5_000 + b"]}"
ROUTES = ["/v1/translate", "/v1/detect", "/translate", "/detect", "/gradio_api/queue/join",
          "/gradio_api/call/translate", "/gradio_api/run/predict"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("body", [DEEP, HUGE_NUMBER], ids=["nested-50000", "5000-digits"])
def test_nested_json_and_huge_numbers_are_a_readable_4xx(open_app, route, body):
    """Found in review: LibreTranslate's routes answered a bare 500 to these."""
    with open_app.client() as c:
        r = c.post(route, content=body, headers={"content-type": "application/json"})
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:300])
    assert_json_error(r, r.status_code)


@pytest.mark.parametrize("route", ["/translate", "/detect"])
@pytest.mark.parametrize("content_type", ["application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=xyz", "application/json"])
def test_libretranslate_bodies_of_any_bytes_are_never_a_5xx(open_app, route, content_type):
    with open_app.client() as c:
        @settings(max_examples=40, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.one_of(st.binary(max_size=300),
                         st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
                         st.lists(st.sampled_from([b"q=", b"source=", b"target=", b"%", b"&",
                                                  b"\xff", b"--xyz\r\n", b"=", b"api_key=",
                                                  b"{", b"[", b'"', b"1e999999"]),
                                  max_size=20).map(b"".join)))
        def fuzz(body: bytes) -> None:
            r = c.post(route, content=body, headers={"content-type": content_type})
            assert r.status_code < 500, (body, r.status_code, r.text[:300])
            assert "Traceback" not in r.text

        fuzz()


def test_answers_name_the_model_never_its_path(open_app):
    local = str(Path(open_app.settings.model).resolve())  # .../assets/demo-model
    with open_app.client() as c:
        answers = [c.get("/ready"),
                   c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh",
                                                 "target_lang": "en"}),
                   c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh",
                                                 "target_lang": "en", "stream": True})]
    for r in answers:
        assert r.status_code == 200 and local not in r.text and "demo-model" in r.text


def test_the_page_shows_an_apology_never_raw_exception_text(open_app):
    """Found in review: the page showed raw exceptions, such as 'int' object has no attribute
    'strip', or a server path inside 'No such file or directory'."""
    with visitor(open_app) as c:
        status, stream = run_event(c, "translate", {"data": ["hi", ["en"], "zh"]})
    assert status == 200 and "event: error" in stream
    error = json.loads(stream.split("event: error\ndata: ", 1)[1].split("\n", 1)[0])["error"]
    assert error.startswith("Something went wrong on the server")
    assert "object" not in error and "attribute" not in error
