"""The slow-client deadlines of the HTTP protocol (web/guards/security.py) are for HTTP requests:
a WebSocket that streams in real time, as the teacher's microphone does, stays open past them.

Found by ``python -m benchmarks.bench room --speech``: the body-rate check, armed by the upgrade
request, closed every microphone 5 s after it opened (close code 1006 at the page), so a teacher
speaking in real time lost the WebSocket every five seconds."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.sync.client import connect

from hunyuan_webui.urls import free_port
from hunyuan_webui.web.guards.security import BODY_RATE_GRACE, slow_client_protocol

pytestmark = pytest.mark.slow  # it waits out the body-rate grace (5 s)


async def echo(websocket: WebSocket) -> None:
    await websocket.accept()
    try:
        while True:
            await websocket.send_bytes(await websocket.receive_bytes())
    except WebSocketDisconnect:
        pass


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    port = free_port()
    config = uvicorn.Config(Starlette(routes=[WebSocketRoute("/ws", echo)]), host="127.0.0.1",
                            port=port, log_level="warning", ws="websockets-sansio",
                            http=slow_client_protocol(2.0, 3.0, 1024))  # the app's, tighter
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield f"ws://127.0.0.1:{port}/ws"
    server.should_exit = True
    thread.join(10)


def test_a_websocket_streaming_in_real_time_outlives_the_http_deadlines(url: str) -> None:
    frame = bytes(3200)  # 100 ms of 16 kHz 16-bit PCM, here one every 0.5 s
    with connect(url, open_timeout=10) as ws:
        started = time.monotonic()
        while time.monotonic() - started < BODY_RATE_GRACE + 2.0:
            ws.send(frame)
            assert ws.recv(timeout=5) == frame
            time.sleep(0.5)
        time.sleep(3.5)  # quiet past the header and body timeouts (2 s, 3 s)
        ws.send(b"still here")
        assert ws.recv(timeout=5) == b"still here"
