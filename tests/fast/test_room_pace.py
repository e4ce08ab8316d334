"""The class's own arithmetic, without a model: the room's ``lag`` (which languages are behind,
by how much), and the speech drafts translated only at the pace allowed: the newest draft only,
all languages in one round, never into a language owed a finished sentence, nothing after the
utterance ended."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from hunyuan_webui.service.rooms import Rooms
from hunyuan_webui.service.rooms.lag import lag
from hunyuan_webui.service.speech.drafts import DraftTranslations
from hunyuan_webui.service.translate.request import TranslationRequest


@dataclass
class FakeJob:
    request: TranslationRequest
    gate: threading.Event
    cancelled: bool = False
    primed: float = 0.0

    def prime(self) -> FakeJob:
        self.primed = time.monotonic()
        return self

    def cancel(self) -> None:
        self.cancelled = True
        self.gate.set()

    def result(self):
        from hunyuan_webui.errors import CancelledError

        assert self.gate.wait(10)
        if self.cancelled:
            raise CancelledError("stopped")
        return type("R", (), {"text": f"[{self.request.target_lang}] {self.request.text}",
                              "warnings": ()})()


@dataclass
class FakeTranslator:
    jobs: list[FakeJob] = field(default_factory=list)
    gate: threading.Event = field(default_factory=threading.Event)

    def start(self, request: TranslationRequest) -> FakeJob:
        job = FakeJob(request, self.gate)
        self.jobs.append(job)
        return job


def room(langs: list[str]) -> tuple[Rooms, str, list[dict]]:
    translator = FakeTranslator()
    rooms = Rooms(translator)  # type: ignore[arg-type]
    code = "123456"
    rooms.bus.create(code, {"code": code, "lang": "zh", "title": "", "key": "x"})
    for i, lang in enumerate(langs):
        rooms.bus.see(code, f"s{i}", {"lang": lang, "seen": time.time()})
    published: list[dict] = []
    publish = rooms.bus.publish
    rooms.bus.publish = lambda c, e: (published.append(e), publish(c, e))  # type: ignore
    return rooms, code, published


def sentence(rooms: Rooms, code: str, text: str, age: float) -> int:
    return rooms.bus.append(code, {"type": "sentence", "text": text, "lang": "zh",
                                   "t": time.time() - age})


def test_lag_names_the_languages_behind_and_by_how_much() -> None:
    rooms, code, _ = room(["en", "fr", "zh"])
    assert lag(rooms, code) == {}
    first = sentence(rooms, code, "早上好。", age=6.0)
    second = sentence(rooms, code, "请打开书。", age=2.0)
    rooms.bus.append(code, {"type": "translation", "sid": first, "lang": "en", "text": "x"})
    rooms.bus.append(code, {"type": "translation", "sid": second, "lang": "en", "error": "no"})
    rooms.bus.append(code, {"type": "translation", "sid": first, "lang": "fr", "text": "y"})
    now = time.time()
    assert lag(rooms, code, now) == {"fr": {"seconds": 2.0, "sentences": 1}}
    assert rooms.stats(code)["lag"]["fr"]["sentences"] == 1  # what the teacher's screen reads
    rooms.bus.append(code, {"type": "correction", "sid": second, "lang": "fr", "text": "z"})
    assert lag(rooms, code) == {}
    sentence(rooms, code, "谢谢。", age=30.0)
    rooms.bus.append(code, {"type": "clear"})  # the screen cleared: nothing before it is owed
    assert lag(rooms, code) == {}


def test_drafts_translate_the_newest_only_in_one_round_per_pace() -> None:
    rooms, code, published = room(["en", "fr"])
    translator = rooms.translator
    drafts = DraftTranslations(rooms, min_gap_s=0.3)
    drafts.offer(code, "u-1", "早", "zh")
    time.sleep(0.1)  # the first round is in flight (its jobs wait on the gate)
    for text in ("早上", "早上好", "早上好。"):
        drafts.offer(code, "u-1", text, "zh")
    translator.gate.set()
    deadline = time.monotonic() + 10
    while len(published) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.5)
    asked = [(j.request.text, j.request.target_lang) for j in translator.jobs]
    assert asked == [("早", "en"), ("早", "fr"), ("早上好。", "en"), ("早上好。", "fr")]
    assert [(e["lang"], e["text"]) for e in published] == [
        ("en", "[en] 早"), ("fr", "[fr] 早"), ("en", "[en] 早上好。"), ("fr", "[fr] 早上好。")]
    assert all(e["type"] == "speech_draft" and not e["source"] for e in published)
    second = [j for j in translator.jobs if j.request.text == "早上好。"]
    assert second[0].primed - translator.jobs[0].primed >= 0.29  # not more often than the pace


def test_finished_sentences_first_a_language_owed_one_gets_no_draft() -> None:
    rooms, code, published = room(["en", "fr"])
    translator = rooms.translator
    translator.gate.set()
    sid = sentence(rooms, code, "早上好。", age=3.0)
    rooms.bus.append(code, {"type": "translation", "sid": sid, "lang": "en", "text": "x"})
    drafts = DraftTranslations(rooms, min_gap_s=0.0)
    drafts.offer(code, "u-2", "请打开", "zh")
    deadline = time.monotonic() + 10
    while not published and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    assert [j.request.target_lang for j in translator.jobs] == ["en"]
    assert drafts.skipped == 1


def test_nothing_is_published_for_an_utterance_that_ended() -> None:
    rooms, code, published = room(["en"])
    translator = rooms.translator
    drafts = DraftTranslations(rooms, min_gap_s=0.0)
    drafts.offer(code, "u-3", "谢谢", "zh")
    deadline = time.monotonic() + 10
    while not translator.jobs and time.monotonic() < deadline:
        time.sleep(0.02)
    drafts.settle(code, "u-3")  # the sentence is in: its draft's round is cancelled
    time.sleep(0.3)
    assert translator.jobs[0].cancelled
    drafts.offer(code, "u-3", "谢谢你", "zh")  # a late draft of it: ignored
    time.sleep(0.3)
    assert published == [] and len(translator.jobs) == 1
