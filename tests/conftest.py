"""The suite's rules, and the one demo engine its model-loading tiers share.

The tests are in four tiers, a folder each, with the fixtures a tier shares in its own conftest:

- ``fast/``: no model is loaded (fakes that subclass the real ``Engine``, pure functions, servers
  on fake engines); it is the fast lane;
- ``service/``: the demo model in-process (the engine, the translator, the library, benchmarks);
- ``http/``: real servers (the app on a loopback port, ``app.py`` in a child process, managed and
  remote engines), reached through real clients;
- ``browser/``: the page in Debian's Chromium.

A file whose tests mix tiers sits in the tier of its heaviest. The helpers every tier imports
(``apphelpers``, ``fakes``, ``browserhelpers``...) are modules of this folder.

One fp32 engine on the demo model (real architecture, shipped checkpoint) serves the whole
session, as in TGI's tests, to the three tiers that load the model; each test gets a fresh
Translator (no cache unless it asks) so model-call counts are its own.

Three rules for the whole suite live here too:

- Every test outside ``fast/`` is marked ``slow`` (it loads the model, starts a real server or
  a browser), so ``pytest -m "not slow"`` is the fast lane: ``fast/``, for the edit-test loop.
- ``fast/`` holds no slow test: a test there that needs the demo model (it asks for
  ``demo_dir``, directly or through ``engine``, ``translator``...) or says it is slow fails the
  run's collection.
- A skipped test is a test that did not run: the run fails when any test is skipped, unless it is
  on :data:`ALLOWED_SKIPS` with the reason it may be. ``bash launch.sh test`` installs what the
  suite needs (redis-server, chromium), so nothing should skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hunyuan_webui import models
from hunyuan_webui.demo.model import Phrase, ensure_demo_model, load_phrases
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings

# Test node ids (as pytest prints them) that may be skipped, with the reason. Empty: none may.
ALLOWED_SKIPS: dict[str, str] = {}


FAST_TIER = Path(__file__).resolve().parent / "fast"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "demo_dir" in getattr(item, "fixturenames", ()) or \
                FAST_TIER not in Path(item.path).parents:
            item.add_marker(pytest.mark.slow)
    misplaced = [item.nodeid for item in items if item.get_closest_marker("slow") is not None
                 and FAST_TIER in Path(item.path).parents]
    if misplaced:
        raise pytest.UsageError("tests/fast/ is the fast lane, but these are slow (they load the "
                                "model or say so); move them to the tier of what they start: "
                                + ", ".join(misplaced))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    skipped = [r for r in reporter.stats.get("skipped", []) if r.nodeid not in ALLOWED_SKIPS]
    if skipped:
        reporter.write_sep("=", f"{len(skipped)} test(s) skipped: a skipped test did not run",
                           red=True)
        for report in skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            reporter.write_line(f"SKIPPED {report.nodeid}: {reason}")
        reporter.write_line("Install what they need (bash launch.sh test does), or add them to "
                            "ALLOWED_SKIPS in tests/conftest.py with the reason.")
        if session.exitstatus == 0:
            session.exitstatus = 1
    elif reporter.stats.get("passed"):
        reporter.ensure_newline()
        reporter.write_line(f"skipped: 0 (allowed: {len(ALLOWED_SKIPS)})")


@pytest.fixture(scope="session")
def demo_dir() -> str:
    return str(ensure_demo_model())


@pytest.fixture(scope="session")
def phrases() -> list[Phrase]:
    return load_phrases()


@pytest.fixture(scope="session")
def demo_settings(demo_dir: str) -> Settings:
    # Guards off: the demo answers text it does not know with bits of its phrases in any language,
    # which the guards rightly retry; the tests of other features count engine calls. The guards'
    # own tests (test_guards*.py) turn them on.
    return Settings(model=demo_dir, max_new_tokens=64, max_batch_size=16, max_queued=128,
                    cache_size=0, guards=False)


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
