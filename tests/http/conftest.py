"""The HTTP tier: the real app (FastAPI with the Gradio page) served by uvicorn on a loopback port,
or ``app.py`` in a child process, reached through real clients.

The apps a module needs most are here once, each built by :func:`apphelpers.running_app` on the
session's demo engine and shared by the module's tests; a module says how its app differs in
module-level values, which these fixtures read:

- ``APP``: the ``app`` fixture's settings (``running_app``'s keyword arguments);
- ``APP_KEYS_FILE``: the text of an ``--api-keys-file`` for it, written to a temporary file;
- ``KEYS_APP`` and ``KEYS_APP_FILE``: the same for ``keys_app``, the module's app with keys;
- ``DEEPL_KEY``: the key ``deepl_client`` sends.

``client`` (httpx), ``openai_client`` and ``deepl_client`` reach ``app`` through the client a
user of that protocol has.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import httpx
import pytest
from apphelpers import RunningApp, running_app


def _serve(request: pytest.FixtureRequest, engine: Any, settings: str,
           keys_file: str) -> Iterator[RunningApp]:
    options = dict(getattr(request.module, settings, {}))
    keys = getattr(request.module, keys_file, None)
    if keys is not None:
        path = request.getfixturevalue("tmp_path_factory").mktemp("keys") / "api-keys.txt"
        path.write_text(keys, encoding="utf-8")
        options["api_keys_file"] = str(path)
    with running_app(engine, **options) as running:
        yield running


@pytest.fixture(scope="module")
def app(request: pytest.FixtureRequest, engine: Any) -> Iterator[RunningApp]:
    """The module's app: the demo engine, phrase cache on, the module's ``APP`` settings."""
    yield from _serve(request, engine, "APP", "APP_KEYS_FILE")


@pytest.fixture(scope="module")
def keys_app(request: pytest.FixtureRequest, engine: Any) -> Iterator[RunningApp]:
    """The module's app with keys (``KEYS_APP``, ``KEYS_APP_FILE``)."""
    yield from _serve(request, engine, "KEYS_APP", "KEYS_APP_FILE")


@pytest.fixture(scope="module")
def client(app: RunningApp) -> Iterator[httpx.Client]:
    with app.client() as c:
        yield c


@pytest.fixture(scope="module")
def openai_client(app: RunningApp) -> Iterator[Any]:
    """OpenAI's own client on the app's ``/v1``, no retries (a refusal is the answer)."""
    from openai import OpenAI

    with OpenAI(base_url=f"{app.url}/v1", api_key="unused", max_retries=0,
                http_client=httpx.Client(trust_env=False, timeout=60)) as c:
        yield c


@pytest.fixture(scope="module")
def deepl_client(request: pytest.FixtureRequest, app: RunningApp) -> Iterator[Any]:
    """DeepL's own client with the module's ``DEEPL_KEY``, its server the app."""
    import deepl

    with closing(deepl.Translator(getattr(request.module, "DEEPL_KEY", "any-key"),
                                  server_url=app.url)) as translator:
        yield translator
