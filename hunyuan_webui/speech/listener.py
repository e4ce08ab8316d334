"""The streaming API: 16 kHz mono 16-bit PCM in, utterances out, with drafts while one is spoken.

    listener = Listener(recognizer, language="zh")
    for frame in frames:                      # any length: 20 ms from a microphone, a whole file
        for event in listener.feed(frame):    # bytes of int16 PCM, or float32 samples
            ...                               # Draft(text) while speaking, Final(text) after
    events = listener.finish()                # the end of the stream closes the last utterance

Voice activity (Silero, :mod:`hunyuan_webui.speech.vad`) cuts the stream: an utterance starts at
the first voiced window, with :attr:`Pacing.pad_s` of the sound before it, and ends after
:attr:`Pacing.silence_s` of quiet. While it lasts, the words recognised so far are re-recognised
at most every :attr:`Pacing.draft_every_s` seconds of new audio (a :class:`Draft`: and never more
often than twice the time the last recognition took, so a slow machine falls back instead of
behind). When it ends, the whole utterance is recognised once more (a :class:`Final`); a final
whose words the gate dropped, or an utterance of under :attr:`Pacing.min_speech_s` of voice, has
empty text. An utterance is cut at :attr:`Pacing.max_utterance_s` (Whisper hears 30 s at once).

Memory is bounded whatever the length of the stream: the sound before an utterance (a ring of
``pad_s``), the utterance itself (at most ``max_utterance_s``) and less than one VAD window.
The language is fixed for the listener's life: given (a class's teacher language), or, when
None, the first utterance's, kept for the rest. Not thread-safe: one stream, one feeder.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass

import numpy as np

from hunyuan_webui.speech.audio import RATE, pcm16
from hunyuan_webui.speech.recognizer import Recognition, Recognizer
from hunyuan_webui.speech.vad import WINDOW, VoiceDetector


@dataclass(frozen=True)
class Pacing:
    threshold: float = 0.5  # speech probability that starts an utterance
    release: float = 0.35  # under this, a window counts as quiet
    silence_s: float = 0.6  # quiet that ends an utterance
    pad_s: float = 0.3  # sound kept before the first voiced window (and after the last)
    min_speech_s: float = 0.25  # less voice than this is a click, not an utterance
    max_utterance_s: float = 25.0
    draft_every_s: float = 1.0  # None of the drafts: 0
    min_draft_s: float = 0.5  # an utterance this long gets its first draft


@dataclass(frozen=True)
class Draft:
    utterance: int  # numbered from 1 in the stream
    text: str
    at: float  # seconds into the stream


@dataclass(frozen=True)
class Final:
    utterance: int
    text: str
    start: float  # seconds into the stream
    end: float
    recognition: Recognition | None  # None: too little voice to recognise


Event = Draft | Final


class Listener:
    def __init__(self, recognizer: Recognizer, language: str | None, *,
                 pacing: Pacing = Pacing(), detector: VoiceDetector | None = None) -> None:
        self.recognizer = recognizer
        self.language = recognizer.language_for(language)
        self.pacing = pacing
        self.detector = detector or VoiceDetector()
        self._pending = np.zeros(0, dtype=np.float32)  # under one window
        self._before: deque[np.ndarray] = deque(maxlen=max(1, int(pacing.pad_s * RATE / WINDOW)))
        self._utterance: list[np.ndarray] | None = None
        self._heard = 0  # samples of the stream judged so far
        self._start = 0  # where the current utterance starts (samples into the stream)
        self._voiced = self._quiet = self._length = self._drafted = 0
        self._draft_gap = int(pacing.draft_every_s * RATE)
        self._last_draft = ""
        self.count = 0  # utterances begun

    def feed(self, frame: bytes | np.ndarray) -> list[Event]:
        samples = pcm16(frame) if isinstance(frame, bytes | bytearray | memoryview) else frame
        samples = np.concatenate([self._pending, np.asarray(samples, dtype=np.float32)])
        whole = samples.size // WINDOW * WINDOW
        self._pending = samples[whole:].copy()
        events: list[Event] = []
        for at in range(0, whole, WINDOW):
            events += self._window(samples[at:at + WINDOW])
        return events

    def finish(self) -> list[Event]:
        """The end of the stream: the utterance in progress (if any) is final now."""
        events = self._end(self._length) if self._utterance is not None else []
        self._pending = np.zeros(0, dtype=np.float32)
        self._before.clear()
        self.detector.reset()
        return events

    # -- one window at a time -------------------------------------------------------------------
    def _window(self, window: np.ndarray) -> list[Event]:
        p, pace = self.detector.probability(window), self.pacing
        self._heard += WINDOW
        if self._utterance is None:
            if p < pace.threshold:
                self._before.append(window)
                return []
            self._begin()
        assert self._utterance is not None
        self._utterance.append(window)
        self._length += WINDOW
        if p >= pace.threshold:
            self._voiced += WINDOW
            self._quiet = 0
        elif p < pace.release:
            self._quiet += WINDOW
        if self._quiet >= pace.silence_s * RATE:
            return self._end(self._length - self._quiet + int(pace.pad_s * RATE))
        if self._length >= pace.max_utterance_s * RATE:
            return self._end(self._length)
        return self._maybe_draft()

    def _begin(self) -> None:
        self.count += 1
        self._utterance = list(self._before)
        self._length = sum(w.size for w in self._utterance)
        self._start = self._heard - WINDOW - self._length
        self._before.clear()
        self._voiced = self._quiet = self._drafted = 0
        self._last_draft = ""

    def _maybe_draft(self) -> list[Event]:
        pace = self.pacing
        if not pace.draft_every_s or self._voiced < pace.min_draft_s * RATE \
                or self._length - self._drafted < self._draft_gap:
            return []
        self._drafted = self._length
        started = time.perf_counter()
        recognition = self._recognize(np.concatenate(self._utterance), draft=True)
        took = time.perf_counter() - started
        self._draft_gap = int(max(pace.draft_every_s, 2 * took) * RATE)
        if not recognition.text or recognition.text == self._last_draft:
            return []
        self._last_draft = recognition.text
        return [Draft(self.count, recognition.text, round(self._heard / RATE, 3))]

    def _end(self, keep: int) -> list[Event]:
        assert self._utterance is not None
        sound = np.concatenate(self._utterance)[:max(0, keep)] if self._utterance else \
            np.zeros(0, dtype=np.float32)
        voiced = self._voiced
        self._utterance = None
        self._length = 0
        start = self._start / RATE
        end = round(start + sound.size / RATE, 3)
        if voiced < self.pacing.min_speech_s * RATE:
            if not self._last_draft:
                return []  # a click nobody saw: no utterance at all
            return [Final(self.count, "", round(start, 3), end, None)]
        recognition = self._recognize(sound, draft=False)
        return [Final(self.count, recognition.text, round(start, 3), end, recognition)]

    def _recognize(self, sound: np.ndarray, draft: bool) -> Recognition:
        recognition = self.recognizer.recognize(sound, self.language, draft=draft)
        if self.language is None and recognition.text and not draft:
            self.language = recognition.language  # the first words fix the language
        return recognition
