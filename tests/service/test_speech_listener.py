"""The streaming API (hunyuan_webui.speech.listener) on real voice activity detection (Silero) and
espeak-ng's voice, with a recogniser that writes down what it was asked: utterances are cut where
the voice stops, drafts come before their final, silence and hiss reach no recogniser, the
language never changes, and the buffers stay bounded however long the stream."""

from __future__ import annotations

import time
import tracemalloc
from dataclasses import replace

import numpy as np
import pytest

from hunyuan_webui.demo.voices import speak
from hunyuan_webui.errors import InputError
from hunyuan_webui.speech import Draft, Final, Listener, Pacing, Recognition, Recognizer
from hunyuan_webui.speech.audio import RATE, decode, to_pcm16
from hunyuan_webui.speech.recognizer import Described, Piece, gated, keep


class NotingRecognizer(Recognizer):
    """The real interface; answers how much sound it heard, and notes every call."""

    described = Described(model="noting", backend="test")
    languages = frozenset({"en", "zh", "fr"})

    def __init__(self, delay: float = 0.0) -> None:
        self.calls: list[tuple[float, str | None, bool]] = []
        self.delay = delay

    def recognize(self, samples: np.ndarray, language: str | None, *,
                  draft: bool = False) -> Recognition:
        time.sleep(self.delay)
        self.calls.append((samples.size / RATE, language, draft))
        text = f"{samples.size / RATE:.1f} seconds"
        return gated([Piece(text, 0, samples.size / RATE)], language or "en", samples.size / RATE)


def said(text: str, lang: str = "en") -> np.ndarray:
    return decode(speak(text, lang))


def quiet(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def stream(listener: Listener, samples: np.ndarray, frame_s: float = 0.02) -> list:
    """Fed as a microphone sends it: 20 ms frames of 16-bit PCM."""
    events = []
    pcm = to_pcm16(samples)
    step = int(frame_s * RATE) * 2
    for at in range(0, len(pcm), step):
        events += listener.feed(pcm[at:at + step])
    return events + listener.finish()


def test_two_phrases_with_a_pause_are_two_utterances_drafts_first() -> None:
    recognizer = NotingRecognizer()
    listener = Listener(recognizer, "en", pacing=Pacing(draft_every_s=0.3, min_draft_s=0.3))
    audio = np.concatenate([quiet(0.5), said("Thank you for your help."), quiet(1.5),
                            said("The meeting starts at nine o'clock."), quiet(1.0)])
    events = stream(listener, audio)
    finals = [e for e in events if isinstance(e, Final)]
    assert [f.utterance for f in finals] == [1, 2]
    for final in finals:
        drafts = [e for e in events if isinstance(e, Draft) and e.utterance == final.utterance]
        assert drafts, f"no draft for utterance {final.utterance}"
        assert events.index(drafts[-1]) < events.index(final)
        assert all(d.at <= final.end + 1.0 for d in drafts)
    # Each final covers its phrase (with a little padding), not the pause.
    first, second = finals
    assert 0.2 <= first.start <= 0.6 and first.end < second.start
    assert second.end - second.start < 4.0
    assert all(lang == "en" for _, lang, _ in recognizer.calls)


@pytest.mark.slow  # two minutes of sound through the detector: about 10 s
def test_silence_and_hiss_reach_no_recogniser() -> None:
    recognizer = NotingRecognizer()
    listener = Listener(recognizer, "zh")
    rng = np.random.default_rng(0)
    events = listener.feed(quiet(60))
    events += listener.feed(rng.normal(0, 0.01, 60 * RATE).astype(np.float32))
    events += listener.finish()
    assert events == [] and recognizer.calls == []


def test_a_file_fed_at_once_without_drafts() -> None:
    recognizer = NotingRecognizer()
    listener = Listener(recognizer, "zh", pacing=replace(Pacing(), draft_every_s=0))
    audio = np.concatenate([said("早上好。", "zh"), quiet(1.0), said("请打开书。", "zh")])
    events = listener.feed(audio) + listener.finish()
    assert [type(e) for e in events] == [Final, Final]
    assert [draft for _, _, draft in recognizer.calls] == [False, False]


def test_the_language_is_fixed_or_taken_from_the_first_words() -> None:
    recognizer = NotingRecognizer()
    stream(Listener(recognizer, "zh-Hant"), np.concatenate([said("Hello"), quiet(1)]))
    assert {lang for _, lang, _ in recognizer.calls} == {"zh"}
    with pytest.raises(InputError, match="does not know the language 'ug'"):
        Listener(recognizer, "ug")
    auto = Listener(NotingRecognizer(), None)
    stream(auto, np.concatenate([said("Hello"), quiet(1)]))
    assert auto.language == "en"


@pytest.mark.slow  # two minutes of talk through the detector: about 10 s
def test_a_long_utterance_is_cut_and_the_buffers_stay_bounded() -> None:
    """Two minutes of talk without a pause: cut every few seconds, nothing grows."""
    pacing = Pacing(max_utterance_s=4.0, draft_every_s=0)
    recognizer = NotingRecognizer()
    listener = Listener(recognizer, "en", pacing=pacing)
    talk = said("The meeting starts at nine o'clock and the weather is nice today.")
    longest = 0
    tracemalloc.start()
    for i in range(60):
        listener.feed(talk[: int(2.0 * RATE)])
        longest = max(longest, listener._length)
        if i == 10:
            baseline = tracemalloc.get_traced_memory()[0]
    grown = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.stop()
    assert longest <= (pacing.max_utterance_s + 0.1) * RATE
    assert max(seconds for seconds, _, _ in recognizer.calls) <= pacing.max_utterance_s + 0.1
    assert len(recognizer.calls) >= 25
    assert grown < 2_000_000, f"memory grew by {grown:,} bytes"


def test_drafts_fall_back_when_recognition_is_slow() -> None:
    slow = NotingRecognizer(delay=0.3)
    listener = Listener(slow, "en", pacing=Pacing(draft_every_s=0.1, min_draft_s=0.1))
    stream(listener, np.concatenate([said("The meeting starts at nine o'clock."), quiet(1)]))
    drafts = [seconds for seconds, _, draft in slow.calls if draft]
    gaps = np.diff(drafts)
    assert len(drafts) >= 1 and (gaps >= 0.5).all(), drafts


def test_the_gate_drops_what_whisper_invents() -> None:
    assert keep(Piece("Thank you.", no_speech_prob=0.1, avg_logprob=-0.2))
    assert keep(Piece("Thank you.", no_speech_prob=0.7, avg_logprob=-0.5))  # sure of its words
    assert not keep(Piece("Thank you for watching.", no_speech_prob=0.7, avg_logprob=-1.4))
    assert not keep(Piece("Thank you for watching.", no_speech_prob=0.95, avg_logprob=-0.1))
    assert not keep(Piece("  ", no_speech_prob=0.0, avg_logprob=0.0))
    mixed = gated([Piece("早上好。"), Piece("字幕由Amara.org社区提供", no_speech_prob=0.97)], "zh", 3.0)
    assert mixed.text == "早上好。" and mixed.dropped == 1
    assert gated([Piece("Good morning."), Piece("Sit down.")], "en", 2.0).text == \
        "Good morning. Sit down."
