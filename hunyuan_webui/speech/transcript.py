"""A whole recording at once: the streaming :class:`~hunyuan_webui.speech.listener.Listener` run
over it without drafts, its utterances gathered into one :class:`Transcript`. The one path from
an uploaded file to text (the class's speech route, OpenAI's transcription route, the library)."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from hunyuan_webui.speech.audio import RATE
from hunyuan_webui.speech.listener import Final, Listener, Pacing
from hunyuan_webui.speech.recognizer import Recognizer, join

FILE_PACING = replace(Pacing(), draft_every_s=0.0)


@dataclass(frozen=True)
class Transcript:
    text: str
    language: str
    duration: float  # seconds of audio
    utterances: tuple[Final, ...]  # those with words, in order


def transcribe(recognizer: Recognizer, samples: np.ndarray, language: str | None,
               pacing: Pacing = FILE_PACING) -> Transcript:
    listener = Listener(recognizer, language, pacing=pacing)
    events = listener.feed(samples) + listener.finish()
    finals = tuple(e for e in events if isinstance(e, Final) and e.text)
    spoken = listener.language or (finals[0].recognition.language if finals and
                                   finals[0].recognition else "") or (language or "")
    return Transcript(join([f.text for f in finals], spoken), spoken,
                      round(samples.size / RATE, 3), finals)
