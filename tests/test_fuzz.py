"""Fuzz the JSON API and the LibreTranslate routes from the app's own OpenAPI document.

schemathesis reads ``/openapi.json`` from the running server and sends valid and invalid requests
(wrong types, missing fields, odd strings, unexpected media types) through real HTTP. The one
property checked is the issue's: no answer is a 5xx. Gradio's own routes are not in scope.
Bounded: at most 50 generated cases per operation (valid and invalid), no deadline.

The cases come from schemathesis' own strategies driven by Hypothesis here, rather than through
``schemathesis.pytest.from_fixture``: that loader sets ``request.node._nodeid``, which pytest 9
no longer has.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
import requests
import schemathesis
from apphelpers import running_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from hunyuan_webui import languages
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
              ("POST", "/kiss"), ("POST", "/deeplx"), ("POST", "/hcfy")]
MAX_EXAMPLES = 50
KEY = "fuzz-key"
OPTION_NAMES = {f.name for f in dataclasses.fields(DecodingOptions)}


@pytest.fixture(scope="module")
def fuzz_app(engine, tmp_path_factory):
    # Small limits keep each generated translation short; the model still runs for valid input.
    # API keys are on, so that made-up keys (of any JSON type) are fuzzed too.
    keys = tmp_path_factory.mktemp("fuzz") / "keys.txt"
    keys.write_text(f"{KEY} 0 0\n", encoding="utf-8")
    with running_app(engine, max_input_chars=300, max_body_bytes=20_000,
                     api_keys_file=str(keys)) as running:
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
