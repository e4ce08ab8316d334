"""The translator as a Python library: load a model once, then translate, stream and batch, in a
notebook or a script, without running the server.

    from hunyuan_webui import Translator

    translator = Translator.load(demo=True)          # or model="tencent/Hunyuan-MT-7B", dtype=...
    translator.translate("谢谢你的帮助。", to="en")    # 'Thank you for your help.'
    for piece in translator.stream("早上好。", to="en"):
        print(piece, end="")
    translator.translate_many(["你好", "谢谢。"], to="en")

    from hunyuan_webui import Transcriber

    Transcriber.load(demo=True).transcribe("speech.wav", language="zh").text   # '早上好。'

A thin facade over the service the web app runs (:class:`hunyuan_webui.service.Translator`): the
same official prompts, language detection, sentence segmentation, phrase cache and batching. The
command line is built on it; the server hands its ``service`` to the page and the HTTP routes.
Every keyword of :class:`~hunyuan_webui.settings.Settings` (``dtype``, ``device``, ``cache_dir``,
``max_batch_size``...) may be given to :meth:`Translator.load`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from hunyuan_webui import service
from hunyuan_webui.choice import AUTO as AUTO_MODEL
from hunyuan_webui.choice import with_demo
from hunyuan_webui.core import kinds
from hunyuan_webui.detect import Detection
from hunyuan_webui.engine import EngineState
from hunyuan_webui.errors import InputError, ModelLoadError
from hunyuan_webui.languages import AUTO, LANGUAGES, Language, normalize
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.modes import parse_glossary, parse_instructions
from hunyuan_webui.service import Job, TranslationRequest, TranslationResult
from hunyuan_webui.settings import Settings
from hunyuan_webui.speech import Listener, Pacing, Speech, SpeechStatus, Transcript

# What a call may ask for besides decoding options (which DecodingOptions checks and lists).
REQUEST_KEYWORDS = ("mode", "glossary", "context", "variants", "style", "instructions",
                    "data_format")


class Translator:
    """A loaded model and everything around it; ``translate``, ``stream``, ``translate_many``."""

    def __init__(self, service_: service.Translator) -> None:
        self.service = service_

    # -- loading ----------------------------------------------------------------------------------
    @classmethod
    def load(cls, model: str | None = None, *, demo: bool = False, wait: bool = True,
             timeout: float | None = None, **settings: Any) -> Translator:
        """Load ``model`` (a hub id or a directory; by default what fits this machine, as
        ``bash launch.sh`` picks it: :mod:`hunyuan_webui.choice`) or, with ``demo=True``, the
        bundled demo model. By default the model runs in this process (``engine="local"``)
        and this call returns once it is ready; ``wait=False`` returns at once."""
        names = {f.name for f in fields(Settings)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise InputError(f"Unknown setting(s) {', '.join(unknown)}. Valid: "
                             f"{', '.join(sorted(names))}.")
        settings.setdefault("engine", kinds.LOCAL)  # no web server here to share the GIL with
        if model is not None:
            settings["model"] = model
        resolved = Settings(**settings)
        if demo:
            resolved = with_demo(resolved)
        elif resolved.model == AUTO_MODEL:
            from hunyuan_webui.choice import choose

            resolved = choose(resolved).settings
        return cls.from_settings(resolved, wait=wait, timeout=timeout)

    @classmethod
    def from_settings(cls, settings: Settings, *, wait: bool = True,
                      timeout: float | None = None) -> Translator:
        """From a settings object, as the command line and the server build theirs."""
        translator = cls(service.Translator.from_settings(settings))
        if wait:
            translator.wait_ready(timeout)
        return translator

    def wait_ready(self, timeout: float | None = None) -> None:
        """Block until the model is loaded and warm; raise with the reason if it failed."""
        status = self.service.engine.wait_ready(timeout)
        if status.state != EngineState.READY:
            raise ModelLoadError(status.reason or f"The model is {status.state}.")

    def close(self) -> None:
        """Stop the model (every engine this process loaded: they are shared per process)."""
        from hunyuan_webui.engine import close_engines

        close_engines()

    def __enter__(self) -> Translator:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- translating ------------------------------------------------------------------------------
    def request(self, text: str, to: str, source: str = AUTO, **options: Any) -> TranslationRequest:
        """The service's request for these arguments. ``options`` are decoding options
        (``deterministic``, ``temperature``, ``top_p``, ``top_k``, ``repetition_penalty``,
        ``max_new_tokens``, ``seed``; what is left out is the loaded model's default) and ``mode``,
        ``glossary``, ``context``, ``variants``, ``style``, ``instructions``, ``data_format``."""
        extra = {k: options.pop(k) for k in REQUEST_KEYWORDS if k in options}
        return TranslationRequest(
            text=text, target_lang=to, source_lang=source,
            options=self.service.decoding(**options), mode=extra.get("mode", TRANSLATE),
            glossary=parse_glossary(extra.get("glossary")), context=extra.get("context", ""),
            variants=extra.get("variants", 3), style=extra.get("style", ""),
            instructions=parse_instructions(extra.get("instructions", ())),
            data_format=extra.get("data_format", ""))

    def job(self, text: str, to: str, source: str = AUTO, **options: Any) -> Job:
        """A translation in progress: iterate its updates, ``result()``, ``cancel()``."""
        return self.service.start(self.request(text, to, source, **options))

    def translate(self, text: str, to: str, source: str = AUTO, **options: Any) -> str:
        """The translation of ``text`` into ``to`` (a code such as "en", "zh", "zh-Hant")."""
        return self.result(text, to, source, **options).text

    def result(self, text: str, to: str, source: str = AUTO, **options: Any) -> TranslationResult:
        """The whole result: text, detected source, cache hits, token usage, notices."""
        return self.job(text, to, source, **options).result()

    def stream(self, text: str, to: str, source: str = AUTO, **options: Any) -> Iterator[str]:
        """The translation as it is generated; the pieces join to exactly ``translate``'s text.
        A piece is never taken back: with the answer checks on, each sentence comes once it is
        judged whole (``job()`` streams as the model writes, its updates ``replaced`` when the
        checks take text back)."""
        for update in self.job(text, to, source, **options).hold():
            if update.delta:
                yield update.delta

    def translate_many(self, texts: Sequence[str], to: str, source: str = AUTO,
                       **options: Any) -> list[str]:
        """Several texts at once, in order; their sentences share the model's batches."""
        requests = [self.request(t, to, source, **dict(options)) for t in texts]
        return [r.text for r in self.service.translate_many(requests)]

    def detect(self, text: str) -> Detection:
        """The language of ``text`` (``.code`` is None when it cannot be told)."""
        return self.service.detect(text)

    @property
    def languages(self) -> tuple[Language, ...]:
        return LANGUAGES

    @property
    def model(self) -> str:
        return self.service.spec.id


class Transcriber:
    """A loaded speech recogniser; ``transcribe`` a file, or ``listen`` to a stream.

        from hunyuan_webui import Transcriber

        ear = Transcriber.load(demo=True)              # or model="small", endpoint="http://..."
        ear.transcribe("lesson.wav", language="zh")     # '早上好。请打开书。'
        ear.transcribe(wav_bytes, language="en").utterances   # with times and pieces

    The recogniser the server runs (:mod:`hunyuan_webui.speech`): the same voice activity
    detection, the same gate against invented sentences, the same model choice
    (:mod:`hunyuan_webui.speech_choice`) when no model is named.
    """

    def __init__(self, speech: Speech) -> None:
        self.speech = speech

    @classmethod
    def load(cls, model: str | None = None, *, demo: bool = False, endpoint: str | None = None,
             wait: bool = True, timeout: float | None = None, **settings: Any) -> Transcriber:
        """Load ``model`` (a CTranslate2 Whisper directory, a hub id, or a faster-whisper name
        such as ``small``; by default what fits this machine), the demo recogniser
        (``demo=True``), or use the transcription server at ``endpoint``. Other keywords are
        :class:`~hunyuan_webui.settings.Settings` fields (``device``, ``max_audio_seconds``...)."""
        from hunyuan_webui.speech_choice import build_speech, choose_speech

        names = {f.name for f in fields(Settings)}
        unknown = sorted(set(settings) - names)
        if unknown:
            raise InputError(f"Unknown setting(s) {', '.join(unknown)}. Valid: "
                             f"{', '.join(sorted(names))}.")
        if model is not None:
            settings["asr_model"] = model
        if endpoint is not None:
            settings["asr_endpoint"] = endpoint
        chosen = choose_speech(Settings(demo=demo, **settings))
        transcriber = cls(build_speech(chosen.settings, chosen))
        if wait:
            transcriber.wait_ready(timeout)
        return transcriber

    def wait_ready(self, timeout: float | None = None) -> None:
        status = self.speech.wait_ready(timeout)
        if status.state != "ready":
            raise ModelLoadError(status.reason or f"The speech recogniser is {status.state}.")

    def transcribe(self, audio: str | Path | bytes, language: str | None = None) -> Transcript:
        """The text of a sound file (a path or its bytes) in ``language`` (a code such as
        "zh" or "en"; None detects it from the first words): ``.text``, ``.utterances``."""
        data = audio if isinstance(audio, bytes) else Path(audio).read_bytes()
        return self.speech.transcribe(data, normalize(language) if language else None)

    def listen(self, language: str | None, **pacing: Any) -> Listener:
        """The streaming API: ``feed`` 16 kHz mono 16-bit PCM, get Draft and Final events
        (:class:`~hunyuan_webui.speech.listener.Listener`; ``pacing``: its
        :class:`~hunyuan_webui.speech.listener.Pacing` fields)."""
        return self.speech.listener(normalize(language) if language else None, Pacing(**pacing))

    @property
    def status(self) -> SpeechStatus:
        return self.speech.status()

    def close(self) -> None:
        self.speech.close()

    def __enter__(self) -> Transcriber:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
