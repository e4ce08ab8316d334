"""The browser tier: the page in Debian's headless Chromium, driven by Playwright, against the app
on the session's demo engine.

``browser`` is one Chromium per module (the sync Playwright API holds the thread's event loop
while it runs, so it is not kept across modules whose tests run their own). ``url`` is the page
with a phrase cache of the module's ``CACHE_SIZE`` (1000 unless it says; 0 is none), ``demo_url``
the page as ``--demo`` serves it, with its banner. The helpers are in ``tests/browserhelpers.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
from browserhelpers import ARGS, CHROMIUM

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings
from hunyuan_webui.urls import free_port


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _serve(settings: Settings, translator: Translator, **options: Any) -> Iterator[str]:
    server = Server(create_app(settings, translator, **options), settings).start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def url(request: pytest.FixtureRequest, engine: Any, demo_settings: Settings) -> Iterator[str]:
    size = getattr(request.module, "CACHE_SIZE", 1000)
    settings = replace(demo_settings, port=free_port(), cache_size=size)
    cache = PhraseCache(size=size) if size else None
    yield from _serve(settings, Translator(engine, engine.spec, settings, cache=cache))


@pytest.fixture(scope="module")
def demo_url(engine: Any, demo_settings: Settings) -> Iterator[str]:
    """The page as ``--demo`` serves it: the demo model, with its banner."""
    from hunyuan_webui.choice import _demo

    settings = replace(demo_settings, port=free_port(), cache_size=1000)
    translator = Translator(engine, engine.spec, settings, cache=PhraseCache(size=1000))
    banner = _demo(settings, "", asked=True).banner
    yield from _serve(settings, translator, banner=banner)
