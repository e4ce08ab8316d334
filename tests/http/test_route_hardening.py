"""What a hardening review found in the routes, over real HTTP on a running app.

4. ``X-Forwarded-For`` from 127.0.0.1 bypassed the visitor limit 12/12 and the login throttle
   30/30; five typos behind one router locked the whole class out.
5. Five bare 500s on the DeepL routes (deeply nested JSON, a 5,000-digit integer), with
   tracebacks in the log: the LibreTranslate routes' fix had not reached them.
6. 3,000 random HTTP methods grew ``/metrics`` from 81 KB to 629 KB, without a login.
7. The checkpoint's absolute path in ``/v1/model``, ``/v1/models``, every OpenAI answer's
   ``model`` and DeepL's errors.
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import string

import pytest
from apphelpers import (
    make_engine,
    metric_samples,
    run_event,
    running_app,
    visitor,
)

from hunyuan_webui import prompts
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

THANKS = {"data": ["谢谢。", "zh", "en"]}
LOGINS = "teacher:pw-s3cret,student:st-pw"


def _forwarded(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


# -- 4. forwarded addresses and the login throttle -------------------------------------------------
def _page_translations(app, addresses: list[str]) -> list[str]:
    """One page translation per address (sent from 127.0.0.1 with X-Forwarded-For): each one's
    event stream."""
    streams = []
    for address in addresses:
        with visitor(app) as c:
            c.headers.update(_forwarded(address))
            status, stream = run_event(c, "translate", THANKS)
            assert status == 200, stream
            streams.append(stream)
    return streams


def test_by_default_a_forwarded_address_does_not_escape_the_visitor_limit(engine):
    """Finding 4: with X-Forwarded-For from 127.0.0.1 each request was a new visitor, 12/12."""
    with running_app(engine, api_keys="k1", open_page=True, visitor_rpm=2) as app:
        streams = _page_translations(app, [f"203.0.113.{n}" for n in range(1, 7)])
    served = [s for s in streams if "Thank you." in s]
    refused = [s for s in streams if "per minute for this visitor" in s]
    assert len(served) == 2 and len(refused) == 4, streams


def test_named_proxies_are_believed(engine):
    with running_app(engine, api_keys="k1", open_page=True, visitor_rpm=2,
                     forwarded_allow_ips="127.0.0.1") as app:
        streams = _page_translations(app, [f"203.0.113.{n}" for n in range(1, 7)])
        assert all("Thank you." in s for s in streams), streams  # six visitors, one each
        # The same visitor twice more: over its own limit.
        third = _page_translations(app, ["203.0.113.1", "203.0.113.1"])
        assert "per minute for this visitor" in third[-1], third


def _logins(app, user: str, passwords: list[str], address: str | None = None) -> list[int]:
    with app.client() as c:
        headers = _forwarded(address) if address else {}
        return [c.post("/login", data={"username": user, "password": p},
                       headers=headers).status_code for p in passwords]


def test_by_default_a_forwarded_address_does_not_escape_the_login_throttle(engine):
    """Finding 4: 30 wrong passwords, each with a new X-Forwarded-For, were 30 fresh starts."""
    with running_app(engine, auth=LOGINS) as app:
        codes = []
        for n in range(30):
            codes += _logins(app, "teacher", [f"guess{n}"], f"198.51.100.{n + 1}")
    assert codes.count(400) <= 6 and codes.count(429) >= 24, codes


def test_behind_a_named_proxy_each_address_has_its_own_throttle(engine):
    with running_app(engine, auth=LOGINS, forwarded_allow_ips="127.0.0.0/8") as app:
        assert _logins(app, "teacher", [f"guess{n}" for n in range(8)], "198.51.100.1")[-1] == 429
        # The same account from another address behind the proxy is not held up...
        assert _logins(app, "teacher", ["pw-s3cret"], "198.51.100.2") == [200]
        # ...nor is an untrusted client's claim to be that address believed.
        with running_app(engine, auth=LOGINS) as direct:
            _logins(direct, "teacher", [f"guess{n}" for n in range(8)])
            assert _logins(direct, "teacher", ["pw-s3cret"], "198.51.100.9") == [429]


def test_one_students_typos_do_not_lock_out_the_class(engine):
    """Finding 4: the throttle was per address, so five typos behind one router locked everyone
    out, even with the right password. Now it counts one account at one address."""
    with running_app(engine, auth=LOGINS) as app:
        typos = _logins(app, "teacher", [f"typo{n}" for n in range(8)])
        assert typos[:5] == [400] * 5 and typos[-1] == 429, typos
        # Another account from the same address signs in at once, typos and all.
        assert _logins(app, "student", ["wrong", "st-pw"]) == [400, 200]
        # The account that was guessed at waits its turn, even with the right password: a 200
        # among the 429s would tell a guesser which guess was right.
        assert _logins(app, "teacher", ["pw-s3cret"]) == [429]


def test_uvicorn_trusts_no_forwarded_address_by_itself(engine, monkeypatch):
    """uvicorn's own default believes 127.0.0.1 (and FORWARDED_ALLOW_IPS): the server turns it
    off, so --forwarded-allow-ips is the only switch."""
    from hunyuan_webui.app import Server, create_app

    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "*")
    with running_app(engine) as app:
        config = Server(create_app(app.settings, app.translator), app.settings).server.config
        assert config.proxy_headers is False


def test_forwarded_allow_ips_must_be_addresses():
    assert Settings(forwarded_allow_ips="127.0.0.1, 10.0.0.0/8, ::1").forwarded_allow_ips
    with pytest.raises(Exception, match="not an address"):
        Settings(forwarded_allow_ips="localhost")


# -- 5. bad input, one refusal for every protocol --------------------------------------------------
DEEP = b"[" * 50_000 + b"]" * 50_000
DEEP_OBJECT = b'{"text": ' + b"[" * 50_000 + b"]" * 50_000 + b"}"
HUGE_NUMBER = (b'{"text": ["hi"], "target_lang": "DE", "type": "source", "messages": [], '
               b'"model": "m", "n": ' + b"9" * 5_000 + b"}")
BODIES = {"nested-array": DEEP, "nested-in-object": DEEP_OBJECT, "5000-digits": HUGE_NUMBER}
DEEPL_ROUTES = [("POST", "/v2/translate"), ("GET", "/v2/languages"), ("POST", "/v2/languages"),
                ("GET", "/v2/usage"), ("POST", "/v2/usage")]
OPENAI_ROUTES = [("POST", "/v1/chat/completions")]


@pytest.fixture(scope="module")
def open_app(engine):
    with running_app(engine) as running:
        yield running


@pytest.mark.parametrize("method, route", DEEPL_ROUTES + OPENAI_ROUTES)
@pytest.mark.parametrize("name", list(BODIES))
def test_unreadable_bodies_are_a_400_in_the_protocols_own_shape(open_app, caplog, method, route,
                                                                 name):
    with caplog.at_level(logging.INFO), open_app.client() as c:
        r = c.request(method, route, content=BODIES[name],
                      headers={"content-type": "application/json"})
    assert r.status_code == 400, (r.status_code, r.text[:300])
    assert r.headers["content-type"].startswith("application/json")
    if route.startswith("/v2/"):
        assert r.json() == {"message": "Malformed JSON body."}
    else:
        error = r.json()["error"]
        assert error["message"] == "Malformed JSON body." and error["type"] == \
            "invalid_request_error" and set(error) == {"message", "type", "param", "code"}
    assert "Traceback" not in r.text
    assert not [rec for rec in caplog.records if rec.exc_info or rec.levelno >= logging.ERROR]


@pytest.mark.parametrize("route", ["/v2/translate", "/v2/usage", "/translate"])
def test_a_broken_form_is_a_400_in_the_protocols_own_shape(open_app, route):
    """A multipart form without its boundary: Starlette's own 400 had the JSON API's shape."""
    with open_app.client() as c:
        r = c.post(route, content=b"--xyz\r\n", headers={"content-type": "multipart/form-data"})
    assert r.status_code == 400, (r.status_code, r.text)
    body = r.json()
    assert body == ({"error": "Malformed form body."} if route == "/translate" else
                    {"message": "Malformed form body."}), body


# -- 6. metrics labels from a closed set -----------------------------------------------------------
def _label_values(app) -> set[tuple]:
    with app.client() as c:
        samples = metric_samples(c.get("/metrics").text)
    return {labels for name, labels in samples if name.startswith("hymt_http_")}


def test_random_methods_and_paths_do_not_grow_metrics(open_app):
    """Finding 6: every new method was a new label value, 3,000 of them grew /metrics 8 times."""
    rng = random.Random(20)
    word = lambda n: "".join(rng.choices(string.ascii_uppercase + string.digits, k=n))  # noqa: E731
    paths = ["/v1/translate", "/health", "/gradio_api/info", "/", "/v2/usage"]

    def strangers(c, rounds: int) -> None:
        for n in range(rounds):
            c.request(word(rng.randint(3, 12)), paths[n % len(paths)])
            c.get(f"/gradio_api/{word(6)}/{word(4)}")
            c.post(f"/gradio_api/call/{word(6)}", json={"data": []})
            c.get(f"/{word(6)}")

    with open_app.client() as c:
        strangers(c, len(paths))  # each kind once: the "other" labels exist from here on
        c.get("/metrics")
        before = _label_values(open_app)
        size = len(c.get("/metrics").content)
        strangers(c, 300)
    assert _label_values(open_app) == before
    methods = {dict(labels).get("method") for labels in before} - {None}
    assert methods <= {"GET", "POST", "HEAD", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}
    with open_app.client() as c:
        assert len(c.get("/metrics").content) < size + 2_000  # counts grow, labels do not


# -- 7. model names, never paths -------------------------------------------------------------------
def _every_answer(c) -> list:
    message = prompts.translation_prompt("谢谢。", "zh", "en")
    chat = {"model": "x", "messages": [{"role": "user", "content": message}]}
    answers = [c.get(path) for path in ("/health", "/ready", "/v1/model", "/v1/models",
                                         "/v1/models/class-model", "/v1/models/nope",
                                         "/openapi.json", "/metrics", "/config", "/",
                                         "/gradio_api/info", "/v1/cache", "/v2/usage")]
    answers += [
        c.post("/v1/chat/completions", json=chat),
        c.post("/v1/chat/completions", json={**chat, "stream": True}),
        c.post("/v1/chat/completions", json={"model": "x", "max_tokens": 3, "messages": [
            {"role": "user", "content": "Write a poem"}]}),
        c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh", "target_lang": "en"}),
        c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh", "target_lang": "en",
                                      "stream": True}),
        c.post("/v1/translate", json={"text": "谢谢。", "target_lang": "en", "mode": "formatted"}),
        c.post("/v2/translate", json={"text": ["<b>谢谢。</b>"], "target_lang": "EN",
                                      "tag_handling": "html"}),
        c.post("/v2/translate", json={"text": ["谢谢。"], "target_lang": "EN"}),
        c.post("/translate", json={"q": "谢谢。", "source": "zh", "target": "en"}),
    ]
    return answers


def test_no_answer_names_the_checkpoints_path(tmp_path, demo_dir):
    """Finding 7: the path was in /v1/model, /v1/models, each OpenAI answer and DeepL's errors."""
    where = tmp_path / "secret-place-7f3a" / "class-model"
    shutil.copytree(demo_dir, where)
    engine = make_engine(str(where), max_new_tokens=32)
    try:
        with running_app(engine, cache_size=0) as app, visitor(app) as c:
            answers = _every_answer(c)
            status, stream = run_event(c, "translate", THANKS)
    finally:
        engine.close()
    assert status == 200 and "Thank you." in stream
    texts = [stream] + [r.text for r in answers]
    for r in answers:
        assert r.status_code < 500, (r.request.url, r.status_code, r.text[:300])
    leaks = [t[:200] for t in texts if "secret-place-7f3a" in t or str(tmp_path) in t]
    assert not leaks, leaks
    named = json.loads(answers[2].text)
    assert named["id"] == "class-model"
    assert answers[3].json()["data"][0]["id"] == "class-model"
    assert answers[13].json()["model"] == "class-model"
    assert '"model": "class-model"' in answers[14].text
    # DeepL's markup works on every model now: the tags come back around the translation.
    assert answers[19].json()["translations"][0]["text"].startswith("<b>")
