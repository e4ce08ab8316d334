"""A load test through real HTTP: a bounded crowd of clients, some leaving mid-stream.

Twelve concurrent clients each send a mix of JSON, streaming, list and LibreTranslate requests for
the demo phrases, and long generations they abandon after a few chunks. Afterwards: every request
that completed got the full, exact answer; every abandoned generation was stopped (not run to its
end); no batch slot, queue entry, shared in-flight sequence or reader is left behind; /ready is
still 200 and the server still translates.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import Counter
from typing import Any

import pytest
from apphelpers import (
    GREEDY,
    LONG_PAIR,
    LONG_TEXT,
    idle,
    make_engine,
    metric_samples,
    running_app,
    sse_events,
    wait_until,
)

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

CLIENTS = 12
ROUNDS = 5
LONG_TOKENS = 600  # what the abandoned generations ask for (they would run for many seconds)
KINDS = ("json", "sse", "abandon", "list", "libretranslate", "sse", "json", "abandon")


@pytest.fixture(scope="module")
def load_app(demo_dir):
    engine = make_engine(demo_dir, max_new_tokens=1024, max_batch_size=16, max_queued=256)
    streams: list[Any] = []
    readers: Counter[int] = Counter()  # per stream: readers that attached and have not detached
    submit = engine.submit

    def spy(prompts, options):  # remember every sequence, to check each one's end afterwards
        made = submit(prompts, options)
        for stream in made:
            _count_readers(stream, readers)
        streams.extend(made)
        return made

    engine.submit = spy
    try:
        with running_app(engine, cache_size=0) as running:
            running.streams = streams
            running.readers = readers
            yield running
    finally:
        engine.close()


_COUNT_LOCK = threading.Lock()


def _count_readers(stream: Any, readers: Counter[int]) -> None:
    """Count a stream's readers through its public attach/detach, which every reader calls
    (from several threads: the count has a lock of its own, taken around nothing else)."""
    attach, detach = stream.attach, stream.detach

    def attached() -> bool:
        joined = attach()
        if joined:
            with _COUNT_LOCK:
                readers[id(stream)] += 1
        return joined

    def detached() -> None:
        with _COUNT_LOCK:
            readers[id(stream)] -= 1
        detach()

    stream.attach, stream.detach = attached, detached


async def one_client(app, number: int, phrases, groups, log: list[dict[str, Any]]) -> None:
    rng = random.Random(number)
    async with app.async_client(timeout=120) as c:
        for round_ in range(ROUNDS):
            kind = KINDS[(number + round_) % len(KINDS)]
            p = phrases[(number * ROUNDS + round_) % len(phrases)]
            entry: dict[str, Any] = {"client": number, "kind": kind}
            log.append(entry)
            body = {"text": p.source, "source_lang": p.source_lang, "target_lang": p.target_lang,
                    "options": GREEDY}
            if kind == "json":
                r = await c.post("/v1/translate", json=body)
                entry.update(status=r.status_code, expected=p.target,
                             got=r.json().get("translation"))
            elif kind == "list":
                group = groups[(p.source_lang, p.target_lang)][:3]
                r = await c.post("/v1/translate", json={**body, "text": [g.source for g in group]})
                entry.update(status=r.status_code, expected=[g.target for g in group],
                             got=r.json().get("translation"))
            elif kind == "libretranslate":
                r = await c.post("/translate", data={"q": p.source, "source": p.source_lang,
                                                     "target": p.target_lang})
                entry.update(status=r.status_code, expected=p.target,
                             got=r.json().get("translatedText"))
            elif kind == "sse":
                r = await c.post("/v1/translate", json={**body, "stream": True})
                events = sse_events(r.text)
                deltas = "".join(data["delta"] for _, data in events[:-1])
                final = events[-1][1]
                entry.update(status=r.status_code, expected=p.target, got=final.get("translation"),
                             deltas=deltas, done=final.get("done"))
            else:  # abandon: a long generation left after a few chunks
                # Half share one greedy sequence (identical requests in flight share it), half
                # are sequences of their own.
                options = {"deterministic": True, "max_new_tokens": LONG_TOKENS}
                if number % 2:
                    options["max_new_tokens"] = LONG_TOKENS - number
                body = {"text": LONG_TEXT, "source_lang": LONG_PAIR[0],
                        "target_lang": LONG_PAIR[1], "stream": True, "options": options}
                chunks = rng.randint(1, 4)
                async with c.stream("POST", "/v1/translate", json=body) as r:
                    entry["status"] = r.status_code
                    read = 0
                    async for line in r.aiter_lines():
                        if line.startswith("data: "):
                            assert "delta" in json.loads(line[len("data: "):]), line
                            read += 1
                            if read == chunks:
                                break
                entry["abandoned_after"] = read
            await asyncio.sleep(rng.random() * 0.05)


@pytest.mark.slow
def test_many_clients_some_leaving_mid_stream(load_app, phrases):
    engine = load_app.engine
    groups: dict[tuple[str, str], list] = {}
    for p in phrases:
        groups.setdefault((p.source_lang, p.target_lang), []).append(p)
    log: list[dict[str, Any]] = []
    started = time.perf_counter()

    async def crowd() -> None:
        await asyncio.gather(*(one_client(load_app, n, phrases, groups, log)
                               for n in range(CLIENTS)))

    asyncio.run(crowd())
    elapsed = time.perf_counter() - started

    # Every completed request got a full and correct answer.
    assert len(log) == CLIENTS * ROUNDS
    assert all(e["status"] == 200 for e in log), [e for e in log if e["status"] != 200]
    completed = [e for e in log if e["kind"] != "abandon"]
    wrong = [e for e in completed if e["got"] != e["expected"]]
    assert not wrong, wrong
    for e in completed:
        if e["kind"] == "sse":
            assert e["done"] is True and e["deltas"] == e["got"], e
    abandoned = [e for e in log if e["kind"] == "abandon"]
    assert len(abandoned) >= CLIENTS and all(e["abandoned_after"] >= 1 for e in abandoned)

    # Nothing is left behind: no batch slot, queue entry, shared sequence or reader.
    assert wait_until(lambda: idle(engine), timeout=10), engine.status()
    assert load_app.translator.in_flight() == 0
    streams = load_app.streams
    assert streams and all(s.done for s in streams)
    assert load_app.readers and all(n == 0 for n in load_app.readers.values()), load_app.readers
    long_ones = [s for s in streams if LONG_TEXT in s.prompt]
    assert long_ones and all(s.finish_reason == "cancelled" for s in long_ones), Counter(
        s.finish_reason for s in long_ones)
    assert all(s.usage.completion_tokens < LONG_TOKENS // 2 for s in long_ones)
    assert all(s.finish_reason == "stop" for s in streams if LONG_TEXT not in s.prompt)

    with load_app.client() as c:
        assert c.get("/ready").status_code == 200
        samples = metric_samples(c.get("/metrics").text)
        assert samples[("hymt_active_batch", ())] == 0
        assert samples[("hymt_queue_length", ())] == 0
        r = c.post("/v1/translate", json={"text": "今天天气很好。", "source_lang": "zh",
                                          "target_lang": "en", "stream": True, "options": GREEDY})
        assert sse_events(r.text)[-1][1]["translation"] == "The weather is nice today."
    print(f"\n{len(log)} requests from {CLIENTS} clients in {elapsed:.1f}s; "
          f"{len(long_ones)} long generations stopped early")

