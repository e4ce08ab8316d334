"""The phrase cache's lower layers: the disk (``diskcache``) and Redis (``redis-py``).

**disk** (``directory``): survives restarts and is shared by every process on the machine that
points at the same directory. It is ``diskcache``, a maintained library on top of SQLite in WAL
mode: several writer processes are safe (SQLite's locking), it bounds its own size (1 GiB,
least-recently-stored entries go first, no write on a read), and it keeps large values in side
files instead of bloating the database. Writing the same on ``sqlite3`` directly would mean
re-doing that locking, busy-retry and eviction code ourselves.

**redis** (``redis_url``): shared by several processes or machines, via the ``redis`` (redis-py)
client. Keys are ``<namespace>:<key>``; an optional time-to-live comes from the ``ttl`` argument
or a ``?ttl=SECONDS`` query parameter on the URL (stripped before redis-py sees it), so
``--redis-url redis://host:6379/0?ttl=604800`` needs no extra flag.

Neither may break translation. Redis going away (refused, timed out, out of memory...) is logged
once as a warning, counted in ``errors``, and Redis is then skipped for ``retry_after`` seconds
before it is tried again; redis-py reconnects on its own once the server is back. Disk errors (a
full disk, a lock held too long) are logged (at most once a minute), counted and treated as misses.
A directory or URL that cannot be used is an :class:`~hunyuan_webui.errors.InputError` at
construction.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hunyuan_webui.errors import InputError
from hunyuan_webui.urls import redact_url

log = logging.getLogger(__name__)

T = TypeVar("T")

DISK_TIMEOUT_S = 10.0
"""SQLite busy timeout of the disk layer: past it a lookup is a miss, a write is skipped."""


class DiskLayer:
    """The persistent layer: a ``diskcache.Cache`` whose entries are tagged with the namespace."""

    def __init__(self, directory: str, namespace: str) -> None:
        import diskcache

        self._namespace = namespace
        self._prefix = f"{namespace}:"
        self._error_types = (sqlite3.Error, OSError, diskcache.Timeout)
        self.errors = 0
        self._last_warning = float("-inf")
        self._lock = threading.Lock()
        try:
            self._cache = diskcache.Cache(directory, timeout=DISK_TIMEOUT_S)
        except Exception as exc:  # any failure here is a configuration problem
            raise InputError(f"--cache-dir {directory!r} cannot be used as a cache: {exc}") from exc

    def _failed(self, what: str, exc: BaseException) -> None:
        with self._lock:
            self.errors += 1
            now = time.monotonic()
            warn = now - self._last_warning >= 60.0
            if warn:
                self._last_warning = now
        if warn:
            log.warning("Phrase cache: disk %s failed in %s (%s: %s); treated as a miss.",
                        what, self._cache.directory, type(exc).__name__, exc)

    def get(self, key: str) -> str | None:
        try:
            value = self._cache.get(self._prefix + key)
        except self._error_types as exc:
            self._failed("read", exc)
            return None
        return value if isinstance(value, str) else None

    def set(self, key: str, value: str) -> None:
        try:
            self._cache.set(self._prefix + key, value, tag=self._namespace)
        except self._error_types as exc:
            self._failed("write", exc)

    def clear(self) -> None:
        try:
            self._cache.evict(self._namespace)
        except self._error_types as exc:
            self._failed("clear", exc)

    def __len__(self) -> int:
        try:
            return len(self._cache)
        except self._error_types:
            return 0

    def close(self) -> None:
        self._cache.close()


def _split_ttl(url: str) -> tuple[str, float | None]:
    """Takes ``ttl=SECONDS`` out of the URL's query (redis-py would reject it)."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    ttl = None
    kept = []
    for name, value in query:
        if name == "ttl":
            try:
                ttl = float(value)
            except ValueError:
                raise InputError(f"--redis-url: ttl must be a number of seconds; got {value!r}.") \
                    from None
        else:
            kept.append((name, value))
    return urlunsplit(parts._replace(query=urlencode(kept))), ttl


def _glob_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


class RedisLayer:
    """The shared layer. Every call is guarded: an error marks Redis down for a while."""

    def __init__(self, url: str, namespace: str, *, ttl: float | None, timeout: float,
                 retry_after: float) -> None:
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry

        url, url_ttl = _split_ttl(url)
        ttl = url_ttl if ttl is None else ttl
        if ttl is not None and ttl <= 0:
            raise InputError(f"Redis ttl must be positive; got {ttl}.")
        self.url = redact_url(url)
        self._prefix = f"{namespace}:"
        self._pattern = _glob_escape(self._prefix) + "*"
        self._ttl_ms = None if ttl is None else max(1, round(ttl * 1000))
        self._retry_after = retry_after
        self._errors = (redis.RedisError, OSError, UnicodeError)
        self._lock = threading.Lock()
        self._down_until = float("-inf")
        self.up = True
        self.errors = 0
        try:
            # One immediate retry: a pooled connection left dead by a server restart is replaced
            # at once; redis-py's default (3 retries with backoff) would stall translations for
            # seconds whenever Redis is down.
            self.client = redis.Redis.from_url(
                url, decode_responses=True, socket_timeout=timeout,
                socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 1))
        except (ValueError, TypeError) as exc:
            raise InputError(f"--redis-url {self.url!r} is not a valid Redis URL: {exc}") from exc

    def _call(self, what: str, fn: Callable[[], T], default: T) -> T:
        if time.monotonic() < self._down_until:
            return default
        try:
            result = fn()
        except self._errors as exc:
            with self._lock:
                self.errors += 1
                first = self.up
                self.up = False
                self._down_until = time.monotonic() + self._retry_after
            if first:
                log.warning("Phrase cache: Redis at %s failed during %s (%s: %s); carrying on "
                            "without it and trying again every %gs.", self.url, what,
                            type(exc).__name__, exc, self._retry_after)
            return default
        if not self.up:
            with self._lock:
                back, self.up = not self.up, True
            if back:
                log.info("Phrase cache: Redis at %s is back.", self.url)
        return result

    def get(self, key: str) -> str | None:
        return self._call("get", lambda: self.client.get(self._prefix + key), None)

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        if not keys:
            return []
        names = [self._prefix + key for key in keys]
        return self._call("mget", lambda: self.client.mget(names), [None] * len(keys))

    def set(self, key: str, value: str) -> None:
        self._call("set", lambda: self.client.set(self._prefix + key, value, px=self._ttl_ms),
                   None)

    def clear(self) -> None:
        def delete_all() -> None:
            batch: list[str] = []
            for name in self.client.scan_iter(match=self._pattern, count=1000):
                batch.append(name)
                if len(batch) >= 1000:
                    self.client.unlink(*batch)
                    batch.clear()
            if batch:
                self.client.unlink(*batch)

        self._call("clear", delete_all, None)

    def close(self) -> None:
        self.client.close()
