"""Where a class's rooms live: one process's memory, or the Redis the phrase cache shares.

A room is a small record (its code, the teacher's language, a hash of the teacher's secret), a
log of events numbered 1, 2, 3... in the order they were written (a sentence, a translation of
it, a question), the students it has seen, and a few counters. :class:`MemoryBus` keeps all of
that in this process; :class:`RedisBus` keeps it in Redis (a list per room's log: ``RPUSH``
answers the new length, which is the event's number, so two processes never give one number
twice) and tells every process of each new event on one publish/subscribe channel. Either way
:class:`Hub` hands an event to this process's listeners (the students' event streams), which
read any gap from the log: a listener sees every logged event once and in order, whichever
process wrote it. Events that are not logged (a translation still being written) are published
only: a listener that misses one gets the finished translation from the log.

Everything here expires: a room nobody has touched for ``ttl`` seconds is gone (Redis expires
its keys; memory sweeps them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

Event = dict[str, Any]
PREFIX = "hymt:class:"
CHANNEL = PREFIX + "live"


class Listener:
    """One event stream's queue, fed from any thread, read in its event loop."""

    def __init__(self, code: str, loop: asyncio.AbstractEventLoop) -> None:
        self.code = code
        self.loop = loop
        self.queue: asyncio.Queue[tuple[int | None, Event]] = asyncio.Queue()

    def put(self, seq: int | None, event: Event) -> None:
        if seq is None and self.queue.qsize() > 200:
            return  # a slow reader loses drafts, never logged events
        with contextlib.suppress(RuntimeError):  # its loop is closed: nobody reads any more
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (seq, event))


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
        with self._lock:
            listeners = list(self._listeners.get(code, ()))
        for listener in listeners:
            listener.put(seq, event)

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
    """Rooms in this process only (no Redis configured)."""

    shared = False

    def __init__(self, ttl: float) -> None:
        self.ttl = ttl
        self.hub = Hub()
        self._lock = threading.Lock()
        self._rooms: dict[str, _Room] = {}
        self._rates: dict[str, deque[float]] = {}

    def _sweep(self) -> None:
        now = time.time()
        for code in [c for c, r in self._rooms.items() if now - r.touched > self.ttl]:
            if not self.hub.count(code):
                del self._rooms[code]

    def create(self, code: str, meta: dict[str, Any]) -> bool:
        with self._lock:
            self._sweep()
            if code in self._rooms:
                return False
            self._rooms[code] = _Room(dict(meta))
            return True

    def room_count(self) -> int:
        with self._lock:
            self._sweep()
            return len(self._rooms)

    def meta(self, code: str) -> dict[str, Any] | None:
        with self._lock:
            room = self._rooms.get(code)
            if room is None or time.time() - room.touched > self.ttl and not self.hub.count(code):
                return None
            return dict(room.meta)

    def touch(self, code: str) -> None:
        with self._lock:
            if code in self._rooms:
                self._rooms[code].touched = time.time()

    def append(self, code: str, event: Event) -> int:
        with self._lock:
            room = self._rooms[code]
            room.events.append(event)
            room.touched = time.time()
            seq = len(room.events)
        self.hub.deliver(code, seq, event)
        return seq

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
            room = self._rooms[code]
            if key in room.claims:
                return False
            room.claims.add(key)
            return True

    def release(self, code: str, key: str) -> None:
        with self._lock:
            if code in self._rooms:
                self._rooms[code].claims.discard(key)

    def add(self, code: str, counter: str, by: int = 1) -> int:
        with self._lock:
            counters = self._rooms[code].counters
            counters[counter] = counters.get(counter, 0) + by
            return counters[counter]

    def counters(self, code: str) -> dict[str, int]:
        with self._lock:
            room = self._rooms.get(code)
            return dict(room.counters) if room else {}

    def see(self, code: str, student: str, info: dict[str, Any]) -> None:
        with self._lock:
            room = self._rooms[code]
            room.students[student] = {**room.students.get(student, {}), **info, "seen": time.time()}
            room.touched = time.time()

    def students(self, code: str) -> dict[str, dict[str, Any]]:
        with self._lock:
            room = self._rooms.get(code)
            return {k: dict(v) for k, v in room.students.items()} if room else {}

    def hits(self, key: str, window: float) -> int:
        """Count one more hit on ``key``; how many in the last ``window`` seconds."""
        now = time.time()
        with self._lock:
            recent = self._rates.setdefault(key, deque())
            while recent and now - recent[0] > window:
                recent.popleft()
            recent.append(now)
            return len(recent)

    def listen(self) -> None:
        pass  # the hub hears every append directly

    def close(self) -> None:
        pass


class RedisBus:
    """Rooms in Redis, shared by every process that uses the same server."""

    shared = True

    def __init__(self, url: str, ttl: float) -> None:
        import redis

        from hunyuan_webui.cache.layers import _split_ttl

        self.ttl = ttl
        self.hub = Hub()
        self.client = redis.Redis.from_url(_split_ttl(url)[0], decode_responses=True,
                                           socket_timeout=5, socket_connect_timeout=3)
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._subscribed = threading.Event()
        self._lock = threading.Lock()

    def _key(self, code: str, part: str) -> str:
        return f"{PREFIX}{code}:{part}"

    def _keys(self, code: str) -> list[str]:
        return [self._key(code, p) for p in ("meta", "log", "students", "claims", "counters")]

    def _refresh(self, code: str) -> None:
        seconds = max(1, int(self.ttl))
        pipe = self.client.pipeline()
        for key in self._keys(code):
            pipe.expire(key, seconds)
        pipe.zadd(PREFIX + "rooms", {code: time.time()})
        pipe.execute()

    def create(self, code: str, meta: dict[str, Any]) -> bool:
        if not self.client.set(self._key(code, "meta"), json.dumps(meta), nx=True,
                               ex=max(1, int(self.ttl))):
            return False
        self.client.zadd(PREFIX + "rooms", {code: time.time()})
        return True

    def room_count(self) -> int:
        self.client.zremrangebyscore(PREFIX + "rooms", 0, time.time() - self.ttl)
        return int(self.client.zcard(PREFIX + "rooms"))

    def meta(self, code: str) -> dict[str, Any] | None:
        raw = self.client.get(self._key(code, "meta"))
        return json.loads(raw) if raw else None

    def touch(self, code: str) -> None:
        self._refresh(code)

    def append(self, code: str, event: Event) -> int:
        seq = int(self.client.rpush(self._key(code, "log"), json.dumps(event)))
        self.client.publish(CHANNEL, json.dumps({"code": code, "seq": seq, "event": event}))
        if seq == 1 or seq % 20 == 0:
            self._refresh(code)
        return seq

    def publish(self, code: str, event: Event) -> None:
        self.client.publish(CHANNEL, json.dumps({"code": code, "seq": None, "event": event}))

    def since(self, code: str, after: int) -> list[tuple[int, Event]]:
        raw = self.client.lrange(self._key(code, "log"), after, -1)
        return [(after + i + 1, json.loads(item)) for i, item in enumerate(raw)]

    def length(self, code: str) -> int:
        return int(self.client.llen(self._key(code, "log")))

    def claim(self, code: str, key: str) -> bool:
        added = self.client.sadd(self._key(code, "claims"), key)
        return bool(added)

    def release(self, code: str, key: str) -> None:
        self.client.srem(self._key(code, "claims"), key)

    def add(self, code: str, counter: str, by: int = 1) -> int:
        return int(self.client.hincrby(self._key(code, "counters"), counter, by))

    def counters(self, code: str) -> dict[str, int]:
        return {k: int(v) for k, v in self.client.hgetall(self._key(code, "counters")).items()}

    def see(self, code: str, student: str, info: dict[str, Any]) -> None:
        key = self._key(code, "students")
        old = self.client.hget(key, student)
        merged = {**(json.loads(old) if old else {}), **info, "seen": time.time()}
        self.client.hset(key, student, json.dumps(merged))
        self._refresh(code)

    def students(self, code: str) -> dict[str, dict[str, Any]]:
        raw = self.client.hgetall(self._key(code, "students"))
        return {k: json.loads(v) for k, v in raw.items()}

    def hits(self, key: str, window: float) -> int:
        name = f"{PREFIX}rate:{key}:{int(time.time() // window)}"
        pipe = self.client.pipeline()
        pipe.incr(name)
        pipe.expire(name, max(1, int(window) * 2))
        return int(pipe.execute()[0])

    def listen(self) -> None:
        """Start reading the channel (once per process), handing events to the hub."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._read, name="hymt-class-bus",
                                                daemon=True)
                self._thread.start()
        self._subscribed.wait(5)

    def _read(self) -> None:
        while not self._closed.is_set():
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(CHANNEL)
                self._subscribed.set()
                while not self._closed.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message and message.get("type") == "message":
                        data = json.loads(message["data"])
                        self.hub.deliver(data["code"], data["seq"], data["event"])
            except Exception as exc:  # Redis away: listeners read the log when it is back
                log.warning("class rooms: the Redis channel failed (%s); retrying", exc)
                self._closed.wait(1.0)
            finally:
                with contextlib.suppress(Exception):
                    pubsub.close()

    def close(self) -> None:
        self._closed.set()
