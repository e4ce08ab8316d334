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

WAIT_MS = 60_000  # a wait that names no time of its own: a minute, on a busy machine


class _Browser:
    """Chromium, whose every new page waits :data:`WAIT_MS` where a wait names no time (Playwright
    waits 30 s; a fresh clone's suite runs beside other work)."""

    def __init__(self, browser: Any) -> None:
        self._browser = browser

    def new_context(self, **options: Any) -> Any:
        context = self._browser.new_context(**options)
        context.set_default_timeout(WAIT_MS)
        return context

    def new_page(self, **options: Any) -> Any:
        page = self._browser.new_page(**options)
        page.context.set_default_timeout(WAIT_MS)
        return page

    def __getattr__(self, name: str) -> Any:
        return getattr(self._browser, name)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield _Browser(browser)
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
