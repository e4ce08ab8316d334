"""One teacher's microphone in a class: numbered sound frames in, drafts and sentences out.

A :class:`Session` is a thin layer over :class:`~hunyuan_webui.speech.Listener`: its own worker
thread feeds the frames to the listener (recognition never runs on the event loop), publishes
each draft to the room (``speech_draft``, not logged), and posts each finished utterance with
:meth:`Rooms.post <hunyuan_webui.service.rooms.Rooms.post>`, exactly as a typed sentence is
posted: the same log, fan-out, cache, guards and transcript.

Frames are numbered by the browser (0, 1, 2...). The session remembers the next number it
expects, so a frame sent twice (a reconnecting page resends what was not acknowledged) is fed
once, and a connection that drops mid-utterance loses nothing: the session outlives the
connection for a grace period and the same utterance goes on when the page is back. Its inbox is
bounded; a connection that cannot put a frame in it within a deadline is told the recogniser
cannot keep pace. Sound lives only in memory, and only until it is recognised.

What the page is told (:attr:`Session.say`, from the worker thread): ``draft``
``{utterance, text}``, ``final`` ``{utterance, text, sentences}`` (``text`` empty: nothing was
said; ``sentences``: the numbers of the posted sentences), ``error`` ``{code, message}``,
``stopped`` (the last utterance is in, the microphone may close).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.speech import Draft, Final, Listener

log = logging.getLogger(__name__)

INBOX_FRAMES = 600  # frames waiting for the recogniser (60 s of 100 ms frames)
PUT_DEADLINE_S = 10.0  # a frame that cannot be queued this long: the recogniser is behind
GRACE_S = 30.0  # a session waits this long for its page to come back after a drop
DRAFT = "speech_draft"

Say = Callable[[dict[str, Any]], None]


class Behind(TranslatorError):
    """The recogniser has not kept pace with the microphone for :data:`PUT_DEADLINE_S`."""

    code = "speech_behind"
    http_status = 503


class Session:
    """One microphone stream of one class; its numbers survive a reconnect."""

    def __init__(self, rooms: Any, code: str, key: str, lang: str, session: str,
                 listener: Listener, *, first: int = 0, drafts: Any = None,
                 on_close: Callable[[Session], None] | None = None,
                 grace_s: float = GRACE_S, inbox: int = INBOX_FRAMES) -> None:
        self.rooms, self.code, self.key, self.lang, self.id = rooms, code, key, lang, session
        self.listener = listener
        self.drafts = drafts  # DraftTranslations, or None: drafts in the original only
        self.on_close = on_close
        self.grace_s = grace_s
        self.next = first  # the number of the next frame expected
        self.say: Say | None = None  # set while a page is attached
        self.attached_at = self.detached_at = 0.0
        self.last_frame = time.monotonic()
        self.unsent: deque[dict[str, Any]] = deque(maxlen=32)  # finals said while detached
        self.sentences = 0  # posted so far
        self.closed = threading.Event()
        self._inbox: queue.Queue[tuple[str, int, bytes]] = queue.Queue(maxsize=inbox)
        self._thread = threading.Thread(target=self._run, name="hymt-class-speech", daemon=True)
        self._thread.start()

    @property
    def tag(self) -> str:
        return self.id[:8]

    # -- the connection's side (event loop; never blocks) -----------------------------------------
    def attach(self, say: Say) -> None:
        self.say, self.attached_at, self.detached_at = say, time.monotonic(), 0.0
        self.last_frame = time.monotonic()
        while self.unsent:  # what was finished while the page was away
            say(self.unsent.popleft())

    def detach(self, say: Say | None = None) -> None:
        """The page went away (``say``: only if it is still the one attached)."""
        if say is None or self.say is say:
            self.say, self.detached_at = None, time.monotonic()

    @property
    def attached(self) -> bool:
        return self.say is not None

    def offer(self, seq: int, pcm: bytes) -> bool:
        """Frame ``seq``: False if it was already had (a resend); raises ``queue.Full``."""
        if seq < self.next:
            return False
        if seq > self.next:
            log.info("class %s speech %s: frames %d-%d lost in a gap", self.code, self.tag,
                     self.next, seq - 1)
        self._inbox.put_nowait(("frame", seq, pcm))
        self.next = seq + 1
        self.last_frame = time.monotonic()
        return True

    def stop(self) -> None:
        """The microphone is off: finish the utterance in progress, then close."""
        self._command("stop")

    def close(self) -> None:
        """Another session takes the microphone, or the page did not come back: the utterance
        in progress is finished and posted, then the session ends."""
        self._command("stop")

    def _command(self, name: str) -> None:
        try:
            self._inbox.put_nowait((name, -1, b""))
        except queue.Full:  # the worker is behind: it sees `closing` once it drains
            self._closing = True

    _closing = False

    # -- the worker thread ------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            while True:
                try:
                    kind, _, pcm = self._inbox.get(timeout=0.5)
                except queue.Empty:
                    if self._closing or (self.detached_at and
                                         time.monotonic() - self.detached_at > self.grace_s):
                        self._handle(self.listener.finish())
                        return
                    continue
                if kind == "stop":
                    self._handle(self.listener.finish())
                    self._tell({"type": "stopped"})
                    return
                self._handle(self._feed(pcm))
        finally:
            self.closed.set()
            if self.on_close is not None:
                self.on_close(self)

    def _feed(self, pcm: bytes) -> list[Draft | Final]:
        try:
            return self.listener.feed(pcm)
        except TranslatorError as exc:  # a remote recogniser's failure, the recogniser busy
            self._tell({"type": "error", "code": exc.code, "message": exc.user_message})
            return []

    def _handle(self, events: list[Draft | Final]) -> None:
        for event in events:
            try:
                if isinstance(event, Draft):
                    self._draft(event)
                else:
                    self._final(event)
            except Exception:  # never lose the rest of the lesson to one utterance
                log.exception("class %s speech %s: utterance %s", self.code, self.tag,
                              event.utterance)

    def utterance(self, number: int) -> str:
        return f"{self.tag}-{number}"

    def _draft(self, draft: Draft) -> None:
        u = self.utterance(draft.utterance)
        self.rooms.bus.publish(self.code, {"type": DRAFT, "utterance": u, "lang": self.lang,
                                           "text": draft.text, "source": True})
        if self.drafts is not None:
            self.drafts.offer(self.code, u, draft.text, self.lang)
        self._tell({"type": "draft", "utterance": u, "text": draft.text})

    def _final(self, final: Final) -> None:
        u = self.utterance(final.utterance)
        if self.drafts is not None:
            self.drafts.settle(self.code, u)
        sentences: list[int] = []
        message: dict[str, Any] = {"type": "final", "utterance": u, "text": final.text,
                                   "start": final.start, "end": final.end}
        if final.text.strip():
            try:
                sentences = self.rooms.post(self.code, self.key, final.text)
            except InputError as exc:  # nothing to translate in it (a lone "…")
                log.info("class %s speech %s: not posted: %s", self.code, self.tag,
                         exc.user_message)
            except TranslatorError as exc:  # rate limit, the room ended, the store away
                message["error"] = {"code": exc.code, "message": exc.user_message}
        self.sentences += len(sentences)
        self.rooms.bus.publish(self.code, {"type": DRAFT, "utterance": u, "lang": self.lang,
                                           "text": "", "source": True, "done": True,
                                           "sentences": sentences})
        self._tell({**message, "sentences": sentences})

    def _tell(self, message: dict[str, Any]) -> None:
        say = self.say
        if say is not None:
            say(message)
        elif message["type"] in ("final", "stopped"):
            self.unsent.append(message)
