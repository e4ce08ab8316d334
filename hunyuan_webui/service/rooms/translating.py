"""A class's translations: each (sentence, language) made once, and none lost.

A sentence is logged together with its translations' jobs, or not at all: the jobs are made (and
so checked) before the sentence is logged, and after it they are claimed in the room's store and
run in the background, one reading thread per language, the first of each language primed
together so that they share the engine's batches. Nothing of this runs on the teacher's request:
a send answers once its sentences are logged.

A translation that cannot be made now (the engine restarting after a crash, a stream cut by a
killed engine process, the queue full, the store away) is not lost:

- the students of that language get a ``delayed`` event (``code: "translation_delayed"``), so
  that their page says "translation delayed" rather than nothing;
- its claim is released, and the room owes that language a catch-up;
- a retry thread waits until the engine is ready (and the store answers), then catches every
  owed language up: every sentence since the last "clear" that has no translation in it yet.

The same catch-up serves a language that arrives late (a student joins, or comes back). After
:data:`TRIES` failures with the engine ready, a translation is given up with an ``error`` the
students read; input the model cannot take (too long) is given up at once. Logged events that the
store refused (Redis away) wait in this process and are written, in order, when it is back.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from hunyuan_webui import romanize
from hunyuan_webui.engine import EngineState
from hunyuan_webui.errors import BusyError, InputError, NotReadyError, TranslatorError
from hunyuan_webui.service.door.operation import Operation
from hunyuan_webui.service.door.translator import Translator
from hunyuan_webui.service.rooms.errors import RoomNotFoundError, StoreUnavailableError
from hunyuan_webui.service.rooms.store.bus import Event
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult

log = logging.getLogger(__name__)

DRAFT_EVERY_S = 0.1  # a translation being written is published at most this often
RETRY_EVERY_S = 0.5  # how often the retry thread looks at the engine while something is owed
TRIES = 4  # attempts at one translation with the engine ready before it is given up
DELAYED = "translation_delayed"
GONE_FOR_GOOD = (EngineState.FAILED, EngineState.STOPPED)


@dataclass
class Piece:
    """One translation to make: sentence ``sid`` (``text`` in ``source``), its job once made."""

    sid: int
    text: str
    source: str
    job: Operation | None = None  # one sentence through the service's front door


class Translations:
    """The translations of every room of one :class:`~hunyuan_webui.service.rooms.Rooms`."""

    def __init__(self, translator: Translator, bus: object, catch_up_limit: int,
                 present: Callable[[str], set[str]]) -> None:
        self.translator = translator
        self.bus = bus
        self.catch_up_limit = catch_up_limit
        self.present = present  # a room's languages present now
        self._lock = threading.Lock()
        self._owed: dict[str, set[str]] = {}
        self._outbox: list[tuple[str, Event | None, str]] = []  # (code, event, or a claim)
        self._tries: dict[tuple[str, int, str], int] = {}
        self._wake = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    # -- the engine -------------------------------------------------------------------------------
    def engine_state(self) -> tuple[EngineState, str]:
        status = self.translator.status()
        return status.state, status.reason

    def check_engine(self) -> bool:
        """Whether translations can start now; raises when the engine is gone for good (a send
        is then refused, not logged: it would never be translated)."""
        state, reason = self.engine_state()
        if state in GONE_FOR_GOOD:
            raise NotReadyError("The translation engine has stopped" + (f": {reason}" if reason
                                else ".") + " Nothing was sent to the class.")
        return state is EngineState.READY

    # -- starting ---------------------------------------------------------------------------------
    def job(self, text: str, source: str, lang: str) -> Operation:
        """A translation through the front door, checked (input errors raise here) and not
        submitted before it is primed or read."""
        return self.translator.translate_texts(
            [TranslationRequest(text, lang, source_lang=source)], prime=False)

    def launch(self, code: str, work: dict[str, list[Piece]]) -> None:
        """Claim and start ``work`` (language -> pieces) in the background."""
        if any(work.values()):
            threading.Thread(target=self._launch, args=(code, work), daemon=True,
                             name="hymt-class-launch").start()

    def _launch(self, code: str, work: dict[str, list[Piece]]) -> None:
        window = self.translator.settings.segments_in_flight()
        ready: dict[str, list[Piece]] = {}
        for lang, pieces in work.items():
            ready[lang] = [p for p in pieces if self._claimed(code, lang, p)]
        for pieces in ready.values():  # the first of each language together: one batch
            for piece in pieces[:window]:
                with contextlib.suppress(TranslatorError):  # the reader hears of it again
                    piece.job.prime()  # type: ignore[union-attr]
        for lang, pieces in ready.items():
            if pieces:
                threading.Thread(target=self._read, args=(code, lang, pieces, window),
                                 name="hymt-class-translate", daemon=True).start()

    def _claimed(self, code: str, lang: str, piece: Piece) -> bool:
        """Claim the translation and make its job; False (and the job dropped) when another
        request has it, or it cannot be made now."""
        try:
            claimed = self.bus.claim(code, f"{piece.sid}:{lang}")  # type: ignore[attr-defined]
        except (StoreUnavailableError, RoomNotFoundError):
            claimed = False
            self._owe(code, lang)
        if not claimed:
            if piece.job is not None:
                piece.job.cancel()
            return False
        if piece.job is None:
            try:
                piece.job = self.job(piece.text, piece.source, lang)
            except TranslatorError as exc:
                self._not_now(code, piece.sid, lang, exc)
                return False
        return True

    # -- reading ----------------------------------------------------------------------------------
    def _read(self, code: str, lang: str, pieces: list[Piece], window: int) -> None:
        for i, piece in enumerate(pieces):
            try:
                for ahead in pieces[i:i + window]:
                    ahead.job.prime()  # type: ignore[union-attr]
                result = self._stream(code, lang, piece)
            except Exception as exc:  # never lose the rest of the lesson to one sentence
                if not isinstance(exc, TranslatorError):
                    log.exception("class %s: translating sentence %s into %s failed", code,
                                  piece.sid, lang)
                    exc = TranslatorError(str(exc) or type(exc).__name__)
                self._not_now(code, piece.sid, lang, exc)
                continue
            event: Event = {"type": "translation", "sid": piece.sid, "lang": lang,
                            "text": result.text}
            if result.warnings:  # a guard marked it: the teacher's page shows where
                event["warnings"] = [dict(w) for w in result.warnings]
            if romanize.supports(lang):
                event["roman"] = romanize.romanize(result.text, lang) or ""
            self._log(code, event)
            with contextlib.suppress(StoreUnavailableError, RoomNotFoundError):
                self.bus.add(code, "translations")  # type: ignore[attr-defined]
            with self._lock:
                self._tries.pop((code, piece.sid, lang), None)

    def _stream(self, code: str, lang: str, piece: Piece) -> TranslationResult:
        last = 0.0
        for update in piece.job:  # type: ignore[union-attr]
            if update.result is not None:
                return update.result
            if update.replaced:  # the answer checks took back what the phones show: its retry
                self.bus.publish(code, {"type": "correction", "sid": piece.sid,  # type: ignore
                                        "lang": lang, "text": update.text, "by": "guard",
                                        "warnings": [dict(w) for w in update.warnings]})
                continue
            now = time.monotonic()
            if update.text and now - last >= DRAFT_EVERY_S:
                last = now
                self.bus.publish(code, {"type": "draft", "sid": piece.sid,  # type: ignore
                                        "lang": lang, "text": update.text})
        raise TranslatorError("The translation was stopped.")

    def _not_now(self, code: str, sid: int, lang: str, exc: TranslatorError) -> None:
        """A translation not made: delayed and owed, or (input it cannot take, too many tries)
        given up with the reason, its claim kept so that nobody tries it again."""
        tries = 0
        if not isinstance(exc, (NotReadyError, BusyError, StoreUnavailableError)):
            with self._lock:  # "not now" is no try: the engine or the store was away
                tries = self._tries[(code, sid, lang)] = self._tries.get((code, sid, lang), 0) + 1
        if isinstance(exc, InputError) or tries > TRIES:
            log.warning("class %s: sentence %s into %s given up: %s", code, sid, lang,
                        exc.user_message)
            self._log(code, {"type": "translation", "sid": sid, "lang": lang,
                             "error": exc.user_message})
            return
        log.info("class %s: sentence %s into %s delayed: %s", code, sid, lang, exc.user_message)
        self._log(code, {"type": "delayed", "sid": sid, "lang": lang, "code": DELAYED,
                         "reason": exc.user_message})
        self._release(code, f"{sid}:{lang}")
        self._owe(code, lang)

    # -- the store --------------------------------------------------------------------------------
    def _log(self, code: str, event: Event) -> None:
        """Log ``event``; kept to log later if the store is away."""
        try:
            self.bus.append(code, event)  # type: ignore[attr-defined]
        except StoreUnavailableError:
            with self._lock:
                self._outbox.append((code, event, ""))
            self._ensure_thread()
        except RoomNotFoundError:
            pass  # the class expired meanwhile

    def _release(self, code: str, claim: str) -> None:
        try:
            self.bus.release(code, claim)  # type: ignore[attr-defined]
        except StoreUnavailableError:
            with self._lock:
                self._outbox.append((code, None, claim))

    def _flush(self) -> bool:
        """Write what the store refused, in order; whether all of it is written."""
        with self._lock:
            waiting, self._outbox = self._outbox, []
        for i, (code, event, claim) in enumerate(waiting):
            try:
                if event is not None:
                    self.bus.append(code, event)  # type: ignore[attr-defined]
                else:
                    self.bus.release(code, claim)  # type: ignore[attr-defined]
            except StoreUnavailableError:
                with self._lock:
                    self._outbox[:0] = waiting[i:]
                return False
            except RoomNotFoundError:
                continue
        return True

    # -- catching up ------------------------------------------------------------------------------
    def catch_up(self, code: str, lang: str) -> None:
        """Translate the room's recent sentences (since the last "clear") that ``lang`` has not
        had: for a language that arrives late, and for translations that were delayed."""
        done: set[int] = set()
        wanted: list[Piece] = []
        for seq, event in self.bus.since(code, 0):  # type: ignore[attr-defined]
            kind = event.get("type")
            if kind == "clear":
                wanted.clear()
            elif kind == "translation" and event.get("lang") == lang and "error" not in event:
                done.add(event["sid"])
            elif kind == "sentence" and event.get("lang") != lang:
                wanted.append(Piece(seq, event["text"], event["lang"]))
        missing = [p for p in wanted if p.sid not in done][-self.catch_up_limit:]
        self.launch(code, {lang: missing})

    def _owe(self, code: str, lang: str) -> None:
        with self._lock:
            self._owed.setdefault(code, set()).add(lang)
        self._ensure_thread()

    def _ensure_thread(self) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._retry, name="hymt-class-retry",
                                                daemon=True)
                self._thread.start()
        self._wake.set()

    def _retry(self) -> None:
        """While something is owed: once the store answers and the engine is ready, write what
        waits and catch every owed language up (those still present)."""
        while not self._closed.wait(RETRY_EVERY_S):
            with self._lock:
                if not self._owed and not self._outbox:
                    self._thread = None
                    return
            if not self._flush():
                continue
            try:
                if self.engine_state()[0] is not EngineState.READY:
                    continue
            except Exception:  # an engine that cannot say: try again later
                continue
            with self._lock:
                owed, self._owed = self._owed, {}
            for code, langs in owed.items():
                self._catch_up_owed(code, langs)

    def _catch_up_owed(self, code: str, langs: set[str]) -> None:
        try:
            present = self.present(code)
            for lang in sorted(langs & present):
                self.catch_up(code, lang)
        except StoreUnavailableError:
            with self._lock:
                self._owed.setdefault(code, set()).update(langs)
        except RoomNotFoundError:
            pass

    def close(self) -> None:
        self._closed.set()
