"""Which speech recogniser to load (``--asr-model auto``, the default): what fits this machine,
as :mod:`hunyuan_webui.choice` picks the translation model.

- ``--no-speech``: none.
- ``--asr-endpoint URL``: that server (an OpenAI-compatible ``/v1/audio/transcriptions``).
- ``--asr-model`` named: that model.
- ``--demo`` (asked for, or served because no real translation model could be had): the demo
  recogniser (:mod:`hunyuan_webui.demo.asr`), which knows the demo phrases.
- Otherwise the rows of :data:`GPU_ROWS` when CTranslate2 sees a CUDA GPU, else
  :data:`CPU_ROWS`; the first whose weights are in the Hugging Face cache or can be downloaded
  wins (asked with a short deadline, never when ``HF_HUB_OFFLINE`` is set). A GPU gets
  large-v3-turbo in float16: Whisper large-v3's encoder with a 4-layer decoder, the best
  multilingual accuracy per second. A CPU gets int8: small with 8 cores or more, else base. Whisper
  encodes a whole 30 s window for every utterance (and every draft), so the fixed cost decides:
  on the 2-core machine this project is built on, with random weights of the real shapes, base
  takes about half the length of a 10 s utterance and small longer than the utterance itself
  (``python -m benchmarks.speech_rtf``, ``docs/PERFORMANCE.md``, Speech). When none can be had,
  the app runs without speech, with a banner and a log line that say why and what to do; a class
  is then taught by typing.

Paraformer and SenseVoice (FunASR) recognise Mandarin with far fewer errors than Whisper on a CPU;
they are not offered yet: FunASR pulls in a large stack (modelscope, torchaudio), and the light
ONNX route (sherpa-onnx) would need a tiny model of its own format built for the tests, as the
demo recogniser is for Whisper. The README says so, and how to use one through --asr-endpoint.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from hunyuan_webui import hub
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech.audio import AudioLimits
from hunyuan_webui.speech.recognizer import Recognizer
from hunyuan_webui.speech.service import Speech

log = logging.getLogger(__name__)

AUTO = "auto"
# (faster-whisper's name, its hub repository, the CPU cores it needs to keep up on a CPU)
GPU_ROWS = (("large-v3-turbo", "mobiuslabsgmbh/faster-whisper-large-v3-turbo", 0),
            ("small", "Systran/faster-whisper-small", 0))
CPU_ROWS = (("small", "Systran/faster-whisper-small", 8),
            ("base", "Systran/faster-whisper-base", 0))


DEMO_BANNER = ("**Demo recogniser.** Speech is recognised by a tiny demo model that knows only "
               "the demo phrases as espeak-ng says them (e.g. `espeak-ng -v cmn -w a.wav 早上好。`); "
               "`bash launch.sh` without --demo picks a real one (README, Speech).")


@dataclass(frozen=True)
class SpeechChoice:
    settings: Settings  # asr_model filled in ("" when there is no recogniser)
    reason: str  # one line for the log
    banner: str = ""  # markdown for the page: the demo recogniser, or why there is none


class SpeechProbe(Protocol):
    def gpus(self) -> int: ...  # CUDA GPUs CTranslate2 can use

    def cores(self) -> int: ...

    def cached(self, repo: str) -> bool: ...

    def downloadable(self, repo: str) -> bool: ...


class HubProbe:
    """The real machine: CTranslate2's own view of CUDA, the hub cache, the hub (briefly)."""

    def gpus(self) -> int:
        try:
            import ctranslate2

            return int(ctranslate2.get_cuda_device_count())
        except Exception:  # no CTranslate2, or a CUDA runtime that fails: no GPU for speech
            return 0

    def cores(self) -> int:
        return os.cpu_count() or 1

    def cached(self, repo: str) -> bool:
        try:
            from huggingface_hub import try_to_load_from_cache

            found = try_to_load_from_cache(repo, "model.bin")
        except Exception:  # a malformed id, an unreadable cache: not cached
            return False
        return isinstance(found, str) and Path(found).is_file()

    def downloadable(self, repo: str) -> bool:
        return hub.downloadable(repo)


def choose_speech(settings: Settings, probe: SpeechProbe | None = None) -> SpeechChoice:
    if not settings.speech:
        return SpeechChoice(replace(settings, asr_model=""), "speech: off (--no-speech)")
    if settings.asr_endpoint:
        return SpeechChoice(settings, f"speech: the server at --asr-endpoint "
                                      f"({settings.public()['asr_endpoint']})")
    if settings.asr_model not in (AUTO, ""):
        return SpeechChoice(settings, f"speech: --asr-model {settings.asr_model}")
    if settings.demo:
        from hunyuan_webui.demo.asr import ensure_demo_asr

        return SpeechChoice(replace(settings, asr_model=str(ensure_demo_asr())),
                            "speech: the demo recogniser (it knows only the demo phrases, as "
                            "espeak-ng speaks them)", banner=DEMO_BANNER)
    probe = probe or HubProbe()
    gpus = probe.gpus() if settings.device not in ("cpu", "mps") else 0
    cores = probe.cores()
    rows = GPU_ROWS if gpus else tuple(r for r in CPU_ROWS if cores >= r[2])
    where = "a CUDA GPU" if gpus else f"no GPU, {cores} CPU cores"
    for name, repo, _ in rows:
        source = "cached" if probe.cached(repo) else \
            "to download" if probe.downloadable(repo) else ""
        if source:
            precision = "float16" if gpus else "int8"
            return SpeechChoice(replace(settings, asr_model=name),
                                f"speech: Whisper {name} in {precision} ({where}; weights "
                                f"{source})")
    why = (f"No speech model is cached here ({', '.join(r for _, r, _ in rows)}) and none could be "
           "downloadable" + (" (HF_HUB_OFFLINE is set)" if hub.offline() else ""))
    advice = ("Download one once with a network (`huggingface-cli download "
              f"{rows[0][1]}`), pass --asr-model DIR or --asr-endpoint URL; the class can be "
              "taught by typing meanwhile.")
    return SpeechChoice(replace(settings, asr_model=""), f"speech: off. {why}. {advice}",
                        banner=f"**No speech recogniser.** {why}. {advice}")


def loader(settings: Settings) -> Callable[[], Recognizer]:
    """What loads the recogniser these (chosen) settings name."""
    if settings.asr_endpoint:
        def remote() -> Recognizer:
            from hunyuan_webui.speech.remote import RemoteRecognizer

            return RemoteRecognizer(settings.asr_endpoint or "", model=settings.asr_remote_model,
                                    api_key=settings.asr_api_key,
                                    timeout=settings.remote_timeout)
        return remote
    demo = settings.demo and _is_demo_dir(settings.asr_model)

    def local() -> Recognizer:
        from hunyuan_webui.speech.whisper import WhisperRecognizer

        return WhisperRecognizer(settings.asr_model, device=settings.device,
                                 cpu_threads=settings.cpu_threads, demo=demo)
    return local


def _is_demo_dir(model: str) -> bool:
    from hunyuan_webui.demo.asr import SIDECAR

    return (Path(model) / SIDECAR).is_file()


def build_speech(settings: Settings, choice: SpeechChoice | None = None) -> Speech:
    """The app's recogniser from settings that :func:`choose_speech` has filled in (its
    ``choice`` says why there is none); an unresolved ``auto``, as in settings made by hand,
    counts as no choice made (off), except with --demo."""
    limits = AudioLimits(settings.max_audio_bytes, settings.max_audio_seconds)
    if not settings.speech:
        return Speech.off("Speech is turned off (--no-speech).")
    if not settings.asr_endpoint and settings.asr_model in (AUTO, ""):
        if settings.asr_model == AUTO and settings.demo:
            return build_speech(choose_speech(settings).settings)
        reason = choice.reason.removeprefix("speech: off. ") if choice else \
            "No speech recogniser was chosen (--asr-model)."
        return Speech(None, reason=reason, limits=limits)
    model = settings.asr_endpoint or settings.asr_model
    return Speech(loader(settings), model=model, warmup=settings.warmup, limits=limits)
