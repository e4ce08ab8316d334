"""Shared fixtures: the demo model (real architecture, shipped checkpoint) behind one engine.

One fp32 engine serves the whole session, as in TGI's tests; each test gets a fresh Translator
(no cache unless it asks) so model-call counts are its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from hunyuan_webui import models
from hunyuan_webui.demo_model import Phrase, ensure_demo_model, load_phrases
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings


@pytest.fixture(scope="session")
def demo_dir() -> str:
    return str(ensure_demo_model())


@pytest.fixture(scope="session")
def phrases() -> list[Phrase]:
    return load_phrases()


@pytest.fixture(scope="session")
def demo_settings(demo_dir: str) -> Settings:
    return Settings(model=demo_dir, max_new_tokens=64, max_batch_size=16, max_queued=64,
                    cache_size=0)


@pytest.fixture(scope="session")
def engine(demo_settings: Settings) -> Iterator[LocalEngine]:
    spec = models.resolve(demo_settings.model)
    engine = LocalEngine(spec, max_batch_size=demo_settings.max_batch_size,
                         max_queued=demo_settings.max_queued,
                         max_new_tokens=demo_settings.max_new_tokens)
    status = engine.wait_ready(120)
    assert status.state == "ready", status.reason
    yield engine
    engine.close()


@pytest.fixture
def make_translator(engine: LocalEngine, demo_settings: Settings):
    def make(**overrides) -> Translator:
        cache = overrides.pop("cache", None)
        settings = replace(demo_settings, **overrides)
        return Translator(engine, engine.spec, settings, cache=cache)

    return make


@pytest.fixture
def translator(make_translator) -> Translator:
    return make_translator()
