"""The HTTP API through real HTTP: every route, every error, streaming, keys, logins, CORS, logs.

Each app here is the real one (``create_app``: FastAPI with the Gradio page mounted at ``/``)
served by uvicorn on a loopback port and reached with httpx or with a LibreTranslate client
library from PyPI. They share the session's demo engine, except where a test needs generations
longer than its 64-token cap.
"""

from __future__ import annotations

import json
import logging
import urllib.error
from collections import Counter

import httpx
import pytest
from apphelpers import (
    GREEDY,
    LONG_PAIR,
    LONG_TEXT,
    assert_json_error,
    idle,
    make_engine,
    metric_families,
    metric_samples,
    running_app,
    sse_events,
    wait_until,
)
from fakes import LoadingEngine
from libretranslatepy import LibreTranslateAPI

from hunyuan_webui import languages, models
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import InputError
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

MAX_CHARS = 2000
MAX_BODY = 64_000
SECRET_KEY = "sk-live-5ecret-0123456789abcdef"


# -- apps ------------------------------------------------------------------------------------------
# The default app (tests/http/conftest.py serves it): open API, phrase cache on, tighter input and
# body limits; and the app with keys, from the flag and from a file.
APP = {"max_input_chars": MAX_CHARS, "max_body_bytes": MAX_BODY}
KEYS_APP = {"api_keys": "k1", "rate_limit_rpm": 3, "rate_limit_chars_per_day": 1000}
KEYS_APP_FILE = ("# key  requests/minute  characters/day\n"
                 "chars-key 100 25\n"
                 f"{SECRET_KEY} 0 0   # unlimited\n"
                 "x-header-key\n")


@pytest.fixture(scope="module")
def configured_app(engine):
    with running_app(engine, cors_origins="https://ok.example, https://also.example",
                     enable_monitoring=True) as running:
        yield running


@pytest.fixture(scope="module")
def login_app(engine):
    with running_app(engine, auth="user:pw-s3cret") as running:
        yield running


@pytest.fixture(scope="module")
def login_file_app(engine, tmp_path_factory):
    users = tmp_path_factory.mktemp("users") / "users.txt"
    users.write_text("# the UI's users\nalice:wonderland\n\nbob:the:builder\n", encoding="utf-8")
    with running_app(engine, auth_file=str(users)) as running:
        yield running


@pytest.fixture(scope="module")
def loading_app(demo_dir):
    with running_app(LoadingEngine(spec=models.resolve(demo_dir))) as running:
        yield running


@pytest.fixture(scope="module")
def long_app(demo_dir):
    """An engine that allows long generations, and no cache (every request reaches the model)."""
    engine = make_engine(demo_dir, max_new_tokens=1024)
    try:
        with running_app(engine, cache_size=0) as running:
            yield running
    finally:
        engine.close()


def only(phrases, source: str, target: str):
    return [p for p in phrases if p.source_lang == source and p.target_lang == target]


def translate(client: httpx.Client, text, source: str, target: str, headers=None,
              **extra) -> httpx.Response:
    body = {"text": text, "source_lang": source, "target_lang": target, **extra}
    body.setdefault("options", GREEDY)
    return client.post("/v1/translate", json=body, headers=headers)


# -- operations ------------------------------------------------------------------------------------
def test_health_and_ready(client, app):
    r = client.get("/health")
    assert r.status_code == 200 and r.json() == {"status": "ok"}  # LibreTranslate's, whole
    r = client.get("/ready")
    assert r.status_code == 200
    body = r.json()
    # The speech recogniser's state beside it: this app was built without one.
    assert body["speech"]["state"] == "off" and body["speech"]["reason"]
    assert body["state"] == "ready" and body["model"] == app.translator.spec.public_id == "demo-model"
    assert body["active"] == 0 and body["queued"] == 0


def test_ready_is_503_until_the_model_is_warm(loading_app):
    with loading_app.client() as c:
        assert c.get("/health").status_code == 200  # alive while loading
        r = c.get("/ready")
        assert r.status_code == 503 and r.json()["state"] == "loading"
        message = assert_json_error(translate(c, "你好", "zh", "en"), 503, "not_ready")
        assert "loading" in message
        assert c.get("/v1/languages").status_code == 200
        samples = metric_samples(c.get("/metrics").text)
        assert samples[("hymt_engine_ready", ())] == 0


def test_languages(client):
    body = client.get("/v1/languages").json()
    assert [lang["code"] for lang in body] == list(languages.CODES)
    assert len(body) == 38
    by_code = {lang["code"]: lang for lang in body}
    assert by_code["zh"]["chinese"] == "中文" and by_code["en"]["english"] == "English"
    assert {c for c, lang in by_code.items() if lang["rtl"]} == {"ar", "fa", "he", "ur", "ug"}


# -- translation -----------------------------------------------------------------------------------
def test_demo_phrases_translate_exactly(client, app, phrases):
    for p in phrases[::3]:
        r = translate(client, p.source, p.source_lang, p.target_lang)
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["translation"] == p.target
        assert body["source_lang"] == p.source_lang and body["target_lang"] == p.target_lang
        assert body["model"] == app.translator.spec.public_id
        assert isinstance(body["cached"], bool)
        usage = body["usage"]
        assert usage["segments"] == 1 and usage["latency_s"] >= 0
        assert usage["prompt_tokens"] > 0 or body["cached"]


def test_second_identical_request_is_answered_from_the_cache(client):
    # max_new_tokens is part of the cache key: this value keeps the test's entries its own.
    options = {"deterministic": True, "max_new_tokens": 61}
    first = translate(client, "早上好。", "zh", "en", options=options).json()
    second = translate(client, "早上好。", "zh", "en", options=options).json()
    assert first["translation"] == second["translation"] == "Good morning."
    assert (first["cached"], second["cached"]) == (False, True)
    assert second["usage"]["cached_segments"] == 1


def test_list_input_keeps_the_order(client, phrases):
    pairs = only(phrases, "zh", "en")
    r = translate(client, [p.source for p in pairs], "zh", "en")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["translation"] == [p.target for p in pairs]
    assert body["source_lang"] == ["zh"] * len(pairs) and body["target_lang"] == "en"
    assert [item["translation"] for item in body["items"]] == body["translation"]
    assert body["usage"]["segments"] == len(pairs)


def test_auto_detects_the_source_language(client):
    for text, source, target, expected in [
        ("Where is the train station?", "en", "zh", "火车站在哪里？"),
        ("今天天气很好。", "zh", "en", "The weather is nice today."),
    ]:
        body = translate(client, text, "auto", target).json()
        assert body["source_lang"] == source
        assert body["detected"]["language"] == source and body["detected"]["confidence"] > 0
        assert body["translation"] == expected
    # a list: each text is detected on its own
    body = translate(client, ["Where is the train station?", "今天天气很好。"], "auto", "zh").json()
    assert body["source_lang"] == ["en", "zh"]


def test_text_already_in_the_target_language_comes_back_unchanged(client):
    body = translate(client, "Where is the train station?", "auto", "en").json()
    assert body["translation"] == "Where is the train station?"
    assert "already in English" in body["notice"]


def test_detect(client):
    r = client.post("/v1/detect", json={"text": "Where is the train station?"})
    assert r.status_code == 200
    body = r.json()
    assert body["language"] == "en" and 0 < body["confidence"] <= 1
    assert body["candidates"][0]["language"] == "en"
    assert client.post("/v1/detect", json={"text": "今天天气很好。"}).json()["language"] == "zh"
    assert client.post("/v1/detect", json={"text": "12345"}).json()["language"] is None


# -- streaming -------------------------------------------------------------------------------------
def stream(client: httpx.Client, text: str, source: str, target: str, options=None) -> httpx.Response:
    body = {"text": text, "source_lang": source, "target_lang": target, "stream": True,
            "options": options or GREEDY}
    return client.post("/v1/translate", json=body)


def test_sse_format(client, app):
    options = {"deterministic": True, "max_new_tokens": 62}
    r = stream(client, "谢谢你的帮助。", "zh", "en", options)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    assert r.headers["cache-control"] == "no-cache"
    events = sse_events(r.text)
    assert all(name is None for name, _ in events)
    *deltas, (_, final) = events
    assert len(deltas) >= 3  # it really streams
    assert all(set(data) == {"delta"} and data["delta"] for _, data in deltas)
    assert "".join(data["delta"] for _, data in deltas) == "Thank you for your help."
    assert final["done"] is True
    assert {"translation", "source_lang", "target_lang", "model", "cached", "usage"} <= set(final)
    assert final["translation"] == "Thank you for your help."
    assert (final["source_lang"], final["target_lang"], final["cached"]) == ("zh", "en", False)
    assert final["model"] == app.translator.spec.public_id
    assert final["usage"]["completion_tokens"] > 0 and final["usage"]["first_token_s"] > 0

    # The same request again comes from the cache: one delta, then the same final event.
    events = sse_events(stream(client, "谢谢你的帮助。", "zh", "en", options).text)
    assert [data for _, data in events[:-1]] == [{"delta": "Thank you for your help."}]
    assert events[-1][1]["cached"] is True


def test_sse_with_auto_detection_and_multi_segment_text(client):
    text = "早上好。\n\n谢谢。"
    events = sse_events(stream(client, text, "auto", "en").text)
    *deltas, (_, final) = events
    assert "".join(d["delta"] for _, d in deltas) == final["translation"] == "Good morning.\n\nThank you."
    assert final["source_lang"] == "zh" and final["usage"]["segments"] == 2


def test_sse_errors_before_the_stream_are_plain_json(client):
    r = stream(client, "你好", "zh", "xx")
    assert_json_error(r, 400, "unknown_language")
    r = client.post("/v1/translate", json={"text": ["a", "b"], "target_lang": "en", "stream": True})
    assert "single text" in assert_json_error(r, 400, "invalid_input")


def test_client_disconnecting_mid_stream_stops_generation(long_app):
    engine = long_app.engine
    assert wait_until(lambda: idle(engine))
    body = {"text": LONG_TEXT, "source_lang": LONG_PAIR[0], "target_lang": LONG_PAIR[1],
            "stream": True, "options": {"deterministic": True, "max_new_tokens": 600}}
    before = engine.status().tokens_generated
    with long_app.client() as c, c.stream("POST", "/v1/translate", json=body) as r:
        assert r.status_code == 200
        read = 0
        for line in r.iter_lines():
            if line.startswith("data: "):
                assert "delta" in json.loads(line[len("data: "):])
                read += 1
                if read == 3:
                    break
        assert engine.status().active == 1  # still generating when the client goes
    assert wait_until(lambda: idle(engine), timeout=5), engine.status()
    assert engine.status().tokens_generated - before < 300  # far short of the 600 asked for
    assert long_app.translator.in_flight() == 0

    # Two clients share one sequence: it runs until the last of them leaves.
    with long_app.client() as a, long_app.client() as b, \
            a.stream("POST", "/v1/translate", json=body) as ra, \
            b.stream("POST", "/v1/translate", json=body) as rb:
        lines_a, lines_b = ra.iter_lines(), rb.iter_lines()
        for lines in (lines_a, lines_b):
            assert next(x for x in lines if x.startswith("data: "))
        assert engine.status().active == 1 and long_app.translator.in_flight() == 1
        ra.close()
        for _ in range(3):  # a left, and b still receives text from the same sequence
            assert "delta" in json.loads(next(x for x in lines_b if x.startswith("data: "))[6:])
        assert engine.status().active == 1 and long_app.translator.in_flight() == 1
    assert wait_until(lambda: idle(engine), timeout=5), engine.status()
    assert long_app.translator.in_flight() == 0

    with long_app.client() as c:
        assert c.get("/ready").status_code == 200
        assert translate(c, "你好", "zh", "en").json()["translation"] == "Hello"


# -- errors ----------------------------------------------------------------------------------------
def test_too_long_is_413(client):
    """/v1/translate takes what the page takes: ten times --max-input-chars, in parts; so does
    LibreTranslate's /translate (it refused past one --max-input-chars)."""
    too_long = "a" * (MAX_CHARS * 10 + 1)
    message = assert_json_error(translate(client, too_long, "zh", "en"), 413, "input_too_long")
    assert f"{MAX_CHARS * 10:,}" in message
    assert_json_error(translate(client, ["你好", too_long], "zh", "en"), 413, "input_too_long")
    assert_json_error(stream(client, too_long, "zh", "en"), 413, "input_too_long")
    r = client.post("/translate", json={"q": "好" * (MAX_CHARS * 10 + 1), "source": "zh",
                                        "target": "en"})
    assert_json_error(r, 413)


def test_unknown_language_is_400_listing_the_codes(client):
    for source, target in [("zh", "xx"), ("klingon", "en"), ("zh", "")]:
        message = assert_json_error(translate(client, "你好", source, target), 400,
                                    "unknown_language")
        assert all(code in message for code in languages.CODES)
    r = client.post("/translate", json={"q": "你好", "source": "zh", "target": "xx"})
    assert assert_json_error(r, 400) == "xx is not supported"  # LibreTranslate's words there
    # Other tools' spellings are accepted.
    assert translate(client, "你好", "zh-CN", "EN").json()["translation"] == "Hello"


@pytest.mark.parametrize("raw", [b'{"text": "hi", ', b"{'text': 'hi'}", b"\xff\xfe\x00",
                                 b"", b"null"])
def test_malformed_json_is_a_clear_4xx(client, raw):
    r = client.post("/v1/translate", content=raw, headers={"content-type": "application/json"})
    assert_json_error(r, 422, "invalid_request")
    r = client.post("/v1/detect", content=raw, headers={"content-type": "application/json"})
    assert_json_error(r, 422, "invalid_request")
    if raw != b"":
        r = client.post("/translate", content=raw, headers={"content-type": "application/json"})
        assert_json_error(r, 400)


def test_malformed_json_message(client):
    r = client.post("/v1/translate", content=b'{"text": ', headers={"content-type": "application/json"})
    assert assert_json_error(r, 422) == "Malformed JSON body."


@pytest.mark.parametrize("body, field", [
    ({"text": 5, "target_lang": "en"}, "text"),
    ({"text": ["a", 2], "target_lang": "en"}, "text"),
    ({"text": {"a": "b"}, "target_lang": "en"}, "text"),
    ({"text": "hi"}, "target_lang"),
    ({"text": "hi", "target_lang": None}, "target_lang"),
    ({"text": "hi", "target_lang": ["en"]}, "target_lang"),
    ({"text": "hi", "target_lang": "en", "source_lang": 1}, "source_lang"),
    ({"text": "hi", "target_lang": "en", "stream": "yes"}, "stream"),
    ({"text": "hi", "target_lang": "en", "options": "fast"}, "options"),
    ({"text": "hi", "target_lang": "en", "colour": "blue"}, "colour"),
    ([{"text": "hi", "target_lang": "en"}], "body"),
    ("hi", "body"),
])
def test_wrong_types_are_422(client, body, field):
    r = client.post("/v1/translate", json=body)
    message = assert_json_error(r, 422, "invalid_request")
    assert field in message


def test_wrong_types_on_detect_and_libretranslate(client):
    assert_json_error(client.post("/v1/detect", json={"text": 3}), 422, "invalid_request")
    assert_json_error(client.post("/v1/detect", json={}), 422, "invalid_request")
    for body in ({"q": 3, "target": "en"}, {"q": ["a", 3], "target": "en"}, {"target": "en"},
                 {"q": "hi"}, {"q": "hi", "target": 5}, ["q"]):
        assert_json_error(client.post("/translate", json=body), 400)
    assert_json_error(client.post("/detect", json={"q": ["a"]}), 400)


def test_body_too_large_is_413(client):
    big = {"text": "a" * (MAX_BODY + 10), "target_lang": "en"}
    for path in ("/v1/translate", "/v1/detect", "/translate", "/detect"):
        # declared by Content-Length
        r = client.post(path, content=json.dumps(big).encode(),
                        headers={"content-type": "application/json"})
        assert_json_error(r, 413, "body_too_large")

        # streamed without a length (chunked): cut off as it arrives
        def chunks():
            yield b'{"text": "'
            for _ in range(MAX_BODY // 8000 + 2):
                yield b"a" * 8000
            yield b'", "target_lang": "en"}'

        r = client.post(path, content=chunks(), headers={"content-type": "application/json"})
        assert "content-length" not in r.request.headers
        assert_json_error(r, 413, "body_too_large")
    # a body just under the limit is read and judged on its merits
    r = client.post("/v1/translate", json={"text": "a" * (MAX_BODY - 100), "target_lang": "en"})
    assert_json_error(r, 413, "input_too_long")


def test_unknown_option_is_400_listing_the_valid_ones(client):
    message = assert_json_error(
        translate(client, "你好", "zh", "en", options={"temprature": 0.5}), 400, "invalid_input")
    assert "temprature" in message
    assert all(name in message for name in ("deterministic", "temperature", "top_p", "top_k",
                                            "repetition_penalty", "max_new_tokens", "seed"))


@pytest.mark.parametrize("options, field", [
    ({"temperature": 5}, "temperature"), ({"temperature": None}, "temperature"),
    ({"temperature": "0.5"}, "temperature"), ({"top_p": True}, "top_p"),
    ({"top_k": "many"}, "top_k"), ({"top_k": 2.5}, "top_k"), ({"max_new_tokens": 0}, "max_new_tokens"),
    ({"deterministic": "yes"}, "deterministic"), ({"seed": 1.5}, "seed"), ({"seed": 2**64}, "seed"),
    ({"seed": -1}, "seed"), ({"repetition_penalty": 0.5}, "repetition_penalty"),
])
def test_invalid_option_values_are_422(client, options, field):
    message = assert_json_error(translate(client, "你好", "zh", "en", options=options), 422,
                                "invalid_request")
    assert f"options.{field}" in message


def test_whole_numbers_may_be_written_as_floats(client):
    r = translate(client, "你好", "zh", "en", options={"deterministic": True, "top_k": 20.0,
                                                       "max_new_tokens": 32.0, "temperature": 1})
    assert r.status_code == 200 and r.json()["translation"] == "Hello"


def test_a_bad_request_never_disturbs_the_others(long_app):
    """A null temperature used to reach the engine and fail every sequence in its batch."""
    body = {"text": LONG_TEXT, "source_lang": LONG_PAIR[0], "target_lang": LONG_PAIR[1],
            "stream": True, "cache": False,
            "options": {"deterministic": True, "max_new_tokens": 120}}
    with long_app.client() as c:  # the same request alone: what it gives undisturbed
        alone = c.post("/v1/translate", json={**body, "stream": False}, timeout=300).json()
    assert alone["usage"]["completion_tokens"] > 20, alone
    with long_app.client() as c, c.stream("POST", "/v1/translate", json=body) as r:
        lines = r.iter_lines()
        assert next(x for x in lines if x.startswith("data: "))
        with long_app.client() as other:
            for options in ({"temperature": None}, {"seed": 2**64}, {"top_k": None}):
                bad = translate(other, "你好", "zh", "en", options=options)
                assert_json_error(bad, 422, "invalid_request")
        rest = [x for x in lines if x]
    assert not any(x.startswith("event: ") for x in rest)  # no error event: it ran to its end
    final = json.loads(rest[-1][len("data: "):])
    assert final["done"] is True
    assert final["translation"] == alone["translation"]
    assert final["usage"]["completion_tokens"] == alone["usage"]["completion_tokens"]


def test_decoding_options_refuse_what_the_engine_cannot_use():
    """A None temperature once reached the scheduler and failed every sequence in its batch."""
    for bad in ({"temperature": None}, {"top_k": None}, {"seed": 2**64}, {"seed": -2**64}):
        with pytest.raises(InputError):
            DecodingOptions(**bad)


def test_other_bad_requests_are_4xx(client):
    assert_json_error(translate(client, [], "zh", "en"), 400, "invalid_input")
    assert_json_error(translate(client, ["你好"] * 129, "zh", "en"), 400, "invalid_input")
    assert_json_error(translate(client, "a\x00b", "en", "zh"), 400, "invalid_input")
    lone_surrogate = b'{"text": "a\\ud800b", "source_lang": "en", "target_lang": "zh"}'
    r = client.post("/v1/translate", content=lone_surrogate,
                    headers={"content-type": "application/json"})
    assert "surrogates" in assert_json_error(r, 400, "invalid_input")
    assert_json_error(translate(client, "你好", "zh", "en", mode="chimera"), 400,
                      "unsupported_mode")
    # Nothing to translate is no error: echoed, as DeepL does ("12345" on the page).
    echoed = translate(client, "12345", "auto", "en")
    assert echoed.status_code == 200 and echoed.json()["translation"] == "12345", echoed.text
    r = client.post("/v1/translate", content=b"text=hi", headers={"content-type": "text/plain"})
    assert_json_error(r, 422, "invalid_request")


def test_wrong_method_is_405(client):
    for method, path in [("GET", "/v1/translate"), ("PUT", "/v1/detect"), ("DELETE", "/health"),
                         ("GET", "/translate"), ("POST", "/v1/languages")]:
        r = client.request(method, path)
        assert_json_error(r, 405)
        assert r.headers["allow"]


def test_markup_is_returned_as_data_never_as_html(client):
    script = "<script>alert(1)</script>"
    r = translate(client, script, "en", "zh")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.headers["x-content-type-options"] == "nosniff"
    r = translate(client, "你好", "zh", '<img src=x onerror="alert(1)">')
    assert_json_error(r, 400, "unknown_language")
    assert r.headers["x-content-type-options"] == "nosniff"
    r = stream(client, script, "en", "zh")
    assert r.headers["content-type"].startswith("text/event-stream")


def test_request_ids(client, caplog):
    caplog.set_level(logging.INFO, logger="hunyuan_webui")
    r = client.get("/health")
    generated = r.headers["x-request-id"]
    assert len(generated) >= 8
    r = translate(client, "你好", "zh", "xx", headers={"X-Request-ID": "trace-42.a"})
    assert r.headers["x-request-id"] == "trace-42.a"
    assert r.json()["error"]["request_id"] == "trace-42.a"
    r = client.get("/health", headers={"X-Request-ID": "x" * 200})  # not echoed, replaced
    assert r.headers["x-request-id"] != "x" * 200
    logged = caplog.text
    assert generated in logged and "trace-42.a" in logged


# -- metrics, docs, CORS, monitoring, binding -------------------------------------------------------
def test_metrics(client, app):
    before = metric_samples(client.get("/metrics").text)
    options = {"deterministic": True, "max_new_tokens": 63}
    assert translate(client, "干得好！👍", "zh", "en", options=options).json()["cached"] is False
    assert translate(client, "干得好！👍", "zh", "en", options=options).json()["cached"] is True
    translate(client, "你好", "zh", "xx")
    client.post("/v1/translate", content=b"{", headers={"content-type": "application/json"})
    sse_events(stream(client, "我们明天见。", "zh", "en", {"deterministic": True,
                                                             "max_new_tokens": 63}).text)
    # A streamed request is counted when its stream has ended, a moment after the client read it.
    posts = ("hymt_http_requests_total",
             (("method", "POST"), ("route", "/v1/translate"), ("status", "200")))
    assert wait_until(lambda: metric_samples(client.get("/metrics").text).get(posts, 0)
                      - before.get(posts, 0) == 3, 5.0)
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    families = metric_families(r.text)
    for name, kind in [("hymt_http_requests", "counter"), ("hymt_http_errors", "counter"),
                       ("hymt_http_request_seconds", "histogram"),
                       ("hymt_translation_seconds", "histogram"),
                       ("hymt_time_to_first_token_seconds", "histogram"),
                       ("hymt_tokens_generated", "counter"), ("hymt_queue_length", "gauge"),
                       ("hymt_active_batch", "gauge"), ("hymt_cache_hits", "counter"),
                       ("hymt_cache_misses", "counter"), ("hymt_engine_ready", "gauge"),
                       ("hymt_model_calls", "counter")]:
        assert families.get(name) == kind, (name, families.get(name))
    after = metric_samples(r.text)

    def grew(name, **labels):
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    route = "/v1/translate"
    assert grew("hymt_http_requests_total", method="POST", route=route, status="200") == 3
    assert grew("hymt_http_requests_total", method="POST", route=route, status="400") == 1
    assert grew("hymt_http_requests_total", method="POST", route=route, status="422") == 1
    assert grew("hymt_http_errors_total", route=route, status="400") == 1
    assert grew("hymt_http_errors_total", route=route, status="422") == 1
    assert grew("hymt_http_request_seconds_count", route=route) == 5
    assert grew("hymt_cache_hits_total") == 1 and grew("hymt_cache_misses_total") == 2
    assert grew("hymt_model_calls_total") == 2  # the two misses; the hit needed no model
    assert grew("hymt_translation_seconds_count") == 3
    assert grew("hymt_time_to_first_token_seconds_count") >= 2
    assert grew("hymt_tokens_generated_total") > 0
    assert after[("hymt_active_batch", ())] == 0 and after[("hymt_queue_length", ())] == 0
    assert after[("hymt_engine_ready", ())] == 1
    # Every route keeps its own label, and unknown paths share one.
    client.get("/docs")
    client.get("/health")
    client.get("/no/such/page")
    labels = {dict(k[1]).get("route") for k in metric_samples(client.get("/metrics").text)}
    assert {"/docs", "/metrics", "/health", "/v1/translate", "other"} <= labels
    assert "/no/such/page" not in labels


def test_docs_and_openapi(client):
    r = client.get("/docs")
    assert r.status_code == 200 and "swagger" in r.text.lower()
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for path, method in [("/v1/translate", "post"), ("/v1/languages", "get"),
                         ("/v1/detect", "post"), ("/health", "get"), ("/ready", "get"),
                         ("/metrics", "get"), ("/translate", "post"), ("/languages", "get"),
                         ("/detect", "post"), ("/translate_file", "post"),
                         ("/frontend/settings", "get"), ("/spec", "get")]:
        assert method in paths[path], (path, method)
    ids = [op["operationId"] for ops in paths.values() for op in ops.values()]
    assert len(ids) == len(set(ids)), Counter(ids).most_common(3)
    assert "requestBody" in paths["/translate"]["post"]  # LibreTranslate's fields are documented
    assert not any(p.startswith("/gradio_api") for p in paths)


def test_cors_header_only_when_configured(client, configured_app):
    body = {"text": "你好", "source_lang": "zh", "target_lang": "en", "options": GREEDY}
    r = client.post("/v1/translate", json=body, headers={"Origin": "https://ok.example"})
    assert r.status_code == 200 and "access-control-allow-origin" not in r.headers
    with configured_app.client() as c:
        r = c.post("/v1/translate", json=body, headers={"Origin": "https://ok.example"})
        assert r.headers["access-control-allow-origin"] == "https://ok.example"
        r = c.post("/v1/translate", json=body, headers={"Origin": "https://also.example"})
        assert r.headers["access-control-allow-origin"] == "https://also.example"
        r = c.post("/v1/translate", json=body, headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers
        preflight = {"Origin": "https://ok.example", "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "authorization, content-type"}
        r = c.options("/v1/translate", headers=preflight)
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://ok.example"
        assert "authorization" in r.headers["access-control-allow-headers"].lower()
        r = c.options("/v1/translate", headers={**preflight, "Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers


def test_gradio_monitoring_is_off_unless_asked_for(client, configured_app):
    for path in ("/monitoring", "/monitoring/summary"):
        assert client.get(path).status_code in (403, 404)
    with configured_app.client() as c:
        assert c.get("/monitoring").status_code == 200


def test_binds_to_loopback_unless_told_otherwise(app):
    assert Settings().host == "127.0.0.1"
    assert app.settings.host == "127.0.0.1"
    assert app.url.startswith("http://127.0.0.1:")
    sockets = [s for server in app.server.server.servers for s in server.sockets]
    assert sockets and all(s.getsockname()[0] == "127.0.0.1" for s in sockets)


# -- API keys and limits ---------------------------------------------------------------------------
def test_api_keys_and_requests_per_minute(keys_app):
    with keys_app.client() as c:
        body = {"text": "你好", "source_lang": "zh", "target_lang": "en", "options": GREEDY}
        assert_json_error(c.post("/v1/translate", json=body), 401, "unauthorized")
        assert_json_error(c.post("/v1/translate", json=body,
                                 headers={"Authorization": "Bearer wrong"}), 401, "unauthorized")
        assert_json_error(c.post("/v1/detect", json={"text": "hi"}), 401, "unauthorized")
        assert_json_error(c.post("/translate", data={"q": "hi", "target": "zh"}), 401)
        assert_json_error(c.post("/translate", json={"q": "hi", "target": "zh", "api_key": [1]}),
                          401)
        # Information routes stay open.
        for path in ("/health", "/ready", "/v1/languages", "/languages", "/metrics"):
            assert c.get(path).status_code == 200, path

        k1 = {"Authorization": "Bearer k1"}
        r = c.post("/v1/translate", json=body, headers=k1)
        assert r.status_code == 200 and r.json()["translation"] == "Hello"
        assert c.post("/v1/detect", json={"text": "你好"}, headers=k1).status_code == 200
        r = c.post("/translate", data={"q": "你好", "source": "zh", "target": "en", "api_key": "k1"})
        assert r.status_code == 200 and r.json()["translatedText"] == "Hello"
        # the fourth request within a minute is refused
        r = c.post("/v1/translate", json=body, headers=k1)
        assert "per minute" in assert_json_error(r, 429, "rate_limited")
        assert 1 <= int(r.headers["retry-after"]) <= 60
        r = c.post("/translate", data={"q": "你好", "target": "en", "api_key": "k1"})
        assert_json_error(r, 429)
        assert 1 <= int(r.headers["retry-after"]) <= 60
        # other keys have their own allowance
        r = c.post("/v1/translate", json=body, headers={"X-API-Key": "x-header-key"})
        assert r.status_code == 200


def test_characters_per_day(keys_app):
    with keys_app.client() as c:
        key = {"Authorization": "Bearer chars-key"}
        r = translate(c, "Good morning.", "en", "fr", headers=key)
        assert r.json()["translation"] == "Bonjour."  # 13 of 25 characters
        assert c.post("/v1/detect", json={"text": "Thank you."}, headers=key).status_code == 200
        r = c.post("/v1/translate", json={"text": "Hello", "target_lang": "zh"}, headers=key)
        assert "Daily limit" in assert_json_error(r, 429, "rate_limited")
        assert 1 <= int(r.headers["retry-after"]) <= 86_400
        r = c.post("/detect", data={"q": "Hello", "api_key": "chars-key"})
        assert_json_error(r, 429)


def test_libretranslate_client_with_an_api_key(keys_app):
    lt = LibreTranslateAPI(keys_app.url, api_key=SECRET_KEY)
    assert lt.translate("Thank you very much.", "en", "de") == "Vielen Dank."
    assert lt.detect("Where is the train station?")[0]["language"] == "en"
    with pytest.raises(urllib.error.HTTPError) as refused:
        LibreTranslateAPI(keys_app.url).translate("Thank you very much.", "en", "de")
    assert refused.value.code == 401
    assert "error" in json.loads(refused.value.read())
    with pytest.raises(urllib.error.HTTPError) as refused:
        LibreTranslateAPI(keys_app.url, api_key="nope").detect("Hello")
    assert refused.value.code == 401


def test_secrets_are_never_logged(keys_app, caplog):
    caplog.set_level(logging.DEBUG)
    uvicorn_loggers = [logging.getLogger(n) for n in ("uvicorn", "uvicorn.error", "uvicorn.access")]
    for logger in uvicorn_loggers:  # they do not propagate to the root logger
        logger.addHandler(caplog.handler)
    wrong = "sk-wrong-9876543210fedcba"
    ids = []
    try:
        with keys_app.client() as c:
            for headers in ({"Authorization": f"Bearer {SECRET_KEY}"}, {"X-API-Key": SECRET_KEY},
                            {"Authorization": f"Bearer {wrong}"}):
                r = c.post("/v1/translate", json={"text": "你好", "source_lang": "zh",
                                                  "target_lang": "en", "options": GREEDY},
                           headers=headers)
                ids.append(r.headers["x-request-id"])
            r = c.post("/translate", data={"q": "你好", "target": "en", "api_key": SECRET_KEY})
            ids.append(r.headers["x-request-id"])
            r = c.post(f"/detect?api_key={SECRET_KEY}", data={"q": "你好"})
            ids.append(r.headers["x-request-id"])
            r = c.post("/translate", json={"q": "你好", "target": "xx", "api_key": wrong})
            ids.append(r.headers["x-request-id"])
    finally:
        for logger in uvicorn_loggers:
            logger.removeHandler(caplog.handler)
    def server_text() -> str:  # the server's records only: httpx logs the client's own URLs
        records = [rec for rec in caplog.records if not rec.name.startswith(("httpx", "httpcore"))]
        return "\n".join(rec.getMessage() + str(rec.exc_text or "") for rec in records)

    # A request's line is written once its response has gone out, maybe after the client read it.
    assert wait_until(lambda: all(i in server_text() for i in ids), 5)
    text = server_text()
    assert SECRET_KEY not in text and wrong not in text
    assert SECRET_KEY not in caplog.text.replace(f"api_key={SECRET_KEY}", "")  # bar the URL above
    for request_id in ids:
        assert request_id in text


# -- the UI login ----------------------------------------------------------------------------------
@pytest.mark.parametrize("fixture, user, password", [("login_app", "user", "pw-s3cret"),
                                                     ("login_file_app", "alice", "wonderland"),
                                                     ("login_file_app", "bob", "the:builder")])
def test_ui_asks_for_a_login(request, caplog, fixture, user, password):
    caplog.set_level(logging.DEBUG)
    running = request.getfixturevalue(fixture)
    with running.client() as c:
        assert c.get("/").status_code == 200  # the page, which shows its login form...
        r = c.get("/config")  # ...because the UI's configuration needs a login
        assert r.status_code == 401 and "please sign in" in r.text
        assert c.get("/gradio_api/info").status_code == 401
        assert c.post("/login", data={"username": user, "password": "nope"}).status_code == 400
        r = c.post("/login", data={"username": user, "password": password})
        assert r.status_code == 200 and r.json() == {"success": True}
        assert c.get("/config").status_code == 200  # the session cookie opens the UI
    server_side = [r.getMessage() for r in caplog.records if not r.name.startswith("http")]
    assert server_side and not any(password in m for m in server_side)


def test_ui_is_open_without_a_login(client):
    assert client.get("/config").status_code == 200


# -- LibreTranslate clients ------------------------------------------------------------------------
def test_libretranslate_client_library(app, phrases):
    lt = LibreTranslateAPI(app.url)
    seen = set()
    for p in phrases:
        if (p.source_lang, p.target_lang) in seen:
            continue
        seen.add((p.source_lang, p.target_lang))
        assert lt.translate(p.source, p.source_lang, p.target_lang) == p.target
    assert len(seen) >= 5
    assert lt.translate("谢谢。", "auto", "en") == "Thank you."
    detected = lt.detect("Where is the train station?")
    assert detected[0]["language"] == "en" and 0 < detected[0]["confidence"] <= 100
    langs = lt.languages()
    assert {lang["code"] for lang in langs} == set(languages.CODES)
    assert all({"code", "name", "targets"} <= set(lang) for lang in langs)


def test_libretranslate_json_and_lists(client):
    r = client.post("/translate", json={"q": ["你好", "谢谢。"], "source": "zh", "target": "en"})
    assert r.json() == {"translatedText": ["Hello", "Thank you."]}
    r = client.post("/translate", json={"q": "Where is the train station?", "source": "auto",
                                        "target": "zh"})
    body = r.json()
    assert body["translatedText"] == "火车站在哪里？"
    assert body["detectedLanguage"]["language"] == "en"
    assert 0 < body["detectedLanguage"]["confidence"] <= 100
    r = client.post("/translate", data={"q": ["你好", "谢谢。"], "source": "zh", "target": "en"})
    assert r.json()["translatedText"] == ["Hello", "Thank you."]
    assert client.post("/languages").status_code == 405  # as LibreTranslate answers
    r = client.post("/detect", json={"q": "今天天气很好。"})
    assert r.json()[0]["language"] == "zh"


def test_modes_are_options_mode_values(client):
    r = client.post("/v1/translate", json={"text": "Thank you.", "source_lang": "en",
                                           "target_lang": "zh",
                                           "options": {"mode": "alternatives", "variants": 3,
                                                       "deterministic": True}})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["translation"] == "谢谢。" and body["alternatives"][0] == "谢谢。"
    r = client.post("/v1/translate", json={"text": "Thank you.", "source_lang": "en",
                                           "target_lang": "zh",
                                           "options": {"deterministic": True,
                                                       "glossary": [["Thank you", "谢谢"],
                                                                    ["friend", "朋友"]]}})
    body = r.json()  # the demo model never saw a glossary prompt: its answer is nonsense
    glossary = body["glossary"]
    assert sorted(glossary["found"] + glossary["missing"]) == sorted(["谢谢", "朋友"])
    assert "朋友" in glossary["missing"]
    assert "best effort" in body["notice"]
    r = client.post("/v1/translate", json={"text": "Thank you.", "target_lang": "zh",
                                           "options": {"mode": "poetry"}})
    assert r.status_code == 422 and "mode" in r.json()["error"]["message"]
    r = client.post("/v1/translate", json={"text": "Thank you.", "target_lang": "zh",
                                           "options": {"mode": "ensemble"}})
    assert r.status_code == 400 and "Chimera" in r.json()["error"]["message"]


def test_cache_can_be_inspected_and_cleared(client):
    body = {"text": "我们明天见。", "source_lang": "zh", "target_lang": "en",
            "options": {"deterministic": True}}
    client.post("/v1/translate", json=body)
    assert client.post("/v1/translate", json=body).json()["cached"] is True
    stats = client.get("/v1/cache").json()
    assert stats["hits"] >= 1 and stats["size"] >= 1
    cleared = client.delete("/v1/cache").json()
    assert cleared["cleared"] is True and cleared["size"] == 0
    assert client.post("/v1/translate", json=body).json()["cached"] is False
