"""The phrase cache: translations already made, looked up before the model is asked again.

Up to three layers, read nearest first and written all at once:

1. **memory**: an LRU of ``size`` entries in this process (``cachetools.LRUCache`` behind one
   lock). ``cachetools`` is small, maintained and gives an O(1) LRU with an explicit ``maxsize``;
   ``functools.lru_cache`` caches a function, not values we put in after the fact.
2. **disk** (``directory``): survives restarts and is shared by every process on the machine that
   points at the same directory. It is ``diskcache``, a maintained library on top of SQLite in WAL
   mode: several writer processes are safe (SQLite's locking), it bounds its own size (1 GiB,
   least-recently-stored entries go first, no write on a read), and it keeps large values in
   side files instead of bloating the database. Writing the same on ``sqlite3`` directly would
   mean re-doing that locking, busy-retry and eviction code ourselves.
3. **redis** (``redis_url``): shared by several processes or machines, via the ``redis``
   (redis-py) client. Keys are ``<namespace>:<key>``; an optional time-to-live comes from the
   ``ttl`` argument or a ``?ttl=SECONDS`` query parameter on the URL (stripped before redis-py
   sees it), so ``--redis-url redis://host:6379/0?ttl=604800`` needs no extra flag.

A hit in a lower layer fills the layers above it. ``hits``/``misses`` are counted per lookup by
:class:`PhraseCache` (a hit in any layer is one hit).

A cache must never break translation. Redis going away (refused, timed out, out of memory...) is
logged once as a warning, counted in ``errors``, and Redis is then skipped for ``redis_retry_after``
seconds before it is tried again; redis-py reconnects on its own once the server is back. Disk
errors (a full disk, a lock held too long) are logged (at most once a minute), counted and treated
as misses. Configuration mistakes (a negative size, a malformed URL, a directory that cannot be
created) are :class:`~hunyuan_webui.errors.InputError` at construction, so they surface at startup.

Identical segments in flight share one engine sequence in the service
(:meth:`hunyuan_webui.service.Translator.share_or_submit`), not here.

:func:`cache_key` is a SHA-256 of a canonical JSON of everything that determines the output,
with a schema version inside, so it is stable across processes, machines and Python versions.
Bump ``KEY_SCHEMA`` whenever the meaning of a cached value changes (e.g. prompts are reworded).
"""

from __future__ import annotations

import enum
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import PurePath
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from hunyuan_webui.errors import InputError

log = logging.getLogger(__name__)

T = TypeVar("T")

KEY_SCHEMA = 1
"""Part of every key: bump it to invalidate every entry written by an older release."""

DISK_TIMEOUT_S = 10.0
"""SQLite busy timeout of the disk layer: past it a lookup is a miss, a write is skipped."""


# --------------------------------------------------------------------------------------------
# keys


def _canonical(value: Any) -> Any:
    """``json.dumps`` fallback for option values that are not plain JSON."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=lambda item: json.dumps(item, sort_keys=True, default=_canonical))
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"cache_key: option value {value!r} of type {type(value).__name__} has no "
                    "stable form; pass str, number, bool, None, list, tuple, set or dict.")


def cache_key(*, model: str, source_lang: str, target_lang: str, mode: str,
              options: Mapping[str, Any], text: str) -> str:
    """The key of one translation: 64 hex digits, the same in every process and on every machine.

    Everything that changes the output must be passed in: the model (id or path), both languages,
    the mode and every generation or prompt option (temperature, glossary, context...). The text
    is used exactly as given (no stripping, no Unicode normalization). Mapping order is irrelevant;
    list order is not. Values that have no stable JSON form raise :class:`TypeError`.
    """
    payload = {
        "schema": KEY_SCHEMA,
        "model": model,
        "source_lang": source_lang,
        "target_lang": target_lang,
        "mode": mode,
        "options": dict(options),
        "text": text,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=_canonical)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------------------------
# stats


@dataclass
class CacheStats:
    hits: int
    misses: int
    size: int
    """Entries held in this process's memory layer (the disk layer's count when there is none)."""
    backend: str
    """The layers in use, nearest first: ``memory+disk+redis``; ``off`` when disabled."""
    errors: int = 0
    """Failed disk or Redis operations since start (each one was treated as a miss or skipped)."""
    redis_up: bool | None = None
    """None without Redis; False while Redis is being skipped after an error."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# --------------------------------------------------------------------------------------------
# layers


class _Disk:
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


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


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


class _Redis:
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
        self.url = _redact(url)
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


# --------------------------------------------------------------------------------------------
# the cache


class PhraseCache:
    """Memory -> disk -> Redis, each optional. Thread-safe; share one per process.

    ``size`` is the number of entries kept in memory (0: none). ``directory`` turns on the
    persistent layer, ``redis_url`` the shared one. ``ttl`` (seconds) applies to Redis entries;
    ``redis_timeout`` bounds each Redis call and ``redis_retry_after`` is how long Redis is left
    alone after a failure.
    """

    def __init__(self, *, size: int = 4096, directory: str | None = None,
                 redis_url: str | None = None, namespace: str = "hymt",
                 ttl: float | None = None, redis_timeout: float = 1.0,
                 redis_retry_after: float = 10.0) -> None:
        if size < 0:
            raise InputError(f"--cache-size must be 0 or more; got {size}.")
        if not namespace:
            raise InputError("The cache namespace must not be empty.")
        self._lock = threading.Lock()
        self._memory: Any = None
        if size > 0:
            from cachetools import LRUCache

            self._memory = LRUCache(maxsize=size)
        self._disk = _Disk(directory, namespace) if directory else None
        self._redis = None
        if redis_url:
            self._redis = _Redis(redis_url, namespace, ttl=ttl, timeout=redis_timeout,
                                 retry_after=redis_retry_after)
        self._hits = 0
        self._misses = 0

    @property
    def enabled(self) -> bool:
        return self._memory is not None or self._disk is not None or self._redis is not None

    # memory helpers ------------------------------------------------------------------------

    def _remember(self, key: str, value: str) -> None:
        if self._memory is not None:
            with self._lock:
                self._memory[key] = value

    def _recall(self, key: str) -> str | None:
        if self._memory is None:
            return None
        with self._lock:
            return self._memory.get(key)

    def _count(self, hits: int, misses: int) -> None:
        with self._lock:
            self._hits += hits
            self._misses += misses

    # public --------------------------------------------------------------------------------

    def get(self, key: str) -> str | None:
        if not self.enabled:
            return None
        value = self._recall(key)
        if value is None and self._disk is not None:
            value = self._disk.get(key)
            if value is not None:
                self._remember(key, value)
        if value is None and self._redis is not None:
            value = self._redis.get(key)
            if value is not None:
                self._remember(key, value)
                if self._disk is not None:
                    self._disk.set(key, value)
        self._count(value is not None, value is None)
        return value

    def get_many(self, keys: Sequence[str]) -> list[str | None]:
        """Like ``[get(k) for k in keys]``, with a single Redis round trip for what is left."""
        if not self.enabled:
            return [None] * len(keys)
        values: list[str | None] = [self._recall(key) for key in keys]
        if self._disk is not None:
            for i, key in enumerate(keys):
                if values[i] is None:
                    values[i] = found = self._disk.get(key)
                    if found is not None:
                        self._remember(key, found)
        if self._redis is not None:
            missing = [i for i, value in enumerate(values) if value is None]
            if missing:
                fetched = self._redis.get_many([keys[i] for i in missing])
                for i, found in zip(missing, fetched, strict=True):
                    if found is not None:
                        values[i] = found
                        self._remember(keys[i], found)
                        if self._disk is not None:
                            self._disk.set(keys[i], found)
        found_count = sum(value is not None for value in values)
        self._count(found_count, len(values) - found_count)
        return values

    def set(self, key: str, value: str) -> None:
        if not isinstance(value, str):
            raise TypeError(f"PhraseCache values are str; got {type(value).__name__}.")
        if not self.enabled:
            return
        self._remember(key, value)
        if self._disk is not None:
            self._disk.set(key, value)
        if self._redis is not None:
            self._redis.set(key, value)

    def clear(self) -> None:
        """Empties every layer (only this namespace's entries on disk and in Redis) and the
        counters."""
        with self._lock:
            if self._memory is not None:
                self._memory.clear()
            self._hits = self._misses = 0
        if self._disk is not None:
            self._disk.clear()
        if self._redis is not None:
            self._redis.clear()

    def stats(self) -> CacheStats:
        layers = [name for name, layer in (("memory", self._memory), ("disk", self._disk),
                                           ("redis", self._redis)) if layer is not None]
        with self._lock:
            hits, misses = self._hits, self._misses
            size = len(self._memory) if self._memory is not None else None
        if size is None:
            size = len(self._disk) if self._disk is not None else 0
        errors = (self._disk.errors if self._disk else 0) + \
                 (self._redis.errors if self._redis else 0)
        return CacheStats(hits=hits, misses=misses, size=size,
                          backend="+".join(layers) or "off", errors=errors,
                          redis_up=self._redis.up if self._redis else None)

    def close(self) -> None:
        if self._disk is not None:
            self._disk.close()
        if self._redis is not None:
            self._redis.close()

    def __enter__(self) -> PhraseCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# single flight
