"""A class: the teacher writes once, every student reads it in their own language.

A room has a short join code (six digits, easy to read aloud) and a teacher's secret (only its
hash is kept). Students join with a language and an optional name. Each sentence the teacher
sends is cut like any text (:func:`~hunyuan_webui.segment.split_document`, its layout kept) and
logged; then it is translated **once per language present in the room** (students seen in the
last :data:`PRESENT_S` seconds), however many students read that language: all the languages'
jobs go through the one :class:`~hunyuan_webui.service.Translator` (its cache, its checks, its
engine batches) and are primed together, so they share the engine's batches. A translation is
claimed in the room's store before it is made, so no two processes (or two late joiners) make
the same one twice. Drafts stream to the students as they are written; the finished translation
is logged, so a phone that slept reads it from the log when it is back.

A language that arrives late (a student joins, or comes back after the room stopped translating
for it) gets the room's recent sentences translated for it once. Questions from students reach
the teacher translated; the teacher can show one to the room, which translates it like a
sentence. The store is :mod:`hunyuan_webui.service.rooms.bus` (memory, or Redis when the phrase
cache uses it).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hunyuan_webui import languages, romanize
from hunyuan_webui.errors import (
    AuthError,
    InputError,
    InputTooLongError,
    RateLimitError,
    TranslatorError,
)
from hunyuan_webui.segment import split_document
from hunyuan_webui.service.rooms.bus import Event, MemoryBus, RedisBus
from hunyuan_webui.service.rooms.lag import lag
from hunyuan_webui.service.translate.job import Job
from hunyuan_webui.service.translate.request import TranslationRequest
from hunyuan_webui.service.translate.translator import Translator
from hunyuan_webui.settings import Settings

log = logging.getLogger(__name__)

PRESENT_S = 45.0  # a student seen this recently is in the room (its stream beats every 15 s)
DRAFT_EVERY_S = 0.1  # a translation being written is published at most this often


class RoomNotFoundError(TranslatorError):
    code = "room_not_found"
    http_status = 404


@dataclass(frozen=True)
class RoomLimits:
    rooms: int = 50  # open at once (in this process, or in the shared Redis)
    students: int = 150  # per room, present at once
    question_chars: int = 300
    questions_per_minute: int = 5  # per student
    posts_per_minute: int = 60  # per room: the teacher's sends (each may be a whole paste)
    text_chars: int = 5000  # one post by the teacher (a pasted lesson)
    name_chars: int = 40
    events: int = 20_000  # a room's log (sentences, translations, questions)
    idle_ttl: float = 2 * 3600.0  # seconds a room with nobody in it is kept
    catch_up: int = 200  # recent sentences translated for a language that arrives late


def normalize_code(code: str) -> str:
    """``"482 913"``, ``"482-913"`` -> ``"482913"``."""
    return re.sub(r"\D", "", code or "")[:12]


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class Rooms:
    """Every room this process serves (all of them, when the store is Redis)."""

    def __init__(self, translator: Translator, bus: MemoryBus | RedisBus | None = None,
                 limits: RoomLimits | None = None) -> None:
        self.translator = translator
        self.limits = limits or RoomLimits()
        self.bus = bus or MemoryBus(self.limits.idle_ttl)

    @classmethod
    def from_settings(cls, translator: Translator, settings: Settings,
                      limits: RoomLimits | None = None) -> Rooms:
        limits = limits or RoomLimits()
        bus: MemoryBus | RedisBus = RedisBus(settings.redis_url, limits.idle_ttl) \
            if settings.redis_url else MemoryBus(limits.idle_ttl)
        return cls(translator, bus, limits)

    # -- rooms ----------------------------------------------------------------------------------
    def create(self, teacher_lang: str, title: str = "") -> dict[str, str]:
        """A new room: its code and the teacher's secret (shown once, never stored)."""
        lang = languages.normalize(teacher_lang)
        if self.bus.room_count() >= self.limits.rooms:
            raise RateLimitError(f"This server already has {self.limits.rooms} classes open; "
                                 "try again when one has ended.", retry_after=300)
        key = secrets.token_urlsafe(18)
        meta = {"lang": lang, "title": (title or "").strip()[:80], "key": _hash(key),
                "created": time.time()}
        for _ in range(50):
            code = f"{secrets.randbelow(900_000) + 100_000}"
            if self.bus.create(code, {**meta, "code": code}):
                return {"code": code, "key": key}
        raise RateLimitError("No free class code; try again.", retry_after=5)

    def room(self, code: str) -> dict[str, Any]:
        meta = self.bus.meta(normalize_code(code))
        if meta is None:
            raise RoomNotFoundError("No class has this code (it may have ended). Check the "
                                    "code with your teacher.")
        return meta

    def teacher(self, code: str, key: str | None) -> dict[str, Any]:
        """The room, if ``key`` is its teacher's secret; else 401."""
        meta = self.room(code)
        if not key or not hmac.compare_digest(_hash(key), meta["key"]):
            raise AuthError("Only the teacher's link can do this.")
        self.bus.touch(meta["code"])
        return meta

    def public(self, code: str) -> dict[str, Any]:
        meta = self.room(code)
        return {"code": meta["code"], "lang": meta["lang"], "title": meta["title"]}

    # -- students -------------------------------------------------------------------------------
    def join(self, code: str, lang: str, name: str = "", student: str | None = None) -> str:
        """A student in the room (the same one again when ``student`` is known)."""
        meta = self.room(code)
        lang = languages.normalize(lang)
        name = " ".join((name or "").split())[:self.limits.name_chars]
        known = self.bus.students(meta["code"])
        if not (student and student in known):
            if len(self.present(meta["code"], known)) >= self.limits.students:
                raise RateLimitError(f"This class is full ({self.limits.students} students).",
                                     retry_after=60)
            student = secrets.token_urlsafe(9)
        self.bus.see(meta["code"], student, {"lang": lang, "name": name})
        self.catch_up(meta["code"], lang)
        return student

    def seen(self, code: str, student: str, lang: str) -> None:
        """A student's stream is open (it beats every few seconds)."""
        self.bus.see(code, student, {"lang": lang})

    def present(self, code: str,
                students: dict[str, dict[str, Any]] | None = None) -> dict[str, dict[str, Any]]:
        students = self.bus.students(code) if students is None else students
        now = time.time()
        return {k: v for k, v in students.items() if now - v.get("seen", 0) <= PRESENT_S}

    def languages(self, code: str) -> set[str]:
        return {s["lang"] for s in self.present(code).values()}

    # -- the teacher writes ---------------------------------------------------------------------
    def post(self, code: str, key: str | None, text: str) -> list[int]:
        """Log each sentence of ``text`` and translate them into the room's languages (in the
        background); returns the sentences' numbers."""
        meta = self.teacher(code, key)
        if not isinstance(text, str) or not text.strip():
            raise InputError("Write something to send to the class.")
        if len(text) > self.limits.text_chars:
            raise InputTooLongError(f"Send at most {self.limits.text_chars:,} characters at once "
                                    f"(this is {len(text):,}).")
        if self.bus.hits(f"{meta['code']}:post", 60) > self.limits.posts_per_minute:
            raise RateLimitError("Too many sends in a minute; wait a little.", retry_after=10)
        return self._post(meta, text, kind="teacher", extra={})

    def _post(self, meta: dict[str, Any], text: str, kind: str, extra: dict[str, Any],
              lang: str | None = None) -> list[int]:
        code, source = meta["code"], lang or meta["lang"]
        pieces = split_document(text, source).pieces
        sentences = [p for p in pieces if p.translate]
        if not sentences:
            raise InputError("There is nothing to translate in this text.")
        if self.bus.length(code) + len(sentences) * 10 > self.limits.events:
            raise InputTooLongError("This class's transcript is full; start a new class.")
        items, lead = [], ""
        for piece in pieces:
            if not piece.translate:
                lead += piece.text
                continue
            event = {"type": "sentence", "text": piece.text, "lang": source, "lead": lead,
                     "kind": kind, "t": round(time.time(), 3), **extra}
            items.append((self.bus.append(code, event), piece.text, source))
            lead = ""
        self.bus.add(code, "sentences", len(items))
        self._fan_out(code, items, self.languages(code))
        return [sid for sid, _, _ in items]

    def catch_up(self, code: str, lang: str) -> None:
        """Translate the room's recent sentences that ``lang`` has not had (a late arrival)."""
        done, wanted = set(), []
        for seq, event in self.bus.since(code, 0):
            if event["type"] == "translation" and event["lang"] == lang and "error" not in event:
                done.add(event["sid"])
            elif event["type"] == "sentence" and event["lang"] != lang:
                wanted.append((seq, event["text"], event["lang"]))
        missing = [item for item in wanted if item[0] not in done][-self.limits.catch_up:]
        if missing:
            self._fan_out(code, missing, {lang})

    # -- translation --------------------------------------------------------------------------------
    def _fan_out(self, code: str, items: Iterable[tuple[int, str, str]], langs: set[str]) -> None:
        """Claim and start every (sentence, language) translation not made yet, priming the
        first of each language together (one batch), then read each language in a thread."""
        work: dict[str, list[tuple[int, Job]]] = {}
        for sid, text, source in items:
            for lang in sorted(langs - {source}):
                if not self.bus.claim(code, f"{sid}:{lang}"):
                    continue
                try:
                    job = self.translator.start(
                        TranslationRequest(text, lang, source_lang=source))
                except TranslatorError as exc:
                    self._failed(code, sid, lang, exc)
                    continue
                work.setdefault(lang, []).append((sid, job))
        window = self.translator.settings.segments_in_flight()
        for jobs in work.values():
            for _, job in jobs[:window]:
                job.prime()
        for lang, jobs in work.items():
            threading.Thread(target=self._read, args=(code, lang, jobs, window),
                             name="hymt-class-translate", daemon=True).start()

    def _read(self, code: str, lang: str, jobs: list[tuple[int, Job]], window: int) -> None:
        for i, (sid, job) in enumerate(jobs):
            for _, ahead in jobs[i:i + window]:
                ahead.prime()
            try:
                text = self._stream(code, lang, sid, job)
            except TranslatorError as exc:
                self._failed(code, sid, lang, exc)
                continue
            except Exception as exc:  # never lose the rest of the lesson to one sentence
                log.exception("class %s: translating sentence %s into %s failed", code, sid, lang)
                self._failed(code, sid, lang, TranslatorError(str(exc) or type(exc).__name__))
                continue
            event: Event = {"type": "translation", "sid": sid, "lang": lang, "text": text}
            if romanize.supports(lang):
                event["roman"] = romanize.romanize(text, lang) or ""
            self.bus.add(code, "translations")
            self.bus.append(code, event)

    def _stream(self, code: str, lang: str, sid: int, job: Job) -> str:
        last = 0.0
        for update in job:
            if update.result is not None:
                return update.result.text
            now = time.monotonic()
            if update.text and now - last >= DRAFT_EVERY_S:
                last = now
                self.bus.publish(code, {"type": "draft", "sid": sid, "lang": lang,
                                        "text": update.text})
        raise TranslatorError("The translation was stopped.")

    def _failed(self, code: str, sid: int, lang: str, exc: TranslatorError) -> None:
        """Logged for the students (they see why); the claim is released so that the next
        arrival of this language tries again."""
        self.bus.append(code, {"type": "translation", "sid": sid, "lang": lang,
                               "error": exc.user_message})
        self.bus.release(code, f"{sid}:{lang}")

    # -- questions -------------------------------------------------------------------------------
    def ask(self, code: str, student: str, text: str) -> Event:
        """A student's question, logged with its translation into the teacher's language."""
        meta = self.room(code)
        code = meta["code"]
        info = self.bus.students(code).get(student or "")
        if info is None:
            raise AuthError("Join the class first.")
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
            except TranslatorError as exc:
                translation, error = "", exc.user_message
        event = {"type": "question", "student": student, "name": info.get("name", ""),
                 "lang": info["lang"], "text": text, "translation": translation,
                 "t": round(time.time(), 3), **({"error": error} if error else {})}
        self.bus.add(code, "questions")
        return {**event, "qid": self.bus.append(code, event)}

    def show(self, code: str, key: str | None, qid: int) -> list[int]:
        """Show a question to the whole room: it is translated like a sentence."""
        meta = self.teacher(code, key)
        found = self.bus.since(meta["code"], max(0, int(qid) - 1))[:1]
        if not found or found[0][1]["type"] != "question":
            raise RoomNotFoundError("No such question in this class.")
        question = found[0][1]
        return self._post(meta, question["text"], kind="question",
                          extra={"qid": int(qid), "who": question.get("name", "")},
                          lang=question["lang"])

    # -- what the teacher sees ---------------------------------------------------------------------
    def stats(self, code: str) -> dict[str, Any]:
        present = self.present(code)
        by_lang: dict[str, int] = {}
        for student in present.values():
            by_lang[student["lang"]] = by_lang.get(student["lang"], 0) + 1
        counters = self.bus.counters(code)
        return {"students": len(present), "languages": dict(sorted(by_lang.items())),
                "sentences": counters.get("sentences", 0),
                "translations": counters.get("translations", 0),
                "questions": counters.get("questions", 0),
                "lag": lag(self, code)}  # the languages behind, and by how much

    def history(self, code: str, after: int = 0) -> list[tuple[int, Event]]:
        return self.bus.since(code, max(0, after))
