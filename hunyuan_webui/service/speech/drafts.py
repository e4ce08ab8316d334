"""The teacher's words while they are spoken, translated as drafts, at the pace the machine allows.

A draft caption changes every second or so while the teacher talks. Translating each into every
language of the room would compete with the finished sentences for the same engine, so:

- only the newest draft of a class is translated (a draft that a newer one overtook before its
  turn is dropped), and only when it changed (the listener says a draft only when its words did);
- one round at a time per class, all its languages started together (one engine batch), and at
  most one round every :data:`MIN_GAP_S`;
- never into a language the room still owes a finished sentence
  (:func:`hunyuan_webui.service.rooms.lag.owed`): under load the finished sentences go first and
  that language shows the draft in the original;
- when the utterance ends (:meth:`DraftTranslations.settle`) its round is cancelled and nothing
  more is published for it: the sentence's own translation takes its place.

What the phones get: ``{"type": "speech_draft", "utterance", "lang", "text", "source": false}``,
published (not logged) to the readers of ``lang``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any

from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service.rooms.lag import owed
from hunyuan_webui.service.translate.request import TranslationRequest

log = logging.getLogger(__name__)

MIN_GAP_S = 0.5  # rounds of one class at most this often
DRAFT = "speech_draft"


class DraftTranslations:
    def __init__(self, rooms: Any, min_gap_s: float = MIN_GAP_S) -> None:
        self.rooms = rooms
        self.min_gap_s = min_gap_s
        self._lock = threading.Lock()
        self._want: dict[str, tuple[str, str, str]] = {}  # code -> (utterance, text, source)
        self._busy: set[str] = set()
        self._settled: dict[str, deque[str]] = {}
        self._jobs: dict[str, tuple[str, list[Any]]] = {}  # code -> (utterance, its jobs)
        self.rounds = self.skipped = 0  # made, and languages left out for owed sentences
        self._closed = False

    def offer(self, code: str, utterance: str, text: str, source: str) -> None:
        with self._lock:
            if self._closed or utterance in self._settled.get(code, ()):
                return
            self._want[code] = (utterance, text, source)
            start = code not in self._busy
            self._busy.add(code)
        if start:
            threading.Thread(target=self._rounds, args=(code,), name="hymt-class-drafts",
                             daemon=True).start()

    def settle(self, code: str, utterance: str) -> None:
        """``utterance`` ended: its draft translations stop (and none is published later)."""
        with self._lock:
            self._settled.setdefault(code, deque(maxlen=16)).append(utterance)
            if self._want.get(code, ("",))[0] == utterance:
                del self._want[code]
            running = self._jobs.get(code)
            jobs = running[1] if running and running[0] == utterance else []
        for job in jobs:
            job.cancel()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._want.clear()

    def _rounds(self, code: str) -> None:
        last = 0.0
        while True:
            time.sleep(max(0.0, last + self.min_gap_s - time.monotonic()))
            with self._lock:
                item = self._want.pop(code, None)
                if item is None:
                    self._busy.discard(code)
                    return
            last = time.monotonic()
            try:
                self._round(code, *item)
            except Exception:  # a draft is never worth a lost thread
                log.exception("class %s: translating a speech draft failed", code)

    def _round(self, code: str, utterance: str, text: str, source: str) -> None:
        langs = sorted(self.rooms.languages(code) - {source})
        behind = set(owed(self.rooms, code))
        self.skipped += sum(1 for lang in langs if lang in behind)
        langs = [lang for lang in langs if lang not in behind]
        if not langs:
            return
        translator = self.rooms.translator
        jobs = {}
        for lang in langs:
            try:
                jobs[lang] = translator.start(TranslationRequest(text, lang, source_lang=source))
            except TranslatorError:
                continue
        with self._lock:
            self._jobs[code] = (utterance, list(jobs.values()))
        try:
            for job in jobs.values():
                job.prime()
            self.rounds += 1
            for lang, job in jobs.items():
                self._publish(code, utterance, lang, job)
        finally:
            with self._lock:
                if self._jobs.get(code, ("",))[0] == utterance:
                    del self._jobs[code]

    def _publish(self, code: str, utterance: str, lang: str, job: Any) -> None:
        try:
            result = job.result()
        except TranslatorError:
            return  # cancelled (the utterance ended) or failed: the sentence will say
        with self._lock:
            if utterance in self._settled.get(code, ()):
                return
        self.rooms.bus.publish(code, {"type": DRAFT, "utterance": utterance, "lang": lang,
                                      "text": result.text, "source": False})
