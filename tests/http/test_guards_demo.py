"""The answer guards on real checkpoints: the misbehaving demo (every bad answer caught, the right
retries served, the rest marked and never cached, the API and the page say so) and the ordinary
demo models (no false alarm on any phrase)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from apphelpers import free_port, metric_samples, running_app, sse_events
from fakes import ScriptedEngine

from hunyuan_webui import models
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.demo.misbehaving import MISBEHAVIOURS, ensure_misbehaving_model
from hunyuan_webui.demo_model import ensure_demo_model, load_phrases
from hunyuan_webui.engine import GREEDY
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow
IDS = [f"{m.guard}-{m.source_lang}-{m.target_lang}-{m.source}" for m in MISBEHAVIOURS]


def _engine(directory: Path) -> Iterator[LocalEngine]:
    engine = LocalEngine(models.resolve(str(directory)), max_batch_size=8, max_queued=256,
                         max_new_tokens=128)
    status = engine.wait_ready(180)
    assert status.state == "ready", status.reason
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def misbehaving() -> Iterator[LocalEngine]:
    yield from _engine(ensure_misbehaving_model())


def translator_on(engine: LocalEngine, **overrides) -> Translator:
    settings = Settings(**{"model": str(engine.spec.id), "max_new_tokens": 128,
                           "cache_size": 64, **overrides})
    cache = PhraseCache(size=settings.cache_size) if settings.cache_size else None
    return Translator(engine, engine.spec, settings, cache=cache)


def test_the_cli_prints_the_misbehaving_checkpoint():
    out = subprocess.run([sys.executable, "-m", "hunyuan_webui", "demo-model", "--misbehaving"],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert Path(out.strip()) == ensure_misbehaving_model()


def test_every_bad_answer_is_caught_and_right_retries_are_served(misbehaving):
    translator = translator_on(misbehaving)
    for m in MISBEHAVIOURS:
        request = TranslationRequest(m.source, m.target_lang, m.source_lang)
        result = translator.translate(request)
        again = translator.translate(request)
        if m.served:
            assert (result.text, result.warnings) == (m.right, ()), m
            assert again.cached and again.text == m.right, m
        else:
            assert [w["guard"] for w in result.warnings] == [m.guard], (m, result)
            assert not again.cached and again.warnings, m
            assert len(result.text) < 30 and "!!" not in result.text, result.text
    events = translator.guards.counts.items()
    served = sum(m.served for m in MISBEHAVIOURS)
    assert sum(n for (_, outcome, _), n in events if outcome == "retry_served") == served
    assert sum(n for _, n in events) == served + 2 * (len(MISBEHAVIOURS) - served)


def test_without_the_guards_the_bad_answers_are_served_and_cached(misbehaving):
    translator = translator_on(misbehaving, guards=False)
    m = MISBEHAVIOURS[0]
    request = TranslationRequest(m.source, m.target_lang, m.source_lang)
    assert translator.translate(request).text == m.answer
    assert translator.translate(request).cached


def test_the_api_and_the_page_say_when_an_answer_is_marked(misbehaving):
    from hunyuan_webui.web.page.form import TextForm
    from hunyuan_webui.web.page.ui import TranslatorUI

    with running_app(misbehaving, cache_size=64, guards=True) as app, app.client() as c:
        for m in MISBEHAVIOURS:
            body = {"text": m.source, "source_lang": m.source_lang, "target_lang": m.target_lang}
            answer = c.post("/v1/translate", json=body).json()
            if m.served:
                assert answer["translation"] == m.right and "warnings" not in answer, answer
            else:
                [warning] = answer["warnings"]
                assert warning["guard"] == m.guard and warning["segment"] == 0, answer
                code = {"language": "wrong_language", "copy": "copied_source",
                        "loop": "repetition_loop"}[m.guard]
                assert warning["code"] == code
        marked = next(m for m in MISBEHAVIOURS if m.guard == "language" and not m.served)
        raw = c.post("/v1/translate", json={"text": marked.source, "stream": True,
                                            "source_lang": marked.source_lang,
                                            "target_lang": marked.target_lang}).text
        [done] = [data for _, data in sse_events(raw) if data.get("done")]
        assert done["warnings"][0]["detected"] == "zh" and not done["cached"]
        samples = metric_samples(c.get("/metrics").text)
        key = ("hymt_guard_events_total", (("kind", "language"), ("outcome", "marked"),
                                           ("pair", "en-ko")))
        assert samples[key] == 2
        ui = TranslatorUI(app.translator)
        form = TextForm(text=marked.source, source=marked.source_lang,
                        target=marked.target_lang, deterministic=True, temperature=0.7,
                        top_p=0.6, top_k=20, repetition=1.05, history=[])
        out = asyncio.run(_last(ui.translate(form)))
        assert out["output"] == marked.answer
        assert "⚠️ Check this translation: it seems to be in Chinese" in out["progress"], out


async def _last(agen):
    last = None
    async for item in agen:
        last = item
    return last


@pytest.mark.parametrize("fmt", ["7b", "1.8b"])
def test_no_false_alarm_on_any_demo_phrase(fmt):
    phrases = load_phrases()
    for engine in _engine(ensure_demo_model(fmt)):
        translator = translator_on(engine, cache_size=0)
        for options in (None, GREEDY):
            requests = [TranslationRequest(p.source, p.target_lang, p.source_lang,
                                           options=options) for p in phrases]
            results = translator.translate_many(requests)
            assert [r.text for r in results] == [p.target for p in phrases]
            assert all(r.warnings == () for r in results)
        assert translator.guards.counts.items() == []
        assert translator.model_calls == 2 * len(phrases)  # not one retry


def test_app_py_serves_the_misbehaving_checkpoint():
    """``python app.py --model <dir>``: the directory the CLI printed, served as any model."""
    repo = Path(__file__).resolve().parents[2]
    port = free_port()
    cmd = [sys.executable, str(repo / "app.py"), "--model", str(ensure_misbehaving_model()),
           "--engine", "local", "--no-warmup", "--cpu-threads", "1", "--port", str(port),
           "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(cmd, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "app.py did not start"
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/ready", timeout=2, trust_env=False).status_code == 200:
                    break
            time.sleep(0.25)
        m = replace(MISBEHAVIOURS[0])
        answer = httpx.post(f"{url}/v1/translate", trust_env=False, timeout=60, json={
            "text": m.source, "source_lang": m.source_lang, "target_lang": m.target_lang}).json()
        assert answer["translation"] == m.right and "warnings" not in answer
        metrics = httpx.get(f"{url}/metrics", trust_env=False, timeout=10).text
        assert 'hymt_guard_events_total{kind="language",outcome="retry_served",pair="en-ja"}' \
            in metrics
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=20)


def test_the_guards_run_on_the_child_process_engine_too():
    """The guards are the service's, not an engine's: the same catches over a pipe."""
    from hunyuan_webui.engine.process import ProcessEngine

    engine = ProcessEngine(models.resolve(str(ensure_misbehaving_model())), device="cpu",
                           max_new_tokens=128, max_batch_size=8)
    try:
        assert engine.wait_ready(180).state == "ready"
        translator = translator_on(engine)
        for m in MISBEHAVIOURS:
            result = translator.translate(TranslationRequest(m.source, m.target_lang,
                                                             m.source_lang))
            assert result.text == m.right if m.served else result.warnings, (m, result)
    finally:
        engine.close()


def test_the_api_and_metrics_report_marked_segments():
    """A scripted engine that answers Chinese to a Korean request: the JSON answer and the stream's
    last event mark both segments, and /metrics counts the marks."""
    engine = ScriptedEngine(lambda prompt, options: "再见。")
    with running_app(engine, cache_size=16, guards=True) as app, app.client() as c:
        body = {"text": "Goodbye. See you later.", "source_lang": "en", "target_lang": "ko"}
        answer = c.post("/v1/translate", json=body).json()
        assert [(w["segment"], w["code"], w["detected"]) for w in answer["warnings"]] == [
            (0, "wrong_language", "zh"), (1, "wrong_language", "zh")]
        raw = c.post("/v1/translate", json={**body, "stream": True}).text
        done = [data for _, data in sse_events(raw) if data.get("done")]
        assert done and done[0]["warnings"] == answer["warnings"]
        assert not done[0]["cached"]
        samples = metric_samples(c.get("/metrics").text)
        key = ("hymt_guard_events_total", (("kind", "language"), ("outcome", "marked"),
                                           ("pair", "en-ko")))
        assert samples[key] == 4
        assert json.dumps(answer, ensure_ascii=False).count("wrong_language") == 2
