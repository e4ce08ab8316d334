"""Fuzz every route: the JSON API and the protocol routes from the app's own OpenAPI document, and
every route besides (the page's own, Gradio's) with any body under any content type.

schemathesis reads ``/openapi.json`` from the running server and sends valid and invalid requests
(wrong types, missing fields, odd strings, unexpected media types) through real HTTP. The
properties checked are the hardening review's: no answer is a 5xx or shows a traceback. For the routes
outside the document, Hypothesis writes the bodies (JSON of any shape, FileData naming files
never uploaded, raw bytes, nesting and numbers the parser refuses) under content types that
only look like JSON or forms; there, every answer also comes within a bound while another
client's ``/health`` is answered within :data:`OTHER_CLIENT_BOUND_S`.
Bounded: at most 50 generated cases per operation (valid and invalid), 150 for the other routes,
no deadline.

The cases come from schemathesis' own strategies driven by Hypothesis here, rather than through
``schemathesis.pytest.from_fixture``: that loader sets ``request.node._nodeid``, which pytest 9
no longer has.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from typing import Any
from urllib.parse import quote

import httpx
import pytest
import requests
import schemathesis
from apphelpers import running_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from roomhelpers import Reader, wait_for
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from hunyuan_webui import languages
from hunyuan_webui.demo.asr import ensure_demo_asr
from hunyuan_webui.engine import DecodingOptions

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

IN_SCOPE = r"^/(v1/.+|v2/.+|translate|detect|languages|imme|kiss|deeplx|hcfy)$"
OPERATIONS = [("POST", "/v1/translate"), ("POST", "/v1/detect"), ("GET", "/v1/languages"),
              ("POST", "/translate"), ("POST", "/detect"), ("GET", "/languages"),
              ("POST", "/languages"), ("GET", "/v1/cache"), ("DELETE", "/v1/cache"),
              ("POST", "/v1/chat/completions"), ("GET", "/v1/models"),
              ("GET", "/v1/models/{model}"), ("POST", "/v2/translate"), ("GET", "/v2/languages"),
              ("POST", "/v2/languages"), ("GET", "/v2/usage"), ("POST", "/v2/usage"),
              ("GET", "/v1/model"), ("POST", "/v1/completions"), ("POST", "/imme"),
              ("POST", "/kiss"), ("POST", "/deeplx"), ("POST", "/hcfy"),
              ("POST", "/v2/document"), ("POST", "/v2/document/{document_id}"),
              ("POST", "/v2/document/{document_id}/result"), ("POST", "/v1/documents"),
              ("GET", "/v1/documents/{document_id}"), ("GET", "/v1/documents/{document_id}/result"),
              ("DELETE", "/v1/documents/{document_id}"), ("POST", "/v1/audio/transcriptions")]
MAX_EXAMPLES = 50
KEY = "fuzz-key"
OPTION_NAMES = {f.name for f in dataclasses.fields(DecodingOptions)}


@pytest.fixture(scope="module")
def fuzz_app(engine, tmp_path_factory):
    # Small limits keep each generated translation short; the model still runs for valid input.
    # API keys are on, so that made-up keys (of any JSON type) are fuzzed too.
    keys = tmp_path_factory.mktemp("fuzz") / "keys.txt"
    keys.write_text(f"{KEY} 0 0\n", encoding="utf-8")
    # The demo recogniser answers the transcription route (refused sound, or real recognition).
    with running_app(engine, max_input_chars=300, max_body_bytes=20_000,
                     api_keys_file=str(keys), asr_model=str(ensure_demo_asr())) as running:
        yield running


@pytest.fixture(scope="module")
def session():
    with requests.Session() as s:
        s.trust_env = False  # loopback only, whatever the environment's proxies say
        yield s


@pytest.fixture(scope="module")
def api_schema(fuzz_app):
    return schemathesis.openapi.from_url(f"{fuzz_app.url}/openapi.json")


def test_every_api_operation_is_fuzzed(api_schema):
    document = api_schema.raw_schema["paths"]
    in_scope = {(method.upper(), path) for path, ops in document.items()
                if re.match(IN_SCOPE, path) for method in ops}
    assert in_scope == set(OPERATIONS)


def realistic(case: Any, source: str | None, target: str | None, tidy: bool, keyed: bool) -> Any:
    """Random strings are never API keys, language codes, modes or option names: often put real
    ones in (or take the made-up ones out), so that generated requests also reach the model."""
    if keyed:
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {KEY}"}
    if not isinstance(case.body, dict):
        return case
    libretranslate = not case.path.startswith(("/v1/", "/v2/"))
    if keyed and libretranslate:
        case.body["api_key"] = KEY  # LibreTranslate's clients send it in the body
    if not case.path.endswith("/translate"):
        return case
    names = ("source", "target") if libretranslate else ("source_lang", "target_lang")
    for name, code in zip(names, (source, target)):
        if code is not None:
            case.body[name] = code
    if tidy:
        case.body.pop("mode", None)
        if isinstance(case.body.get("options"), dict):
            case.body["options"] = {k: v for k, v in case.body["options"].items()
                                    if k in OPTION_NAMES}
    return case


@pytest.mark.parametrize("method, path", OPERATIONS)
def test_no_server_errors(api_schema, fuzz_app, session, method, path):
    operation = api_schema[path][method]
    generated = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                          operation.as_strategy(GenerationMode.NEGATIVE))
    real = st.sampled_from([*languages.CODES, "auto", "zh-CN", "EN"])
    codes = st.one_of(real, real, real, st.none())  # mostly real codes; sometimes the generated
    mostly = st.sampled_from([True, True, True, False])
    cases = st.builds(realistic, generated, codes, codes, mostly, mostly)

    @given(case=cases)
    @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def fuzz(case):
        response = case.call(base_url=fuzz_app.url, session=session, timeout=60)
        case.validate_response(response, checks=[not_a_server_error])
        assert "Traceback" not in response.text

    fuzz()


# -- every route, every content type, and another client served meanwhile -------------------------
# Routes outside the OpenAPI document: the page's own (Gradio's), and the protocol routes again
# with bodies schemathesis would not write (any bytes, any content type).
PAGE_ROUTES = [("POST", "/gradio_api/call/translate"), ("POST", "/gradio_api/call/translate_ui"),
               ("POST", "/gradio_api/call/translate_document"),
               ("POST", "/gradio_api/call/translate_example"), ("POST", "/gradio_api/queue/join"),
               ("POST", "/gradio_api/run/predict"), ("POST", "/gradio_api/upload"),
               ("POST", "/gradio_api/api/translate"), ("GET", "/gradio_api/info"),
               ("GET", "/config"), ("POST", "/login"), ("GET", "/gradio_api/file=/etc/hostname"),
               ("GET", "/gradio_api/queue/data"), ("POST", "/gradio_api/cancel"),
               ("POST", "/translate"), ("POST", "/detect"), ("POST", "/v2/translate"),
               ("GET", "/v2/languages"), ("POST", "/v2/usage"), ("POST", "/v1/chat/completions"),
               ("POST", "/v1/translate"), ("POST", "/v1/detect"), ("POST", "/v2/document"),
               ("POST", "/v1/documents"), ("POST", "/v2/document/x"),
               ("POST", "/v1/audio/transcriptions"), ("POST", "/class/api/rooms/123456/speech")]
CONTENT_TYPES = ["application/json", "APPLICATION/JSON; charset=UTF-8", "application/json; x=y",
                 "application/x-www-form-urlencoded+json", "application/vnd.api+json",
                 "text/json", "application/x-www-form-urlencoded", "multipart/form-data",
                 "multipart/form-data; boundary=xyz", "text/plain", "application/octet-stream",
                 "application/json; charset=utf-16", "", "*/*", "application/x-www-"]
# Paths a FileData may name, /dev/zero (Gradio would copy it forever) among
# them: every page body Gradio would parse is read by the Gatekeeper, whatever its content type.
FILE_PATHS = ["/etc/hostname", "/etc/passwd", "/no/such/file", "../../etc/hostname", "", ".",
              "/dev/zero", "/dev/urandom"]
OTHER_CLIENT_BOUND_S = 2.0  # the /health of a client beside the fuzzing, every 50 ms
ANSWER_BOUND_S = 30.0  # any fuzzed answer (valid input may reach the model)
PAGE_EXAMPLES = 150

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=12)
file_data = st.builds(lambda p: {"path": p, "meta": {"_type": "gradio.FileData"}},
                      st.sampled_from(FILE_PATHS))
page_payloads = st.fixed_dictionaries(
    {"data": st.lists(st.one_of(file_data, st.sampled_from(["谢谢。", "zh", "en", "auto"]),
                                json_values), max_size=6)},
    optional={"fn_index": st.integers(-2, 20), "session_hash": st.text(max_size=12),
              "event_data": json_values})
bodies = st.one_of(
    page_payloads.map(lambda d: json.dumps(d).encode()),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.binary(max_size=300),
    st.sampled_from([b"[" * 20_000, b'{"data": [' + b"9" * 5_000 + b"]}", b"q=hi&target=en",
                     b"username=a&password=b", b"--xyz\r\n", b"\xff\xfe{}"]))


class OtherClient:
    """A client beside the fuzzing: ``GET /health`` every 50 ms, each answer timed."""

    def __init__(self, url: str) -> None:
        self.url, self.slowest, self.failures = url, 0.0, []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> OtherClient:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        with httpx.Client(base_url=self.url, trust_env=False, timeout=30) as c:
            while not self._stop.wait(0.05):
                started = time.monotonic()
                try:
                    status = c.get("/health").status_code
                except httpx.HTTPError as exc:
                    status = repr(exc)
                self.slowest = max(self.slowest, time.monotonic() - started)
                if status != 200:
                    self.failures.append(status)


def test_every_route_and_content_type_while_another_client_is_served(fuzz_app):
    """Any route, any content type, any body: never a 5xx, never a traceback, never
    slower than a bound, and the client beside it is answered within OTHER_CLIENT_BOUND_S."""
    slowest: list[tuple[float, str]] = []
    with OtherClient(fuzz_app.url) as other, httpx.Client(base_url=fuzz_app.url, trust_env=False,
                                                          timeout=ANSWER_BOUND_S + 5) as c:
        # A session, as a browser has (the page needs the key: fuzz_app has keys).
        assert c.get("/config", headers={"authorization": f"Bearer {KEY}"}).status_code == 200

        @given(route=st.sampled_from(PAGE_ROUTES), content_type=st.sampled_from(CONTENT_TYPES),
               body=bodies, keyed=st.booleans())
        @settings(max_examples=PAGE_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def fuzz(route: tuple[str, str], content_type: str, body: bytes, keyed: bool) -> None:
            method, path = route
            headers = {"content-type": content_type} if content_type else {}
            if keyed:
                headers["authorization"] = f"Bearer {KEY}"
            started = time.monotonic()
            r = c.request(method, path, content=body, headers=headers)
            took = time.monotonic() - started
            slowest.append((took, f"{method} {path}"))
            assert r.status_code < 500, (method, path, content_type, body[:200], r.text[:300])
            assert "Traceback" not in r.text and 'File "' not in r.text, r.text[:300]
            assert took < ANSWER_BOUND_S, (method, path, took)

        fuzz()
    print(f"\nslowest answer {max(slowest)[0]:.2f}s ({max(slowest)[1]}); the other client's "
          f"slowest /health {other.slowest:.2f}s")
    assert not other.failures, other.failures[:5]
    assert other.slowest < OTHER_CLIENT_BOUND_S, other.slowest


# -- a class's routes, while a class goes on ---------------------------------------------------
# Every route of a class, with codes, keys, students and bodies right and wrong, while a student
# reads the class on its own stream and another client's /health is timed. A room whose code the
# fuzzing guesses wrong makes its address wait (429): that is an answer too. Afterwards a class
# opened from another address works: a sentence reaches the student translated.
CLASS_ROUTES = [("POST", "/class/api/rooms"), ("GET", "/class/api/rooms/{code}"),
                ("GET", "/class/api/rooms/{code}/qr.svg"), ("POST", "/class/api/rooms/{code}/join"),
                ("GET", "/class/api/rooms/{code}/events"),
                ("POST", "/class/api/rooms/{code}/questions"),
                ("POST", "/class/api/rooms/{code}/sentences"),
                ("POST", "/class/api/rooms/{code}/questions/{qid}/show"),
                ("GET", "/class/api/rooms/{code}/stats"),
                ("GET", "/class/api/rooms/{code}/transcript"),
                ("GET", "/class/api/rooms/{code}/students"),
                ("DELETE", "/class/api/rooms/{code}/students/{student}"),
                *(("POST", f"/class/api/rooms/{{code}}/{action}") for action in
                  ("end", "lock", "unlock", "pause", "resume", "clear")),
                ("GET", "/class"), ("GET", "/class/{code}"), ("GET", "/class/teach/{code}"),
                ("GET", "/class/static/{qid}"), ("GET", "/class/api/languages")]
CLASS_EXAMPLES = 300
odd_strings = st.one_of(st.text(max_size=30), st.sampled_from(
    ["", "0", "-1", "999999999999999999999", "../../etc/passwd", "%00", "<script>", "ar", "zh",
     "=HYPERLINK(\"x\")", "\u202e", "🎓" * 50]))


@pytest.fixture(scope="module")
def class_fuzz_app(engine):
    with running_app(engine, max_input_chars=300, max_body_bytes=20_000) as running:
        yield running


def _class_request(c: httpx.Client, method: str, path: str, *, params: dict[str, str],
                   headers: dict[str, Any], body: bytes | None) -> tuple[int, str]:
    """One request; an event stream that opens is read a little and hung up."""
    with c.stream(method, path, params=params, headers=headers, content=body) as r:
        if r.status_code == 200 and path.endswith("/events"):
            for line in r.iter_lines():
                if line.startswith(("data:", ":")):
                    break
            return r.status_code, ""
        return r.status_code, r.read().decode("utf-8", "replace")


def test_every_class_route_while_a_class_goes_on(class_fuzz_app):
    url = class_fuzz_app.url
    with httpx.Client(base_url=url, trust_env=False, timeout=ANSWER_BOUND_S + 5) as setup:
        room = setup.post("/class/api/rooms", json={"lang": "zh"}).json()
    code, key = room["code"], room["key"]
    with httpx.Client(base_url=url, trust_env=False, timeout=30,
                      transport=httpx.HTTPTransport(local_address="127.0.0.5")) as phone:
        student = phone.post(f"/class/api/rooms/{code}/join", json={"lang": "en"}).json()["student"]
    reader = Reader(url, code, student=student, lang="en", address="127.0.0.5")
    slowest: list[tuple[float, str]] = []
    with OtherClient(url) as other, httpx.Client(base_url=url, trust_env=False,
                                                 timeout=ANSWER_BOUND_S + 5) as c:
        @given(route=st.sampled_from(CLASS_ROUTES),
               code_=st.one_of(st.just(code), st.just(code), odd_strings),
               key_=st.one_of(st.just(key), st.none(), odd_strings),
               student_=st.one_of(st.just(student), odd_strings),
               qid=st.one_of(st.integers(-5, 50).map(str), odd_strings),
               lang=st.one_of(st.sampled_from([*languages.CODES, "auto"]), odd_strings),
               extra=st.dictionaries(st.sampled_from(["role", "after", "format", "key"]),
                                     st.one_of(st.sampled_from(["teacher", "csv", "docx", "md",
                                                                "1", "-3"]), odd_strings),
                                     max_size=3),
               body=st.one_of(st.none(), bodies, st.fixed_dictionaries({}, optional={
                   "lang": odd_strings, "title": odd_strings, "name": odd_strings,
                   "student": st.one_of(st.just(student), odd_strings),
                   "text": st.one_of(st.sampled_from(["早上好。", "请打开书。"]), odd_strings)}
               ).map(lambda d: json.dumps(d).encode())),
               content_type=st.sampled_from(CONTENT_TYPES))
        @settings(max_examples=CLASS_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        def fuzz(route: tuple[str, str], code_: str, key_: str | None, student_: str, qid: str,
                 lang: str, extra: dict[str, str], body: bytes | None, content_type: str) -> None:
            method, template = route
            path = template.format(code=quote(code_, safe=""), qid=quote(qid, safe=""),
                                   student=quote(student_, safe="")).replace("//", "/x/")
            headers: dict[str, Any] = {"content-type": content_type} if content_type else {}
            if key_ is not None:  # any printable text, sent as UTF-8 bytes
                headers["X-Class-Key"] = "".join(ch for ch in key_ if ch.isprintable()
                                                 ).strip().encode("utf-8")
            params = {"student": student_, "lang": lang, **extra}
            started = time.monotonic()
            status, text = _class_request(c, method, path, params=params, headers=headers,
                                          body=body)
            took = time.monotonic() - started
            slowest.append((took, f"{method} {template}"))
            assert status < 500, (method, path, params, body and body[:200], text[:300])
            assert "Traceback" not in text and 'File "' not in text, text[:300]
            assert took < ANSWER_BOUND_S, (method, path, took)

        fuzz()
    print(f"\nclass routes: slowest answer {max(slowest)[0]:.2f}s ({max(slowest)[1]}); the "
          f"other client's slowest /health {other.slowest:.2f}s; the student read "
          f"{len(reader.logged)} events")
    assert not other.failures, other.failures[:5]
    assert other.slowest < OTHER_CLIENT_BOUND_S, other.slowest
    reader.close()
    # The server still holds a class: one opened from another device works end to end.
    with httpx.Client(base_url=url, trust_env=False, timeout=60,
                      transport=httpx.HTTPTransport(local_address="127.0.0.6")) as teacher:
        fresh = teacher.post("/class/api/rooms", json={"lang": "zh"}).json()
        pupil = teacher.post(f"/class/api/rooms/{fresh['code']}/join",
                             json={"lang": "en"}).json()["student"]
        listening = Reader(url, fresh["code"], student=pupil, lang="en", address="127.0.0.6")
        sent = teacher.post(f"/class/api/rooms/{fresh['code']}/sentences",
                            json={"text": "早上好。"}, headers={"X-Class-Key": fresh["key"]})
        assert sent.status_code == 200, sent.text
        [sid] = sent.json()["sentences"]
        wait_for(lambda: listening.translations("en").get(sid) == "Good morning.", 60)
        listening.close()
