"""What the HTTP answers give away: error bodies and model paths.

Issue 11, finding 5: LibreTranslate's routes answered a bare 500 to deeply nested JSON and
5,000-digit numbers (only ``JSONDecodeError`` and ``UnicodeDecodeError`` were caught), and every
answer carried the local model path. Checked over real HTTP on a running app, with fuzzed form
and JSON bodies too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelpers import assert_json_error, running_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


@pytest.fixture(scope="module")
def open_app(engine):
    with running_app(engine) as running:
        yield running


DEEP = b"[" * 50_000 + b"]" * 50_000
HUGE_NUMBER = b'{"q": "hi", "text": "hi", "target": "en", "target_lang": "en", "data": [' + \
    b"9" * 5_000 + b"]}"
ROUTES = ["/v1/translate", "/v1/detect", "/translate", "/detect"]


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("body", [DEEP, HUGE_NUMBER], ids=["nested-50000", "5000-digits"])
def test_nested_json_and_huge_numbers_are_a_readable_4xx(open_app, route, body):
    """Issue finding 5: LibreTranslate's routes answered a bare 500 to these."""
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
