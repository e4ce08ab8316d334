"""A greedy answer must not depend on timing: a request that joins a segment in flight just as
the last request reading it leaves gets the whole answer, not the start of a cancelled one; a
guard that stops an answer leaves the sequence to the other requests reading it.

These are the timing paths looked at for a greedy answer that came back inexact under load
(the in-flight table's join, a guard's stop): each is forced here, with no model."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from apphelpers import wait_until
from fakes import FakeEngine

from hunyuan_webui import models
from hunyuan_webui.engine import DecodingOptions, Stream
from hunyuan_webui.engine.base import options_per_prompt
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.settings import Settings

SPEC = models.resolve("tencent/Hunyuan-MT-7B")
ANSWER = "Le chat dort sur le canapé depuis ce matin, et il ne veut pas bouger."


class SlowCancelStream(Stream):
    """A stream whose cancellation takes a moment to land (a busy machine between the last
    reader's count and its cancel): the window in which another request may join it."""

    def cancel(self) -> None:
        time.sleep(0.25)
        super().cancel()


class TypingTable(FakeEngine):
    """Types ``answer`` a character every ``delay`` seconds; stops when cancelled."""

    def __init__(self, answer: str, delay: float = 0.01) -> None:
        self.answer_text, self.delay = answer, delay
        self.submitted = 0

    def submit(self, prompts: Sequence[str], options: Any) -> list[Stream]:
        streams = [SlowCancelStream(p, o)
                   for p, o in zip(prompts, options_per_prompt(prompts, options))]
        self.submitted += len(streams)
        for stream in streams:
            threading.Thread(target=self._type, args=(stream,), daemon=True).start()
        return streams

    def _type(self, stream: Stream) -> None:
        for char in self.answer_text:
            if stream.cancelled:
                stream.finish("cancelled")
                return
            stream.push(char)
            time.sleep(self.delay)
        stream.finish("stop")


def test_the_last_reader_leaving_marks_the_sequence_before_anyone_can_join():
    stream = Stream("p", None)  # type: ignore[arg-type]
    assert stream.attach()
    stream.detach()
    assert stream.cancelled and not stream.attach()


def test_a_request_joining_as_the_last_reader_leaves_gets_the_whole_answer():
    for guards in (False, True):
        engine = TypingTable(ANSWER)
        translator = Translator(engine, SPEC, Settings(model=SPEC.id, cache_size=0,
                                                       guards=guards))
        request = TranslationRequest("Le chat dort.", "fr", "en")
        leaving = translator.start(request).prime()
        [stream] = leaving._reader.streams()
        assert wait_until(lambda s=stream: len(s.text) > 10)  # some of the answer is out
        threading.Thread(target=leaving.cancel, daemon=True).start()  # its cancel lands late
        assert wait_until(lambda s=stream: s._readers == 0)  # it has left; not cancelled yet
        result = translator.translate(request)  # comes in that window
        assert result.text == ANSWER, (guards, result.text)
        assert engine.submitted == 2  # the abandoned sequence was not joined: submitted afresh


def test_a_guard_that_stops_one_reader_leaves_the_sequence_to_the_others():
    """Two requests read one sequence; one of them leaves it (as a guard that found a loop
    does): the other still reads it to its end."""
    engine = TypingTable(ANSWER, delay=0.005)
    translator = Translator(engine, SPEC, Settings(model=SPEC.id, cache_size=0, guards=False))
    request = TranslationRequest("Le chat dort.", "fr", "en")
    first, second = translator.start(request).prime(), translator.start(request).prime()
    assert engine.submitted == 1
    [stream] = first._reader.streams()
    first._reader.drop(stream)  # what GuardedSegment does on a finding
    assert not stream.cancelled
    assert second.result().text == ANSWER


class HeldTable(TypingTable):
    """Like TypingTable, but the engine accepts a submission only once ``accept`` is set: the
    time in which another request joins the segment before its stream exists."""

    def __init__(self, answer: str) -> None:
        super().__init__(answer, delay=0.005)
        self.accept = threading.Event()

    def submit(self, prompts: Sequence[str], options: Any) -> list[Stream]:
        assert self.accept.wait(30)
        return super().submit(prompts, options)


def test_a_request_joining_before_the_engine_answers_keeps_the_sequence_when_its_submitter_leaves():
    """The submitter reads nothing and leaves the moment its stream lands (a client gone after
    one chunk, on a busy machine): the joiner that was waiting for that stream still holds a
    reader, so the sequence is not cancelled under it and is not submitted again."""
    from hunyuan_webui.service.translate.inflight import Flights

    engine = HeldTable(ANSWER)
    flights = Flights(engine, cache=None)
    options = DecodingOptions(deterministic=True)
    got: dict[str, Any] = {}

    def submitter() -> None:
        [stream] = flights.submit(["k"], ["p"], options, share=True, store=False)
        stream.detach()  # gone at once
        got["left"] = stream

    def joiner() -> None:
        [stream] = flights.submit(["k"], ["p"], options, share=True, store=False)
        got["joined"] = stream

    first = threading.Thread(target=submitter, daemon=True)
    first.start()
    assert wait_until(lambda: len(flights) == 1)
    second = threading.Thread(target=joiner, daemon=True)
    second.start()
    assert wait_until(lambda: flights._table["k"]._reserved == 1)  # waiting for the stream
    engine.accept.set()
    first.join(30)
    second.join(30)
    stream = got["joined"]
    assert stream is got["left"] and not stream.cancelled
    assert wait_until(lambda: stream.done)
    assert stream.finish_reason == "stop" and stream.text == ANSWER
    assert engine.submitted == 1
    stream.detach()


class BrokenAttachStream(Stream):
    """A stream whose first reader cannot attach: a failure in the middle of the landing."""

    def attach(self) -> bool:
        raise RuntimeError("the landing broke")


def test_a_landing_that_fails_fails_its_joiners_at_once_and_cancels_the_sequence():
    from hunyuan_webui.service.translate.inflight import Flights

    joined = threading.Event()
    made: list[Stream] = []

    class Engine(FakeEngine):
        def submit(self, prompts: Sequence[str], options: Any) -> list[Stream]:
            assert joined.wait(10)  # the joiner has reserved its reader before the landing
            made.extend(BrokenAttachStream(p, o)
                        for p, o in zip(prompts, options_per_prompt(prompts, options)))
            return list(made)

    flights = Flights(Engine(), cache=None)
    options = DecodingOptions()
    outcome: dict[str, BaseException] = {}

    def submitter() -> None:
        try:
            flights.submit(["k"], ["p"], options, share=True, store=False)
        except BaseException as exc:  # noqa: BLE001 - the outcome is what is checked
            outcome["submitter"] = exc

    def joiner() -> None:
        try:
            flights.submit(["k"], ["p"], options, share=True, store=False)
        except BaseException as exc:  # noqa: BLE001
            outcome["joiner"] = exc

    first = threading.Thread(target=submitter)
    first.start()
    assert wait_until(lambda: len(flights) == 1, 10)
    second = threading.Thread(target=joiner)
    started = time.monotonic()
    second.start()
    flight = flights._table["k"]  # the joiner has reserved its reader on it
    assert wait_until(lambda: flight._reserved == 1, 10)
    joined.set()
    first.join(10)
    second.join(10)
    assert time.monotonic() - started < 5  # not the 60 s share deadline
    assert "the landing broke" in str(outcome["submitter"])
    assert "the landing broke" in str(outcome["joiner"])
    assert made and all(s.cancelled for s in made)
    assert len(flights) == 0
