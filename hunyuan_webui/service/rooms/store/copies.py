"""This process's copy of the rooms it serves from Redis, to write them back into a Redis that
came back empty (restarted without persistence).

A copy holds what it takes to carry a class on: the room's record, every logged event this
process has written or read (by number, so that the students' ``Last-Event-ID`` stays right),
the students, the counters and this process's own claims. It is updated beside each write and
read of :class:`~hunyuan_webui.service.rooms.store.redis_bus.RedisBus`, and dropped when the room's
time is up, as Redis would drop the room. Events this process never saw (a gap: it started
after the class did) make a copy incomplete: a process whose copy is complete writes the room
back; one whose copy is not waits up to :data:`WAIT_FOR_COMPLETE_S` for another to do it (its
callers get a 503 meanwhile), then writes back what it has, the missing events as
``{"type": "gap"}``, which no reader shows.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from hunyuan_webui.service.rooms.store.bus import room_ttl

GAP = json.dumps({"type": "gap"})
WAIT_FOR_COMPLETE_S = 10.0


@dataclass
class Copy:
    meta: dict[str, Any]
    events: dict[int, str] = field(default_factory=dict)  # number -> the event's JSON as logged
    students: dict[str, str] = field(default_factory=dict)  # id -> the record's JSON
    counters: dict[str, int] = field(default_factory=dict)
    claims: set[str] = field(default_factory=set)
    touched: float = field(default_factory=time.time)
    known: int = 0  # the highest event number known to exist (the log's length when last read)

    def log(self) -> list[str]:
        """Every event from number 1 on, gaps filled."""
        last = max(self.known, max(self.events, default=0))
        return [self.events.get(seq, GAP) for seq in range(1, last + 1)]

    @property
    def complete(self) -> bool:
        return all(seq in self.events for seq in range(1, self.known + 1))


class Copies:
    """The copies by room code; every method is safe from any thread."""

    def __init__(self, ttl: float, empty_ttl: float) -> None:
        self.ttl, self.empty_ttl = ttl, empty_ttl
        self._lock = threading.Lock()
        self._copies: dict[str, Copy] = {}

    def _alive(self, copy: Copy, now: float) -> bool:
        return now - copy.touched <= room_ttl(copy.meta, self.ttl, self.empty_ttl)

    def get(self, code: str) -> Copy | None:
        """The copy, if its room may still be alive (a snapshot: safe to read outside)."""
        with self._lock:
            copy = self._copies.get(code)
            if copy is None or not self._alive(copy, time.time()):
                self._copies.pop(code, None)
                return None
            return Copy(dict(copy.meta), dict(copy.events), dict(copy.students),
                        dict(copy.counters), set(copy.claims), copy.touched, copy.known)

    def codes(self) -> list[str]:
        now = time.time()
        with self._lock:
            for code in [c for c, copy in self._copies.items() if not self._alive(copy, now)]:
                del self._copies[code]
            return list(self._copies)

    def ttl_of(self, code: str) -> float:
        with self._lock:
            copy = self._copies.get(code)
            return room_ttl(copy.meta if copy else {"used": True}, self.ttl, self.empty_ttl)

    def meta(self, code: str, meta: dict[str, Any], length: int = 0) -> None:
        """The room's record as read (with its log's ``length`` then)."""
        with self._lock:
            copy = self._copies.get(code)
            if copy is None:
                copy = self._copies[code] = Copy(dict(meta))
            copy.meta = dict(meta)
            copy.known = max(copy.known, length)

    def events(self, code: str, numbered: list[tuple[int, str]], touch: bool = False) -> None:
        with self._lock:
            copy = self._copies.get(code)
            if copy is not None:
                copy.events.update(numbered)
                copy.known = max([copy.known, *(seq for seq, _ in numbered)])
                if touch:
                    copy.touched = time.time()

    def student(self, code: str, student: str, record: str | None) -> None:
        """``record`` None: the student is forgotten."""
        with self._lock:
            copy = self._copies.get(code)
            if copy is None:
                return
            copy.touched = time.time()
            if record is None:
                copy.students.pop(student, None)
            else:
                copy.students[student] = record

    def students(self, code: str, records: dict[str, str]) -> None:
        """Every student's record as read."""
        with self._lock:
            if (copy := self._copies.get(code)) is not None:
                copy.students.update(records)

    def counter(self, code: str, name: str, value: int) -> None:
        with self._lock:
            if (copy := self._copies.get(code)) is not None:
                copy.counters[name] = value

    def claim(self, code: str, key: str, held: bool) -> None:
        with self._lock:
            if (copy := self._copies.get(code)) is not None:
                (copy.claims.add if held else copy.claims.discard)(key)

    def touch(self, code: str) -> None:
        with self._lock:
            if (copy := self._copies.get(code)) is not None:
                copy.touched = time.time()
