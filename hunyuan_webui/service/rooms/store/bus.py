"""Where a class's rooms live: one process's memory, or the Redis the phrase cache shares.

A room is a small record (its code, the teacher's language, a hash of the teacher's secret, and
its state: used, locked, paused, ended), a log of events numbered 1, 2, 3... in the order they
were written (a sentence, a translation of it, a question...), the students it has seen, the
translations claimed and a few counters. :class:`MemoryBus` keeps all of that in this process;
:class:`~hunyuan_webui.service.rooms.store.redis_bus.RedisBus` keeps it in Redis and tells every process
of each new event. Either way :class:`Hub` hands an event to this process's listeners (the
students' event streams), which read any gap from the log: a listener sees every logged event
once and in order, whichever process wrote it. Events that are not logged (a translation still
being written) are published only: a listener that misses one gets the finished translation from
the log.

Everything here expires: a room nobody has used (no sentence, no student's stream) is gone
``empty_ttl`` seconds after it was last touched, a used one after ``ttl`` seconds (its transcript
is kept that long for the teacher). Rate counters and marks expire with their windows.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from hunyuan_webui.service.rooms.errors import RoomNotFoundError

Event = dict[str, Any]


def room_ttl(meta: dict[str, Any], ttl: float, empty_ttl: float) -> float:
    """How long ``meta``'s room lives untouched: a room nobody used goes in minutes."""
    return ttl if meta.get("used") else min(ttl, empty_ttl)


class Listener:
    """One event stream's queue, fed from any thread, read in its event loop."""

    def __init__(self, code: str, loop: asyncio.AbstractEventLoop) -> None:
        self.code = code
        self.loop = loop
        self.queue: asyncio.Queue[tuple[int | None, Event]] = asyncio.Queue()

    def put(self, seq: int | None, event: Event) -> None:
        with contextlib.suppress(RuntimeError):  # its loop is closed: nobody reads any more
            self.loop.call_soon_threadsafe(_put_all, (self,), seq, event)


def _put_all(listeners: tuple[Listener, ...] | list[Listener], seq: int | None,
             event: Event) -> None:
    """In the listeners' event loop: ``event`` into each one's queue."""
    for listener in listeners:
        if seq is None and listener.queue.qsize() > 200:
            continue  # a slow reader loses drafts, never logged events
        listener.queue.put_nowait((seq, event))


class Hub:
    """This process's listeners by room."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: dict[str, set[Listener]] = {}

    def add(self, listener: Listener) -> None:
        with self._lock:
            self._listeners.setdefault(listener.code, set()).add(listener)

    def remove(self, listener: Listener) -> None:
        with self._lock:
            room = self._listeners.get(listener.code, set())
            room.discard(listener)
            if not room:
                self._listeners.pop(listener.code, None)

    def deliver(self, code: str, seq: int | None, event: Event) -> None:
        """``event`` to the room's listeners: one wake-up of each event loop, not one for each
        listener (a class of 60 phones is one loop)."""
        with self._lock:
            listeners = list(self._listeners.get(code, ()))
        by_loop: dict[asyncio.AbstractEventLoop, list[Listener]] = {}
        for listener in listeners:
            by_loop.setdefault(listener.loop, []).append(listener)
        for loop, group in by_loop.items():
            with contextlib.suppress(RuntimeError):  # its loop is closed: nobody reads any more
                loop.call_soon_threadsafe(_put_all, group, seq, event)

    def count(self, code: str) -> int:
        with self._lock:
            return len(self._listeners.get(code, ()))


@dataclass
class _Room:
    meta: dict[str, Any]
    events: list[Event] = field(default_factory=list)
    students: dict[str, dict[str, Any]] = field(default_factory=dict)
    claims: set[str] = field(default_factory=set)
    counters: dict[str, int] = field(default_factory=dict)
    touched: float = field(default_factory=time.time)


class MemoryBus:
    """Rooms in this process only (no Redis configured). It never fails."""

    shared = False

    def __init__(self, ttl: float, empty_ttl: float | None = None) -> None:
        self.ttl = ttl
        self.empty_ttl = ttl if empty_ttl is None else empty_ttl
        self.hub = Hub()
        self._lock = threading.Lock()
        self._handing = threading.Lock()  # held while logged events go to the hub, in order
        self._logged: list[tuple[str, int, Event]] = []  # logged, not yet handed to the hub
        self._rooms: dict[str, _Room] = {}
        self._rates: dict[str, deque[float]] = {}
        self._marks: dict[str, tuple[float, float]] = {}  # key -> (value, expires at)
        self._hits = 0

    def _gone(self, code: str, room: _Room, now: float) -> bool:
        ttl = room_ttl(room.meta, self.ttl, self.empty_ttl)
        return now - room.touched > ttl and not self.hub.count(code)

    def _sweep(self) -> None:
        now = time.time()
        for code in [c for c, r in self._rooms.items() if self._gone(c, r, now)]:
            del self._rooms[code]

    def _live(self, code: str) -> _Room:
        """The room, to write to (a room that expired meanwhile is not made again)."""
        room = self._rooms.get(code)
        if room is None:
            raise RoomNotFoundError("This class has expired.")
        return room

    def _room(self, code: str) -> _Room | None:
        room = self._rooms.get(code)
        return None if room is None or self._gone(code, room, time.time()) else room

    def create(self, code: str, meta: dict[str, Any]) -> bool:
        with self._lock:
            self._sweep()
            if code in self._rooms:
                return False
            self._rooms[code] = _Room(dict(meta))
            return True

    def open_rooms(self) -> list[dict[str, Any]]:
        """The records of the rooms not ended (nor expired)."""
        with self._lock:
            self._sweep()
            return [dict(r.meta) for r in self._rooms.values() if not r.meta.get("ended")]

    def room_count(self) -> int:
        return len(self.open_rooms())

    def meta(self, code: str) -> dict[str, Any] | None:
        with self._lock:
            room = self._room(code)
            return None if room is None else dict(room.meta)

    def update(self, code: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        """Merge ``fields`` into the room's record; the record, or None if it is gone."""
        with self._lock:
            room = self._room(code)
            if room is None:
                return None
            room.meta.update(fields)
            room.touched = time.time()
            return dict(room.meta)

    def touch(self, code: str) -> None:
        with self._lock:
            if code in self._rooms:
                self._rooms[code].touched = time.time()

    def append(self, code: str, event: Event) -> int:
        return self.append_many(code, [event])[0]

    def append_many(self, code: str, events: list[Event]) -> list[int]:
        """Log ``events`` together (all or none); their numbers."""
        with self._lock:
            room = self._live(code)
            first = len(room.events) + 1
            room.events.extend(events)
            room.touched = time.time()
            seqs = list(range(first, first + len(events)))
            self._logged += [(code, seq, event) for seq, event in zip(seqs, events, strict=True)]
        self._hand_over()
        return seqs

    def _hand_over(self) -> None:
        """Hand the logged events to the hub in the order they were logged, whichever threads
        logged them (an event ahead of its number makes every stream of the room read the gap
        from the log in a thread of its own: thousands of reads in a class whose languages
        are translated at once). The thread that gets here first hands over everyone's; each
        caller's events are handed over when it returns."""
        with self._handing:
            with self._lock:
                logged, self._logged = self._logged, []
            for code, seq, event in logged:
                self.hub.deliver(code, seq, event)

    def publish(self, code: str, event: Event) -> None:
        self.hub.deliver(code, None, event)

    def since(self, code: str, after: int) -> list[tuple[int, Event]]:
        with self._lock:
            room = self._rooms.get(code)
            events = room.events[after:] if room else []
        return list(enumerate(events, start=after + 1))

    def length(self, code: str) -> int:
        with self._lock:
            room = self._rooms.get(code)
            return len(room.events) if room else 0

    def claim(self, code: str, key: str) -> bool:
        with self._lock:
            room = self._rooms.get(code)
            if room is None or key in room.claims:
                return False
            room.claims.add(key)
            return True

    def release(self, code: str, key: str) -> None:
        with self._lock:
            if code in self._rooms:
                self._rooms[code].claims.discard(key)

    def add(self, code: str, counter: str, by: int = 1) -> int:
        with self._lock:
            counters = self._live(code).counters
            counters[counter] = counters.get(counter, 0) + by
            return counters[counter]

    def counters(self, code: str) -> dict[str, int]:
        with self._lock:
            room = self._rooms.get(code)
            return dict(room.counters) if room else {}

    def see(self, code: str, student: str, info: dict[str, Any]) -> None:
        """Merge ``info`` into the student's record (made if new); the room is touched."""
        with self._lock:
            room = self._live(code)
            room.students[student] = {**room.students.get(student, {}), **info}
            room.touched = time.time()

    def forget(self, code: str, students: list[str]) -> None:
        with self._lock:
            room = self._rooms.get(code)
            for student in students if room else ():
                room.students.pop(student, None)

    def students(self, code: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            room = self._rooms.get(code)
            return {k: dict(v) for k, v in room.students.items()} if room else {}

    def hits(self, key: str, window: float) -> int:
        """Count one more hit on ``key``; how many in the last ``window`` seconds."""
        now = time.time()
        with self._lock:
            self._hits += 1
            if self._hits % 1000 == 0:  # forget the keys nobody hit lately (many addresses)
                self._rates = {k: v for k, v in self._rates.items() if v and now - v[-1] < 3600}
                self._marks = {k: v for k, v in self._marks.items() if v[1] > now}
            recent = self._rates.setdefault(key, deque())
            while recent and now - recent[0] > window:
                recent.popleft()
            recent.append(now)
            return len(recent)

    def mark(self, key: str, value: float, ttl: float) -> None:
        """Remember ``value`` under ``key`` for ``ttl`` seconds."""
        with self._lock:
            self._marks[key] = (value, time.time() + ttl)

    def marked(self, key: str) -> float | None:
        with self._lock:
            value, until = self._marks.get(key, (None, 0.0))
            return value if until > time.time() else None

    def listen(self) -> None:
        pass  # the hub hears every append directly

    def close(self) -> None:
        pass
