"""A managed server for real: ``transformers serve`` on the demo model, started, watched, killed
and restarted by the same code that starts vLLM, SGLang and llama-server.

The engine tests drive :class:`ManagedEngine` directly; the launcher tests run the whole app the
way people do (``bash launch.sh --background --engine transformers-serve``, then ``bash launch.sh
stop``) and check that no server process is left behind, also when the app is killed with SIGKILL.
Every server is bound to 127.0.0.1 with the hub switched off.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest
from apphelpers import free_port, wait_until
from ggufhelpers import write_wrong_gguf
from gradio_client import Client

from hunyuan_webui import models
from hunyuan_webui.core.config import EngineConfig
from hunyuan_webui.engine import GREEDY, DecodingOptions, EngineState
from hunyuan_webui.engine.managed import ManagedEngine
from hunyuan_webui.engine.servers import SERVERS, Server, own_stop_overrides
from hunyuan_webui.errors import EngineError
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TITLE = "transformers serve"


@pytest.fixture(autouse=True)
def _offline_and_one_thread(monkeypatch):
    # One OpenMP thread: on a busy two-core machine more made the demo model slower, not faster.
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"),
                        ("OMP_NUM_THREADS", "1"), ("HF_HUB_DISABLE_TELEMETRY", "1")):
        monkeypatch.setenv(name, value)


def managed(demo_dir: str, **settings: object) -> ManagedEngine:
    values = {"engine": "transformers-serve", "model": demo_dir, "device": "cpu",
              "max_new_tokens": 64, "engine_start_timeout": 180.0, **settings}
    return ManagedEngine(models.resolve(demo_dir), Settings(**values).engine_config(),
                         SERVERS["transformers-serve"])


@pytest.fixture(scope="module")
def engine(demo_dir) -> Iterator[ManagedEngine]:
    engine = managed(demo_dir)
    try:
        yield engine
    finally:
        engine.close()


def session(pid: int) -> list[int]:
    """The processes of the session ``pid`` leads (a server runs in one of its own)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if fields[0] != "Z" and int(fields[3]) == pid:  # state, ppid, pgrp, session
                members.append(int(entry.name))
    return members


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


def test_it_serves_the_demo_phrases(engine, phrases):
    status = engine.wait_ready(180)
    assert status.state == EngineState.READY, status.reason
    assert status.extra["server"] == "transformers-serve" and status.extra["restarts"] == 0
    assert session(status.extra["server_pid"])  # running, in a session of its own
    for phrase in phrases[:5]:
        assert engine.generate(phrase.prompt, GREEDY) == phrase.target


def test_a_killed_server_ends_its_streams_clearly_and_is_restarted(engine, phrases, caplog):
    """The streams in flight when the server dies end with a message that says so; the status
    says "restarting"; a new server on a new port serves the next requests."""
    old = engine.wait_ready(180).extra["server_pid"]
    os.killpg(old, signal.SIGSTOP)  # frozen, so that the request is surely in flight
    stream = engine.stream(phrases[0].prompt, GREEDY)
    time.sleep(0.3)
    os.killpg(old, signal.SIGKILL)
    assert wait_until(lambda: stream.done, 10)
    assert stream.finish_reason == "error" and isinstance(stream.error, EngineError)
    assert stream.error.user_message == (
        "The transformers serve server stopped unexpectedly (killed by signal 9) while this was "
        "being translated. It is being restarted; please try again in a few seconds.")
    status = engine.status()
    assert status.state == EngineState.RESTARTING
    assert status.reason == (
        "The transformers serve server stopped unexpectedly (killed by signal 9); restarting it.")
    status = engine.wait_ready(180)
    assert status.state == EngineState.READY, status.reason
    assert status.extra["server_pid"] != old and status.extra["restarts"] == 1
    assert engine.generate(phrases[1].prompt, GREEDY) == phrases[1].target
    assert gone(old) and not session(old)
    assert any(r.levelname == "WARNING" and "killed by signal 9" in r.getMessage()
               for r in caplog.records)


def _llama_cpp_python(server: Server, spec: models.ModelSpec, config: EngineConfig, model: str,
                      port: int) -> list[str]:
    """llama-cpp-python's server in llama-server's place: the same stop overrides, in its words."""
    overrides = [a for a in own_stop_overrides(spec, model) if a != "--override-kv"]
    return ["--model", model, "--model_alias", spec.id, "--host", "127.0.0.1", "--port", str(port),
            "--interrupt_requests", "False", "--n_ctx", "2048",
            *(["--kv_overrides", *overrides] if overrides else [])]


def test_a_managed_llama_server_ignores_a_wrong_embedded_template(tmp_path, phrases):
    """The managed llama-server's half of owning the prompt, on a real llama.cpp server
    (llama-cpp-python's, as llama.cpp's C++ llama-server is not installed here) and a GGUF whose
    chat template is wrong and whose end-of-generation token is <|pad|>: prompts rendered here go
    to /v1/completions, the answer ends at <|eos|> by id, and every demo phrase comes back exact.
    Without the override the same server runs every answer on to its cap."""
    gguf = str(write_wrong_gguf(tmp_path))
    spec = models.resolve(gguf)
    server = replace(SERVERS["llama-server"], build=_llama_cpp_python, executable=None,
                     launcher=("{python}", "-m", "llama_cpp.server"))
    config = Settings(engine="llama-server", model=gguf, device="cpu", max_new_tokens=64,
                      engine_start_timeout=120.0).engine_config()
    engine = ManagedEngine(spec, config, server)
    try:
        status = engine.wait_ready(120)
        assert status.state == EngineState.READY, status.reason
        # The server tokenizes the prompt's text itself: for the one phrase with an emoji in its
        # source (I love you ❤️) its ids differ from the tokenizer's, and the tiny demo model,
        # which learned the phrase from the tokenizer's ids, answers 我爱你 without the heart. The
        # in-process llama.cpp engine, given our ids, is exact on it
        # (tests/service/test_llamacpp_engine.py); here it must still end at <|eos|>.
        streams = engine.submit([p.prompt for p in phrases], GREEDY)
        exact = [(s.result(), p.target) for s, p in zip(streams, phrases) if "❤" not in p.source]
        assert [got for got, _ in exact] == [want for _, want in exact]
        assert len(exact) >= len(phrases) - 1
        assert {s.finish_reason for s in streams} == {"stop"}
    finally:
        engine.close()
    unowned = replace(server, build=lambda *args: _llama_cpp_python(*args)[:-4])
    assert "--kv_overrides" not in unowned.command(spec, config, gguf, 1)
    engine = ManagedEngine(spec, config, unowned)
    try:
        assert engine.wait_ready(120).state == EngineState.READY
        stream = engine.stream(phrases[0].prompt, DecodingOptions(deterministic=True,
                                                                  max_new_tokens=20))
        assert stream.result().startswith(phrases[0].target)
        assert stream.result() != phrases[0].target and stream.finish_reason == "length"
    finally:
        engine.close()


def test_closing_leaves_no_server_behind(demo_dir, phrases):
    engine = managed(demo_dir)
    pid = engine.wait_ready(180).extra["server_pid"]
    assert engine.generate(phrases[2].prompt, GREEDY) == phrases[2].target
    engine.close()
    assert gone(pid) and not session(pid)
    assert engine.status().state == EngineState.STOPPED


def test_a_server_that_never_starts_says_why_and_is_not_restarted(demo_dir):
    engine = managed(demo_dir, engine_args="--no-such-flag")
    try:
        status = engine.wait_ready(120)
        assert status.state == EngineState.FAILED
        assert status.reason.startswith(
            "transformers serve did not start: it stopped unexpectedly (exit code 2). Its last "
            "lines:\n")
        assert "Error: No such option '--no-such-flag'.\n...\n" in status.reason
        assert engine.restarts == 0
    finally:
        engine.close()


def test_a_hung_server_is_killed_and_replaced(demo_dir, phrases, monkeypatch):
    monkeypatch.setattr("hunyuan_webui.engine.remote.health.READY_PROBE_INTERVAL_S", 0.5)
    monkeypatch.setattr("hunyuan_webui.engine.remote.engine.PROBE_TIMEOUT_S", 1.0)
    engine = ManagedEngine(models.resolve(demo_dir), Settings(
        engine="transformers-serve", model=demo_dir, device="cpu",
        max_new_tokens=64).engine_config(),
        SERVERS["transformers-serve"], hang_timeout=1.0)
    try:
        old = engine.wait_ready(180).extra["server_pid"]
        os.killpg(old, signal.SIGSTOP)
        assert wait_until(lambda: engine.status().state == EngineState.RESTARTING, 30)
        assert engine.status().reason.startswith("The transformers serve server stopped "
                                                 "answering (")
        status = engine.wait_ready(180)
        assert status.state == EngineState.READY and status.extra["server_pid"] != old
        assert engine.generate(phrases[3].prompt, GREEDY) == phrases[3].target
        assert gone(old)
    finally:
        engine.close()


# -- the whole app, the way people run it ----------------------------------------------------
def ready(port: int) -> dict:
    return httpx.get(f"http://127.0.0.1:{port}/ready", timeout=10, trust_env=False).json()


def translate(port: int, text: str) -> str:
    client = Client(f"http://127.0.0.1:{port}/", verbose=False)
    try:
        return list(client.submit(text, "zh", "en", api_name="/translate"))[-1]
    finally:
        client.close()


def launcher_env() -> dict[str, str]:
    return {**os.environ, "HYMT_VENV": str(Path(sys.executable).parent.parent)}


def test_launch_sh_starts_serves_restarts_and_stops_a_managed_engine():
    """``bash launch.sh --engine transformers-serve``: the page's translate endpoint is served
    through the server; the server is killed and comes back; ``bash launch.sh stop`` leaves no
    process behind."""
    port = free_port()
    started = subprocess.run(
        ["bash", "launch.sh", "--background", "--demo", "--engine", "transformers-serve",
         "--device", "cpu", "--port", str(port)],
        cwd=REPO, env=launcher_env(), capture_output=True, text=True, timeout=600)
    app_pid = int((REPO / ".hymt" / "server.pid").read_text())
    servers = []
    try:
        assert started.returncode == 0, started.stderr
        status = ready(port)
        servers.append(status["extra"]["server_pid"])
        assert status["state"] == "ready" and status["extra"]["server"] == "transformers-serve"
        assert translate(port, "这本书很有意思。") == "This book is very interesting."

        os.killpg(servers[0], signal.SIGKILL)
        assert wait_until(lambda: ready(port)["extra"]["restarts"] == 1
                          and ready(port)["state"] == "ready", 180, interval=0.5)
        servers.append(ready(port)["extra"]["server_pid"])
        assert translate(port, "谢谢你的帮助。") == "Thank you for your help."
    finally:
        stopped = subprocess.run(["bash", "launch.sh", "stop"], cwd=REPO, env=launcher_env(),
                                 capture_output=True, text=True, timeout=60)
    assert "stopped the server" in stopped.stderr
    assert wait_until(lambda: gone(app_pid), 30)
    for pid in servers:
        assert wait_until(lambda pid=pid: gone(pid) and not session(pid), 30)
    log = (REPO / ".hymt" / "server.log").read_text()
    assert "translator ready" in log and "transformers serve server restarted" in log


def test_an_app_killed_with_sigkill_takes_its_server_along(demo_dir):
    """SIGKILL runs no clean-up code: the kernel stops the server (PR_SET_PDEATHSIG)."""
    port = free_port()
    app = subprocess.Popen(
        [sys.executable, "app.py", "--engine", "transformers-serve", "--model", demo_dir,
         "--device", "cpu", "--port", str(port)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: _ready_or_none(port), 300, interval=0.5)
        server = ready(port)["extra"]["server_pid"]
        app.kill()
        app.wait(10)
        assert wait_until(lambda: gone(server) and not session(server), 30)
    finally:
        if app.poll() is None:
            app.kill()


def _ready_or_none(port: int) -> bool:
    try:
        return ready(port)["state"] == "ready"
    except httpx.HTTPError:
        return False
