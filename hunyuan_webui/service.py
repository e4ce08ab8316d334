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

from hunyuan_webui import languages, modes, structured
from hunyuan_webui.cache import PhraseCache, cache_key
from hunyuan_webui.detect import Detection, LanguageDetector
from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.errors import (
    BusyError,
    CancelledError,
    EngineError,
    InputError,
    InputTooLongError,
    UnsupportedModeError,
)
from hunyuan_webui.job import Job, TranslationRequest, TranslationResult, Update
from hunyuan_webui.models import CHIMERA, ModelSpec
from hunyuan_webui.segment import Document, line_document, split_document, whole_document
from hunyuan_webui.settings import Settings

__all__ = ["Job", "TranslationRequest", "TranslationResult", "Translator", "Update"]

log = logging.getLogger(__name__)

ALTERNATIVES_MAX_CHARS = 1000
SHARE_WAIT_S = 60.0  # how long a request waits for the engine to accept a segment it shares


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
        self._inflight: dict[str, _Flight] = {}
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
                       options=request.options or self.spec.decoding, style=request.style.strip(),
                       instructions=instructions, data_format=data_format)

    def decoding(self, **overrides: object) -> DecodingOptions:
        """Decoding options starting from the loaded model's defaults (its model card's)."""
        return DecodingOptions.from_mapping(overrides, self.spec.decoding)

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
        if request.mode in modes.WHOLE_TEXT_MODES:
            document = whole_document(request.text)
        elif request.mode in modes.PARAGRAPH_MODES:
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
        window = self.settings.segments_in_flight()
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
                                        request.glossary, request.context, request.mode,
                                        style=request.style, instructions=request.instructions,
                                        data_format=request.data_format)

    def key_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        return cache_key(model=self.spec.id, source_lang=source, target_lang=request.target_lang,
                         mode=request.mode, text=segment,
                         options={**request.options.cache_fields(),
                                  "glossary": list(request.glossary), "context": request.context,
                                  **_mode_fields(request)})

    def cacheable(self, request: TranslationRequest) -> bool:
        """May this request's segments be answered from the cache (and shared in flight)?

        Yes by default, whatever the decoding settings: the options are part of the key, so a
        repeated request gets the answer the first one got. ``cache=False`` asks for a fresh one.
        """
        return request.cache and self.writes_cache(request)

    def writes_cache(self, request: TranslationRequest) -> bool:
        """Are this request's answers stored? Also when it asked for a fresh one (Retranslate):
        the fresh answer replaces the old."""
        return (self.cache is not None and self.cache.enabled
                and request.mode not in modes.PARAGRAPH_MODES)

    def in_flight(self) -> int:
        """Distinct segments being generated or submitted right now (shared ones count once)."""
        with self._inflight_lock:
            return len(self._inflight)

    # -- sharing sequences between identical requests ---------------------------------------------
    def share_or_submit(self, keys: Sequence[str], prompts_: Sequence[str],
                        options: DecodingOptions, *, share: bool, store: bool) -> list[Stream]:
        """Streams for these segments, each already attached to the caller (who must detach it):
        shared with identical ones in flight when ``share``, else submitted in one engine call.

        Locking: ``_inflight_lock`` guards only the ``_inflight`` table. Nothing that can block or
        call back (the engine, stream callbacks, the cache, waiting for another submitter) runs
        while it is held, so no lock order exists to get wrong. A key being submitted is held by a
        :class:`_Flight` whose stream arrives when the engine answers; joiners wait on it outside
        the lock, with a deadline.
        """
        first_index = {k: i for i, k in reversed(list(enumerate(keys)))}
        streams: dict[str, Stream] = {}
        todo = sorted(first_index, key=first_index.__getitem__)
        try:
            for _ in range(3):  # a joined sequence whose readers all left is submitted afresh
                todo = self._gather(todo, prompts_, first_index, options, share, store, streams)
                if not todo:
                    return [streams[k] for k in keys]
            raise BusyError("The translator is busy; please try again in a moment.")
        except BaseException:
            for stream in streams.values():
                stream.detach()
            raise

    def _gather(self, todo: list[str], prompts_: Sequence[str], first_index: dict[str, int],
                options: DecodingOptions, share: bool, store: bool,
                streams: dict[str, Stream]) -> list[str]:
        """One round: join or submit every key in ``todo``; returns the keys to try again."""
        joined, mine = self._claim(todo, share)
        if mine:
            submitted = self._submit_flights(mine, [prompts_[first_index[k]] for k in mine],
                                             options, store)
            streams.update(zip(mine, submitted))
        again = []
        for key, flight in joined.items():
            stream = flight.wait(SHARE_WAIT_S)
            stream.attach()
            if stream.cancelled:  # its last reader left just before we came: not usable
                stream.detach()
                again.append(key)
            else:
                streams[key] = stream
        return again

    def _claim(self, keys: Sequence[str], share: bool
               ) -> tuple[dict[str, _Flight], dict[str, _Flight | None]]:
        """Split ``keys`` into flights to join and keys this caller submits (with the flight it
        now owns for each, None when not sharing)."""
        joined: dict[str, _Flight] = {}
        mine: dict[str, _Flight | None] = {}
        with self._inflight_lock:
            for key in keys:
                flight = self._inflight.get(key) if share else None
                if flight is not None and not flight.abandoned():
                    joined[key] = flight
                elif share:
                    mine[key] = self._inflight[key] = _Flight()
                else:
                    mine[key] = None
        return joined, mine

    def _submit_flights(self, owned: dict[str, _Flight | None], prompts_: list[str],
                        options: DecodingOptions, store: bool) -> list[Stream]:
        keys = list(owned)
        try:
            streams = self.engine.submit(prompts_, options)
        except BaseException as exc:
            with self._inflight_lock:
                for key, flight in owned.items():
                    if flight is not None and self._inflight.get(key) is flight:
                        del self._inflight[key]
            for flight in owned.values():
                if flight is not None:
                    flight.fail(exc)
            raise
        with self._inflight_lock:
            self.model_calls += len(streams)
        for key, stream in zip(keys, streams):
            stream.attach()
            flight = owned.get(key)
            if flight is not None:
                flight.land(stream)
            # Outside the lock: a stream that has already ended runs the callback right here.
            stream.add_done_callback(
                lambda s, key=key, flight=flight: self._on_done(key, flight, s, store))
        return streams

    def _on_done(self, key: str, flight: _Flight | None, stream: Stream, store: bool) -> None:
        if flight is not None:
            with self._inflight_lock:
                if self._inflight.get(key) is flight:
                    del self._inflight[key]
        if store and stream.finish_reason == "stop" and self.cache is not None:
            self.cache.set(key, stream.text)


class _Flight:
    """A segment in flight: submitted (its stream not known yet) or generating."""

    def __init__(self) -> None:
        self._landed = threading.Event()
        self.stream: Stream | None = None
        self.error: BaseException | None = None

    def land(self, stream: Stream) -> None:
        self.stream = stream
        self._landed.set()

    def fail(self, error: BaseException) -> None:
        self.error = error
        self._landed.set()

    def abandoned(self) -> bool:
        """Failed, or every reader left (its sequence is cancelled): not worth joining."""
        return self._landed.is_set() and (self.stream is None or self.stream.cancelled)

    def wait(self, timeout: float) -> Stream:
        if not self._landed.wait(timeout):
            raise EngineError(f"The engine did not accept a shared segment within {timeout:g}s; "
                              "please try again.")
        if self.stream is None:
            assert self.error is not None
            raise self.error
        return self.stream


def _mode_fields(request: TranslationRequest) -> dict[str, object]:
    """The newer modes' inputs, in the cache key only when given (older keys stay valid)."""
    fields = {"style": request.style, "instructions": list(request.instructions),
              "data_format": request.data_format}
    return {name: value for name, value in fields.items() if value}


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
