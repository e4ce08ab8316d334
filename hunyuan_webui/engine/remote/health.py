"""Whether the server can take requests, from its ``GET {endpoint}/models`` answers.

The engine is LOADING until ``/models`` answers, READY while it does (re-probed every
``READY_PROBE_INTERVAL_S`` and after a request could not connect), FAILED with the reason when the
server stays unreachable past ``startup_timeout``, refuses the key or does not serve the model.
The reasons are written for the person who started the app: what failed and which flag to check.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

import httpx

from hunyuan_webui.engine.base import EngineState
from hunyuan_webui.engine.remote.dialects import VLLM_LIKE_OWNERS, DialectChoice
from hunyuan_webui.urls import redact_url

log = logging.getLogger(__name__)

READY_PROBE_INTERVAL_S = 15.0
PROBE_TIMEOUT_S = 10.0
# Probes use a connection of their own: uvicorn closes one after an unhandled 500 without saying
# so, and the next request on it (from the pool) would fail with a ReadError.
_FRESH = {"Connection": "close"}


def describe(exc: BaseException) -> str:
    """An exception in one line of at most about 200 characters, for messages."""
    text = str(exc) or type(exc).__name__
    return text if len(text) < 200 else text[:200] + "..."


class Health:
    """The state of the server at ``endpoint`` (its ``/v1`` URL) for ``model``, kept by probing.

    :meth:`run` probes on the engine's loop for as long as the engine lives; ``state``,
    ``reason``, ``last_error`` and ``served`` (the model names ``/models`` listed) are read from
    any thread. When the server turns out to be vLLM or SGLang, ``dialect`` is pinned to ``vllm``.
    """

    def __init__(self, endpoint: str, model: str, dialect: DialectChoice, *,
                 startup_timeout: float, timeout: httpx.Timeout) -> None:
        self.endpoint = endpoint
        self.remote_model = model
        self.dialect = dialect
        self.startup_timeout = startup_timeout
        self._timeout = timeout
        self.state = EngineState.LOADING
        self.reason = ""
        self.last_error = ""
        self.served: list[str] = []
        self._stopped = False
        self._probe_now = asyncio.Event()

    def probe_soon(self) -> None:
        """Probe now rather than at the next interval (call it on the engine's loop)."""
        self._probe_now.set()

    def stop(self) -> None:
        """STOPPED for good: a probe still under way does not change it."""
        self._stopped = True
        self.state = EngineState.STOPPED

    def not_ready_message(self) -> str:
        if self.state is EngineState.FAILED:
            return f"The translation server is not available: {self.reason}"
        if self.state is EngineState.STOPPED:
            return "The translator is shutting down."
        return "Still waiting for the translation server to answer; please wait a moment."

    async def run(self, client: httpx.AsyncClient) -> None:
        """LOADING until the first answer, READY while it answers, FAILED with a reason if not.

        An unreachable server is waited for until ``startup_timeout``; a refused API key or a
        model the server does not serve fails at once. Probing goes on in every state."""
        started = asyncio.get_running_loop().time()
        delay = 0.25
        while True:
            try:
                problem, transient = await self._probe(client)
            except Exception as exc:  # an odd answer must not stop the probing
                problem, transient = f"Probing the server failed: {exc}", True
            if self._stopped:
                return
            if problem is None:
                if self.state is not EngineState.READY:
                    log.info("remote engine ready: %s at %s (%s dialect)", self.remote_model,
                             redact_url(self.endpoint), self.dialect.name)
                self.state, self.reason, self.last_error = EngineState.READY, "", ""
                delay = READY_PROBE_INTERVAL_S
            else:
                was_ready = self.state is EngineState.READY
                self.last_error = problem
                waited = asyncio.get_running_loop().time() - started
                if was_ready or not transient or waited >= self.startup_timeout:
                    if self.state is not EngineState.FAILED:
                        log.error("remote engine not available: %s", problem)
                    self.state, self.reason = EngineState.FAILED, problem
                delay = 0.25 if was_ready else min(delay * 2, 5.0)
            self._probe_now.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(delay):
                    await self._probe_now.wait()

    async def _probe(self, client: httpx.AsyncClient) -> tuple[str | None, bool]:
        """(None, _) when the server answers and serves our model, else (why not, transient)."""
        where = redact_url(self.endpoint)
        try:
            response = await client.get(f"{self.endpoint}/models", headers=_FRESH,
                                        timeout=self._timeout)
        except httpx.HTTPError as exc:
            return self._unreachable(exc), True
        if response.status_code in (401, 403):
            return (f"The server at {where} rejected the API key ({response.status_code}); "
                    "check --api-key."), False
        if response.status_code == 200:
            return self._check_models(response), False
        if response.status_code >= 500:
            # `transformers serve` lists the hub cache here and fails when there is none: any
            # server that answers its /health is up.
            root = self.endpoint.removesuffix("/v1")
            with contextlib.suppress(httpx.HTTPError):
                health = await client.get(f"{root}/health", headers=_FRESH, timeout=self._timeout)
                if health.status_code == 200:
                    return None, False
            return f"The server at {where} answered {response.status_code} to GET /models.", True
        return (f"The server at {where} answered {response.status_code} to GET /models: is "
                "--endpoint its /v1 base URL (e.g. http://127.0.0.1:8000/v1)?"), False

    def _check_models(self, response: httpx.Response) -> str | None:
        try:
            entries = [e for e in response.json().get("data", []) if isinstance(e, dict)]
        except (ValueError, AttributeError):
            entries = []
        self.served = [str(e.get("id")) for e in entries]
        owners = {str(e.get("owned_by", "")).lower() for e in entries}
        if not owners & VLLM_LIKE_OWNERS:
            return None  # other servers may serve models they do not list
        self.dialect.pin_vllm()
        if self.remote_model not in self.served:
            return (f"The server at {redact_url(self.endpoint)} serves "
                    f"{', '.join(self.served) or 'no model'}, not {self.remote_model}; "
                    "pass --remote-model with one of those names.")
        return None

    def _unreachable(self, exc: BaseException) -> str:
        name = self.remote_model if self.remote_model.count("/") == 1 and \
            not self.remote_model.startswith("/") else "tencent/Hunyuan-MT-7B"
        return (f"Could not reach the OpenAI-compatible server at {redact_url(self.endpoint)}: "
                f"{describe(exc)}; start it with `vllm serve {name} --dtype bfloat16` "
                "or check --endpoint.")
