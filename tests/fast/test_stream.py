"""A stream's one reading loop (``Stream.follow``) serves a thread, an event loop and a reader
that gives up: each sees every chunk in order, then the end or the error. No model."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from hunyuan_webui.engine import GREEDY, Stream
from hunyuan_webui.errors import TranslatorError


def _produce(stream: Stream, chunks: list[str], end: str = "stop",
             error: BaseException | None = None) -> threading.Thread:
    def run() -> None:
        for chunk in chunks:
            time.sleep(0.01)
            stream.push(chunk)
        stream.finish(end, error)

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_thread_and_an_event_loop_read_the_same_chunks():
    stream = Stream("prompt", GREEDY)
    threaded: list[str] = []
    reader = threading.Thread(target=lambda: threaded.extend(stream))
    reader.start()

    async def read() -> list[str]:
        return [chunk async for chunk in stream]

    producer = _produce(stream, ["Hel", "lo", ", ", "world."])
    looped = asyncio.run(asyncio.wait_for(read(), timeout=10))
    producer.join(10)
    reader.join(10)
    assert threaded == looped == ["Hel", "lo", ", ", "world."]
    assert stream.result() == "Hello, world." and not stream.cancelled


def test_a_failed_stream_raises_after_its_chunks_for_every_reader():
    stream = Stream("prompt", GREEDY)
    _produce(stream, ["part"], "error", TranslatorError("The engine failed.")).join(10)
    seen: list[str] = []
    with pytest.raises(TranslatorError, match="The engine failed."):
        for chunk in stream:
            seen.append(chunk)
    assert seen == ["part"]

    async def read() -> None:
        async for _ in stream:
            pass

    with pytest.raises(TranslatorError, match="The engine failed."):
        asyncio.run(asyncio.wait_for(read(), timeout=10))


def test_a_reader_that_stops_leaves_at_its_next_read_without_cancelling():
    stream = Stream("prompt", GREEDY)
    stream.push("first")
    stop = threading.Event()
    reader = stream.follow(timeout=0.05, stop=stop.is_set)
    assert next(reader) == "first"
    assert next(reader) == ""  # nothing came within the timeout: the reader may give up
    stop.set()
    assert list(reader) == []
    assert not stream.cancelled and not stream.done
