"""Whisper in this process: faster-whisper on CTranslate2 (int8 on a CPU, float16 on a GPU).

``model`` is a CTranslate2 Whisper directory (the demo recogniser, a converted checkpoint), a hub
id of one (``Systran/faster-whisper-small``), or one of faster-whisper's short names (``small``,
``large-v3-turbo``...). A hub model is downloaded on first use into the Hugging Face cache, like
the translation model; with ``HF_HUB_OFFLINE`` set only the cache is looked at, and a missing
model says so. CTranslate2 decides whether a GPU can be used (``device="auto"``).

One utterance at a time: the model is not re-entrant in a useful way on a CPU (its threads are
already all in use), so calls take a lock with a deadline; a caller that cannot get it in time is
told the recogniser is busy.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from pathlib import Path

import numpy as np

from hunyuan_webui.errors import BusyError, ModelLoadError
from hunyuan_webui.speech.audio import RATE
from hunyuan_webui.speech.recognizer import Described, Piece, Recognition, Recognizer, gated

log = logging.getLogger(__name__)

BUSY_WAIT_S = 30.0
# Temperatures to fall back through when a decode looks like a loop or is unsure (Whisper's
# own scheme, shortened: each step costs a whole decode on a CPU).
TEMPERATURES = (0.0, 0.2, 0.4)


def compute_type_for(device: str, asked: str = "auto") -> str:
    if asked != "auto":
        return asked
    return "float16" if device == "cuda" else "int8"


def resolve_device(asked: str = "auto") -> str:
    """cuda when CTranslate2 sees a CUDA GPU (and it was not refused), else cpu."""
    if asked in ("cpu", "mps"):  # CTranslate2 has no MPS backend
        return "cpu"
    import ctranslate2

    try:
        gpus = ctranslate2.get_cuda_device_count()
    except Exception:  # a CUDA runtime that fails to initialise: no GPU for us
        gpus = 0
    if asked == "cuda" and not gpus:
        raise ModelLoadError("--device cuda was asked for, but CTranslate2 sees no CUDA GPU "
                             "for the speech recogniser.")
    return "cuda" if gpus else "cpu"


class WhisperRecognizer(Recognizer):
    def __init__(self, model: str, *, device: str = "auto", compute_type: str = "auto",
                 cpu_threads: int = 0, demo: bool = False) -> None:
        try:
            from faster_whisper import WhisperModel
        except ImportError:
            raise ModelLoadError("The speech recogniser needs faster-whisper (pip install -r "
                                 "requirements.txt).") from None
        self.device = resolve_device(device)
        self.compute_type = compute_type_for(self.device, compute_type)
        self.beam_size = 5 if self.device == "cuda" else 1
        threads = cpu_threads or max(1, (os.cpu_count() or 2) - 1)
        offline = os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
        try:
            self.model = WhisperModel(model, device=self.device, compute_type=self.compute_type,
                                      cpu_threads=threads, local_files_only=offline)
        except Exception as exc:  # the hub, a bad directory, CUDA: all end in one message
            raise ModelLoadError(_load_failure(model, exc, offline)) from exc
        name = Path(model).name if Path(model).is_dir() else model  # a name, never a path
        self.described = Described(model=name, backend="faster-whisper", device=self.device,
                                   compute_type=self.compute_type, demo=demo)
        self.languages = frozenset(self.model.supported_languages)
        self._lock = threading.Lock()

    def recognize(self, samples: np.ndarray, language: str | None, *,
                  draft: bool = False) -> Recognition:
        if not self._lock.acquire(timeout=BUSY_WAIT_S):
            raise BusyError("The speech recogniser is busy; try again in a moment.")
        try:
            return self._recognize(samples, language, draft)
        finally:
            self._lock.release()

    def _recognize(self, samples: np.ndarray, language: str | None, draft: bool) -> Recognition:
        duration = samples.size / RATE
        segments, info = self.model.transcribe(
            samples.astype(np.float32, copy=False), language=language, task="transcribe",
            beam_size=1 if draft else self.beam_size, best_of=1,
            temperature=0.0 if draft else TEMPERATURES,
            condition_on_previous_text=False, without_timestamps=True, vad_filter=False,
            word_timestamps=False)
        pieces = [Piece(s.text, round(s.start, 2), round(s.end, 2), float(s.no_speech_prob),
                        float(s.avg_logprob)) for s in segments]
        return gated(pieces, info.language, duration)

    def close(self) -> None:
        model = getattr(self, "model", None)
        if model is not None:
            self.model = None
            del model


def warm(recognizer: Recognizer, language: str | None = "en") -> float:
    """One recognition of a second of quiet hum, so the first real one is not the slow one."""
    started = time.perf_counter()
    t = np.arange(RATE) / RATE
    recognizer.recognize((0.01 * np.sin(2 * np.pi * 220 * t)).astype(np.float32),
                         language if language in recognizer.languages else None)
    return time.perf_counter() - started


def _load_failure(model: str, exc: BaseException, offline: bool) -> str:
    text = f"{type(exc).__name__}: {exc}"[:300]
    if Path(model).is_dir():
        return (f"The speech model in {model} could not be loaded ({text}). It must be a "
                "CTranslate2 Whisper directory (model.bin, vocabulary, tokenizer.json): convert "
                "a checkpoint with ct2-transformers-converter, or name a hub model.")
    if offline:
        return (f"The speech model {model} is not in the Hugging Face cache, and HF_HUB_OFFLINE "
                f"is set ({text}). Download it once with a network, or pass --asr-model DIR.")
    return (f"The speech model {model} could not be loaded ({text}). Check the name (e.g. small, "
            "large-v3-turbo, Systran/faster-whisper-small) and the network, or pass --asr-model "
            "DIR, --asr-endpoint URL or --no-speech.")
