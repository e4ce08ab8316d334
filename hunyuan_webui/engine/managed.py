"""A serving engine the translator starts, watches and restarts (``--engine vllm``, ``sglang``,
``llama-server``, ``transformers-serve``).

The server (its command line comes from :mod:`~hunyuan_webui.engine.servers`) runs as a child
process on a free loopback port. Once ``GET /v1/models`` (or ``/health``) answers, the page and the
API are served through the ordinary remote engine
(:class:`~hunyuan_webui.engine.remote.OpenAIEngine`) pointed at it. Its output goes to our log,
one line at a time, and the last lines are quoted when it fails.

Supervision, as for our own engine process (:mod:`~hunyuan_webui.engine.process`, with the same
:class:`~hunyuan_webui.engine.restarts.Supervisor` and policy): when the server exits, or stops answering
for :data:`HANG_TIMEOUT_S` (it is killed then), the streams in flight end with a message that says
so, the status says "restarting", and a new server starts after a backoff. Too many failures in a
window stop the restarts. A server that never came up the first time is not restarted: bad flags
or too little memory would fail again; its reason and last lines are the status.

No server outlives the translator: it runs in a session of its own (so Ctrl+C in a terminal does
not reach it behind our back, and its own children are stopped with it), is stopped at exit (also
on SIGTERM, which ``launch.sh stop`` sends), and on Linux gets SIGTERM from the kernel when the
thread that started it dies, even if the translator is killed with SIGKILL (``PR_SET_PDEATHSIG``,
set by a few lines of Python that then ``exec`` the server).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import httpx

from hunyuan_webui import errors
from hunyuan_webui.core import kinds
from hunyuan_webui.core.chat import chat_format
from hunyuan_webui.core.config import EngineConfig
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import DecodingOptions, EngineState, EngineStatus, Stream
from hunyuan_webui.engine.child import exit_words
from hunyuan_webui.engine.remote import OpenAIEngine
from hunyuan_webui.engine.restarts import Failure
from hunyuan_webui.engine.servers import LOOPBACK, Server
from hunyuan_webui.engine.supervised import SupervisedEngine
from hunyuan_webui.errors import NotReadyError
from hunyuan_webui.urls import free_port

log = logging.getLogger(__name__)

HANG_TIMEOUT_S = 60.0  # the server process lives but has not answered for this long: it is hung
REMOTE_READY_S = 30.0  # from the first health answer to the remote engine's READY
STOP_GRACE_S = 15.0  # SIGTERM, then this long, then SIGKILL
TAIL_LINES = 60
_ERROR_LINE = re.compile(r"error|exception|traceback", re.IGNORECASE)
# Runs first in the child: ask for SIGTERM when our starting thread dies (Linux), make sure it has
# not died already, then become the server.
_GUARD = ("import ctypes, os, signal, sys\n"
          "try:\n"
          "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG\n"
          "except (OSError, AttributeError):\n"
          "    pass\n"
          "if os.getppid() != int(sys.argv[1]):\n"
          "    sys.exit(1)\n"
          "os.execvp(sys.argv[2], sys.argv[2:])\n")


class ServerProcess:
    """One run of a server: the process, its port and the last lines it wrote."""

    def __init__(self, server: Server, command: list[str], port: int,
                 env: dict[str, str] | None = None) -> None:
        self.server, self.port = server, port
        self.url = f"http://{LOOPBACK}:{port}/v1"
        self.tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
        self.note = ""  # why we killed it, when we did
        env = {**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})}
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", _GUARD, str(os.getpid()), *command],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env, start_new_session=True)
        self.pid = self.process.pid
        self._relay = threading.Thread(target=self._read, name=f"hymt-{server.engine}-log",
                                       daemon=True)
        self._relay.start()
        log.info("started %s (pid %d): %s", server.title, self.pid, " ".join(command))

    def _read(self) -> None:
        assert self.process.stdout is not None
        out = logging.getLogger(f"hunyuan_webui.server.{self.server.engine}")
        for raw in self.process.stdout:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                self.tail.append(line)
                out.info("%s", line)

    def exited(self) -> bool:
        return self.process.poll() is not None

    def problem(self) -> str:
        """Why it is gone: "stopped unexpectedly (exit code 1)", or the reason it was killed."""
        return self.note or exit_words(self.process.returncode)

    def last_lines(self, count: int = 8) -> str:
        """Its last ``count`` lines, after any earlier ones that name an error (a usage error
        is followed by pages of help)."""
        lines = list(self.tail)
        flagged = [line for line in lines[:-count] if _ERROR_LINE.search(line)][-3:]
        return "\n".join([*flagged, *(["..."] if flagged else []), *lines[-count:]]) or \
            "(it wrote nothing)"

    def healthy(self) -> bool:
        """Whether it answers ``GET /v1/models`` (or, failing that, ``/health``)."""
        with httpx.Client(timeout=2.0, trust_env=False) as client:
            for url in (f"{self.url}/models", f"{self.url.removesuffix('/v1')}/health"):
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(url).status_code == 200:
                        return True
        return False

    def kill(self, note: str) -> None:
        self.note = note
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM to its whole session, then SIGKILL after :data:`STOP_GRACE_S`."""
        if not self.exited():
            self._signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                log.warning("%s (pid %d) did not stop within %gs: killing it", self.server.title,
                            self.pid, STOP_GRACE_S)
        self._signal(signal.SIGKILL)  # whatever of its session is left
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        self._relay.join(timeout=2)

    def _signal(self, sig: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)  # its own session: the server and its children, no one else


class ManagedEngine(SupervisedEngine):
    """A server started, watched and restarted by this process; served through
    :class:`~hunyuan_webui.engine.remote.OpenAIEngine` while it is up.

    Locking: ``_lock`` guards the current process and remote engine, the state and the streams in
    flight. It is never held while calling into the remote engine or waiting on the process.
    """

    close_timeout_s = STOP_GRACE_S + 10

    def __init__(self, spec: ModelSpec, config: EngineConfig, server: Server, *,
                 hang_timeout: float = HANG_TIMEOUT_S) -> None:
        self.spec, self.model_id = spec, spec.id
        self.config, self.server = config, server
        self.shown_device, self.shown_dtype = f"{server.title} server", config.dtype
        server.command(spec, config, spec.source, 0)  # a missing server or bad flag: now
        self._hang_timeout = hang_timeout
        self._lock = threading.Lock()
        self._process: ServerProcess | None = None
        self._remote: OpenAIEngine | None = None
        self._state = EngineState.LOADING
        self._reason = ""
        self._live: set[Stream] = set()
        self._model = ""  # what the server loads: found by the supervisor's first run
        self._up_once = False  # a server has answered: a later failure is worth a restart
        # The server is started from the supervisor's thread, which lives as long as the engine:
        # on Linux its end is the server's SIGTERM (see _GUARD).
        self._supervise(f"The {server.title} server", watch=self._run_server,
                        name="hymt-server-supervisor")

    # -- Engine -----------------------------------------------------------------------------------
    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        streams = self._usable_remote().submit(prompts, options)
        with self._lock:
            self._live.update(streams)
        for stream in streams:
            stream.add_done_callback(self._ended)
        return streams

    def count_tokens(self, text: str) -> int:
        return self._usable_remote().count_tokens(text)

    def status(self) -> EngineStatus:
        with self._lock:
            state, reason, remote, process = self._state, self._reason, self._remote, self._process
        extra: dict[str, Any] = {"server": self.server.engine, **self._supervisor.status_extra(),
                                 "server_pid": process.pid if process else None}
        if not self._supervisor.closing and state is EngineState.READY and remote is not None:
            status = remote.status()
            return replace(status, extra={**status.extra, **extra})
        return self._own_status(state, reason, extra)

    def _stop(self) -> None:
        with self._lock:
            remote, process = self._remote, self._process
        if remote is not None:
            remote.close()
        if process is not None:
            process.stop()

    def _usable_remote(self) -> OpenAIEngine:
        with self._lock:
            state, reason, remote = self._state, self._reason, self._remote
        self._refuse_if_down(reason if state is EngineState.FAILED else "")
        if remote is None or state is not EngineState.READY:
            raise NotReadyError(f"The {self.server.title} server is "
                                f"{'restarting' if self.restarts or reason else 'starting'}; "
                                "please try again in a few seconds.")
        return remote

    # -- supervision ------------------------------------------------------------------------------
    def _run_server(self) -> Failure | None:
        """Start a server and watch it until it fails: why, and its pid. None when closing, or
        when the failure is final (the model is not there; the first server never came up: the
        same flags would fail the same way), with the status saying why."""
        if not self._model:
            try:
                self._model = self._model_to_load()
                self.server.command(self.spec, self.config, self._model, 0)  # its vocabulary
            except errors.TranslatorError as exc:
                self._set(EngineState.FAILED, exc.user_message)
                return None
        process = self._start(self._model)
        if process is None:
            return None  # closing
        if self._remote is not None:
            self._up_once = True
            problem = self._watch(process)
            if not problem:
                return None  # closing
            self._lost(process, problem)
        elif not self._up_once:
            self._set(EngineState.FAILED, f"{self.server.title} did not start: it "
                      f"{process.problem()}. Its last lines:\n{process.last_lines()}")
            process.stop()
            return None
        else:
            problem = process.problem()
            process.stop()
        return problem, process.pid

    def _restarting(self, reason: str) -> None:
        self._set(EngineState.RESTARTING, reason)

    def _give_up(self, reason: str) -> None:
        self._set(EngineState.FAILED, reason)

    def _model_to_load(self) -> str:
        if self.server.gguf:
            from hunyuan_webui.engine.gguf_files import locate

            return str(locate(self.spec, self.config.gguf_quant))
        return self.spec.source

    def _start(self, model: str) -> ServerProcess | None:
        """Start a server and wait until it answers; sets ``_remote`` when it does. None when
        closing meanwhile."""
        port = free_port(LOOPBACK)
        command = self.server.command(self.spec, self.config, model, port)
        process = ServerProcess(self.server, command, port,
                                self.server.environment(self.config))
        with self._lock:
            self._process = process
        deadline = time.monotonic() + self.config.engine_start_timeout
        while not process.healthy():
            if process.exited():
                return process
            if time.monotonic() > deadline:
                process.kill(f"did not answer within {self.config.engine_start_timeout:g}s")
                process.process.wait(timeout=10)
                return process
            if self._supervisor.sleep(0.25):
                return None
        remote = self._remote_engine(process, model)
        deadline = time.monotonic() + REMOTE_READY_S
        while (status := remote.status()).state is EngineState.LOADING and \
                time.monotonic() < deadline:
            if self._supervisor.sleep(0.05):
                remote.close()
                return None
        if status.state is not EngineState.READY:
            remote.close()
            process.kill(f"answered, but could not serve: {status.reason}")
            process.process.wait(timeout=10)
            return process
        with self._lock:
            self._remote, self._state, self._reason = remote, EngineState.READY, ""
        if self.restarts:
            log.warning("%s server restarted (pid %d, port %d)", self.server.title,
                        process.pid, port)
        else:
            log.info("%s server ready (pid %d, port %d)", self.server.title, process.pid, port)
        return process

    def _remote_engine(self, process: ServerProcess, model: str) -> OpenAIEngine:
        """The remote engine as ``--engine openai --endpoint URL`` would build it (so it gets
        whatever the model needs there), pointed at this server."""
        config = replace(self.config, kind=kinds.OPENAI, endpoint=process.url, api_key=None,
                         remote_model=self.server.served_name(self.spec, model))
        remote = OpenAIEngine.from_config(self.spec, config)
        if self.server.engine == kinds.LLAMA_SERVER:  # never the GGUF's own chat template
            remote.prompt_format = chat_format(self.spec.chat_format)
        return remote

    def _watch(self, process: ServerProcess) -> str:
        """Wait while the server runs and answers; why it stopped ("" when closing)."""
        silent_since: float | None = None

        def problem() -> str:
            nonlocal silent_since
            if process.exited():
                return process.problem()
            remote = self._remote
            if remote is None or remote.status().state is not EngineState.FAILED:
                silent_since = None
                return ""
            silent_since = silent_since or time.monotonic()
            silent = time.monotonic() - silent_since
            if silent <= self._hang_timeout:
                return ""
            log.warning("%s server (pid %d) has not answered for %.0fs: killing it",
                        self.server.title, process.pid, silent)
            process.kill(f"stopped answering ({silent:.0f}s without an answer)")
            process.process.wait(timeout=10)
            return process.problem()

        return self._supervisor.poll(problem)

    def _lost(self, process: ServerProcess, problem: str) -> None:
        """The server is gone: end its streams with a message that says so, drop its client."""
        with self._lock:
            remote, self._remote = self._remote, None
            live, self._live = list(self._live), set()
            self._state = EngineState.RESTARTING
            self._reason = self._supervisor.policy.restarting(problem)
        for stream in live:
            if not stream.done:
                stream.finish("error", errors.EngineError(self._death_message(problem)))
        if remote is not None:
            remote.close()
        process.stop()  # reaped, and whatever it started is stopped too

    def _ended(self, stream: Stream) -> None:
        """A stream's end (an observer: readers see the end only after this has run). A stream
        that failed because its connection broke as the server died says so."""
        with self._lock:
            self._live.discard(stream)
            process = self._process
        error = stream.error
        if (stream.finish_reason != "error" or process is None or self._supervisor.closing
                or not isinstance(error, errors.TranslatorError)
                or not any(w in error.user_message for w in _CONNECTION_WORDS)):
            return
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.process.wait(timeout=1.0)  # the connection breaks while it is exiting
        if process.exited():
            stream.error = errors.EngineError(self._death_message(process.problem()))

    def _death_message(self, problem: str) -> str:
        return (f"The {self.server.title} server {problem} while this was being translated. It "
                "is being restarted; please try again in a few seconds.")

    def _set(self, state: EngineState, reason: str) -> None:
        with self._lock:
            self._state, self._reason = state, reason
        if state is EngineState.FAILED:
            log.error("%s", reason)


# What the remote engine says when the server went away under a request.
_CONNECTION_WORDS = ("Could not reach the translation server", "broke mid-answer",
                     "closed the stream before the end")
