"""Audio in: any file PyAV (FFmpeg) reads, or raw 16-bit PCM, as 16 kHz mono float32 samples.

The recognisers take 16 kHz mono (Whisper's input, and Silero VAD's). A WAV at any sample rate and
channel count, OGG/Opus, WebM, MP3, FLAC, M4A: whatever the bundled FFmpeg decodes is decoded from
memory and resampled by FFmpeg's own resampler (the one faster-whisper uses). Nothing is written to
disk. The size of the file is checked before decoding and the length of the sound while decoding,
so a small file that expands into hours (a decompression bomb) is stopped early
(:class:`~hunyuan_webui.errors.InputTooLongError`, 413). What cannot be read is an
:class:`~hunyuan_webui.errors.UnsupportedAudioError` (415) that says so.
"""

from __future__ import annotations

import io
import wave
from dataclasses import dataclass
from typing import Any

import numpy as np

from hunyuan_webui.errors import InputTooLongError, UnsupportedAudioError

RATE = 16_000  # samples per second everywhere past this module
FORMATS = "WAV, OGG/Opus, WebM, MP3, FLAC or M4A"


@dataclass(frozen=True)
class AudioLimits:
    max_bytes: int = 25_000_000  # OpenAI's own limit for a transcription upload
    max_seconds: float = 3600.0

    def check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise InputTooLongError(f"The audio file is {size:,} bytes; the limit is "
                                    f"{self.max_bytes:,} bytes.")

    def too_long(self) -> InputTooLongError:
        return InputTooLongError(f"The audio is longer than {self.max_seconds:g} seconds, the "
                                 "limit for one file.")


def decode(data: bytes, limits: AudioLimits = AudioLimits()) -> np.ndarray:
    """``data`` (a whole sound file) as 16 kHz mono float32 in [-1, 1]."""
    limits.check_size(len(data))
    if not data:
        raise UnsupportedAudioError("The audio file is empty.")
    try:
        import av
    except ImportError:  # the remote recogniser alone needs no FFmpeg: plain WAV still works
        return _decode_wav(data, limits)
    try:
        samples = _decode_av(av, data, limits)
    except InputTooLongError:
        raise
    except Exception as exc:  # whatever FFmpeg makes of bytes that are not sound: unreadable
        raise UnsupportedAudioError(f"This is not a sound file that can be read ({FORMATS}): "
                                    f"{_reason(exc)}") from None
    if samples.size == 0:
        raise UnsupportedAudioError("The audio file holds no sound.")
    return samples


def _decode_av(_av: Any, data: bytes, limits: AudioLimits) -> np.ndarray:
    max_samples = int(limits.max_seconds * RATE)
    resampler = _av.AudioResampler(format="s16", layout="mono", rate=RATE)
    chunks: list[np.ndarray] = []
    total = 0
    with _av.open(io.BytesIO(data), mode="r", metadata_errors="ignore") as container:
        if not container.streams.audio:
            raise ValueError("it has no audio track")
        for frame in container.decode(audio=0):
            for out in resampler.resample(frame):
                chunk = out.to_ndarray().reshape(-1)
                total += chunk.size
                if total > max_samples:
                    raise limits.too_long()
                chunks.append(chunk)
        for out in resampler.resample(None):
            chunks.append(out.to_ndarray().reshape(-1))
    if not chunks:
        return np.zeros(0, dtype=np.float32)
    return (np.concatenate(chunks)[:max_samples].astype(np.float32) / 32768.0)


def _decode_wav(data: bytes, limits: AudioLimits) -> np.ndarray:
    """16-bit PCM WAV without FFmpeg (linear resampling): for installs without PyAV."""
    try:
        with wave.open(io.BytesIO(data)) as w:
            if w.getsampwidth() != 2:
                raise UnsupportedAudioError("Without PyAV only 16-bit PCM WAV can be read.")
            rate, channels, frames = w.getframerate(), w.getnchannels(), w.getnframes()
            if frames / rate > limits.max_seconds:
                raise limits.too_long()
            pcm = np.frombuffer(w.readframes(frames), dtype="<i2")
    except (wave.Error, EOFError) as exc:
        raise UnsupportedAudioError(f"This is not a WAV file that can be read: {exc}") from None
    mono = pcm.reshape(-1, channels).mean(axis=1) / 32768.0
    return resample(mono.astype(np.float32), rate)


def resample(samples: np.ndarray, rate: int) -> np.ndarray:
    """Linear resampling to 16 kHz (only for the PyAV-less path and tests' fixtures)."""
    if rate == RATE or samples.size == 0:
        return samples.astype(np.float32)
    n = int(round(samples.size * RATE / rate))
    return np.interp(np.arange(n) * rate / RATE, np.arange(samples.size),
                     samples).astype(np.float32)


def pcm16(frame: bytes) -> np.ndarray:
    """Raw little-endian 16-bit mono PCM (a stream's frames) as float32."""
    if len(frame) % 2:
        raise UnsupportedAudioError("PCM frames are 16-bit: an odd number of bytes was sent.")
    return np.frombuffer(frame, dtype="<i2").astype(np.float32) / 32768.0


def to_pcm16(samples: np.ndarray) -> bytes:
    return (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2").tobytes()


def wav_bytes(samples: np.ndarray, rate: int = RATE) -> bytes:
    """16-bit mono WAV in memory (what the remote recogniser sends)."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(to_pcm16(samples))
    return buffer.getvalue()


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text[:200]
