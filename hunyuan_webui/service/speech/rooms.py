"""The microphones of every class this process serves: one speaker per class at a time.

:meth:`RoomSpeech.open` checks the teacher's key (exactly as posting a sentence does), then gives
the page its :class:`~hunyuan_webui.service.speech.session.Session`: the same one again when the
page reconnects with its session id (the frame numbers go on where they were), a new one
otherwise. A class has one microphone at a time: a second tab that starts speaking while the
first is live is refused (:class:`SpeakerBusyError`, 409, with words for the page); a session
whose page has gone quiet (no frame for :data:`STALE_S`) or away is finished and replaced. The
numbers of finished sessions are kept a while (:data:`REMEMBER_S`) so that a page resending old
frames to a new session cannot post an utterance twice.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service.speech.drafts import DraftTranslations
from hunyuan_webui.service.speech.session import GRACE_S, INBOX_FRAMES, Session
from hunyuan_webui.speech import Listener, Pacing

STALE_S = 8.0  # a live page sends a frame every 100 ms; this long without one, it is gone
REMEMBER_S = 600.0  # a finished session's next frame number is remembered this long
MAX_SESSIONS = 200  # microphones open at once in this process (one per class)


class SpeakerBusyError(TranslatorError):
    code = "speaker_busy"
    http_status = 409

    def __init__(self) -> None:
        super().__init__("Another tab is already speaking to this class: one microphone at a "
                         "time. Stop it there first (or close that tab).")


class RoomSpeech:
    """``speech``: the app's :class:`~hunyuan_webui.speech.Speech` (its recogniser, or why
    there is none); ``drafts``: translate the drafts too (else they show in the original)."""

    def __init__(self, rooms: Any, speech: Any, *, drafts: bool = True,
                 pacing: Pacing | None = None, grace_s: float = GRACE_S,
                 inbox: int = INBOX_FRAMES) -> None:
        self.rooms, self.speech = rooms, speech
        self.pacing = pacing or Pacing()
        self.grace_s, self.inbox = grace_s, inbox
        self.drafts = DraftTranslations(rooms) if drafts else None
        self._lock = threading.Lock()
        self._live: dict[str, Session] = {}  # by class code
        self._ended: dict[tuple[str, str], tuple[int, float]] = {}  # (code, id) -> (next, when)

    def open(self, code: str, key: str | None, session: str) -> Session:
        """The session of ``session`` (a page's id for one press of the microphone)."""
        meta = self.rooms.teacher(code, key)  # 401/404 before anything else
        recognizer = self.speech.recognizer()  # 503 with the reason when there is none
        code, now = meta["code"], time.monotonic()
        with self._lock:
            self._forget(now)
            current = self._live.get(code)
            if current is not None and current.id == session and not current.closed.is_set():
                return current
            if current is not None and not current.closed.is_set():
                if current.attached and now - current.last_frame < STALE_S:
                    raise SpeakerBusyError()
                current.close()  # quiet or away: what it heard is posted, then it ends
                self._live.pop(code, None)
            if len(self._live) >= MAX_SESSIONS:
                raise TranslatorError("Too many classes are speaking at once on this server.")
            first = self._ended.get((code, session), (0, 0.0))[0]
            listener = Listener(recognizer, meta["lang"], pacing=self.pacing)
            made = Session(self.rooms, code, key or "", meta["lang"],
                           session, listener, first=first, drafts=self.drafts,
                           on_close=self._closed, grace_s=self.grace_s, inbox=self.inbox)
            self._live[code] = made
            return made

    def live(self, code: str) -> Session | None:
        with self._lock:
            return self._live.get(code)

    def _closed(self, session: Session) -> None:
        with self._lock:
            if self._live.get(session.code) is session:
                del self._live[session.code]
            self._ended[(session.code, session.id)] = (session.next, time.monotonic())

    def _forget(self, now: float) -> None:
        for k in [k for k, (_, when) in self._ended.items() if now - when > REMEMBER_S]:
            del self._ended[k]

    def close(self) -> None:
        with self._lock:
            sessions = list(self._live.values())
        for session in sessions:
            session.close()
        if self.drafts is not None:
            self.drafts.close()
