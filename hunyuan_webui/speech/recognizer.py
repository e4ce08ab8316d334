"""The recogniser's interface and what it answers, and the gate against invented sentences.

A :class:`Recognizer` turns one utterance (16 kHz mono float32, at most 30 s: voice activity
detection has already cut it, :mod:`hunyuan_webui.speech.listener`) into a :class:`Recognition`:
its text and the pieces it came in, each with Whisper's no-speech probability and average log
probability. The language is given, never guessed per utterance: a class's teacher language is
the recognition language, so a short or unclear utterance cannot flip into another language
(``language=None`` detects it, for the OpenAI route without a ``language``).

Backends: :class:`~hunyuan_webui.speech.whisper.WhisperRecognizer` (faster-whisper / CTranslate2,
in this process) and :class:`~hunyuan_webui.speech.remote.RemoteRecognizer` (an OpenAI-compatible
``/v1/audio/transcriptions`` server: vLLM, or another of these apps).

Whisper models write text for silence and noise ("Thank you for watching."). The first defence is
voice activity detection (no voice, no recognition); the second is :func:`keep`, applied to every
piece whatever the backend: Whisper's own rule (a no-speech probability over 0.6 with an average
log probability under -1 is dropped) and a hard ceiling (over 0.9 is dropped however sure the
text looks).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np

from hunyuan_webui.errors import InputError

NO_SPEECH = 0.6  # Whisper's no_speech_threshold
LOGPROB = -1.0  # Whisper's logprob_threshold
NO_SPEECH_CEILING = 0.9  # beyond this a piece is dropped even when its words look sure
# Languages written without spaces between words: recognised pieces join without one.
UNSPACED = frozenset({"zh", "ja", "yue", "th", "lo", "my", "bo", "km"})


@dataclass(frozen=True)
class Piece:
    """One stretch of recognised text (a Whisper segment)."""

    text: str
    start: float = 0.0  # seconds from the start of the audio
    end: float = 0.0
    no_speech_prob: float = 0.0
    avg_logprob: float = 0.0


@dataclass(frozen=True)
class Recognition:
    text: str
    language: str
    duration: float  # seconds of audio heard
    pieces: tuple[Piece, ...] = field(default_factory=tuple)
    dropped: int = 0  # pieces the gate removed


def keep(piece: Piece) -> bool:
    """Whether a piece is speech rather than something invented over silence or noise."""
    if not piece.text.strip():
        return False
    if piece.no_speech_prob > NO_SPEECH_CEILING:
        return False
    return not (piece.no_speech_prob > NO_SPEECH and piece.avg_logprob < LOGPROB)


def join(texts: list[str], language: str) -> str:
    glue = "" if language.split("-")[0] in UNSPACED else " "
    return glue.join(t.strip() for t in texts if t.strip())


def gated(pieces: list[Piece], language: str, duration: float) -> Recognition:
    kept = [p for p in pieces if keep(p)]
    return Recognition(join([p.text for p in kept], language), language, duration, tuple(kept),
                       dropped=len(pieces) - len(kept))


@dataclass(frozen=True)
class Described:
    """What is loaded, for ``/ready`` and the page's banner."""

    model: str
    backend: str  # "faster-whisper" or "remote"
    device: str = ""
    compute_type: str = ""
    demo: bool = False


class Recognizer(ABC):
    """One loaded speech model."""

    described: Described
    languages: frozenset[str]  # Whisper language codes it can be told to use

    @abstractmethod
    def recognize(self, samples: np.ndarray, language: str | None, *,
                  draft: bool = False) -> Recognition:
        """The gated recognition of ``samples``; ``draft``: a quick look at an unfinished
        utterance (a cheaper search where the backend has one)."""

    def close(self) -> None:  # noqa: B027 (a backend that holds nothing frees nothing)
        """Free the model."""

    def language_for(self, code: str | None) -> str | None:
        """The recogniser's code for one of ours (zh-Hant is zh to Whisper), or a clear refusal."""
        if code is None:
            return None
        base = code.split("-")[0].lower()
        if base == "yue" and "yue" not in self.languages:
            base = "zh"  # Whisper before large-v3 writes Cantonese as Chinese
        if base not in self.languages:
            raise InputError(f"The speech recogniser ({self.described.model}) does not know the "
                             f"language {code!r}; speak in one it knows, or type.")
        return base
