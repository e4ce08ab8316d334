"""One event stream of a class: a student's (in their language) or the teacher's.

Each logged event goes out with its number as the SSE ``id``, so a browser that reconnects sends
``Last-Event-ID`` and gets what it missed, in order, once (``?after=N`` does the same for a page
that reloads). The stream first registers with the process's hub, then reads the log from there,
then follows the hub; an event whose number jumps ahead makes it read the gap from the log, so
events written by another process in another order still arrive in order. Drafts (translations
being written) carry no id. A comment line every few seconds keeps proxies and phones from
closing an idle stream, and marks the student present. While the rooms' Redis is away the stream
stays open and reads what it missed when it is back.

What each reader gets (``data:`` is the event as JSON, with ``seq`` when it is logged):

==================  =========================================================================
``type``            who
==================  =========================================================================
``sentence``        everyone
``translation``     the readers of its ``lang`` (``text``, or ``error`` when given up)
``draft``           the readers of its ``lang``: the translation so far (not logged)
``delayed``         the readers of its ``lang`` (the teacher: all): ``code`` is
                    ``translation_delayed``; the translation follows when the engine is back
``correction``      the readers of its ``lang``: a shown translation replaced; with ``source``
                    (the teacher's fix of a sentence): everyone
``speech_draft``    the words being spoken (``source``, everyone) or their translation so far
                    (``lang``, its readers); not logged
``question``        the teacher
``stats``           the teacher: the room's numbers and state (not logged)
``ended``           everyone; then the stream ends (a page closes its EventSource)
``removed``         the removed student (then its stream ends) and the teacher
``paused``,         everyone
``resumed``,
``clear``
``locked``,         the teacher
``unlocked``
==================  =========================================================================
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from fastapi import Request

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError
from hunyuan_webui.service.rooms import Rooms, StoreUnavailableError
from hunyuan_webui.service.rooms.store.bus import Event, Listener

STUDENT_BEAT_S = 15.0
TEACHER_BEAT_S = 3.0  # the teacher's stream also carries the room's numbers this often
EVERYONE = frozenset({"sentence", "ended", "paused", "resumed", "clear"})
BY_LANGUAGE = frozenset({"translation", "draft", "delayed", "correction"})
TEACHER_ONLY = frozenset({"question", "locked", "unlocked", "removed"})


def wanted(event: Event, lang: str, teacher: bool = False, student: str | None = None) -> bool:
    """Whether a reader (in ``lang``; the teacher, or ``student``) gets ``event``: a student the
    translations, drafts, delays and corrections of its language (and corrections of the
    sentences themselves); the teacher every language's (what each reads), but not drafts."""
    kind = event.get("type")
    if kind in EVERYONE:
        return True
    if kind == "correction" and event.get("source"):
        return True
    if kind == "speech_draft":  # the words being spoken (source), or their translation (lang)
        return bool(event.get("source")) or event.get("lang") == lang
    if kind in BY_LANGUAGE:
        return event.get("lang") == lang or (teacher and kind != "draft")
    if kind == "removed" and not teacher:
        return event.get("student") == student
    return teacher and kind in TEACHER_ONLY


def ends(event: Event, student: str | None) -> bool:
    """The last event of a stream: the class ended, or this student was removed."""
    kind = event.get("type")
    return kind == "ended" or (kind == "removed" and student is not None
                               and event.get("student") == student)


def frame(seq: int | None, event: Event) -> str:
    head = f"id: {seq}\n" if seq is not None else ""
    body = {**event, "seq": seq} if seq is not None else event
    return f"{head}data: {json.dumps(body, ensure_ascii=False)}\n\n"


def _after(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    try:
        return max(0, int(raw))
    except ValueError:
        raise InputError("after / Last-Event-ID must be an event number.") from None


async def events(rooms: Rooms, request: Request, code: str, key: str | None,
                 address: str | None = None) -> AsyncIterator[str]:
    """Check who is asking (now, so that a refusal is an HTTP error), then the stream."""
    params = request.query_params
    after = _after(request)
    if params.get("role") == "teacher":
        meta = await anyio.to_thread.run_sync(rooms.teacher, code, key, address)
        return _follow(rooms, meta, None, meta["lang"], after, TEACHER_BEAT_S)
    student, lang = params.get("student", ""), languages.normalize(params.get("lang", ""))
    meta = await anyio.to_thread.run_sync(rooms.connect, code, student, lang, address)
    return _follow(rooms, meta, student, lang, after, STUDENT_BEAT_S)


async def _safely(fn: Callable[..., Any], *args: Any, default: Any = None) -> Any:
    """``fn`` in a thread; ``default`` while the rooms' store is away."""
    try:
        return await anyio.to_thread.run_sync(fn, *args)
    except StoreUnavailableError:
        return default


class _Reader:
    """What one stream has sent: the last logged number, and whether it is over."""

    def __init__(self, rooms: Rooms, code: str, student: str | None, lang: str,
                 after: int) -> None:
        self.rooms, self.code, self.student, self.lang = rooms, code, student, lang
        self.teacher = student is None
        self.last, self.over = after, False

    def out(self, seq: int | None, event: Event) -> str | None:
        if seq is not None:
            self.last = seq
        if not wanted(event, self.lang, self.teacher, self.student):
            return None
        self.over = self.over or ends(event, self.student)
        return frame(seq, event)

    async def gap(self) -> list[str]:
        """Whatever the log holds past ``last``, in order (nothing while the store is away)."""
        out = []
        for seq, event in await _safely(self.rooms.history, self.code, self.last, default=[]):
            if not self.over and (text := self.out(seq, event)):
                out.append(text)
        return out


async def _follow(rooms: Rooms, meta: dict[str, Any], student: str | None, lang: str, after: int,
                  beat: float) -> AsyncIterator[str]:
    """``student`` None: the teacher's stream (questions, and the room's numbers)."""
    code = meta["code"]
    reader = _Reader(rooms, code, student, lang, after)
    listener = Listener(code, asyncio.get_running_loop())
    rooms.bus.hub.add(listener)
    try:
        await _safely(rooms.bus.listen)
        yield "retry: 2000\n\n"
        for text in await reader.gap():
            yield text
        if meta.get("ended") and not reader.over:  # seen before: said again, then the end
            yield frame(None, {"type": "ended"})
            return
        if reader.teacher:
            yield await _stats(rooms, code)
        loop = asyncio.get_running_loop()
        next_beat = loop.time() + beat
        while not reader.over:
            # The beat keeps its pace however busy the stream is: it marks the student present.
            try:
                seq, event = await asyncio.wait_for(listener.queue.get(),
                                                    timeout=max(0.0, next_beat - loop.time()))
            except TimeoutError:
                seq, event = -1, {}
            for text in await _next(reader, seq, event):
                yield text
            if reader.teacher and seq not in (None, -1) and event.get("type") in (
                    "question", "translation", "delayed"):
                yield await _stats(rooms, code)
            if loop.time() >= next_beat and not reader.over:
                next_beat = loop.time() + beat
                yield await _beat(rooms, code, student, lang)
    finally:
        rooms.bus.hub.remove(listener)


async def _next(reader: _Reader, seq: int | None, event: Event) -> list[str]:
    """What one event from the hub (or a beat: ``seq`` -1) makes the stream send."""
    if seq == -1 or (seq is not None and seq > reader.last + 1):
        return await reader.gap()  # a beat, or a gap: the log past `last`, in order
    if seq is None or seq == reader.last + 1:
        text = reader.out(seq, event)
        return [text] if text else []
    return []  # already sent


async def _beat(rooms: Rooms, code: str, student: str | None, lang: str) -> str:
    if student is None:  # a teacher watching keeps the room open
        await _safely(rooms.bus.touch, code)
        return await _stats(rooms, code)
    await _safely(rooms.seen, code, student, lang)
    return ": beat\n\n"


async def _stats(rooms: Rooms, code: str) -> str:
    stats = await _safely(rooms.stats, code)
    if stats is None:
        return ": the class's store is away\n\n"
    return frame(None, {"type": "stats", **stats})
