"""Run the real server in-process for the HTTP tests: FastAPI + the mounted Gradio page, served by
uvicorn in a thread on a free loopback port, reached with httpx (never anything but 127.0.0.1).

The app is built exactly as ``app.main`` builds it (``create_app`` + ``Server``); only the
Translator is handed in, so the tests reuse a shared engine instead of loading one per app.
:func:`app_process` runs ``app.py`` itself in a child process, for what must be measured apart
from the tests' own process (its memory).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from hunyuan_webui import models
from hunyuan_webui.app import Server, create_app
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.engine import Engine
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings
from hunyuan_webui.urls import free_port

# en -> th under greedy decoding, the demo model runs on for ~650 tokens on this text (most texts
# that are not demo phrases end after a few dozen).
LONG_TEXT = "-".join(["ha"] * 40)
LONG_PAIR = ("en", "th")
GREEDY = {"deterministic": True}


# Debian's chromium, for the browser tests (Playwright drives it; it downloads no browser).
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-sync", "--disable-component-update", "--no-first-run",
                 "--disable-quic"]


def make_engine(demo_dir: str, max_new_tokens: int = 512, **kwargs: Any) -> LocalEngine:
    """A second engine on the demo model (the session one stops every sequence at 64 tokens)."""
    engine = LocalEngine(models.resolve(demo_dir), max_new_tokens=max_new_tokens,
                         max_batch_size=kwargs.pop("max_batch_size", 16),
                         max_queued=kwargs.pop("max_queued", 256), **kwargs)
    status = engine.wait_ready(120)
    assert status.state == "ready", status.reason
    return engine


@dataclass
class RunningApp:
    url: str
    settings: Settings
    translator: Translator
    server: Server

    def client(self, **kwargs: Any) -> httpx.Client:
        kwargs.setdefault("timeout", 60)
        return httpx.Client(base_url=self.url, trust_env=False, **kwargs)

    def async_client(self, **kwargs: Any) -> httpx.AsyncClient:
        kwargs.setdefault("timeout", 60)
        return httpx.AsyncClient(base_url=self.url, trust_env=False, **kwargs)

    @property
    def engine(self) -> Engine:
        return self.translator.engine


@contextmanager
def running_app(engine: Engine, *, cache_size: int = 256, **overrides: Any) -> Iterator[RunningApp]:
    """Serve a fresh app (its own settings, translator, cache and metrics) on ``engine``."""
    values: dict[str, Any] = {"max_new_tokens": getattr(engine, "max_new_tokens", 2048),
                              "max_batch_size": getattr(engine, "max_batch_size", 16),
                              "log_level": "warning",
                              "guards": False,  # as conftest's demo_settings say why
                              **overrides}
    settings = Settings(model=engine.model_id, port=free_port(), cache_size=cache_size, **values)
    cache = PhraseCache(size=cache_size) if cache_size else None
    translator = Translator(engine, getattr(engine, "spec", None) or models.resolve(settings.model),
                            settings, cache=cache)
    app = create_app(settings, translator)
    server = Server(app, settings).start()
    try:
        yield RunningApp(server.url, settings, translator, server)
    finally:
        server.stop()


@dataclass
class AppProcess:
    url: str
    pid: int

    def rss_kib(self) -> int:
        """The server's resident memory now (VmRSS), in KiB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError(f"no VmRSS for process {self.pid}")


@contextmanager
def app_process(*flags: str, timeout: float = 240, demo: bool = True,
                env: dict[str, str] | None = None) -> Iterator[AppProcess]:
    """``python app.py --demo`` (in-process engine, no warm-up, one CPU thread) on a free loopback
    port in its own process group; yields once ``/ready`` answers 200, stops it on exit. Without
    ``demo``, the model is what ``flags`` name (``--model DIR``); ``env`` is added to the
    environment."""
    repo = Path(__file__).resolve().parent.parent
    port = free_port()
    cmd = [sys.executable, str(repo / "app.py"), *(["--demo"] if demo else []), "--engine",
           "local", "--no-warmup", "--cpu-threads", "1", "--port", str(port), "--log-level",
           "warning", *flags]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1",
           "TOKENIZERS_PARALLELISM": "false", **(env or {})}
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=repo, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.seek(0)
                    raise AssertionError(f"app.py did not become ready (exit {proc.returncode}):\n"
                                         f"{log.read().decode(errors='replace')[-3000:]}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/ready", timeout=2, trust_env=False).status_code == 200:
                        break
                time.sleep(0.25)
            yield AppProcess(url, proc.pid)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)  # its own group: the server and nothing else
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=20)


# -- the page's own endpoints, driven over plain HTTP ----------------------------------------------
EMPTY_GLOSSARY = {"headers": ["Source term", "Target term"], "data": [["", ""]]}


def file_data(path: str) -> dict:
    return {"path": path, "meta": {"_type": "gradio.FileData"}}


def document_call(path_or_file: str | dict, source: str = "en", target: str = "en") -> dict:
    """The Document tab's endpoint, as the reported probe called it."""
    data = path_or_file if isinstance(path_or_file, dict) else file_data(path_or_file)
    return {"data": [data, source, target, [], True, EMPTY_GLOSSARY]}


def run_event(c: httpx.Client, name: str, payload: dict) -> tuple[int, str]:
    """POST /gradio_api/call/<name>, then read its event stream: (status of the POST, stream)."""
    r = c.post(f"/gradio_api/call/{name}", json=payload)
    if r.status_code != 200:
        return r.status_code, r.text
    return 200, c.get(f"/gradio_api/call/{name}/{r.json()['event_id']}").text


def completed(stream: str) -> list:
    """The data of an event stream's ``complete`` event."""
    assert "event: complete" in stream, stream[-600:]
    return json.loads(stream.split("event: complete\ndata: ", 1)[1].split("\n", 1)[0])


def upload(c: httpx.Client, name: str, data: bytes) -> str:
    r = c.post("/gradio_api/upload", files={"files": (name, data, "text/plain")})
    assert r.status_code == 200, r.text
    [path] = r.json()
    return path


@contextmanager
def visitor(app) -> Iterator[httpx.Client]:
    """A browser-like client: it keeps cookies, and the page hands it its session first."""
    with app.client() as c:
        assert c.get("/config").status_code == 200
        yield c


# -- reading answers -------------------------------------------------------------------------------
def sse_events(raw: str) -> list[tuple[str | None, dict[str, Any]]]:
    """Parse a Server-Sent Events body strictly: every event is ``[event: NAME\\n]data: JSON``."""
    assert raw.endswith("\n\n"), f"an SSE body ends with a blank line: {raw[-40:]!r}"
    events = []
    for block in raw[:-2].split("\n\n"):
        lines = block.split("\n")
        name = None
        if lines[0].startswith("event: "):
            name = lines.pop(0)[len("event: "):]
        assert len(lines) == 1 and lines[0].startswith("data: "), f"bad SSE event {block!r}"
        events.append((name, json.loads(lines[0][len("data: "):])))
    return events


def assert_json_error(response: httpx.Response, status: int, code: str | None = None) -> str:
    """A clear JSON error (never a stack trace or an HTML page); returns its message."""
    assert response.status_code == status, (response.status_code, response.text[:500])
    assert response.headers["content-type"].startswith("application/json"), response.headers
    body = response.json()
    assert isinstance(body, dict) and "error" in body, body
    error = body["error"]
    # The JSON API answers {"error": {"code", "message"}}; LibreTranslate's routes {"error": str}.
    message = error if isinstance(error, str) else error["message"]
    assert isinstance(message, str) and message.strip(), body
    if code is not None:
        assert isinstance(error, dict) and error["code"] == code, body
    for leak in ("Traceback", 'File "', "site-packages", "Exception"):
        assert leak not in response.text, response.text
    return message


def metric_samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a Prometheus scrape, keyed by (name, sorted labels)."""
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def metric_families(text: str) -> dict[str, str]:
    """Family name -> type (counter, gauge, histogram) of a Prometheus scrape."""
    return {f.name: f.type for f in text_string_to_metric_families(text)}


def wait_until(predicate: Callable[[], Any], timeout: float = 10.0, interval: float = 0.02) -> Any:
    """Poll ``predicate`` until it is truthy; returns its last value (falsy on timeout)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


@contextmanager
def machine_stalls(tick: float = 0.01) -> Iterator[list[float]]:
    """Yields a list that holds, once the block ends, the longest gap between the ticks of a
    thread of this process that sleeps ``tick`` seconds: how long the machine (or this process)
    itself stood still meanwhile. A bound on how long a server keeps another client waiting adds
    it, so that a CI machine's own pause (1.5 s once in 30 minutes) is not taken for the
    server's; a server that blocks stands still alone."""
    import threading

    longest, stop = [0.0], threading.Event()

    def ticker() -> None:
        last = time.monotonic()
        while not stop.wait(tick):
            now = time.monotonic()
            longest[0] = max(longest[0], now - last - tick)
            last = now

    thread = threading.Thread(target=ticker, daemon=True)
    thread.start()
    result: list[float] = []
    try:
        yield result
    finally:
        stop.set()
        thread.join(timeout=5)
        result.append(longest[0])


def idle(engine: Engine) -> bool:
    status = engine.status()
    return status.active == 0 and status.queued == 0


class RecordingEngine(Engine):
    """The real engine (same interface, real decoding) noting every ``submit``: prompts and
    options, grouped as the engine received them. ``spec`` stands in for the loaded model's."""

    def __init__(self, inner: Engine, spec: models.ModelSpec | None = None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.spec = spec or inner.spec  # type: ignore[attr-defined]
        self.calls: list[tuple[list[str], list[Any]]] = []

    def submit(self, prompts_: Any, options: Any) -> Any:
        opts = list(options) if isinstance(options, list | tuple) else [options] * len(prompts_)
        self.calls.append((list(prompts_), opts))
        return self.inner.submit(prompts_, options)

    def status(self) -> Any:
        return self.inner.status()

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    @property
    def prompts(self) -> list[str]:
        return [p for call, _ in self.calls for p in call]

    @property
    def options(self) -> list[Any]:
        return [o for _, call in self.calls for o in call]
