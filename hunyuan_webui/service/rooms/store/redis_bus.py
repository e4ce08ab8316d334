"""Rooms in Redis, shared by every process that uses the same server, and carried through an
outage.

Keys, under ``hymt:class:``: ``{code}:meta`` (the room's record, JSON), ``{code}:log`` (a list of
JSON events: ``RPUSH`` answers the new length, which is the event's number, so two processes never
give one number twice), ``{code}:students`` (a hash), ``{code}:claims`` (a set),
``{code}:counters`` (a hash), ``rooms`` (a sorted set: each open room's code by when it expires),
and the rate counters and marks of :mod:`~hunyuan_webui.service.rooms.gate`. Every process hears
every new event on one publish/subscribe channel.

While Redis is away, every call raises
:class:`~hunyuan_webui.service.rooms.errors.StoreUnavailableError` (a 503 with words and
``Retry-After``), never a bare Redis error. When it comes back empty (restarted without
persistence), the room is written back from this process's copy
(:mod:`~hunyuan_webui.service.rooms.store.copies`) in one transaction that does nothing if another
process did it first: at the first call that reads the room, and for every room at once when the
channel reconnects. A log is only ever appended to while its room's record exists (a script checks
both at once), so a translation finished during the outage cannot start a new log at number 1.
With Redis's own persistence on (``appendonly yes``, see the README) the write-back is not needed.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hunyuan_webui.service.rooms.errors import RoomNotFoundError, StoreUnavailableError
from hunyuan_webui.service.rooms.store.bus import Event, Hub
from hunyuan_webui.service.rooms.store.copies import WAIT_FOR_COMPLETE_S, Copies

log = logging.getLogger(__name__)

PREFIX = "hymt:class:"
CHANNEL = PREFIX + "live"
ROOMS = PREFIX + "rooms"
PARTS = ("meta", "log", "students", "claims", "counters")
# Append to a room's log only while its record exists: -1 when it does not.
APPEND = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('RPUSH', KEYS[2], unpack(ARGV))
"""
F = TypeVar("F", bound=Callable[..., Any])


def reached(method: F) -> F:
    """Redis away (refused, timed out, loading): StoreUnavailableError, and the outage logged
    once."""
    @functools.wraps(method)
    def call(self: RedisBus, *args: Any, **kwargs: Any) -> Any:
        try:
            result = method(self, *args, **kwargs)
        except self.errors as exc:
            self.went_down(exc)
            raise StoreUnavailableError() from None
        self.came_back()
        return result

    return call  # type: ignore[return-value]


class RedisBus:
    """Rooms in Redis, shared by every process that uses the same server."""

    shared = True

    def __init__(self, url: str, ttl: float, empty_ttl: float | None = None) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        from hunyuan_webui.cache.layers import _split_ttl

        self.ttl = ttl
        self.empty_ttl = ttl if empty_ttl is None else empty_ttl
        self.hub = Hub()
        # One immediate retry: a pooled connection left dead by a restart is replaced at once;
        # more (redis-py's default backs off) would hold a teacher's send for seconds.
        self.client = redis.Redis.from_url(_split_ttl(url)[0], decode_responses=True,
                                           socket_timeout=5, socket_connect_timeout=2,
                                           retry=Retry(NoBackoff(), 1))
        self.errors = (redis.ConnectionError, redis.TimeoutError, redis.exceptions.ReadOnlyError,
                       OSError)
        self._watch_error = redis.WatchError
        self._append = self.client.register_script(APPEND)
        self.copies = Copies(ttl, self.empty_ttl)
        self.up = True
        self._thread: threading.Thread | None = None
        self._closed = threading.Event()
        self._subscribed = threading.Event()
        self._lock = threading.Lock()
        self._missing_since: dict[str, float] = {}  # rooms found gone with an incomplete copy

    def went_down(self, exc: BaseException) -> None:
        if self.up:
            self.up = False
            log.warning("class rooms: Redis cannot be reached (%s: %s); sends answer 503 until it "
                        "is back", type(exc).__name__, exc)

    def came_back(self) -> None:
        if not self.up:
            self.up = True
            log.warning("class rooms: Redis is back")

    def _key(self, code: str, part: str) -> str:
        return f"{PREFIX}{code}:{part}"

    def _refresh(self, code: str, pipe: Any = None) -> None:
        ttl = self.copies.ttl_of(code)
        own = pipe is None
        pipe = self.client.pipeline() if own else pipe
        for part in PARTS:
            pipe.expire(self._key(code, part), max(1, int(ttl)))
        pipe.zadd(ROOMS, {code: time.time() + ttl}, xx=True)
        if own:
            pipe.execute()
        self.copies.touch(code)

    # -- rooms ------------------------------------------------------------------------------------
    @reached
    def create(self, code: str, meta: dict[str, Any]) -> bool:
        if not self.client.set(self._key(code, "meta"), json.dumps(meta), nx=True,
                               ex=max(1, int(self.empty_ttl))):
            return False
        self.client.zadd(ROOMS, {code: time.time() + self.empty_ttl})
        self.copies.meta(code, meta)
        return True

    @reached
    def open_rooms(self) -> list[dict[str, Any]]:
        self.client.zremrangebyscore(ROOMS, 0, time.time())
        codes = self.client.zrange(ROOMS, 0, -1)
        metas = self.client.mget([self._key(c, "meta") for c in codes]) if codes else []
        found = [json.loads(raw) for raw in metas if raw]
        return [meta for meta in found if not meta.get("ended")]

    def room_count(self) -> int:
        return len(self.open_rooms())

    @reached
    def meta(self, code: str) -> dict[str, Any] | None:
        pipe = self.client.pipeline(transaction=False)
        pipe.get(self._key(code, "meta"))
        pipe.llen(self._key(code, "log"))
        raw, length = pipe.execute()
        if raw is None:
            return self._restore(code)
        meta = json.loads(raw)
        self.copies.meta(code, meta, int(length))
        self._missing_since.pop(code, None)
        return meta

    @reached
    def update(self, code: str, fields: dict[str, Any]) -> dict[str, Any] | None:
        key = self._key(code, "meta")
        for _ in range(5):  # another process changing the record meanwhile: read it again
            with self.client.pipeline() as pipe:
                try:
                    pipe.watch(key)
                    raw = pipe.get(key)
                    if raw is None:
                        return None
                    meta = {**json.loads(raw), **fields}
                    pipe.multi()
                    pipe.set(key, json.dumps(meta), keepttl=True)
                    if meta.get("ended"):
                        pipe.zrem(ROOMS, code)
                    pipe.execute()
                except self._watch_error:
                    continue
            self.copies.meta(code, meta)
            self._refresh(code)
            return meta
        raise StoreUnavailableError("The class is being changed by another request; try again.")

    @reached
    def touch(self, code: str) -> None:
        self._refresh(code)

    # -- the log ----------------------------------------------------------------------------------
    def append(self, code: str, event: Event) -> int:
        return self.append_many(code, [event])[0]

    @reached
    def append_many(self, code: str, events: list[Event]) -> list[int]:
        """Log ``events`` together (one command: all or none); their numbers."""
        raw = [json.dumps(e) for e in events]
        keys = [self._key(code, "meta"), self._key(code, "log")]
        last = int(self._append(keys=keys, args=raw))
        if last < 0 and self._restore(code) is not None:  # Redis lost it: written back first
            last = int(self._append(keys=keys, args=raw))
        if last < 0:
            raise RoomNotFoundError("This class has expired.")
        seqs = list(range(last - len(events) + 1, last + 1))
        self.copies.events(code, list(zip(seqs, raw, strict=True)), touch=True)
        pipe = self.client.pipeline()
        for seq, event in zip(seqs, events, strict=True):
            pipe.publish(CHANNEL, json.dumps({"code": code, "seq": seq, "event": event}))
        if seqs[0] == 1 or seqs[0] // 20 != last // 20:
            self._refresh(code, pipe)
        pipe.execute()
        return seqs

    def publish(self, code: str, event: Event) -> None:
        """A draft: lost quietly while Redis is away (the finished translation is logged)."""
        with contextlib.suppress(*self.errors):
            self.client.publish(CHANNEL, json.dumps({"code": code, "seq": None, "event": event}))

    @reached
    def since(self, code: str, after: int) -> list[tuple[int, Event]]:
        raw = self.client.lrange(self._key(code, "log"), after, -1)
        numbered = [(after + i + 1, item) for i, item in enumerate(raw)]
        self.copies.events(code, numbered)
        return [(seq, json.loads(item)) for seq, item in numbered]

    @reached
    def length(self, code: str) -> int:
        return int(self.client.llen(self._key(code, "log")))

    # -- claims, counters, students -----------------------------------------------------------
    @reached
    def claim(self, code: str, key: str) -> bool:
        added = bool(self.client.sadd(self._key(code, "claims"), key))
        if added:
            self.copies.claim(code, key, True)
        return added

    @reached
    def release(self, code: str, key: str) -> None:
        self.client.srem(self._key(code, "claims"), key)
        self.copies.claim(code, key, False)

    @reached
    def add(self, code: str, counter: str, by: int = 1) -> int:
        value = int(self.client.hincrby(self._key(code, "counters"), counter, by))
        self.copies.counter(code, counter, value)
        return value

    @reached
    def counters(self, code: str) -> dict[str, int]:
        return {k: int(v) for k, v in self.client.hgetall(self._key(code, "counters")).items()}

    @reached
    def see(self, code: str, student: str, info: dict[str, Any]) -> None:
        key = self._key(code, "students")
        old = self.client.hget(key, student)
        record = json.dumps({**(json.loads(old) if old else {}), **info})
        self.client.hset(key, student, record)
        self.copies.student(code, student, record)
        self._refresh(code)

    @reached
    def forget(self, code: str, students: list[str]) -> None:
        if students:
            self.client.hdel(self._key(code, "students"), *students)
        for student in students:
            self.copies.student(code, student, None)

    @reached
    def students(self, code: str) -> dict[str, dict[str, Any]]:
        raw = self.client.hgetall(self._key(code, "students"))
        self.copies.students(code, raw)
        return {k: json.loads(v) for k, v in raw.items()}

    # -- rates and marks (gate.py) --------------------------------------------------------------
    @reached
    def hits(self, key: str, window: float) -> int:
        name = f"{PREFIX}rate:{key}:{int(time.time() // window)}"
        pipe = self.client.pipeline()
        pipe.incr(name)
        pipe.expire(name, max(1, int(window) * 2))
        return int(pipe.execute()[0])

    @reached
    def mark(self, key: str, value: float, ttl: float) -> None:
        self.client.set(f"{PREFIX}mark:{key}", repr(value), ex=max(1, int(ttl + 0.999)))

    @reached
    def marked(self, key: str) -> float | None:
        raw = self.client.get(f"{PREFIX}mark:{key}")
        return None if raw is None else float(raw)

    # -- written back -----------------------------------------------------------------------------
    def _restore(self, code: str) -> dict[str, Any] | None:
        """The room written back from this process's copy, if Redis lost it; its record."""
        copy = self.copies.get(code)
        if copy is None:
            return None
        if not copy.complete:  # a process that saw all of it may do better: give it the time
            since = self._missing_since.setdefault(code, time.monotonic())
            if time.monotonic() - since < WAIT_FOR_COMPLETE_S:
                raise StoreUnavailableError("This class is being brought back after a restart "
                                            "of its store; try again in a few seconds.", 2.0)
        self._missing_since.pop(code, None)
        keys = {part: self._key(code, part) for part in PARTS}
        for _ in range(5):
            with self.client.pipeline() as pipe:
                try:
                    pipe.watch(keys["meta"], keys["log"])
                    if (raw := pipe.get(keys["meta"])) is not None:
                        pipe.unwatch()  # another process wrote it back first: add whom it lacks
                        self._merge_back(keys, copy)
                        return json.loads(raw)
                    events = copy.log()
                    replace_log = len(events) > int(pipe.llen(keys["log"]))
                    pipe.multi()
                    self._write_back(pipe, code, copy, keys, events if replace_log else [])
                    pipe.execute()
                except self._watch_error:
                    continue
            log.warning("class %s: Redis had lost it; written back from this process's copy "
                        "(%d events, %d students)", code, len(events), len(copy.students))
            return dict(copy.meta)
        return None

    def _merge_back(self, keys: dict[str, str], copy: Any) -> None:
        """What this process's copy knows that the copy written back lacked: the students it
        saw, the claims it holds and the higher of each counter (the process that wrote the
        room back may never have counted a send)."""
        for student, record in copy.students.items():
            self.client.hsetnx(keys["students"], student, record)
        if copy.claims:
            self.client.sadd(keys["claims"], *copy.claims)
        for counter, value in copy.counters.items():
            known = self.client.hget(keys["counters"], counter)
            if known is None or int(known) < int(value):
                self.client.hset(keys["counters"], counter, value)

    def _write_back(self, pipe: Any, code: str, copy: Any, keys: dict[str, str],
                    events: list[str]) -> None:
        ttl = max(1, int(self.copies.ttl_of(code)))
        pipe.set(keys["meta"], json.dumps(copy.meta), ex=ttl)
        if events:
            pipe.delete(keys["log"])
            pipe.rpush(keys["log"], *events)
        if copy.students:
            pipe.hset(keys["students"], mapping=copy.students)
        if copy.counters:
            pipe.hset(keys["counters"], mapping=copy.counters)
        if copy.claims:
            pipe.sadd(keys["claims"], *copy.claims)
        for key in keys.values():
            pipe.expire(key, ttl)
        if not copy.meta.get("ended"):
            pipe.zadd(ROOMS, {code: time.time() + ttl})

    def restore_all(self) -> None:
        """Every room this process has a copy of and Redis has not (after Redis came back)."""
        for code in self.copies.codes():
            with contextlib.suppress(StoreUnavailableError, *self.errors):
                if not self.client.exists(self._key(code, "meta")):
                    self._restore(code)

    # -- the channel ------------------------------------------------------------------------------
    def listen(self) -> None:
        """Start reading the channel (once per process), handing events to the hub."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._read, name="hymt-class-bus",
                                                daemon=True)
                self._thread.start()
        self._subscribed.wait(5)

    def _read(self) -> None:
        failed = False
        while not self._closed.is_set():
            pubsub = self.client.pubsub(ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(CHANNEL)
                self._subscribed.set()
                if failed:  # Redis is back: maybe empty
                    self.restore_all()
                    failed = False
                while not self._closed.is_set():
                    message = pubsub.get_message(timeout=1.0)
                    if message and message.get("type") == "message":
                        self._heard(json.loads(message["data"]))
            except Exception as exc:  # Redis away: listeners read the log when it is back
                if not failed:
                    log.warning("class rooms: the Redis channel failed (%s); retrying", exc)
                failed = True
                self._closed.wait(1.0)
            finally:
                with contextlib.suppress(Exception):
                    pubsub.close()

    def _heard(self, data: dict[str, Any]) -> None:
        if data["seq"] is not None:
            self.copies.events(data["code"], [(data["seq"], json.dumps(data["event"]))])
        self.hub.deliver(data["code"], data["seq"], data["event"])

    def close(self) -> None:
        self._closed.set()
