"""One request, from validation to a job: everything between a request and the engine.

Data flows one way: request -> validation -> language detection -> segmentation -> phrase cache ->
engine -> stream. :meth:`BaseTranslator.start` checks everything that can be checked before any
model work and returns a :class:`~hunyuan_webui.service.translate.job.Job` to iterate. The front
ends do not call it: they go through the front door,
:meth:`Translator.translate_texts <hunyuan_webui.service.door.translator.Translator.translate_texts>`,
which builds on this class (texts of any length, in parts; many texts batched together).

Each distinct segment is looked up in the cache on its own, and identical segments in flight at
the same time (in one document or across users) share one engine sequence
(:mod:`hunyuan_webui.service.translate.inflight`).
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import replace
from typing import Self

from hunyuan_webui import languages, modes, structured
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.detect import Detection, LanguageDetector
from hunyuan_webui.engine import DecodingOptions, Engine, EngineStatus, Stream
from hunyuan_webui.errors import (
    InputError,
    InputTooLongError,
    UnsupportedModeError,
)
from hunyuan_webui.models import CHIMERA, ModelSpec
from hunyuan_webui.segment import (
    Document,
    is_translatable,
    line_document,
    most_tokens,
    split_document,
    whole_document,
)
from hunyuan_webui.service.checks.answers import Guards
from hunyuan_webui.service.translate.backend import Backend
from hunyuan_webui.service.translate.inflight import Flights
from hunyuan_webui.service.translate.job import Job
from hunyuan_webui.service.translate.paragraphs import Paragraphs
from hunyuan_webui.service.translate.request import TranslationRequest
from hunyuan_webui.service.translate.sentences import Sentences
from hunyuan_webui.service.translate.strategy import Reader
from hunyuan_webui.settings import Settings

log = logging.getLogger(__name__)

ALTERNATIVES_MAX_CHARS = 1000
PREVIOUS_FACTOR = 4  # a previous translation at most this many times the text (and 200 chars)
# The notice of a text with nothing for the model to translate (digits, punctuation, symbols, a
# URL, an e-mail address): it comes back as it is, as DeepL echoes it. The page words it itself.
NOTHING_TO_TRANSLATE = ("Nothing to translate (only numbers, punctuation, symbols or "
                        "addresses): returned as it is.")


class BaseTranslator:
    """Validates, detects, segments, caches, and streams one request's translation from one
    engine; what the engine is doing, and how long a text is in its tokens."""

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
        self.guards = Guards.from_settings(settings, spec.family, self.detector)
        self.backend = Backend(spec=spec, engine=engine, chimera=self.chimera, cache=cache,
                               flights=Flights(engine, cache),
                               window=settings.segments_in_flight(), guards=self.guards)

    @classmethod
    def from_settings(cls, settings: Settings) -> Self:
        """The engine (shared per process), cache and detector these settings ask for."""
        from hunyuan_webui import models
        from hunyuan_webui.engine import get_engine

        spec = models.resolve(settings.model)
        cache = None
        if settings.cache_size or settings.cache_dir or settings.redis_url:
            cache = PhraseCache(size=settings.cache_size, directory=settings.cache_dir,
                                redis_url=settings.redis_url)
        config = settings.engine_config()
        chimera = None
        if settings.chimera_model:
            chimera = get_engine(models.resolve(settings.chimera_model), config)
        return cls(get_engine(spec, config), spec, settings, cache=cache, chimera=chimera)

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
        source = languages.normalize_source(source)
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
        if not isinstance(request.context, str) or not isinstance(request.style, str):
            raise InputError("The context and the style must be text.")
        instructions = modes.parse_instructions(request.instructions)
        modes.check_inputs(request.mode, glossary, request.style, instructions)
        data_format = request.data_format
        if request.mode in modes.WHOLE_TEXT_MODES and request.text.strip():
            data_format = (structured.normalize_format(data_format) if data_format
                           else structured.detect_format(request.text))
            structured.check_source(request.text, data_format)
        return replace(request, source_lang=source, target_lang=target, glossary=glossary,
                       options=self._with_draft(request), style=request.style.strip(),
                       instructions=instructions, data_format=data_format)

    def _with_draft(self, request: TranslationRequest) -> DecodingOptions:
        """The request's decoding options, carrying its previous translation to the engine as a
        source of drafts (speculative decoding: hunyuan_webui.engine.drafts)."""
        options = request.options or self.spec.decoding
        previous = request.previous
        if not isinstance(previous, str) or len(previous) > PREVIOUS_FACTOR * len(request.text) + 200:
            raise InputError("The previous translation must be text, and not many times longer "
                             "than the text.")
        return replace(options, draft=previous) if previous else options

    def decoding(self, **overrides: object) -> DecodingOptions:
        """Decoding options starting from the loaded model's defaults (its model card's)."""
        return DecodingOptions.from_mapping(overrides, self.spec.decoding)

    def _source(self, source: str, text: str) -> tuple[str, Detection | None]:
        """The source language: ``source``, or detected in ``text`` when it is ``auto``."""
        if source != languages.AUTO:
            return source, None
        detection = self.detect(text)
        if detection.code is None:
            raise InputError("Could not detect the source language; please choose it.")
        return detection.code, detection

    def detect(self, text: str) -> Detection:
        return self.detector.detect(text[:2000])

    # -- the streaming primitive ------------------------------------------------------------------
    def start(self, request: TranslationRequest) -> Job:
        """Validate and plan a translation; raise user errors now, before any model work."""
        request = self.validate(request)
        if not request.text.strip():
            return self._job(request, request.source_lang, Document(()), None)
        if not is_translatable(request.text):
            # "12345" with a detected source failed detection (three red error badges on the
            # page); with a chosen one it was sent nowhere anyway. Echoed, not sent to the model.
            return self._job(request, request.source_lang, Document(()), None, passthrough=True,
                             notice=NOTHING_TO_TRANSLATE)
        source, detection = self._source(request.source_lang, request.text)
        if source == request.target_lang:
            name = languages.get(source).english
            return self._job(request, source, Document(()), detection, passthrough=True,
                             notice=f"The text is already in {name}; returned unchanged.")
        self._check_tokens(request.text)
        if request.mode in modes.WHOLE_TEXT_MODES:
            document = whole_document(request.text)
        elif request.mode in modes.PARAGRAPH_MODES:
            document = line_document(request.text)
        else:
            document = split_document(request.text, source)
        notices = modes.notices_for(self.spec, request.mode, request.glossary, request.context)
        return self._job(request, source, document, detection, notice=" ".join(notices))

    def _job(self, request: TranslationRequest, source: str, document: Document,
             detection: Detection | None, notice: str = "", passthrough: bool = False) -> Job:
        kind = Paragraphs if request.mode in modes.PARAGRAPH_MODES else Sentences
        strategy = kind(self.backend, request, source, document, Reader(self.backend))
        return Job(strategy, detection, notice=notice, passthrough=passthrough)

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
        self.backend.flights.count(1)
        return stream

    def _check_tokens(self, text: str) -> None:
        limit = self.settings.max_input_tokens
        if most_tokens(text) <= limit:  # short enough that counting cannot refuse it
            return
        count = self.count_tokens(text)
        if count > limit:
            raise InputTooLongError(f"The text is {count:,} tokens long; the limit is {limit:,}. "
                                    "Split it into smaller parts (or raise --max-input-tokens).")

    # -- what the front ends and tests read ---------------------------------------------------------
    def status(self) -> EngineStatus:
        """What the engine is doing now: loading, ready, failed (and why), its batch and queue."""
        return self.engine.status()

    def wait_ready(self, timeout: float | None = None) -> EngineStatus:
        """Block until the engine is ready or has failed (or ``timeout`` seconds): its status."""
        return self.engine.wait_ready(timeout)

    def count_tokens(self, text: str) -> int:
        """How many tokens the loaded model's tokenizer makes of ``text``."""
        return self.engine.count_tokens(text)

    def prompt_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        return self.backend.prompt_for(segment, source, request)

    def key_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        return self.backend.key_for(segment, source, request)

    def in_flight(self) -> int:
        """Distinct segments being generated or submitted right now (shared ones count once)."""
        return len(self.backend.flights)

    @property
    def model_calls(self) -> int:
        """Sequences sent to the engine (cache hits and shared segments are not calls)."""
        return self.backend.flights.calls


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
