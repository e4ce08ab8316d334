"""Voice activity: Silero VAD (the ``silero-vad`` package, which ships its model) through
onnxruntime, one 32 ms window at a time.

Each :class:`VoiceDetector` keeps its own recurrent state (one per stream: a class's teacher, one
uploaded file) and answers the speech probability of each window of 512 samples in turn. The
model runs on one thread: it needs about a tenth of a millisecond per window.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np

from hunyuan_webui.errors import ModelLoadError

WINDOW = 512  # samples at 16 kHz: Silero's window
_LOCK = threading.Lock()


def _load() -> object:
    try:
        from silero_vad import load_silero_vad
    except ImportError:
        raise ModelLoadError("Voice activity detection needs silero-vad (pip install -r "
                             "requirements.txt).") from None
    with _LOCK, warnings.catch_warnings():  # onnxruntime sessions are made one at a time
        warnings.simplefilter("ignore", DeprecationWarning)  # its own use of importlib
        return load_silero_vad(onnx=True)


class VoiceDetector:
    """Silero's model and its state for one stream; :meth:`probability` of each window in turn."""

    def __init__(self) -> None:
        self.model = _load()

    def probability(self, window: np.ndarray) -> float:
        """The speech probability of the next :data:`WINDOW` samples of the stream."""
        import torch

        return float(self.model(torch.from_numpy(window.astype(np.float32)), 16000).item())

    def reset(self) -> None:
        self.model.reset_states()
