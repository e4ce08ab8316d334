"""Stopping really stops: the Stop button, a cancelled gradio_client job and a closed page free
their batch slot, and generation stops consuming compute.

These need generations that would run for a long time: a random-weight checkpoint of the real
architecture whose end token is unreachable (the benchmark's), so a request only ends at its
token cap unless it is cancelled.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from apphelpers import CHROMIUM, CHROMIUM_ARGS, free_port, wait_until
from gradio_client import Client

from benchmarks.peers import build_checkpoint
from hunyuan_webui import models
from hunyuan_webui.app import Server, create_app
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

LONG = "天气 " * 300  # ~1,000 tokens of prompt: the default cap allows ~3,000 new tokens


@pytest.fixture(scope="module")
def endless(tmp_path_factory) -> Iterator[tuple[LocalEngine, str]]:
    model_dir = build_checkpoint(tmp_path_factory.mktemp("endless"), "tiny")
    port = free_port()
    # Guards off: the loop and length guards would stop this endless answer themselves.
    settings = Settings(model=str(model_dir), port=port, cache_size=0, max_new_tokens=4000,
                        guards=False)
    engine = LocalEngine(models.resolve(settings.model), max_new_tokens=4000)
    assert engine.wait_ready(120).state == "ready"
    server = Server(create_app(settings, Translator(engine, engine.spec, settings)),
                    settings).start()
    yield engine, server.url
    server.stop()
    engine.close()


def test_cancelling_a_client_job_frees_the_slot(endless):
    engine, url = endless
    client = Client(url, verbose=False)
    try:
        job = client.submit(LONG, "zh", "en", api_name="/translate")
        assert wait_until(lambda: engine.status().active == 1, 30)
        assert wait_until(lambda: engine.tokens_generated > 50, 30)
        job.cancel()
        assert wait_until(lambda: engine.status().active == 0, 5)
        tokens = engine.tokens_generated
        time.sleep(0.5)
        assert engine.tokens_generated == tokens  # nothing is generating any more
    finally:
        client.close()




@pytest.mark.browser
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_stop_button_and_closed_tab_stop_generation(endless):
    from playwright.sync_api import sync_playwright

    engine, url = endless
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(url)
        page.wait_for_selector("#translate-btn")
        page.locator("#input-box textarea").fill(LONG)
        page.locator("#translate-btn").click()
        assert wait_until(lambda: engine.status().active == 1, 30)
        page.wait_for_function("() => document.querySelector('#output-box textarea').value"
                               ".length > 20", timeout=60_000)
        page.locator("#stop-btn").click()
        assert wait_until(lambda: engine.status().active == 0, 5)

        page.locator("#translate-btn").click()
        assert wait_until(lambda: engine.status().active == 1, 30)
        page.close()  # the visitor closes the tab mid-stream
        assert wait_until(lambda: engine.status().active == 0, 30)
        browser.close()
