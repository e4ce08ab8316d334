"""One event stream of a class: a student's (in their language) or the teacher's.

Each logged event goes out with its number as the SSE ``id``, so a browser that reconnects sends
``Last-Event-ID`` and gets what it missed, in order, once (``?after=N`` does the same for a page
that reloads). The stream first registers with the process's hub, then reads the log from there,
then follows the hub; an event whose number jumps ahead makes it read the gap from the log, so
events written by another process in another order still arrive in order. Drafts (translations
being written) carry no id. A comment line every few seconds keeps proxies and phones from
closing an idle stream, and marks the student present.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import Request

from hunyuan_webui import languages
from hunyuan_webui.errors import AuthError, InputError
from hunyuan_webui.service.rooms import Rooms
from hunyuan_webui.service.rooms.bus import Event, Listener

STUDENT_BEAT_S = 15.0
TEACHER_BEAT_S = 3.0  # the teacher's stream also carries the room's numbers this often


def wanted(event: Event, lang: str, teacher: bool = False) -> bool:
    """What a reader sees: the sentences, and their translations in its language; the teacher
    also sees the questions."""
    kind = event.get("type")
    if kind == "sentence":
        return True
    if kind in ("translation", "draft"):
        return event.get("lang") == lang
    if kind in ("speech_draft", "correction"):  # the words being spoken; a mended sentence
        return bool(event.get("source")) or event.get("lang") == lang or \
            (teacher and kind == "correction")
    return kind == "question" and teacher


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


async def events(rooms: Rooms, request: Request, code: str,
                 key: str | None) -> AsyncIterator[str]:
    """Check who is asking (now, so that a refusal is an HTTP error), then the stream."""
    params = request.query_params
    after = _after(request)
    if params.get("role") == "teacher":
        meta = await anyio.to_thread.run_sync(rooms.teacher, code, key)
        return _follow(rooms, meta["code"], None, meta["lang"], after, TEACHER_BEAT_S)
    meta = await anyio.to_thread.run_sync(rooms.room, code)
    student, lang = params.get("student", ""), languages.normalize(params.get("lang", ""))
    known = await anyio.to_thread.run_sync(rooms.bus.students, meta["code"])
    if student not in known:
        raise AuthError("Join the class first.")
    await anyio.to_thread.run_sync(rooms.seen, meta["code"], student, lang)
    await anyio.to_thread.run_sync(rooms.catch_up, meta["code"], lang)
    return _follow(rooms, meta["code"], student, lang, after, STUDENT_BEAT_S)


async def _follow(rooms: Rooms, code: str, student: str | None, lang: str, after: int,
                  beat: float) -> AsyncIterator[str]:
    """``student`` None: the teacher's stream (questions, and the room's numbers)."""
    teacher = student is None
    listener = Listener(code, asyncio.get_running_loop())
    rooms.bus.hub.add(listener)
    try:
        await anyio.to_thread.run_sync(rooms.bus.listen)
        yield "retry: 2000\n\n"
        last = after
        for seq, event in await anyio.to_thread.run_sync(rooms.history, code, last):
            last = seq
            if wanted(event, lang, teacher):
                yield frame(seq, event)
        if student is None:
            yield _stats(await anyio.to_thread.run_sync(rooms.stats, code))
        loop = asyncio.get_running_loop()
        next_beat = loop.time() + beat
        while True:
            # The beat keeps its pace however busy the stream is: it marks the student present.
            try:
                seq, event = await asyncio.wait_for(listener.queue.get(),
                                                    timeout=max(0.0, next_beat - loop.time()))
            except TimeoutError:
                seq, event = -1, {}
            if seq == -1 or (seq is not None and seq > last + 1):
                # A beat, or a gap: whatever the log holds past `last`, in order.
                for seq2, event2 in await anyio.to_thread.run_sync(rooms.history, code, last):
                    last = seq2
                    if wanted(event2, lang, teacher):
                        yield frame(seq2, event2)
            elif seq is None:
                if wanted(event, lang, teacher):
                    yield frame(None, event)
            elif seq == last + 1:
                last = seq
                if wanted(event, lang, teacher):
                    yield frame(seq, event)
            if teacher and seq not in (None, -1) and event.get("type") in ("question",
                                                                          "translation"):
                yield _stats(await anyio.to_thread.run_sync(rooms.stats, code))
            if loop.time() >= next_beat:
                next_beat = loop.time() + beat
                yield await _beat(rooms, code, student, lang)
    finally:
        rooms.bus.hub.remove(listener)


async def _beat(rooms: Rooms, code: str, student: str | None, lang: str) -> str:
    if student is None:  # a teacher watching keeps the room open
        await anyio.to_thread.run_sync(rooms.bus.touch, code)
        return _stats(await anyio.to_thread.run_sync(rooms.stats, code))
    await anyio.to_thread.run_sync(rooms.seen, code, student, lang)
    return ": beat\n\n"


def _stats(stats: dict[str, Any]) -> str:
    return frame(None, {"type": "stats", **stats})
