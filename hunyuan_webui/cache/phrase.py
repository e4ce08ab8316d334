"""The phrase cache itself: memory, then disk, then Redis, behind one lookup, and its counters.

The **memory** layer is an LRU of ``size`` entries in this process (``cachetools.LRUCache`` behind
one lock). ``cachetools`` is small, maintained and gives an O(1) LRU with an explicit ``maxsize``;
``functools.lru_cache`` caches a function, not values we put in after the fact. The disk and
Redis layers are in :mod:`.layers`.

Layers are read nearest first and written all at once; a hit in a lower layer fills the layers
above it. ``hits``/``misses`` are counted per lookup by :class:`PhraseCache` (a hit in any layer is
one hit).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from hunyuan_webui.cache.layers import DiskLayer, RedisLayer
from hunyuan_webui.errors import InputError


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
        self._disk = DiskLayer(directory, namespace) if directory else None
        self._redis = None
        if redis_url:
            self._redis = RedisLayer(redis_url, namespace, ttl=ttl, timeout=redis_timeout,
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
        value = _answer(self._recall(key))
        if value is None and self._disk is not None:
            value = _answer(self._disk.get(key))
            if value is not None:
                self._remember(key, value)
        if value is None and self._redis is not None:
            value = _answer(self._redis.get(key))
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
        values: list[str | None] = [_answer(self._recall(key)) for key in keys]
        if self._disk is not None:
            for i, key in enumerate(keys):
                if values[i] is None:
                    values[i] = found = _answer(self._disk.get(key))
                    if found is not None:
                        self._remember(key, found)
        if self._redis is not None:
            missing = [i for i, value in enumerate(values) if value is None]
            if missing:
                fetched = self._redis.get_many([keys[i] for i in missing])
                for i, found in zip(missing, fetched, strict=True):
                    found = _answer(found)
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
        if not self.enabled or _answer(value) is None:
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


def _answer(value: str | None) -> str | None:
    """A stored translation, or None: an empty answer (a model that gave none, as the demo does
    for a pair it does not know) is never kept nor served, so it is asked for afresh next time
    instead of coming back labelled "From the phrase cache"."""
    return value if value is None or value.strip() else None
