"""A class: the teacher writes once, every student reads it in their own language.

A room has a short join code (six digits, easy to read aloud) and a teacher's secret (only its
hash is kept). Students join with a language and an optional name; a seat is taken only when the
student's event stream opens (a join alone reserves nothing that counts: 150 joins that never
connect shut nobody out), and a joined student whose stream has not opened within
:attr:`RoomLimits.join_grace` seconds is forgotten. Each sentence the teacher sends is cut like
any text (:func:`~hunyuan_webui.segment.split_document`, its layout kept) and logged; it is
translated **once per language present in the room** (students whose stream was open in the last
:data:`PRESENT_S` seconds), however many students read it, through the one
:class:`~hunyuan_webui.service.Translator` (:mod:`~hunyuan_webui.service.rooms.translating`: no
sentence is lost to an engine restart or a Redis outage). A language that arrives late gets the
room's recent sentences translated for it once. Questions from students reach the teacher
translated; the teacher can show one to the room, which translates it like a sentence.

The teacher's controls (:mod:`~hunyuan_webui.service.rooms.controls`) end the class, lock it to
new students, pause sending, clear the students' screens and remove a student. Abuse is kept out
by :mod:`~hunyuan_webui.service.rooms.gate` (classes opened per teacher, codes guessed per
address). The store is :mod:`~hunyuan_webui.service.rooms.store.bus` (memory) or
:mod:`~hunyuan_webui.service.rooms.store.redis_bus` (Redis, when the phrase cache uses it).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.errors import AuthError, InputError, InputTooLongError, RateLimitError
from hunyuan_webui.segment import split_document
from hunyuan_webui.service.door.translator import Translator
from hunyuan_webui.service.rooms.controls import Controls
from hunyuan_webui.service.rooms.errors import (
    RoomEndedError,
    RoomFullError,
    RoomLockedError,
    RoomNotFoundError,
    RoomPausedError,
    StoreUnavailableError,
    StudentRemovedError,
)
from hunyuan_webui.service.rooms.gate import Gate
from hunyuan_webui.service.rooms.lag import lag
from hunyuan_webui.service.rooms.store.bus import Event, MemoryBus
from hunyuan_webui.service.rooms.store.redis_bus import RedisBus
from hunyuan_webui.service.rooms.translating import Piece, Translations
from hunyuan_webui.service.translate.request import TranslationRequest
from hunyuan_webui.settings import Settings

PRESENT_S = 45.0  # a student seen this recently is in the room (its stream beats every 15 s)


@dataclass(frozen=True)
class RoomLimits:
    rooms: int = 50  # open at once (in this process, or in the shared Redis)
    rooms_per_teacher: int = 5  # open at once per signed-in user, key or address
    creates_per_minute: int = 10  # per signed-in user, key or address
    students: int = 150  # per room: seats, taken by open streams
    join_grace: float = 30.0  # seconds a join waits for its stream before it is forgotten
    pending_per_address: int = 60  # joins from one address whose streams have not opened yet
    pending: int = 1000  # joins in all whose streams have not opened yet
    wrong_codes_per_minute: int = 10  # per address, before its lookups wait (gate.py)
    question_chars: int = 300
    questions_per_minute: int = 5  # per student
    posts_per_minute: int = 60  # per room: the teacher's sends (each may be a whole paste)
    text_chars: int = 5000  # one post by the teacher (a pasted lesson)
    name_chars: int = 40
    events: int = 20_000  # a room's log (sentences, translations, questions)
    idle_ttl: float = 2 * 3600.0  # seconds a used room is kept untouched (its transcript)
    empty_ttl: float = 600.0  # seconds a room nobody used (no sentence, no stream) is kept
    catch_up: int = 200  # recent sentences translated for a language that arrives late


def normalize_code(code: str) -> str:
    """``"482 913"``, ``"482-913"`` -> ``"482913"``."""
    return re.sub(r"\D", "", code or "")[:12]


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class Rooms(Controls):
    """Every room this process serves (all of them, when the store is Redis)."""

    def __init__(self, translator: Translator, bus: MemoryBus | RedisBus | None = None,
                 limits: RoomLimits | None = None) -> None:
        self.translator = translator
        limits = limits or RoomLimits()
        self.bus = bus or MemoryBus(limits.idle_ttl, limits.empty_ttl)
        self.gate = Gate(self.bus, limits)
        self.translations = Translations(translator, self.bus, limits.catch_up, self.languages)
        self.limits = limits

    @property
    def limits(self) -> RoomLimits:
        return self._limits

    @limits.setter
    def limits(self, limits: RoomLimits) -> None:
        """New limits, for every part (the store's expiry times included)."""
        self._limits = self.gate.limits = limits
        self.translations.catch_up_limit = limits.catch_up
        self.bus.ttl, self.bus.empty_ttl = limits.idle_ttl, limits.empty_ttl
        if copies := getattr(self.bus, "copies", None):
            copies.ttl, copies.empty_ttl = limits.idle_ttl, limits.empty_ttl

    @classmethod
    def from_settings(cls, translator: Translator, settings: Settings,
                      limits: RoomLimits | None = None) -> Rooms:
        limits = limits or RoomLimits()
        bus: MemoryBus | RedisBus = \
            RedisBus(settings.redis_url, limits.idle_ttl, limits.empty_ttl) \
            if settings.redis_url else MemoryBus(limits.idle_ttl, limits.empty_ttl)
        return cls(translator, bus, limits)

    # -- rooms ----------------------------------------------------------------------------------
    def create(self, teacher_lang: str, title: str = "", owner: str | None = None
               ) -> dict[str, str]:
        """A new room: its code and the teacher's secret (shown once, never stored). ``owner``
        (a signed-in user, a key, an address; None for the server itself) is limited by
        :class:`~hunyuan_webui.service.rooms.gate.Gate`."""
        lang = languages.normalize(teacher_lang)
        self.gate.creating(owner)
        if self.bus.room_count() >= self.limits.rooms:
            raise RateLimitError(f"This server already has {self.limits.rooms} classes open; "
                                 "try again when one has ended.", retry_after=300)
        key = secrets.token_urlsafe(18)
        meta = {"lang": lang, "title": (title or "").strip()[:80], "key": _hash(key),
                "created": time.time(), "owner": owner or ""}
        for _ in range(50):
            code = f"{secrets.randbelow(900_000) + 100_000}"
            if self.bus.create(code, {**meta, "code": code}):
                return {"code": code, "key": key}
        raise RateLimitError("No free class code; try again.", retry_after=5)

    def room(self, code: str, address: str | None = None, key: str | None = None
             ) -> dict[str, Any]:
        """The room; 404 for a code that is no class, counted against ``address``, which may
        have to wait before it looks up any code (its teacher's ``key`` still opens a room)."""
        wait = self.gate.blocked(address)
        code = normalize_code(code)
        meta = self.bus.meta(code) if code else None
        if wait and not (meta and self._is_teacher(meta, key)):
            self.gate.check(address)
        if meta is None:
            self.gate.missed(address)
            raise RoomNotFoundError("No class has this code (it may have ended). Check the "
                                    "code with your teacher.")
        return meta

    @staticmethod
    def _is_teacher(meta: dict[str, Any], key: str | None) -> bool:
        return bool(key) and hmac.compare_digest(_hash(key or ""), meta["key"])

    def teacher(self, code: str, key: str | None, address: str | None = None) -> dict[str, Any]:
        """The room, if ``key`` is its teacher's secret; else 401."""
        meta = self.room(code, address, key)
        if not self._is_teacher(meta, key):
            raise AuthError("Only the teacher's link can do this.")
        self.bus.touch(meta["code"])
        return meta

    def public(self, code: str, address: str | None = None) -> dict[str, Any]:
        meta = self.room(code, address)
        return {"code": meta["code"], "lang": meta["lang"], "title": meta["title"],
                **{flag: bool(meta.get(flag)) for flag in ("locked", "paused", "ended")}}

    # -- students -------------------------------------------------------------------------------
    def join(self, code: str, lang: str, name: str = "", student: str | None = None,
             address: str | None = None) -> str:
        """A student in the room (the same one again when ``student`` is known). No seat is
        taken until the student's stream opens (:meth:`connect`)."""
        meta = self.room(code, address)
        if meta.get("ended"):
            raise RoomEndedError("This class has ended.")
        code, lang = meta["code"], languages.normalize(lang)
        name = " ".join((name or "").split())[:self.limits.name_chars]
        known = self.bus.students(code)
        if student and student in known:
            if known[student].get("removed"):
                raise StudentRemovedError("The teacher has removed you from this class.")
            self.bus.see(code, student, {"lang": lang, **({"name": name} if name else {})})
            return student
        if meta.get("locked"):
            raise RoomLockedError("The teacher has closed this class to new students.")
        self._admit(code, known, address)
        student = secrets.token_urlsafe(9)
        self.bus.see(code, student, {"lang": lang, "name": name, "joined": time.time(),
                                     "seen": 0, "addr": address or ""})
        return student

    def _admit(self, code: str, known: dict[str, dict[str, Any]], address: str | None) -> None:
        """Room for one more join: seats (open streams), and joins not connected yet (per
        address and in all; those older than the grace are forgotten)."""
        if len(self.present(code, known)) >= self.limits.students:
            raise RoomFullError(f"This class is full ({self.limits.students} students).",
                                retry_after=60)
        now = time.time()
        waiting = {k: v for k, v in known.items() if not v.get("seen") and not v.get("removed")}
        stale = [k for k, v in waiting.items() if now - v.get("joined", 0) > self.limits.join_grace]
        if stale:
            self.bus.forget(code, stale)
        fresh = [v for k, v in waiting.items() if k not in stale]
        mine = sum(1 for v in fresh if address and v.get("addr") == address)
        if len(fresh) >= self.limits.pending or mine >= self.limits.pending_per_address:
            raise RateLimitError("Too many students are joining at once; try again in a few "
                                 "seconds.", retry_after=min(10.0, self.limits.join_grace))

    def connect(self, code: str, student: str, lang: str, address: str | None = None
                ) -> dict[str, Any]:
        """A student's stream opens: a seat, if one is free, and a catch-up for its language."""
        meta = self.room(code, address)
        code = meta["code"]
        known = self.bus.students(code)
        if student not in known:
            raise AuthError("Join the class first.")
        if known[student].get("removed"):
            raise StudentRemovedError("The teacher has removed you from this class.")
        if meta.get("ended"):
            return meta  # the stream says so and ends
        seated = self.present(code, known)
        if student not in seated and len(seated) >= self.limits.students:
            raise RoomFullError(f"This class is full ({self.limits.students} students).",
                                retry_after=60)
        self.seen(code, student, lang)
        if not meta.get("used"):
            self.bus.update(code, {"used": True})
        self.translations.catch_up(code, lang)
        return meta

    def seen(self, code: str, student: str, lang: str) -> None:
        """A student's stream is open (it beats every few seconds)."""
        self.bus.see(code, student, {"lang": lang, "seen": time.time()})

    def present(self, code: str,
                students: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
        """The students whose stream was open lately (the seats taken)."""
        students = self.bus.students(code) if students is None else students
        now = time.time()
        return {k: v for k, v in students.items()
                if not v.get("removed") and now - v.get("seen", 0) <= PRESENT_S}

    def languages(self, code: str) -> set[str]:
        return {s["lang"] for s in self.present(code).values()}

    # -- the teacher writes ---------------------------------------------------------------------
    def post(self, code: str, key: str | None, text: str) -> list[int]:
        """Log each sentence of ``text`` and translate them into the room's languages (in the
        background); returns the sentences' numbers."""
        return self.send(code, key, text)["sentences"]

    def send(self, code: str, key: str | None, text: str,
             address: str | None = None) -> dict[str, Any]:
        """:meth:`post`, answering also the languages whose translations are ``delayed`` (the
        engine is not ready: they come when it is)."""
        meta = self.teacher(code, key, address)
        if not isinstance(text, str) or not text.strip():
            raise InputError("Write something to send to the class.")
        if len(text) > self.limits.text_chars:
            raise InputTooLongError(f"Send at most {self.limits.text_chars:,} characters at once "
                                    f"(this is {len(text):,}).")
        self._writable(meta)
        if self.bus.hits(f"{meta['code']}:post", 60) > self.limits.posts_per_minute:
            raise RateLimitError("Too many sends in a minute; wait a little.", retry_after=10)
        return self._post(meta, text, kind="teacher", extra={})

    @staticmethod
    def _writable(meta: dict[str, Any]) -> None:
        if meta.get("ended"):
            raise RoomEndedError("This class has ended; start a new one to go on.")
        if meta.get("paused"):
            raise RoomPausedError("Sending is paused; resume to send to the class.")

    def _post(self, meta: dict[str, Any], text: str, kind: str, extra: dict[str, Any],
              lang: str | None = None) -> dict[str, Any]:
        """Make the translations' jobs, log the sentences (all or none), then start the jobs."""
        code, source = meta["code"], lang or meta["lang"]
        pieces = split_document(text, source).pieces
        sentences = [p.text for p in pieces if p.translate]
        if not sentences:
            raise InputError("There is nothing to translate in this text.")
        if self.bus.length(code) + len(sentences) * 10 > self.limits.events:
            raise InputTooLongError("This class's transcript is full; start a new class.")
        ready = self.translations.check_engine()
        langs = sorted(self.languages(code) - {source})
        jobs = {lang: [self.translations.job(s, source, lang) for s in sentences]
                for lang in langs}
        events, lead = [], ""
        for piece in pieces:
            if not piece.translate:
                lead += piece.text
                continue
            events.append({"type": "sentence", "text": piece.text, "lang": source, "lead": lead,
                           "kind": kind, "t": round(time.time(), 3), **extra})
            lead = ""
        try:
            sids = self.bus.append_many(code, events)
        except Exception:
            for job in (j for js in jobs.values() for j in js):
                job.cancel()
            raise
        self._counted(code, len(sids), meta)
        self.translations.launch(code, {
            lang: [Piece(sid, s, source, job) for sid, s, job in zip(sids, sentences, js,
                                                                     strict=True)]
            for lang, js in jobs.items()})
        return {"sentences": sids, "delayed": [] if ready else langs}

    def _counted(self, code: str, sentences: int, meta: dict[str, Any]) -> None:
        """After the sentences are logged: nothing may fail the send any more."""
        with contextlib.suppress(StoreUnavailableError, RoomNotFoundError):
            self.bus.add(code, "sentences", sentences)
            if not meta.get("used"):
                self.bus.update(code, {"used": True})

    def catch_up(self, code: str, lang: str) -> None:
        """Translate the room's recent sentences that ``lang`` has not had (a late arrival)."""
        self.translations.catch_up(code, lang)

    # -- questions -------------------------------------------------------------------------------
    def ask(self, code: str, student: str, text: str, address: str | None = None) -> Event:
        """A student's question, logged with its translation into the teacher's language."""
        meta = self.room(code, address)
        code = meta["code"]
        info = self.bus.students(code).get(student or "")
        if info is None:
            raise AuthError("Join the class first.")
        if info.get("removed"):
            raise StudentRemovedError("The teacher has removed you from this class.")
        if meta.get("ended"):
            raise RoomEndedError("This class has ended.")
        text = (text or "").strip() if isinstance(text, str) else ""
        if not text:
            raise InputError("Write your question first.")
        if len(text) > self.limits.question_chars:
            raise InputTooLongError(f"A question may have at most {self.limits.question_chars} "
                                    f"characters (this one has {len(text)}).")
        if self.bus.hits(f"{code}:q:{student}", 60) > self.limits.questions_per_minute:
            raise RateLimitError("Too many questions at once; wait a minute.", retry_after=60)
        translation, error = text, ""
        if info["lang"] != meta["lang"]:
            try:
                translation = self.translator.translate(TranslationRequest(
                    text, meta["lang"], source_lang=info["lang"])).text
            except Exception as exc:  # the question reaches the teacher all the same
                translation, error = "", getattr(exc, "user_message", "") or type(exc).__name__
        event = {"type": "question", "student": student, "name": info.get("name", ""),
                 "lang": info["lang"], "text": text, "translation": translation,
                 "t": round(time.time(), 3), **({"error": error} if error else {})}
        qid = self.bus.append(code, event)
        with contextlib.suppress(StoreUnavailableError):
            self.bus.add(code, "questions")
        return {**event, "qid": qid}

    def show(self, code: str, key: str | None, qid: int, address: str | None = None
             ) -> list[int]:
        """Show a question to the whole room: it is translated like a sentence."""
        meta = self.teacher(code, key, address)
        self._writable(meta)
        found = self.bus.since(meta["code"], max(0, int(qid) - 1))[:1]
        if not found or found[0][1]["type"] != "question":
            raise RoomNotFoundError("No such question in this class.")
        question = found[0][1]
        return self._post(meta, question["text"], kind="question",
                          extra={"qid": int(qid), "who": question.get("name", "")},
                          lang=question["lang"])["sentences"]

    # -- what the teacher sees ---------------------------------------------------------------------
    def stats(self, code: str) -> dict[str, Any]:
        students = self.bus.students(code)
        present = self.present(code, students)
        by_lang: dict[str, int] = {}
        for student in present.values():
            by_lang[student["lang"]] = by_lang.get(student["lang"], 0) + 1
        counters = self.bus.counters(code)
        meta = self.bus.meta(code) or {}
        return {"students": len(present), "languages": dict(sorted(by_lang.items())),
                "joining": sum(1 for s in students.values() if not s.get("seen")
                               and not s.get("removed")),
                "sentences": counters.get("sentences", 0),
                "translations": counters.get("translations", 0),
                "questions": counters.get("questions", 0),
                "lag": lag(self, code),  # the languages behind, and by how much
                **{flag: bool(meta.get(flag)) for flag in ("locked", "paused", "ended")}}

    def history(self, code: str, after: int = 0) -> list[tuple[int, Event]]:
        return self.bus.since(code, max(0, after))
