"""The parts of a spoken class under load (:mod:`benchmarks.room_speech`): the teacher's sound,
the teacher's microphone as the page drives it, and the students' phones.

- :func:`lesson_sound`: espeak-ng's voice (:func:`hunyuan_webui.demo.voices.speak`) saying the
  demo's class sentences with pauses between them, as 16 kHz mono float samples, and where each
  sentence's voice ends (the last sample above a small level: espeak pads its WAV with quiet).
- :class:`Microphone`: ``WS /class/api/rooms/{code}/speech`` as ``static/live/capture.js`` speaks
  it: numbered 100 ms frames of 16-bit PCM, sent when each is "captured" (real time), the frames
  not acknowledged kept, and after a drop a reconnect with the same session id that resends from
  the frame the server says it needs.
- :class:`Phone`: one student's event stream; when each sentence and each finished translation
  arrived.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx
import numpy as np

from hunyuan_webui.speech.audio import RATE, decode, to_pcm16

FRAME = RATE // 10  # samples in one 100 ms frame, as the page's worklet sends them
VOICE_LEVEL = 0.01  # a sample above this (of full scale) is voice, below it espeak's padding


@dataclass(frozen=True)
class Utterance:
    text: str
    start: int  # the first sample of its voice in the stream
    end: int  # one past its last voiced sample


def voice(text: str, lang: str) -> np.ndarray:
    """``text`` as espeak-ng says it, trimmed to its voice (no leading or trailing quiet)."""
    from hunyuan_webui.demo.voices import speak

    samples = decode(speak(text, lang))
    loud = np.flatnonzero(np.abs(samples) > VOICE_LEVEL)
    return samples[loud[0]:loud[-1] + 1] if loud.size else samples


def lesson_sound(sentences: list[str], lang: str, pause_s: float,
                 lead_s: float = 1.0) -> tuple[np.ndarray, list[Utterance]]:
    """The sentences spoken one after another, ``pause_s`` of silence after each."""
    said = {text: voice(text, lang) for text in set(sentences)}
    parts, marks, at = [np.zeros(int(lead_s * RATE), dtype=np.float32)], [], int(lead_s * RATE)
    for text in sentences:
        parts.append(said[text])
        marks.append(Utterance(text, at, at + said[text].size))
        at += said[text].size
        quiet = np.zeros(int(pause_s * RATE), dtype=np.float32)
        parts.append(quiet)
        at += quiet.size
    return np.concatenate(parts), marks


def white_noise(seconds: float, level: float = 0.1, seed: int = 0) -> np.ndarray:
    """Gaussian white noise, ``level`` its standard deviation (0.1: about -20 dB full scale)."""
    rng = np.random.default_rng(seed)
    return np.clip(rng.standard_normal(int(seconds * RATE)) * level, -1, 1).astype(np.float32)


def frames(samples: np.ndarray) -> list[bytes]:
    data = to_pcm16(samples)
    return [data[i:i + 2 * FRAME] for i in range(0, len(data), 2 * FRAME)]


class Microphone:
    """One press of the teacher's 🎤: a session id kept across reconnects, frames numbered from
    0 for the session's life, the unacknowledged ones kept for a resend."""

    def __init__(self, base_url: str, code: str, key: str) -> None:
        ws = base_url.replace("http://", "ws://", 1)
        self.session = secrets.token_urlsafe(12)
        self.url = f"{ws}/class/api/rooms/{code}/speech?" + urlencode(
            {"key": key, "session": self.session})
        self.seq = 0  # the next frame's number
        self.unacked: dict[int, bytes] = {}
        self.messages: list[dict[str, Any]] = []
        self.connects = 0
        self.ws: Any = None
        self._reader: asyncio.Task[None] | None = None

    async def connect(self) -> dict[str, Any]:
        from websockets.asyncio.client import connect

        self.ws = await connect(self.url, open_timeout=30, max_size=2**20)
        ready = json.loads(await asyncio.wait_for(self.ws.recv(), 30))
        self.messages.append(ready)
        if ready.get("type") != "ready":
            raise RuntimeError(f"the microphone was refused: {ready}")
        self.connects += 1
        for seq in sorted(s for s in self.unacked if s >= ready["next"]):
            await self.ws.send(seq.to_bytes(4, "little") + self.unacked[seq])
        self._acked(ready["next"])
        self._reader = asyncio.create_task(self._read(self.ws))
        return ready

    def _acked(self, upto: int) -> None:
        for seq in [s for s in self.unacked if s < upto]:
            del self.unacked[seq]

    async def _read(self, ws: Any) -> None:
        with contextlib.suppress(Exception):  # the connection went: a drop, or the end
            async for raw in ws:
                message = json.loads(raw)
                if message.get("type") == "ack":
                    self._acked(message["next"])
                self.messages.append(message)

    async def send(self, chunk: bytes) -> None:
        """One captured frame: kept until acknowledged, sent if the socket is up."""
        self.unacked[self.seq] = chunk
        with contextlib.suppress(Exception):
            await self.ws.send(self.seq.to_bytes(4, "little") + chunk)
        self.seq += 1

    def drop(self) -> None:
        """The Wi-Fi goes: the connection dies without a goodbye."""
        self.ws.transport.abort()

    async def stop(self, timeout: float = 120.0) -> bool:
        """The microphone is off: the server finishes the utterance in progress, then says
        ``stopped``."""
        await self.ws.send(json.dumps({"type": "stop"}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(m.get("type") == "stopped" for m in self.messages):
                return True
            await asyncio.sleep(0.1)
        return False

    def finals(self) -> list[dict[str, Any]]:
        """The utterances the server finished and posted (some text), each once."""
        seen: dict[str, dict[str, Any]] = {}
        for m in self.messages:
            if m.get("type") == "final" and m.get("text"):
                seen.setdefault(m["utterance"], m)
        return list(seen.values())

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
        with contextlib.suppress(Exception):
            await self.ws.close()


async def speak_live(mic: Microphone, samples: np.ndarray, *, drop_at: int | None = None,
                     offline_frames: int = 5) -> float:
    """Send ``samples`` as frames in real time: frame ``i`` leaves when its last sample has been
    "captured". Returns the clock at which the first sample was (the start of this sound).
    ``drop_at``: the connection dies before that frame, ``offline_frames`` frames are captured
    while it is down (kept, unsent), then the page reconnects and resends."""
    chunks = frames(samples)
    start = time.monotonic()
    back = None if drop_at is None else drop_at + offline_frames
    for i, chunk in enumerate(chunks):
        await asyncio.sleep(max(0.0, start + (i + 1) * FRAME / RATE - time.monotonic()))
        if i == drop_at:
            mic.drop()
        if i == back:
            await mic.connect()
        await mic.send(chunk)
    return start


class Phone:
    """One student's stream: when each sentence (``seq``) and each finished translation
    (``sid``) arrived, and what broke."""

    def __init__(self, lang: str) -> None:
        self.lang, self.student = lang, ""
        self.sentences: dict[int, tuple[float, str]] = {}
        self.got: dict[int, float] = {}
        self.errors: list[str] = []

    async def follow(self, http: httpx.AsyncClient, url: str, code: str) -> None:
        params = {"student": self.student, "lang": self.lang}
        try:
            async with http.stream("GET", f"{url}/class/api/rooms/{code}/events", params=params,
                                   timeout=httpx.Timeout(30, read=None)) as r:
                if r.status_code != 200:
                    self.errors.append(f"stream answered {r.status_code}")
                    return
                async for line in r.aiter_lines():
                    if line.startswith("data: "):
                        self._event(json.loads(line[6:]))
        except httpx.HTTPError as exc:
            self.errors.append(f"stream broke: {type(exc).__name__}")

    def _event(self, event: dict[str, Any]) -> None:
        now = time.monotonic()
        if event.get("type") == "sentence":
            self.sentences.setdefault(event["seq"], (now, event["text"]))
        elif event.get("type") == "translation":
            if "error" in event:
                self.errors.append(f"translation failed: {event['error']}")
            else:
                self.got.setdefault(event["sid"], now)

    def sentences_between(self, start: float, end: float) -> list[tuple[int, str]]:
        """The sentences that arrived in ``[start, end)`` (clock), in their order."""
        return [(seq, text) for seq, (at, text) in sorted(self.sentences.items())
                if start <= at < end]
