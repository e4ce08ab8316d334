"""A classroom's worth of concurrency: the lock cycles that froze the server, fair scheduling of
long inputs beside short ones, and a mixed soak on both in-server engines.

Each cycle test tells its bug's story in its docstring and failed (hung until its deadline) on the
code before the fix. Engines here that are not the demo model subclass the real ``Engine`` base
class, so they cannot drift from the interface the service uses.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest
from apphelpers import LONG_PAIR, make_engine, running_app, sse_events, wait_until
from fakes import InstantEngine, PipeEngine

from hunyuan_webui import models, prompts
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.engine import GREEDY, DecodingOptions, Engine, EngineState, Stream
from hunyuan_webui.engine.process import ProcessEngine
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.settings import Settings

DEADLINE_S = 10.0


def _translator(engine: Engine, **settings: Any) -> Translator:
    spec = models.resolve("tencent/Hunyuan-MT-7B")
    return Translator(engine, spec, Settings(**settings), cache=PhraseCache(size=100))


def _in_thread(fn: Any, *args: Any) -> dict[str, Any]:
    """Run ``fn`` on a daemon thread and wait up to the deadline: a deadlock fails, not hangs."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(DEADLINE_S)
    box["hung"] = thread.is_alive()
    return box


def test_an_answer_that_ended_before_its_callback_was_added_does_not_deadlock():
    """The permanent deadlock seen in class: ``share_or_submit`` held ``_inflight_lock`` while
    adding the done callback; for a stream that had already ended, ``add_done_callback`` ran the
    callback at once, and the callback took the same (non-reentrant) lock. That thread never
    returned and every later request queued behind the lock."""
    translator = _translator(InstantEngine())
    first = _in_thread(translator.translate, TranslationRequest("hello", "zh", "en"))
    assert not first["hung"], "deadlocked on the immediate callback"
    assert first["value"].text == "HELLO"
    again = _in_thread(translator.translate, TranslationRequest("hello", "zh", "en"))
    assert not again["hung"] and again["value"].cached
    assert translator.in_flight() == 0


def test_a_submit_whose_reply_needs_the_lock_its_caller_held_does_not_stall():
    """The 30 s stalls: ``share_or_submit`` held ``_inflight_lock`` while ``engine.submit()``
    waited for the child's reply, and the one thread that delivers replies was blocked ending an
    earlier stream, whose callback needed that lock. The wait timed out and the user read "The
    engine process has stopped." while it was alive."""
    translator = _translator(PipeEngine())
    first = threading.Thread(target=translator.translate,
                             args=(TranslationRequest("first", "zh", "en"),), daemon=True)
    first.start()
    assert wait_until(lambda: translator.in_flight() == 1, DEADLINE_S)
    second = _in_thread(translator.translate, TranslationRequest("second", "zh", "en"))
    assert not second["hung"]
    assert "error" not in second, second.get("error")
    assert second["value"].text == "SECOND"
    first.join(DEADLINE_S)
    assert not first.is_alive() and translator.in_flight() == 0


def test_identical_requests_in_flight_share_one_sequence_without_holding_a_lock():
    translator = _translator(PipeEngine())
    barrier = threading.Barrier(8)
    results: list[str] = []

    def ask() -> None:
        barrier.wait(DEADLINE_S)
        results.append(translator.translate(TranslationRequest("same", "zh", "en")).text)

    threads = [threading.Thread(target=ask, daemon=True) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S)
    assert results == ["SAME"] * 8
    assert translator.model_calls == 1


def test_the_engine_ends_cancelled_queued_streams_without_holding_its_lock(demo_dir, phrases):
    """The local engine finished a cancelled stream that was still queued while holding its
    scheduler lock; the stream's observer (the service's bookkeeping) then waited for the
    service's lock, held by a submitter waiting for the scheduler lock. An observer must be able
    to use the engine."""
    engine = make_engine(demo_dir, max_new_tokens=64, max_batch_size=1)
    try:
        running = engine.stream(phrases[0].prompt, GREEDY)
        queued = engine.stream(phrases[1].prompt, GREEDY)
        seen: dict[str, Any] = {}

        def observer(stream: Stream) -> None:
            seen.update(_in_thread(engine.status))

        queued.add_done_callback(observer)
        queued.cancel()
        assert running.result() == phrases[0].target
        assert wait_until(lambda: "hung" in seen, DEADLINE_S * 2)
        assert not seen["hung"], "the engine held its lock while ending the stream"
        assert queued.finish_reason == "cancelled"
        assert engine.generate(phrases[2].prompt, GREEDY) == phrases[2].target
    finally:
        engine.close()


# -- fair scheduling --------------------------------------------------------------------------------
def test_a_long_prompt_is_read_in_chunks_and_gives_every_answer_unchanged(demo_dir, phrases):
    engine = make_engine(demo_dir, max_new_tokens=64, prefill_chunk_tokens=7)
    try:
        streams = engine.submit([p.prompt for p in phrases], GREEDY)
        assert [s.result() for s in streams] == [p.target for p in phrases]
    finally:
        engine.close()


def test_a_short_request_completes_while_a_long_prompt_is_being_read(demo_dir, phrases):
    """One long paste used to be read in one pass together with everything waiting, so a short
    request that came just after it got its first token only when the whole paste was read."""
    engine = make_engine(demo_dir, max_new_tokens=64, prefill_chunk_tokens=32,
                         max_input_tokens=4096)
    try:
        text = "，".join(p.source for p in phrases) * 4
        long_prompt = prompts.translation_prompt(text, "zh", "en")
        assert engine.count_tokens(long_prompt) > 1000
        [long] = engine.submit([long_prompt], DecodingOptions(deterministic=True,
                                                              max_new_tokens=4))
        short = engine.stream(phrases[0].prompt, GREEDY)
        assert short.result() == phrases[0].target
        long.result()
        assert short.usage.finished_at < long.usage.first_token_at, \
            "the short request waited for the long prompt to be read"
    finally:
        engine.close()


def test_one_document_cannot_fill_every_batch_slot(make_translator, engine):
    """A 176-sentence paste had 32 segments submitted at once: every batch slot and half the
    queue, so a short request from another student waited behind it."""
    translator = make_translator(max_batch_size=16, max_segments_per_request=3)
    submitted: list[Stream] = []
    peak = 0
    submit = engine.submit

    def spy(prompts_: Sequence[str], options: Any) -> list[Stream]:
        nonlocal peak
        peak = max(peak, sum(not s.done for s in submitted) + len(prompts_))
        made = submit(prompts_, options)
        submitted.extend(made)
        return made

    engine.submit = spy  # type: ignore[method-assign]
    try:
        text = "".join(f"第{i}句话。" for i in range(30))
        result = translator.translate(TranslationRequest(text, "en", "zh", options=GREEDY))
    finally:
        del engine.submit
    assert result.segments == 30 and len(submitted) == 30
    assert peak == 3


# -- the soak -----------------------------------------------------------------------------------
SOAK_CLIENTS = 16
SOAK_SECONDS = 20.0


async def _soak_client(app: Any, number: int, phrases: list[Any], log: list[dict[str, Any]],
                       until: float) -> None:
    rng = random.Random(number)
    async with app.async_client(timeout=30) as client:
        while time.monotonic() < until:
            p = rng.choice(phrases)
            kind = rng.choice(("greedy", "sampled", "stream", "leave"))
            body: dict[str, Any] = {"text": p.source, "source_lang": p.source_lang,
                                    "target_lang": p.target_lang}
            if kind == "greedy":
                body["options"] = {"deterministic": True}
            entry: dict[str, Any] = {"kind": kind, "expected": p.target}
            started = time.monotonic()
            try:
                if kind in ("greedy", "sampled"):
                    r = await client.post("/v1/translate", json=body)
                    entry.update(status=r.status_code, got=r.json().get("translation"))
                else:
                    entry.update(await _soak_stream(client, body, rng.randint(0, 3)
                                                    if kind == "leave" else None))
            except Exception as exc:  # a timeout is the failure this test exists for
                entry.update(status=None, error=repr(exc))
            entry["seconds"] = time.monotonic() - started
            log.append(entry)


async def _soak_stream(client: Any, body: dict[str, Any], leave_after: int | None
                       ) -> dict[str, Any]:
    lines: list[str] = []
    async with client.stream("POST", "/v1/translate", json={**body, "stream": True}) as r:
        read = 0
        async for line in r.aiter_lines():
            lines.append(line)
            if line.startswith("data: ") and leave_after is not None:
                read += 1
                if read > leave_after:
                    return {"status": r.status_code, "left_after": read}
        if leave_after is not None:
            return {"status": r.status_code, "left_after": read}
    events = sse_events("\n".join(lines) + "\n")
    final = events[-1][1]
    assert final.get("done") is True, json.dumps(final)
    return {"status": r.status_code, "got": final["translation"]}


def _soak(app: Any, phrases: list[Any]) -> list[dict[str, Any]]:
    log: list[dict[str, Any]] = []
    until = time.monotonic() + SOAK_SECONDS

    async def crowd() -> None:
        await asyncio.gather(*(_soak_client(app, n, phrases, log, until)
                               for n in range(SOAK_CLIENTS)))

    asyncio.run(crowd())
    return log


def _check_soak(app: Any, log: list[dict[str, Any]]) -> None:
    failed = [e for e in log if e.get("status") != 200]
    assert not failed, failed[:5]
    wrong = [e for e in log if "got" in e and e["got"] != e["expected"]]
    assert not wrong, wrong[:5]
    assert len(log) > SOAK_CLIENTS * 3
    engine = app.engine
    assert wait_until(lambda: (s := engine.status()).active == 0 and s.queued == 0, 20)
    assert wait_until(lambda: app.translator.in_flight() == 0, 10)
    with app.client() as client:
        ready = client.get("/ready")
        assert ready.status_code == 200 and ready.json()["state"] == "ready"
    print(f"\n{len(log)} requests from {SOAK_CLIENTS} clients in {SOAK_SECONDS:g}s, "
          f"slowest {max(e['seconds'] for e in log):.2f}s")


@pytest.mark.slow
def test_sixteen_clients_mixed_and_leaving_on_the_local_engine(demo_dir, phrases):
    """With --engine local, 16 SSE clients leaving after 0-3 chunks deadlocked the server in the
    second round; /ready stopped answering."""
    engine = make_engine(demo_dir, max_new_tokens=128, max_batch_size=16, max_queued=256)
    try:
        with running_app(engine, cache_size=256) as app:
            _check_soak(app, _soak(app, phrases))
    finally:
        engine.close()


@pytest.mark.slow
def test_sixteen_clients_mixed_and_leaving_on_the_child_process_engine(demo_dir, phrases):
    """On the default engine the same mix timed out 64 requests of 64 at 30 s."""
    engine = ProcessEngine(models.resolve(demo_dir), device="cpu", max_new_tokens=128,
                           max_batch_size=16, max_queued=256)
    try:
        assert engine.wait_ready(120).state == EngineState.READY
        with running_app(engine, cache_size=256) as app:
            _check_soak(app, _soak(app, phrases))
    finally:
        engine.close()


@pytest.mark.slow
def test_kill_9_of_the_engine_under_load_then_ready_and_exact_again(demo_dir, phrases):
    """kill -9 of the engine process while 4 clients streamed: the clients got an error event,
    but /ready still said "failed" a minute later and every uncached request got a 502."""
    engine = ProcessEngine(models.resolve(demo_dir), device="cpu", max_new_tokens=1024)
    try:
        assert engine.wait_ready(120).state == EngineState.READY
        with running_app(engine, cache_size=0) as app:
            # Five times the long text: the demo model answers it for seconds, not a tenth of one.
            body = {"text": "-".join(["ha"] * 200), "source_lang": LONG_PAIR[0],
                    "target_lang": LONG_PAIR[1], "stream": True}

            async def client(n: int) -> list[tuple[str | None, dict[str, Any]]]:
                options = {"deterministic": True, "max_new_tokens": 900 + n}  # four sequences
                async with app.async_client(timeout=60) as c:
                    r = await c.post("/v1/translate", json={**body, "options": options})
                    return sse_events(r.text)

            async def crowd() -> list[Any]:
                tasks = [asyncio.create_task(client(n)) for n in range(4)]
                await asyncio.to_thread(wait_until, lambda: engine.status().active == 4, 30)
                os.kill(engine.status().extra["process"], signal.SIGKILL)
                killed_at = time.monotonic()
                results = await asyncio.gather(*tasks)
                return [results, killed_at]

            results, killed_at = asyncio.run(crowd())
            # Should a sequence end on its own between the count and the kill, it is whole;
            # every other one is told why it stopped.
            ends = [events[-1] for events in results]
            errors = [data for kind, data in ends if kind == "error"]
            assert len(errors) >= 2, ends
            for kind, data in ends:
                assert kind == "error" or data.get("done"), (kind, data)
            for data in errors:
                assert "killed by signal 9" in data["error"]["message"]
                assert "restarted" in data["error"]["message"]
            with app.client() as c:
                assert wait_until(lambda: c.get("/ready").status_code == 200, 30)
                print(f"\nready again {time.monotonic() - killed_at:.1f}s after the kill")
                p = phrases[3]
                r = c.post("/v1/translate", json={"text": p.source, "source_lang": p.source_lang,
                                                  "target_lang": p.target_lang})
                assert r.status_code == 200 and r.json()["translation"] == p.target
                assert c.get("/ready").json()["extra"]["restarts"] == 1
    finally:
        engine.close()


@pytest.mark.slow
def test_ready_says_unresponsive_at_once_and_health_fails_once_restarts_stop(demo_dir, monkeypatch):
    """Found in a hardening review: during a hang /ready said 200 "busy" until the supervisor's detection
    15 s later; once the supervisor gave up, /health still said 200, so a liveness probe never
    restarted the app."""
    monkeypatch.setattr("hunyuan_webui.engine.restarts.RESTART_LIMIT", 1)
    monkeypatch.setattr("hunyuan_webui.engine.restarts.BACKOFF_S", (0.1,))
    engine = ProcessEngine(models.resolve(demo_dir), device="cpu", warmup=False)  # 15 s beats
    try:
        assert engine.wait_ready(120).state == EngineState.READY
        with running_app(engine, cache_size=0) as app, app.client() as c:
            assert c.get("/ready").status_code == 200 and c.get("/health").status_code == 200
            child = engine.status().extra["process"]
            os.kill(child, signal.SIGSTOP)  # hung: no heartbeat from here on
            stopped_at = time.monotonic()
            try:
                assert wait_until(lambda: c.get("/ready").status_code == 503, 10)
                noticed = time.monotonic() - stopped_at
                body = c.get("/ready").json()
                assert body["state"] == "unresponsive" and "not answered" in body["reason"]
                assert c.get("/health").status_code == 200  # it may yet come back
            finally:
                os.kill(child, signal.SIGCONT)
            print(f"\n/ready said 503 {noticed:.1f}s after the hang began")
            assert noticed < 4.0, noticed  # BEAT_LATE_S (2 s), not BEAT_TIMEOUT_S (15 s)
            # It answered again before the supervisor's deadline: ready, not restarted.
            assert wait_until(lambda: c.get("/ready").status_code == 200, 10)
            assert engine.status().extra["restarts"] == 0

            for _ in range(2):  # two crashes in the window: one more than the limit of 1
                assert engine.wait_ready(120).state == EngineState.READY
                os.kill(engine.status().extra["process"], signal.SIGKILL)
                assert wait_until(lambda: engine.status().state != EngineState.READY, 10)
            assert wait_until(lambda: c.get("/health").status_code == 503, 15)
            health = c.get("/health").json()
            assert health["status"] == "failed" and "not restarted again" in health["reason"]
            assert c.get("/ready").status_code == 503
    finally:
        engine.close()
