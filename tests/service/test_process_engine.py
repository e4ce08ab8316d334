"""The engine in a child process (``--engine process``, the default): the same answers, streamed,
cancelled and failed the way the in-process engine does them, across a pipe."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import pytest
from apphelpers import wait_until

from benchmarks.peers import build_checkpoint
from hunyuan_webui import models
from hunyuan_webui.engine import GREEDY, DecodingOptions, EngineState, get_engine
from hunyuan_webui.engine.process import ProcessEngine
from hunyuan_webui.errors import BusyError, EngineError, InputTooLongError, NotReadyError
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane


@pytest.fixture(scope="module")
def child(demo_dir: str) -> Iterator[ProcessEngine]:
    engine = ProcessEngine(models.resolve(demo_dir), device="cpu", max_new_tokens=64,
                           max_queued=128, max_input_tokens=100)
    status = engine.wait_ready(120)
    assert status.state == EngineState.READY, status.reason
    yield engine
    engine.close()


def test_every_demo_phrase_matches_the_in_process_engine(child, engine, phrases):
    prompts = [p.prompt for p in phrases]
    here = [s.result() for s in engine.submit(prompts, GREEDY)]
    there = child.submit(prompts, GREEDY)
    assert [s.result() for s in there] == here == [p.target for p in phrases]
    assert all(s.finish_reason == "stop" for s in there)
    status = child.status()
    assert status.state == EngineState.READY and status.extra["process"] != os.getpid()


def test_text_streams_in_pieces_with_its_usage(child, engine, phrases):
    longest = max(phrases, key=lambda p: len(p.target))
    here = engine.stream(longest.prompt, GREEDY)
    here.result()
    stream = child.stream(longest.prompt, GREEDY)
    chunks = list(stream)
    assert len(chunks) >= 3 and "".join(chunks) == stream.text == longest.target
    assert stream.usage.prompt_tokens == here.usage.prompt_tokens > 0
    assert stream.usage.completion_tokens == here.usage.completion_tokens
    assert 0 < stream.usage.first_token_s <= stream.usage.latency_s
    capped = child.stream(longest.prompt, DecodingOptions(deterministic=True, max_new_tokens=1))
    assert longest.target.startswith(capped.result()) and capped.finish_reason == "length"
    assert child.count_tokens("hello world") > 0


def test_errors_come_back_as_the_same_kind(child, phrases):
    with pytest.raises(InputTooLongError, match="tokens long"):
        child.submit(["天气 " * 1000], GREEDY)
    with pytest.raises(BusyError, match="busy") as busy:
        child.submit([phrases[0].prompt] * 129, GREEDY)  # one more than the queue holds
    assert busy.value.retry_after > 0 and busy.value.http_status == 503
    assert child.generate(phrases[0].prompt, GREEDY) == phrases[0].target  # still serving


@pytest.fixture()
def endless(tmp_path) -> Iterator[ProcessEngine]:
    model_dir = build_checkpoint(tmp_path / "endless", "tiny")  # its stop tokens never win
    engine = ProcessEngine(models.resolve(str(model_dir)), device="cpu", max_new_tokens=4000)
    assert engine.wait_ready(120).state == EngineState.READY
    yield engine
    engine.close()


def test_cancel_stops_the_child_generating(endless):
    stream = endless.stream("天气 " * 20, GREEDY)
    chunks = iter(stream)
    next(chunks), next(chunks)
    stream.cancel()
    assert wait_until(lambda: stream.done and endless.status().active == 0, 5)
    assert stream.finish_reason == "cancelled"
    steps = endless.status().extra["steps"]
    time.sleep(0.3)  # time for steps that should not happen
    assert endless.status().extra["steps"] == steps


def test_a_killed_child_ends_its_streams_clearly_and_is_restarted(endless, caplog):
    """kill -9 of the engine process used to leave the translator dead until a person restarted
    it: /ready said "failed" and every request got a 502. Now the streams in flight end with a
    message saying what happened, the status says "restarting", and a new child serves."""
    stream = endless.stream("天气 " * 20, GREEDY)
    next(iter(stream))
    old = endless.status().extra["process"]
    os.kill(old, signal.SIGKILL)
    assert wait_until(lambda: stream.done, 10)
    assert stream.finish_reason == "error" and isinstance(stream.error, EngineError)
    assert "killed by signal 9" in stream.error.user_message
    assert "restarted" in stream.error.user_message
    assert wait_until(lambda: endless.status().state == EngineState.RESTARTING, 5)
    with pytest.raises(NotReadyError, match="restarting"):
        endless.submit(["x"], GREEDY)
    status = endless.wait_ready(60)
    assert status.state == EngineState.READY, status.reason
    assert status.extra["process"] != old and status.extra["restarts"] == 1
    again = endless.stream("天气 " * 20, DecodingOptions(deterministic=True, max_new_tokens=5))
    assert again.result() and again.finish_reason == "length"
    assert any(r.levelname == "WARNING" and "killed by signal 9" in r.getMessage()
               for r in caplog.records)


def test_a_hung_child_is_killed_and_replaced(tmp_path, demo_dir, phrases):
    """A child that stops sending heartbeats (here: SIGSTOP) is killed and a new one serves."""
    engine = ProcessEngine(models.resolve(demo_dir), device="cpu", max_new_tokens=64,
                           beat_timeout=2.0, warmup=False)
    try:
        assert engine.wait_ready(120).state == EngineState.READY
        old = engine.status().extra["process"]
        os.kill(old, signal.SIGSTOP)
        assert wait_until(lambda: engine.status().state == EngineState.RESTARTING, 10)
        assert "stopped answering" in engine.status().reason
        assert engine.wait_ready(60).state == EngineState.READY
        assert engine.generate(phrases[0].prompt, GREEDY) == phrases[0].target
        assert engine.status().extra["process"] != old
        assert wait_until(lambda: not _alive(old), 10)
    finally:
        engine.close()


def test_repeated_crashes_stop_the_restarts_and_say_why(demo_dir, monkeypatch):
    monkeypatch.setattr("hunyuan_webui.engine.restarts.RESTART_LIMIT", 1)
    monkeypatch.setattr("hunyuan_webui.engine.restarts.BACKOFF_S", (0.1,))
    engine = ProcessEngine(models.resolve(demo_dir), device="cpu", warmup=False)
    try:
        for _ in range(2):
            assert engine.wait_ready(120).state == EngineState.READY
            os.kill(engine.status().extra["process"], signal.SIGKILL)
            assert wait_until(lambda: engine.status().state != EngineState.READY, 10)
        assert wait_until(lambda: engine.status().state == EngineState.FAILED, 10)
        assert "failed 2 times" in engine.status().reason
        with pytest.raises(EngineError, match="not restarted"):
            engine.submit(["x"], GREEDY)
    finally:
        engine.close()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status") as f:
            return "State:\tZ" not in f.read()
    except FileNotFoundError:
        return False


def test_the_default_engine_is_the_child_process_and_closes_cleanly(demo_dir):
    settings = Settings(model=demo_dir, device="cpu", warmup=False)
    assert settings.engine == "process"
    engine = get_engine(models.resolve(settings.model), settings.engine_config())
    try:
        assert isinstance(engine, ProcessEngine)
        assert engine.wait_ready(120).state == EngineState.READY
    finally:
        engine.close()
    assert engine.status().state == EngineState.STOPPED


def test_a_failed_load_in_the_child_explains_itself(tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    engine = ProcessEngine(models.resolve(str(broken)), device="cpu")
    try:
        status = engine.wait_ready(120)
        assert status.state == EngineState.FAILED
        assert "--demo" in status.reason and "--model PATH" in status.reason
        with pytest.raises(NotReadyError, match="could not be loaded"):
            engine.submit(["hi"], GREEDY)
    finally:
        engine.close()
