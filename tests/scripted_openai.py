"""A scripted OpenAI-compatible server for the guards' tests: FastAPI on uvicorn, on 127.0.0.1.

``POST /v1/chat/completions`` answers each prompt from a table of
:class:`benchmarks.guard_corpus.Case` (the translation prompt of a case, in either wording of
the family, is its key): the n-th request for a case gets its n-th answer (the bad one first, then
the retry's; the last one again after that), with the case's finish reason; a prompt not in the
table gets its own source back. Streaming (Server-Sent Events, a few characters a chunk; ``delay``
apart for the cases in ``slow``, so that a reader sees the answer grow) and not. ``GET /v1/models`` lists the model, so ``--engine openai`` finds it ready. None of
its answers is the demo model's: they are whatever the table says.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from benchmarks.guard_corpus import MODEL, Case, case_prompts
from hunyuan_webui import models


class ScriptedServer:
    """``with ScriptedServer(cases) as server:`` ... ``server.url`` is the ``/v1`` base URL."""

    def __init__(self, cases: Sequence[Case], chunk: int = 4, delay: float = 0.0,
                 slow: Sequence[Case] = ()) -> None:
        family = models.resolve(MODEL).family
        self.table = {p: case for case in [*cases, *slow] for p in case_prompts(case, family)}
        self.slow = frozenset(slow)
        self.chunk, self.delay = chunk, delay
        self.asked: Counter[Case] = Counter()
        self.bodies: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.app = self._build()
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=self.port,
                                                     log_level="warning", lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, daemon=True)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            assert time.monotonic() < deadline, "the scripted server did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(15)

    def answer(self, prompt: str) -> tuple[str, str, float]:
        """(text, finish reason, pause between chunks) for this request of ``prompt``."""
        case = self.table.get(prompt)
        if case is None:
            return prompt.rsplit("\n\n", 1)[-1], "stop", 0.0
        with self._lock:
            turn = self.asked[case]
            self.asked[case] += 1
        text, finish = case.answers[min(turn, len(case.answers) - 1)]
        return text, finish, self.delay if case in self.slow else 0.0

    def _build(self) -> FastAPI:
        app = FastAPI()

        @app.get("/v1/models")
        def list_models() -> dict[str, Any]:
            return {"object": "list", "data": [{"id": MODEL, "object": "model",
                                                "owned_by": "scripted"}]}

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Any:
            body = await request.json()
            with self._lock:
                self.bodies.append(body)
            prompt = body["messages"][-1]["content"]
            text, finish, pause = self.answer(prompt)
            if not body.get("stream"):
                return JSONResponse(_completion(text, finish))
            return StreamingResponse(self._events(text, finish, pause),
                                     media_type="text/event-stream")

        return app

    async def _events(self, text: str, finish: str, pause: float) -> AsyncIterator[str]:
        yield _data({"choices": [{"index": 0, "delta": {"role": "assistant"}}]})
        for at in range(0, len(text), self.chunk):
            if pause:
                await asyncio.sleep(pause)
            yield _data({"choices": [{"index": 0,
                                      "delta": {"content": text[at:at + self.chunk]}}]})
        yield _data({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        tokens = -(-len(text) // self.chunk)
        yield _data({"choices": [], "usage": {"prompt_tokens": 20, "completion_tokens": tokens,
                                              "total_tokens": 20 + tokens}})
        yield "data: [DONE]\n\n"


def _data(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload, ensure_ascii=False)}\n\n"


def _completion(text: str, finish: str) -> dict[str, Any]:
    return {"id": "scripted", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": len(text),
                      "total_tokens": 20 + len(text)}}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
