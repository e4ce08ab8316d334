"""Two hours of a teacher's microphone through the server's path (RoomSpeech -> Session ->
Listener with Silero's voice detection -> Rooms.post), fed faster than real time: a sentence
every 30 s, quiet and hiss between; the process's memory stays flat (traced Python allocations
and the resident size), every sentence is posted once, and no sound is kept."""

from __future__ import annotations

import gc
import queue
import secrets
import time
import tracemalloc
from types import SimpleNamespace

import numpy as np
import psutil
import pytest

from hunyuan_webui.demo.voices import speak
from hunyuan_webui.engine.base import EngineState
from hunyuan_webui.service.rooms import RoomLimits, Rooms
from hunyuan_webui.service.speech import RoomSpeech
from hunyuan_webui.speech import Recognition, Recognizer
from hunyuan_webui.speech.audio import RATE, decode, to_pcm16
from hunyuan_webui.speech.recognizer import Described, Piece, gated

pytestmark = pytest.mark.slow

FRAME = RATE // 10
CYCLE_S = 30
HOURS = 2.0


class Writing(Recognizer):
    """The real interface, answering at once (the cost measured here is the server's own)."""

    described = Described(model="writing", backend="test")
    languages = frozenset({"en"})

    def recognize(self, samples: np.ndarray, language: str | None, *,
                  draft: bool = False) -> Recognition:
        return gated([Piece("Good morning.", 0, samples.size / RATE)], "en", samples.size / RATE)


class Ear:
    def __init__(self) -> None:
        self.recognizer_ = Writing()

    def recognizer(self) -> Recognizer:
        return self.recognizer_


def cycle() -> list[bytes]:
    """30 s: a sentence, then quiet with a little hiss; as 100 ms frames."""
    voice = decode(speak("Good morning.", "en"))
    rest = np.random.default_rng(1).standard_normal(CYCLE_S * RATE - voice.size) * 0.002
    data = to_pcm16(np.concatenate([voice, rest]).astype(np.float32))
    return [data[i:i + 2 * FRAME] for i in range(0, len(data), 2 * FRAME)]


def feed(session, seq: int, chunk: bytes) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            session.offer(seq, chunk)
            return
        except queue.Full:
            assert time.monotonic() < deadline, "the session stopped reading"
            time.sleep(0.005)


def test_two_hours_of_microphone_keep_memory_flat() -> None:
    # No translator: the engine is still loading, so the sentences are logged and wait (delayed).
    loading = SimpleNamespace(state=EngineState.LOADING, reason="")
    nobody = SimpleNamespace(settings=SimpleNamespace(segments_in_flight=lambda: 4),
                             status=lambda: loading)
    rooms = Rooms(nobody, limits=RoomLimits(posts_per_minute=100_000))  # type: ignore[arg-type]
    made = rooms.create("en")
    code, key = made["code"], made["key"]
    desk = RoomSpeech(rooms, Ear(), drafts=False)
    session = desk.open(code, key, secrets.token_hex(8))
    said: list[dict] = []
    session.attach(said.append)
    frames = cycle()
    cycles = int(HOURS * 3600 / CYCLE_S)
    process = psutil.Process()
    tracemalloc.start()
    seq, marks = 0, {}
    started = time.monotonic()
    for n in range(cycles):
        for chunk in frames:
            feed(session, seq, chunk)
            seq += 1
        if n in (cycles // 6, cycles - 1):  # after 20 minutes, and at the end
            while session._inbox.qsize():
                time.sleep(0.01)
            gc.collect()
            marks[n] = (tracemalloc.get_traced_memory()[0], process.memory_info().rss)
    session.stop()
    assert session.closed.wait(60)
    took = time.monotonic() - started
    tracemalloc.stop()
    (traced_early, rss_early), (traced_late, rss_late) = marks.values()
    print(f"2 h of sound in {took:.0f} s; traced {traced_early / 1e6:.1f} -> "
          f"{traced_late / 1e6:.1f} MB; resident {rss_early / 1e6:.0f} -> {rss_late / 1e6:.0f} MB")
    assert traced_late - traced_early < 3_000_000  # the log's sentences, not the sound
    assert rss_late - rss_early < 40_000_000
    finals = [m for m in said if m["type"] == "final" and m["text"]]
    assert len(finals) == cycles and all(len(m["sentences"]) == 1 for m in finals)
    assert rooms.stats(code)["sentences"] == cycles
    assert session.listener._utterance is None and session._inbox.qsize() == 0
