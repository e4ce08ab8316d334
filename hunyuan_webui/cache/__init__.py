"""The phrase cache: translations already made, looked up before the model is asked again.

Up to three layers, read nearest first and written all at once:

1. **memory**: an LRU of ``size`` entries in this process (:mod:`.phrase`, with
   :class:`PhraseCache` itself and its :class:`CacheStats`).
2. **disk** (``directory``): survives restarts, shared by the processes of one machine
   (:mod:`.layers`, on ``diskcache``).
3. **redis** (``redis_url``): shared by several processes or machines (:mod:`.layers`, on
   redis-py).

A cache must never break translation: a failing disk or Redis is logged, counted in ``errors``
and treated as a miss (Redis is then left alone for a while). Configuration mistakes (a negative
size, a malformed URL, a directory that cannot be created) are
:class:`~hunyuan_webui.errors.InputError` at construction, so they surface at startup.

Identical segments in flight share one engine sequence in the service
(:meth:`hunyuan_webui.service.Translator.share_or_submit`), not here.

Keys come from :func:`cache_key` (:mod:`.keys`): a hash of everything that determines the output.
"""

from hunyuan_webui.cache.keys import KEY_SCHEMA, cache_key
from hunyuan_webui.cache.layers import DISK_TIMEOUT_S
from hunyuan_webui.cache.phrase import CacheStats, PhraseCache

__all__ = ["DISK_TIMEOUT_S", "KEY_SCHEMA", "CacheStats", "PhraseCache", "cache_key"]
