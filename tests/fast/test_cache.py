"""The phrase cache: keys, the memory LRU, the disk layer across restarts and processes, Redis
shared by processes and Redis dying mid-run."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from redis_server import RedisServer, redis_server, requires_redis_server

from hunyuan_webui.cache import CacheStats, PhraseCache, cache_key
from hunyuan_webui.errors import InputError

ROOT = Path(__file__).resolve().parents[2]

BASE = dict(model="tencent/Hunyuan-MT-7B", source_lang="en", target_lang="zh",
            mode="translate", options={"temperature": 0.0, "top_p": 0.6}, text="Hello, world!")


def run_python(code: str, *args: str, timeout: float = 120) -> str:
    """Runs ``code`` in a fresh interpreter (this venv's) and returns its stdout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr
    return done.stdout


def spawn_python(code: str, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *args], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# --------------------------------------------------------------------------------------------
# cache_key


def test_cache_key_is_hex_sha256_and_golden() -> None:
    key = cache_key(**BASE)
    assert len(key) == 64 and int(key, 16) >= 0
    # If this changes, entries written by older releases silently stop matching: bump KEY_SCHEMA
    # on purpose and update the value here.
    assert key == "4b3c93ec50b41b7f472aa215d47be9a11910a60edd451129d63458241f213294"


def test_cache_key_same_in_another_process() -> None:
    code = """
        import json, sys
        from hunyuan_webui.cache import cache_key
        print(cache_key(**json.loads(sys.argv[1])))
    """
    assert run_python(code, json.dumps(BASE)).strip() == cache_key(**BASE)


def test_cache_key_ignores_mapping_order() -> None:
    a = cache_key(**{**BASE, "options": {"a": 1, "b": {"x": 1, "y": [1, 2]}, "c": None}})
    b = cache_key(**{**BASE, "options": {"c": None, "b": {"y": [1, 2], "x": 1}, "a": 1}})
    assert a == b


@pytest.mark.parametrize("change", [
    {"model": "tencent/Hunyuan-MT-Chimera-7B"},
    {"source_lang": "fr"},
    {"target_lang": "ja"},
    {"mode": "terminology"},
    {"options": {"temperature": 0.7, "top_p": 0.6}},
    {"options": {"temperature": 0.0}},
    {"options": {"temperature": 0.0, "top_p": 0.6, "glossary": {"cat": "猫"}}},
    {"text": "Hello, world! "},
    {"text": "Hello, World!"},
    {"text": ""},
])
def test_cache_key_changes_with_every_field(change: dict) -> None:
    assert cache_key(**{**BASE, **change}) != cache_key(**BASE)


def test_cache_key_fields_do_not_run_into_each_other() -> None:
    one = cache_key(**{**BASE, "source_lang": "en", "target_lang": "zh-Hant"})
    two = cache_key(**{**BASE, "source_lang": "en-zh", "target_lang": "Hant"})
    assert one != two
    assert cache_key(**{**BASE, "options": {"x": [1, 2]}}) != \
        cache_key(**{**BASE, "options": {"x": [2, 1]}})


def test_cache_key_sets_are_order_free_and_odd_values_refused() -> None:
    assert cache_key(**{**BASE, "options": {"s": {"b", "a", "c"}}}) == \
        cache_key(**{**BASE, "options": {"s": frozenset("cab")}})
    with pytest.raises(TypeError, match="stable form"):
        cache_key(**{**BASE, "options": {"obj": object()}})
    with pytest.raises(TypeError):
        cache_key("m", "en", "zh", "translate", {}, "text")  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# memory layer, stats, clear


def test_lru_evicts_least_recently_used_at_size() -> None:
    cache = PhraseCache(size=2)
    cache.set("a", "A")
    cache.set("b", "B")
    assert cache.get("a") == "A"  # a is now the most recent
    cache.set("c", "C")
    assert cache.get("b") is None
    assert cache.get("a") == "A" and cache.get("c") == "C"
    assert cache.stats().size == 2


def test_stats_and_clear() -> None:
    cache = PhraseCache(size=10)
    assert cache.enabled
    assert cache.stats() == CacheStats(hits=0, misses=0, size=0, backend="memory")
    cache.set("k", "v")
    assert cache.get("k") == "v"
    assert cache.get("nope") is None
    assert cache.get_many(["k", "nope", "k"]) == ["v", None, "v"]
    stats = cache.stats()
    assert (stats.hits, stats.misses, stats.size) == (3, 2, 1)
    assert stats.to_dict() == {"hits": 3, "misses": 2, "size": 1, "backend": "memory",
                               "errors": 0, "redis_up": None}
    cache.clear()
    assert cache.get("k") is None
    assert cache.stats() == CacheStats(hits=0, misses=1, size=0, backend="memory")


def test_disabled_cache_is_a_no_op() -> None:
    cache = PhraseCache(size=0)
    assert not cache.enabled
    cache.set("k", "v")
    assert cache.get("k") is None
    assert cache.get_many(["k", "j"]) == [None, None]
    assert cache.stats().backend == "off"
    cache.clear()
    cache.close()


def test_bad_configuration_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        PhraseCache(size=-1)
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(InputError, match="cache-dir"):
        PhraseCache(directory=str(blocker / "sub"))
    with pytest.raises(InputError, match="redis-url"):
        PhraseCache(redis_url="http://example.invalid/")
    with pytest.raises(TypeError):
        PhraseCache().set("k", 3)  # type: ignore[arg-type]


def test_memory_is_thread_safe() -> None:
    cache = PhraseCache(size=64)
    errors: list[BaseException] = []

    def hammer(n: int) -> None:
        try:
            for i in range(2000):
                cache.set(f"{n}-{i % 100}", str(i))
                cache.get(f"{(n + 1) % 4}-{i % 100}")
        except BaseException as exc:  # pragma: no cover - the failure being tested for
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    stats = cache.stats()
    assert stats.size == 64 and stats.hits + stats.misses == 8000


# --------------------------------------------------------------------------------------------
# disk layer


def test_disk_survives_a_restart(tmp_path: Path) -> None:
    big = "长文本 — ünïcödé ✓ " * 50_000  # ~1 MB of text: kept in a side file by diskcache
    with PhraseCache(size=8, directory=str(tmp_path)) as first:
        first.set("small", "petit")
        first.set("big", big)
        assert first.stats().backend == "memory+disk"
    with PhraseCache(size=8, directory=str(tmp_path)) as second:
        assert second.stats().size == 0
        assert second.get("small") == "petit"
        assert second.get("big") == big
        assert second.stats().size == 2  # the disk hits filled the memory layer
        assert second.get_many(["small", "missing"]) == ["petit", None]
    with PhraseCache(size=0, directory=str(tmp_path)) as disk_only:
        assert disk_only.enabled and disk_only.get("small") == "petit"
        assert disk_only.stats().size == 2


def test_disk_namespaces_are_separate_and_clear_only_its_own(tmp_path: Path) -> None:
    with PhraseCache(directory=str(tmp_path), namespace="a") as a, \
            PhraseCache(directory=str(tmp_path), namespace="b") as b:
        a.set("k", "from a")
        b.set("k", "from b")
        a.clear()
    with PhraseCache(directory=str(tmp_path), namespace="a") as a, \
            PhraseCache(directory=str(tmp_path), namespace="b") as b:
        assert a.get("k") is None
        assert b.get("k") == "from b"


WRITER = """
    import os, sys, time
    from hunyuan_webui.cache import PhraseCache
    directory, worker, go = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with PhraseCache(size=16, directory=directory) as cache:
        deadline = time.monotonic() + 60
        while not os.path.exists(go) and time.monotonic() < deadline:  # start together
            time.sleep(0.01)
        for i in range(300):
            cache.set(f"own-{worker}-{i}", f"value {worker} {i} " + "x" * (i * 37))
            cache.set(f"shared-{i % 20}", f"shared {i % 20}")  # every writer, same keys
            cache.get(f"own-{(worker + 1) % 4}-{i}")
    print("ok")
"""


def test_disk_with_several_writer_processes(tmp_path: Path) -> None:
    cache_dir, go = tmp_path / "cache", tmp_path / "go"
    workers = [spawn_python(WRITER, str(cache_dir), str(n), str(go)) for n in range(4)]
    time.sleep(0.5)
    go.touch()
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        assert out.strip() == "ok"
    with PhraseCache(size=0, directory=str(cache_dir)) as cache:
        for worker in range(4):
            for i in range(300):
                assert cache.get(f"own-{worker}-{i}") == f"value {worker} {i} " + "x" * (i * 37)
        assert cache.get_many([f"shared-{i}" for i in range(20)]) == \
            [f"shared {i}" for i in range(20)]
        assert cache.stats().errors == 0


# --------------------------------------------------------------------------------------------
# Redis


def _redis_client(url: str):
    import redis

    return redis.Redis.from_url(url, decode_responses=True)


@requires_redis_server
@pytest.mark.redis
def test_redis_is_shared_between_processes() -> None:
    with redis_server() as url:
        writer = """
            import sys
            from hunyuan_webui.cache import PhraseCache
            with PhraseCache(redis_url=sys.argv[1]) as cache:
                cache.set("from-child", "bonjour " * 10_000)
                print(cache.get("from-parent"))
        """
        with PhraseCache(size=4, redis_url=url) as parent:
            parent.set("from-parent", "hallo")
            assert run_python(writer, url).strip() == "hallo"
            assert parent.get("from-child") == "bonjour " * 10_000
            assert parent.stats().backend == "memory+redis"
        client = _redis_client(url)
        assert sorted(client.keys("*")) == ["hymt:from-child", "hymt:from-parent"]
        assert client.ttl("hymt:from-parent") == -1  # no expiry unless asked for
        client.close()


@requires_redis_server
@pytest.mark.redis
def test_redis_hit_fills_memory_and_disk(tmp_path: Path) -> None:
    with redis_server() as url:
        with PhraseCache(size=0, redis_url=url) as other:
            other.set("k", "v")
        with PhraseCache(size=4, directory=str(tmp_path), redis_url=url) as cache:
            assert cache.stats().backend == "memory+disk+redis"
            assert cache.get("k") == "v"
            assert cache.stats().size == 1
        with PhraseCache(size=0, directory=str(tmp_path)) as disk_only:
            assert disk_only.get("k") == "v"


@requires_redis_server
@pytest.mark.redis
def test_redis_get_many_is_one_round_trip() -> None:
    with redis_server() as url, PhraseCache(size=0, redis_url=url) as cache:
        for i in range(0, 10, 2):
            cache.set(f"k{i}", f"v{i}")
        client = _redis_client(url)
        client.config_resetstat()
        values = cache.get_many([f"k{i}" for i in range(10)])
        assert values == [f"v{i}" if i % 2 == 0 else None for i in range(10)]
        stats = client.info("commandstats")
        client.close()
        assert stats["cmdstat_mget"]["calls"] == 1
        assert "cmdstat_get" not in stats
        assert (cache.stats().hits, cache.stats().misses) == (5, 5)


@requires_redis_server
@pytest.mark.redis
def test_redis_ttl_namespace_and_clear() -> None:
    with (redis_server() as url,
          PhraseCache(redis_url=url, ttl=100, namespace="ns*1") as mine,
          PhraseCache(redis_url=url + "?ttl=5", namespace="ns11") as theirs):
        mine.set("k", "mine")
        theirs.set("k", "theirs")
        client = _redis_client(url)
        assert 95_000 < client.pttl("ns*1:k") <= 100_000
        assert 0 < client.pttl("ns11:k") <= 5_000
        mine.clear()  # the '*' in the namespace must not match ns11
        assert client.keys("*") == ["ns11:k"]
        assert mine.get("k") is None
        assert theirs.get("k") == "theirs"
        client.close()


@requires_redis_server
@pytest.mark.redis
def test_redis_going_down_mid_run_does_not_break_the_cache(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="hunyuan_webui.cache")
    with (RedisServer() as server,
          PhraseCache(size=16, redis_url=server.url, redis_timeout=0.5,
                      redis_retry_after=0.3) as cache):
        cache.set("before", "kept in memory")
        assert cache.stats().redis_up is True

        server.stop(kill=True)  # a crash, not a clean shutdown
        assert cache.get("before") == "kept in memory"
        assert cache.get("unknown") is None
        cache.set("during", "only in memory")
        assert cache.get_many(["before", "during", "nope"]) == \
                ["kept in memory", "only in memory", None]
        time.sleep(0.35)
        assert cache.get("still-unknown") is None  # tried again, still down
        stats = cache.stats()
        assert stats.errors >= 2 and stats.redis_up is False
        warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1, [r.getMessage() for r in warnings]
        assert "carrying on without it" in warnings[0].getMessage()

        server.start()  # same port
        time.sleep(0.35)
        cache.set("after", "back in redis")
        assert cache.stats().redis_up is True
        assert any("is back" in r.getMessage() for r in caplog.records)
        client = _redis_client(server.url)
        assert client.get("hymt:after") == "back in redis"
        client.close()


def test_unreachable_redis_at_start_is_not_fatal(caplog: pytest.LogCaptureFixture) -> None:
    from redis_server import free_port

    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with PhraseCache(size=4, redis_url=url, redis_timeout=0.5) as cache:
        started = time.monotonic()
        cache.set("k", "v")
        assert cache.get("k") == "v"
        assert cache.get("j") is None
        assert time.monotonic() - started < 5
        assert cache.stats().errors == 1  # then skipped until redis_retry_after has passed
    assert sum(r.levelno == logging.WARNING for r in caplog.records) == 1


def test_redis_password_is_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    from redis_server import free_port

    url = f"redis://user:s3cret@127.0.0.1:{free_port()}/0"
    with PhraseCache(size=0, redis_url=url, redis_timeout=0.5) as cache:
        assert cache.get("k") is None
    assert caplog.records and all("s3cret" not in r.getMessage() for r in caplog.records)
