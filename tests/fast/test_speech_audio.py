"""Audio in (hunyuan_webui.speech.audio): any WAV, OGG and MP3 from memory, as 16 kHz mono; what
cannot be read is a 415 with words, what is too big a 413, before or while it is decoded."""

from __future__ import annotations

import io
import wave

import av
import numpy as np
import pytest

from hunyuan_webui.errors import InputTooLongError, UnsupportedAudioError
from hunyuan_webui.speech import audio


def tone(seconds: float, rate: int, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def wav(samples: np.ndarray, rate: int, channels: int = 1, width: int = 2) -> bytes:
    frames = np.repeat(samples[:, None], channels, axis=1)
    if width == 2:
        data = (frames * 32767).astype("<i2").tobytes()
    else:
        data = ((frames * 127) + 128).astype(np.uint8).tobytes()
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as w:
        w.setnchannels(channels)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(data)
    return buffer.getvalue()


def encoded(samples: np.ndarray, rate: int, fmt: str, codec: str) -> bytes:
    """A sound file written by FFmpeg (PyAV) in memory."""
    buffer = io.BytesIO()
    with av.open(buffer, "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=rate)
        stream.layout = "mono"
        frame = av.AudioFrame.from_ndarray((samples[None] * 32767).astype(np.int16), format="s16",
                                           layout="mono")
        frame.sample_rate = rate
        for packet in stream.encode(frame):
            out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return buffer.getvalue()


@pytest.mark.parametrize(("rate", "channels", "width"),
                         [(16000, 1, 2), (8000, 1, 2), (44100, 2, 2), (22050, 6, 2),
                          (48000, 1, 1)])
def test_any_wav_becomes_16k_mono(rate: int, channels: int, width: int) -> None:
    samples = audio.decode(wav(tone(2.0, rate), rate, channels, width))
    assert samples.dtype == np.float32
    assert abs(samples.size - 2 * audio.RATE) <= 0.01 * audio.RATE
    # Still a 440 Hz tone at its level: the channels were mixed, not summed or interleaved.
    spectrum = np.abs(np.fft.rfft(samples[:audio.RATE]))
    assert abs(np.argmax(spectrum) - 440) <= 2
    assert 0.3 < np.max(np.abs(samples)) < 0.6


@pytest.mark.parametrize(("fmt", "codec"), [("ogg", "libopus"), ("mp3", "mp3"),
                                            ("flac", "flac")])
def test_compressed_files_are_read(fmt: str, codec: str) -> None:
    rate = 48000 if codec == "libopus" else 44100
    samples = audio.decode(encoded(tone(1.5, rate, 330.0), rate, fmt, codec))
    assert abs(samples.size - 1.5 * audio.RATE) <= 0.1 * audio.RATE
    spectrum = np.abs(np.fft.rfft(samples[:audio.RATE]))
    assert abs(np.argmax(spectrum) - 330) <= 3


@pytest.mark.parametrize("data", [b"not a sound file at all", b"RIFF\x00\x00\x00\x00WAVEjunk",
                                  b"%PDF-1.7\n" + b"x" * 2000, b"\x00" * 5000])
def test_unreadable_audio_is_refused_with_words(data: bytes) -> None:
    with pytest.raises(UnsupportedAudioError) as caught:
        audio.decode(data)
    assert caught.value.http_status == 415
    assert "sound file" in caught.value.user_message or "no sound" in caught.value.user_message


def test_empty_and_silent_files() -> None:
    with pytest.raises(UnsupportedAudioError, match="empty"):
        audio.decode(b"")
    assert audio.decode(wav(np.zeros(1600, dtype=np.float32), 16000)).size == 1600


def test_oversized_file_is_refused_before_decoding() -> None:
    limits = audio.AudioLimits(max_bytes=10_000)
    with pytest.raises(InputTooLongError) as caught:
        audio.decode(wav(tone(1.0, 16000), 16000), limits)
    assert caught.value.http_status == 413
    assert "10,000 bytes" in caught.value.user_message


def test_small_file_that_expands_too_long_is_stopped() -> None:
    """An hour of silence compresses to almost nothing: the length is checked while decoding."""
    data = encoded(np.zeros(16000 * 30, dtype=np.float32), 16000, "flac", "flac")
    assert len(data) < 100_000
    with pytest.raises(InputTooLongError, match="longer than 10 seconds"):
        audio.decode(data, audio.AudioLimits(max_seconds=10))


def test_pcm_frames() -> None:
    pcm = (np.array([0, 16384, -32768, 32767], dtype="<i2")).tobytes()
    assert audio.pcm16(pcm).tolist() == [0.0, 0.5, -1.0, 32767 / 32768]
    with pytest.raises(UnsupportedAudioError, match="16-bit"):
        audio.pcm16(b"\x00\x01\x02")
    back = audio.decode(audio.wav_bytes(tone(0.5, 16000)))
    assert np.max(np.abs(back - tone(0.5, 16000))) < 1e-3
