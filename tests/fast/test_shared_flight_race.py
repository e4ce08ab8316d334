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
from hunyuan_webui.engine import Stream
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
