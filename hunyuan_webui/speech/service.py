"""The recogniser as the app holds it: loaded and warmed in the background at start, in honest
states (``loading``, ``ready``, ``failed``, ``off``), and the few things the edges ask of it.

``/ready``, ``/health`` and the page's banner read :meth:`Speech.status`: which recogniser is
loaded, on what, or why there is none. ``off`` is a state, not an error: ``--no-speech``, or no
recogniser could be had on this machine; a class is then taught by typing, and a speech request
is answered with the reason (:class:`~hunyuan_webui.errors.ModelLoadError`, 503).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from enum import StrEnum

from hunyuan_webui.errors import ModelLoadError, NotReadyError, TranslatorError
from hunyuan_webui.speech.audio import AudioLimits, decode
from hunyuan_webui.speech.listener import Listener, Pacing
from hunyuan_webui.speech.recognizer import Recognizer
from hunyuan_webui.speech.transcript import Transcript, transcribe
from hunyuan_webui.speech.whisper import warm

log = logging.getLogger(__name__)
DEFAULT_LIMITS = AudioLimits()
DEFAULT_PACING = Pacing()


class SpeechState(StrEnum):
    OFF = "off"
    LOADING = "loading"
    READY = "ready"
    FAILED = "failed"


@dataclass(frozen=True)
class SpeechStatus:
    state: SpeechState
    model: str = ""
    backend: str = ""
    device: str = ""
    compute_type: str = ""
    demo: bool = False
    reason: str = ""

    @property
    def settled(self) -> bool:
        """Loading is over, one way or the other (``/ready`` waits for this)."""
        return self.state != SpeechState.LOADING

    def to_dict(self) -> dict[str, object]:
        return {k: (str(v) if k == "state" else v) for k, v in asdict(self).items()}


class Speech:
    """The one recogniser of the process (or the reason there is none)."""

    def __init__(self, load: Callable[[], Recognizer] | None, *, model: str = "",
                 reason: str = "", warmup: bool = True, warm_language: str | None = "en",
                 limits: AudioLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self._recognizer: Recognizer | None = None
        self._done = threading.Event()
        if load is None:
            self._status = SpeechStatus(SpeechState.OFF, reason=reason or "Speech is off.")
            self._done.set()
            return
        self._status = SpeechStatus(SpeechState.LOADING, model=model, reason="loading")
        self._thread = threading.Thread(target=self._load, args=(load, warmup, warm_language),
                                        name="hymt-speech-load", daemon=True)
        self._thread.start()

    @classmethod
    def off(cls, reason: str) -> Speech:
        return cls(None, reason=reason)

    def _load(self, load: Callable[[], Recognizer], warmup: bool, language: str | None) -> None:
        try:
            recognizer = load()
            if warmup:
                seconds = warm(recognizer, language)
                log.info("speech recogniser warm (%.2fs)", seconds)
        except TranslatorError as exc:
            self._status = SpeechStatus(SpeechState.FAILED, model=self._status.model,
                                        reason=exc.user_message)
            log.warning("speech recogniser unavailable (the class can still be typed): %s",
                        exc.user_message)
        except Exception as exc:  # any backend's own failure: reported, not raised in a thread
            self._status = SpeechStatus(SpeechState.FAILED, model=self._status.model,
                                        reason=f"{type(exc).__name__}: {exc}"[:300])
            log.exception("speech recogniser failed to load")
        else:
            self._recognizer = recognizer
            d = recognizer.described
            self._status = SpeechStatus(SpeechState.READY, model=d.model, backend=d.backend,
                                        device=d.device, compute_type=d.compute_type,
                                        demo=d.demo)
            log.info("speech recogniser ready: %s (%s %s %s)", d.model, d.backend, d.device,
                     d.compute_type)
        finally:
            self._done.set()

    def status(self) -> SpeechStatus:
        return self._status

    def wait_ready(self, timeout: float | None = None) -> SpeechStatus:
        self._done.wait(timeout)
        return self._status

    def recognizer(self) -> Recognizer:
        status = self._status
        if status.state == SpeechState.READY and self._recognizer is not None:
            return self._recognizer
        if status.state == SpeechState.LOADING:
            raise NotReadyError("The speech recogniser is still loading; try again in a moment.")
        raise ModelLoadError(f"Speech recognition is not available: {status.reason}")

    def transcribe(self, data: bytes, language: str | None) -> Transcript:
        """A sound file (bytes, never written to disk) as text in ``language``."""
        recognizer = self.recognizer()
        language = recognizer.language_for(language)  # refused before decoding anything
        return transcribe(recognizer, decode(data, self.limits), language)

    def listener(self, language: str | None, pacing: Pacing = DEFAULT_PACING) -> Listener:
        return Listener(self.recognizer(), language, pacing=pacing)

    def close(self) -> None:
        if self._recognizer is not None:
            self._recognizer.close()
