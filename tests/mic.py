"""A teacher's microphone as the page drives it, for the tests and the benchmark: 16 kHz mono
16-bit PCM in numbered 100 ms frames over the real WebSocket (``websockets``' own client), every
message from the server kept in order, the frames not yet acknowledged kept for a resend."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode

import numpy as np
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from hunyuan_webui.speech.audio import RATE, decode, to_pcm16

FRAME = RATE // 10  # 100 ms, as the page's worklet sends


def pcm(samples: np.ndarray) -> bytes:
    return to_pcm16(np.asarray(samples, dtype=np.float32))


def wav_samples(wav: bytes) -> np.ndarray:
    return decode(wav)


def silence(seconds: float) -> np.ndarray:
    return np.zeros(int(seconds * RATE), dtype=np.float32)


def noise(seconds: float, level: float = 0.1, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).standard_normal(int(seconds * RATE)) * level).astype(
        np.float32)


def frames(samples: np.ndarray) -> list[bytes]:
    data = pcm(samples)
    return [data[i:i + 2 * FRAME] for i in range(0, len(data), 2 * FRAME)]


class Mic:
    """One press of the microphone button: a session id kept across reconnects."""

    def __init__(self, ws_base: str, code: str, key: str, session: str | None = None) -> None:
        self.url = f"{ws_base}/class/api/rooms/{code}/speech"
        self.key = key
        self.session = session or secrets.token_urlsafe(12)
        self.messages: list[dict[str, Any]] = []
        self.closed: tuple[int | None, str] | None = None
        self.seq = 0  # the next frame's number
        self.sent: dict[int, bytes] = {}  # frames not acknowledged yet
        self.acked = 0
        self.ws: ClientConnection | None = None
        self._reader: threading.Thread | None = None

    def connect(self) -> dict[str, Any]:
        query = urlencode({"key": self.key, "session": self.session})
        self.ws = contextlib.ExitStack().enter_context(
            connect(f"{self.url}?{query}", open_timeout=30, max_size=2**20))
        self.closed = None
        first = json.loads(self.ws.recv(timeout=30))
        self.messages.append(first)
        while first["type"] in ("draft", "final"):  # the old socket's utterance, told late
            first = json.loads(self.ws.recv(timeout=30))
            self.messages.append(first)
        if first["type"] == "ready":
            self._resend(first["next"])
        self._reader = threading.Thread(target=self._read, args=(self.ws,), daemon=True)
        self._reader.start()
        return first

    def _resend(self, start: int) -> None:
        for seq in sorted(s for s in self.sent if s >= start):
            self.ws.send(seq.to_bytes(4, "little") + self.sent[seq])
        self._acked(start)

    def _acked(self, upto: int) -> None:
        self.acked = max(self.acked, upto)
        for seq in [s for s in self.sent if s < upto]:
            del self.sent[seq]

    def _read(self, ws: ClientConnection) -> None:
        try:
            for raw in ws:
                message = json.loads(raw)
                if message["type"] == "ack":
                    self._acked(message["next"])
                self.messages.append(message)
        except ConnectionClosed:
            pass
        finally:
            self.closed = (ws.close_code, ws.close_reason or "")

    def send(self, chunks: Iterable[bytes], pace: float = 0.0) -> None:
        """Frames as the page sends them (``pace``: seconds between frames; 0: at once)."""
        for chunk in chunks:
            self.sent[self.seq] = chunk
            with contextlib.suppress(ConnectionClosed):
                self.ws.send(self.seq.to_bytes(4, "little") + chunk)
            self.seq += 1
            if pace:
                time.sleep(pace)

    def resend(self, first: int, chunks: list[bytes]) -> None:
        """Frames sent again under their old numbers (a confused page)."""
        for seq, chunk in enumerate(chunks, start=first):
            self.ws.send(seq.to_bytes(4, "little") + chunk)

    def stop(self, timeout: float = 120) -> None:
        self.ws.send(json.dumps({"type": "stop"}))
        self.wait_for("stopped", timeout)

    def drop(self) -> None:
        """The network goes: the socket dies without a goodbye."""
        with contextlib.suppress(Exception):
            self.ws.socket.shutdown(2)
        with contextlib.suppress(Exception):
            self.ws.close()
        if self._reader is not None:
            self._reader.join(10)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        if self._reader is not None:
            self._reader.join(10)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in list(self.messages) if m["type"] == kind]

    def wait_for(self, kind: str, timeout: float = 60, count: int = 1) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.of(kind)) < count:
            if time.monotonic() > deadline:
                raise AssertionError(f"no {kind!r} in {timeout} s: {self.messages[-5:]}, "
                                     f"closed {self.closed}")
            time.sleep(0.05)
        return self.of(kind)
