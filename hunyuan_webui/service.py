"""The translation service: everything between a request and the engine.

Data flows one way: request -> validation -> language detection -> segmentation -> phrase cache ->
engine -> stream. The UI, the HTTP API and the command line all call :meth:`Translator.start`, which
checks everything that can be checked before any model work and returns a
:class:`~hunyuan_webui.job.Job` to iterate (see :mod:`hunyuan_webui.job`).

Each distinct segment is looked up in the cache on its own, and identical segments in flight at
the same time (in one document or across users) share one engine sequence.
"""

from __future__ import annotations

import logging
import threading
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import replace

from hunyuan_webui import languages, modes
from hunyuan_webui.cache import PhraseCache, cache_key
from hunyuan_webui.detect import Detection, LanguageDetector
from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.errors import (
    CancelledError,
    InputError,
    InputTooLongError,
    UnsupportedModeError,
)
from hunyuan_webui.job import Job, TranslationRequest, TranslationResult, Update, line_document
from hunyuan_webui.models import CHIMERA, ModelSpec
from hunyuan_webui.segment import Document, split_document
from hunyuan_webui.settings import Settings

__all__ = ["Job", "TranslationRequest", "TranslationResult", "Translator", "Update"]

log = logging.getLogger(__name__)

ALTERNATIVES_MAX_CHARS = 1000


class Translator:
    """Validates, detects, segments, caches, and streams translations from one engine."""

    def __init__(self, engine: Engine, spec: ModelSpec, settings: Settings,
                 cache: PhraseCache | None = None, detector: LanguageDetector | None = None,
                 chimera: Engine | None = None) -> None:
        self.engine = engine
        self.spec = spec
        # The engine that fuses ensemble candidates: the model itself if it is Chimera.
        self.chimera = chimera or (engine if spec.supports(CHIMERA) else None)
        self.settings = settings
        self.cache = cache
        self.detector = detector or LanguageDetector()
        self._inflight: dict[str, Stream] = {}
        self._inflight_lock = threading.Lock()
        self.model_calls = 0  # segments sent to the engine (cache misses not shared in flight)

    @classmethod
    def from_settings(cls, settings: Settings) -> Translator:
        """The engine (shared per process), cache and detector these settings ask for."""
        from hunyuan_webui import models
        from hunyuan_webui.engine import get_engine

        spec = models.resolve(settings.model)
        cache = None
        if settings.cache_size or settings.cache_dir or settings.redis_url:
            cache = PhraseCache(size=settings.cache_size, directory=settings.cache_dir,
                                redis_url=settings.redis_url)
        chimera = None
        if settings.chimera_model:
            chimera = get_engine(replace(settings, model=settings.chimera_model))
        return cls(get_engine(settings), spec, settings, cache=cache, chimera=chimera)

    # -- validation -------------------------------------------------------------------------------
    def validate(self, request: TranslationRequest) -> TranslationRequest:
        """Check everything that can be checked before any model work; normalise codes."""
        if not isinstance(request.text, str):
            raise InputError("The text must be a string.")
        _reject_binary(request.text)
        limit = self.settings.max_input_chars
        if len(request.text) > limit:
            raise InputTooLongError(
                f"The text is {len(request.text):,} characters long; the limit is {limit:,}. "
                f"Split it into smaller parts (or raise --max-input-chars).")
        target = languages.normalize(request.target_lang)
        source = request.source_lang
        source = languages.AUTO if source.strip().lower() == languages.AUTO else languages.normalize(source)
        if request.mode not in modes.MODES:
            raise UnsupportedModeError(f"Unknown mode {request.mode!r}. Modes: "
                                       f"{', '.join(modes.MODES)}.")
        if request.mode == "ensemble" and self.chimera is None:
            raise UnsupportedModeError(
                "Ensemble mode fuses candidates with tencent/Hunyuan-MT-Chimera-7B, which is not "
                "loaded. Serve it alone (--model tencent/Hunyuan-MT-Chimera-7B: it writes the "
                "candidates too) or beside this model (--chimera-model "
                "tencent/Hunyuan-MT-Chimera-7B, about 14 GiB more GPU memory in bf16).")
        if request.mode == "alternatives":
            if not 1 <= request.variants <= modes.MAX_ALTERNATIVES:
                raise InputError(f"Ask for 1 to {modes.MAX_ALTERNATIVES} alternatives.")
            if len(request.text) > ALTERNATIVES_MAX_CHARS:
                raise InputTooLongError(f"Alternatives are for short texts (at most "
                                        f"{ALTERNATIVES_MAX_CHARS} characters).")
        glossary = modes.parse_glossary(request.glossary)
        if not isinstance(request.context, str):
            raise InputError("The context must be text.")
        return replace(request, source_lang=source, target_lang=target, glossary=glossary)

    def detect(self, text: str) -> Detection:
        return self.detector.detect(text[:2000])

    # -- the streaming primitive ------------------------------------------------------------------
    def start(self, request: TranslationRequest) -> Job:
        """Validate and plan a translation; raise user errors now, before any model work."""
        request = self.validate(request)
        detection = None
        source = request.source_lang
        if not request.text.strip():
            return Job(self, request, source, None, Document(()), notice="")
        if source == languages.AUTO:
            detection = self.detect(request.text)
            if detection.code is None:
                raise InputError("Could not detect the source language; please choose it.")
            source = detection.code
        if source == request.target_lang:
            name = languages.get(source).english
            notice = f"The text is already in {name}; returned unchanged."
            return Job(self, request, source, detection, Document(()), notice=notice,
                       passthrough=True)
        self._check_tokens(request.text)
        if request.mode in modes.PARAGRAPH_MODES:
            document = line_document(request.text)
        else:
            document = split_document(request.text, source)
        notices = modes.notices_for(self.spec, request.mode, request.glossary, request.context)
        return Job(self, request, source, detection, document, notice=" ".join(notices))

    def translate(self, request: TranslationRequest) -> TranslationResult:
        return self.start(request).result()

    def translate_many(self, requests: Sequence[TranslationRequest]) -> list[TranslationResult]:
        """Several texts at once: all are validated first, then their segments batch together."""
        jobs = [self.start(r) for r in requests]
        try:
            for job in jobs:
                job.prime()
            return [job.result() for job in jobs]
        finally:
            for job in jobs:
                if job._result is None:
                    job.cancel()

    def translate_segments(self, segments: Sequence[str], template: TranslationRequest,
                           progress: Callable[[int, int], None] | None = None,
                           cancelled: threading.Event | None = None) -> list[str]:
        """Translate many short texts (a file's sentences) like ``template``, in order.

        An ``auto`` source is detected once over all of them. Segments are submitted a window
        ahead of the one being read, so they batch without overflowing the engine's queue.
        """
        source = template.source_lang
        if source.strip().lower() == languages.AUTO:
            detection = self.detect("\n".join(segments)[:2000])
            if detection.code is None:
                raise InputError("Could not detect the source language; please choose it.")
            source = detection.code
        jobs = [self.start(replace(template, text=seg, source_lang=source)) for seg in segments]
        window = max(2 * self.settings.max_batch_size, 8)
        out: list[str] = []
        try:
            for i, job in enumerate(jobs):
                for ahead in jobs[i:i + window]:
                    ahead.prime()
                if cancelled is not None and cancelled.is_set():
                    raise CancelledError("The translation was stopped.")
                out.append(job.result().text)
                if progress is not None:
                    progress(i + 1, len(jobs))
            return out
        finally:
            for job in jobs:
                if job._result is None:
                    job.cancel()

    def generate(self, prompt: str, options: DecodingOptions) -> Stream:
        """Plain generation for a message that is not a translation prompt (the OpenAI-compatible
        route's other requests): the same input limits and the same engine batches, no cache."""
        if len(prompt) > self.settings.max_input_chars:
            raise InputTooLongError(
                f"The message is {len(prompt):,} characters long; the limit is "
                f"{self.settings.max_input_chars:,}.")
        _reject_binary(prompt)
        self._check_tokens(prompt)
        [stream] = self.engine.submit([prompt], options)
        self.model_calls += 1
        return stream

    def _check_tokens(self, text: str) -> None:
        limit = self.settings.max_input_tokens
        # Characters bound tokens from above for byte-level BPE: skip the count for short text.
        if len(text) <= limit:
            return
        count = self.engine.count_tokens(text)
        if count > limit:
            raise InputTooLongError(f"The text is {count:,} tokens long; the limit is {limit:,}. "
                                    "Split it into smaller parts (or raise --max-input-tokens).")

    def prompt_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        return modes.translation_prompt(self.spec, segment, source, request.target_lang,
                                        request.glossary, request.context, request.mode)

    def key_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        return cache_key(model=self.spec.id, source_lang=source, target_lang=request.target_lang,
                         mode=request.mode, text=segment,
                         options={**request.options.cache_fields(),
                                  "glossary": list(request.glossary), "context": request.context})

    def cacheable(self, request: TranslationRequest) -> bool:
        options = request.options
        return self.cache is not None and self.cache.enabled and (
            request.mode not in modes.PARAGRAPH_MODES) and (
            options.deterministic or self.settings.cache_sampled)

    # -- sharing sequences between identical requests ---------------------------------------------
    def share_or_submit(self, keys: Sequence[str], prompts_: Sequence[str],
                options: DecodingOptions, cacheable: bool) -> list[Stream]:
        """Streams for these segments: shared with identical ones in flight, else new."""
        share = options.deterministic or self.settings.cache_sampled
        with self._inflight_lock:
            found = {k: self._inflight[k] for k in keys if share and k in self._inflight
                     and not self._inflight[k].cancelled}
            # Each distinct key once: a sentence repeated in a document runs the model once.
            first_index = {k: i for i, k in reversed(list(enumerate(keys)))}
            missing = [i for k, i in first_index.items() if k not in found]
            missing.sort()
            new = self.engine.submit([prompts_[i] for i in missing], options) if missing else []
            self.model_calls += len(new)
            for i, stream in zip(missing, new):
                key = keys[i]
                found[key] = stream
                if share:
                    self._inflight[key] = stream
                stream.add_done_callback(lambda s, key=key: self._on_done(key, s, cacheable))
        return [found[k] for k in keys]

    def _on_done(self, key: str, stream: Stream, cacheable: bool) -> None:
        with self._inflight_lock:
            if self._inflight.get(key) is stream:
                del self._inflight[key]
        if cacheable and stream.finish_reason == "stop" and self.cache is not None:
            self.cache.set(key, stream.text)


def _reject_binary(text: str) -> None:
    """Binary junk (NUL bytes, control characters, lone surrogates) gets a clear message."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("The text contains invalid characters (unpaired surrogates); "
                         "send valid UTF-8 text.") from None
    if "\x00" in text:
        raise InputError("The text contains binary data (NUL bytes); send plain text.")
    controls = sum(1 for ch in text if unicodedata.category(ch) == "Cc" and ch not in "\n\r\t\f\v")
    if controls and controls > max(3, len(text) // 20):
        raise InputError("The text looks like binary data (many control characters); "
                         "send plain text.")
