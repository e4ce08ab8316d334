"""The translation service: everything between a request and the engine.

Data flows one way: request -> validation -> language detection -> segmentation -> phrase cache ->
engine -> stream. The UI, the HTTP API and the command line all call :meth:`Translator.start`, which
returns a :class:`Job`; iterating the job yields :class:`Update` objects whose ``delta`` strings
concatenate to exactly the final text (layout included), and the last update carries the
:class:`TranslationResult`. A whole translation is ``job.result()``: derived, never written twice.

Segments of one request are submitted to the engine together so they share batches; their
output is streamed in document order. Each distinct segment is looked up in the cache on its own,
and identical segments in flight at the same time (in one document or across users) share one
engine sequence.
"""

from __future__ import annotations

import logging
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hunyuan_webui import languages, modes, prompts
from hunyuan_webui.cache import PhraseCache, cache_key
from hunyuan_webui.detect import Detection, LanguageDetector
from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.errors import (
    BusyError,
    CancelledError,
    InputError,
    InputTooLongError,
    UnsupportedModeError,
)
from hunyuan_webui.models import CHIMERA, FORMATTED, TRANSLATE, ModelSpec
from hunyuan_webui.segment import Document, Piece, is_translatable, split_document
from hunyuan_webui.settings import Settings

log = logging.getLogger(__name__)

BUSY_RETRY_S = 60.0  # how long a long document waits for room before giving up
ALTERNATIVES_MAX_CHARS = 1000


@dataclass(frozen=True)
class TranslationRequest:
    text: str
    target_lang: str
    source_lang: str = languages.AUTO
    options: DecodingOptions = field(default_factory=DecodingOptions)
    mode: str = TRANSLATE
    glossary: tuple[tuple[str, str], ...] = ()
    context: str = ""
    variants: int = 3  # alternatives mode: how many


@dataclass
class TranslationResult:
    text: str
    source_lang: str
    target_lang: str
    model: str
    cached: bool
    detection: Detection | None = None
    notice: str = ""
    segments: int = 0
    cached_segments: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    glossary_found: tuple[str, ...] = ()
    glossary_missing: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()  # alternatives mode: every variant, the first is ``text``
    candidates: tuple[str, ...] = ()  # ensemble mode: what Chimera fused

    def to_dict(self) -> dict[str, Any]:
        out = {
            "translation": self.text, "source_lang": self.source_lang,
            "target_lang": self.target_lang, "model": self.model, "cached": self.cached,
            "usage": {**self.usage, "segments": self.segments,
                      "cached_segments": self.cached_segments},
        }
        if self.detection is not None:
            out["detected"] = {"language": self.detection.code,
                               "confidence": round(self.detection.confidence, 4),
                               "reliable": self.detection.reliable}
        if self.notice:
            out["notice"] = self.notice
        if self.glossary_found or self.glossary_missing:
            out["glossary"] = {"found": list(self.glossary_found),
                               "missing": list(self.glossary_missing)}
        if self.alternatives:
            out["alternatives"] = list(self.alternatives)
        if self.candidates:
            out["candidates"] = list(self.candidates)
        return out


@dataclass(frozen=True)
class Update:
    delta: str
    text: str  # everything so far
    done_segments: int
    total_segments: int
    result: TranslationResult | None = None  # set on the last update only


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
    def _submit(self, keys: Sequence[str], prompts_: Sequence[str],
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


class Job:
    """One translation in progress: iterate for updates, ``cancel()`` to stop it."""

    def __init__(self, translator: Translator, request: TranslationRequest, source: str,
                 detection: Detection | None, document: Document, notice: str = "",
                 passthrough: bool = False) -> None:
        self.translator = translator
        self.request = request
        self.source = source
        self.detection = detection
        self.document = document
        self.notice = notice
        self.passthrough = passthrough
        self._cancelled = threading.Event()
        self._streams: dict[int, Stream] = {}  # segment index (or a serial) -> its sequence
        self._cached: dict[int, str] = {}
        self.started_at = time.perf_counter()
        self.first_token_at: float | None = None
        self._result: TranslationResult | None = None
        self._keys: list[str] | None = None
        self._cacheable = False
        self._format_broken = 0
        self._alternatives: list[tuple[str, ...]] = []
        self._candidates: list[tuple[str, ...]] = []
        self._window = max(2 * translator.settings.max_batch_size, 8)

    @property
    def total_segments(self) -> int:
        return len(self.document.segments)

    def cancel(self) -> None:
        """Stop: every segment no other request shares is cancelled at the engine's next step."""
        self._cancelled.set()
        self._release()

    def _release(self) -> None:
        streams, self._streams = list(self._streams.values()), {}
        for stream in streams:
            stream.detach()

    def prime(self) -> Job:
        """Look the segments up in the cache and submit the first window now, without reading.

        Starting several jobs and priming each before reading any lets their segments share
        batches (the API's list input does this).
        """
        if self._keys is not None or self.passthrough or not self.document.segments:
            return self
        segments = self.document.segments
        self._keys = [self.translator.key_for(s, self.source, self.request) for s in segments]
        self._cacheable = self.translator.cacheable(self.request)
        cache = self.translator.cache
        if self._cacheable and cache is not None:
            for i, hit in enumerate(cache.get_many(self._keys)):
                if hit is not None:
                    self._cached[i] = hit
        self._submit_upto(min(len(segments), self._window), first=True)
        return self

    def __iter__(self) -> Iterator[Update]:
        if self._cancelled.is_set():
            return
        if self.passthrough or not self.document.segments:
            text = self.request.text if self.passthrough else ""
            yield Update(text, text, 0, 0, self._finish(text))
            return
        if self.request.mode in modes.PARAGRAPH_MODES:
            yield from self._paragraph_mode()
            return
        self.prime()
        segments = self.document.segments
        out: list[str] = []
        index = 0
        try:
            gap = languages.sentence_gap(self.request.target_lang)  # as Document.render does
            previous_translated = False
            for piece in self.document.pieces:
                if not piece.translate:
                    out.append(piece.text)
                    previous_translated = False
                    yield Update(piece.text, "".join(out), index, len(segments))
                    continue
                self._submit_upto(min(len(segments), index + self._window), first=False)
                if previous_translated and gap:
                    out.append(gap)
                    yield Update(gap, "".join(out), index, len(segments))
                previous_translated = True
                for chunk in self._chunks(index):
                    if self.first_token_at is None:
                        self.first_token_at = time.perf_counter()
                    out.append(chunk)
                    yield Update(chunk, "".join(out), index, len(segments))
                if self._cancelled.is_set():
                    return  # stopped by its owner: end quietly, with no result
                index += 1
            text = "".join(out)
            yield Update("", text, index, len(segments), self._finish(text))
        finally:
            if self._result is None:
                self.cancel()

    def _chunks(self, index: int) -> Iterator[str]:
        """The text of segment ``index`` as it arrives; returns early once the job is cancelled."""
        if index in self._cached:
            yield self._cached[index]
            return
        yield from self._read(self._streams[index])

    def _read(self, stream: Stream) -> Iterator[str]:
        position = 0
        while not self._cancelled.is_set():
            chunks, finished = stream.read(position, timeout=0.25)
            position += len(chunks)
            yield from chunks
            if finished and not stream.read(position, timeout=0)[0]:
                stream.raise_if_failed()
                return

    # -- formatted, alternatives, ensemble: one paragraph at a time, phase one batched ----------
    def _paragraph_mode(self) -> Iterator[Update]:
        translator = self.translator
        segments = self.document.segments
        plans = [self._plan(seg) for seg in segments]
        prompts_ = [p for plan in plans for p in plan[0]]
        options = [o for plan in plans for o in plan[1]]
        streams = self._submit_raw(translator.engine, prompts_, options, first=True)
        out: list[str] = []
        index = 0
        try:
            for piece in self.document.pieces:
                if not piece.translate:
                    out.append(piece.text)
                    yield Update(piece.text, "".join(out), index, len(segments))
                    continue
                mine, streams = streams[: len(plans[index][0])], streams[len(plans[index][0]):]
                for chunk in self._paragraph(segments[index], plans[index][2], mine):
                    if self.first_token_at is None:
                        self.first_token_at = time.perf_counter()
                    out.append(chunk)
                    yield Update(chunk, "".join(out), index, len(segments))
                if self._cancelled.is_set():
                    return
                index += 1
            if self._format_broken:
                self.notice = " ".join(filter(None, [self.notice, modes.FORMAT_BROKEN.format(
                    n=self._format_broken)]))
            text = "".join(out)
            yield Update("", text, index, len(segments), self._finish(text))
        finally:
            if self._result is None:
                self.cancel()

    def _plan(self, segment: str) -> tuple[list[str], list[DecodingOptions], Any]:
        """Phase-one prompts and options for one paragraph (all paragraphs batch together)."""
        translator, request = self.translator, self.request
        spec, target, options = translator.spec, request.target_lang, request.options
        if request.mode == "formatted":
            markup = modes.ProtectedMarkup.parse(segment)
            if not markup.has_markup:
                return [translator.prompt_for(segment, self.source, request)], [options], None
            if spec.supports(FORMATTED):
                prompt = prompts.formatted_prompt(markup.tagged, target)
            else:
                prompt = prompts.translation_prompt(markup.tagged, self.source, target, spec.family)
            return [prompt], [options], markup
        prompt = translator.prompt_for(segment, self.source, request)
        if request.mode == "alternatives":
            variants = [replace(options, deterministic=True)] + [
                replace(options, deterministic=False, temperature=max(options.temperature, 0.9),
                        seed=(options.seed or 0) + i) for i in range(1, request.variants)]
            return [prompt] * request.variants, variants, None
        candidates = [replace(options, deterministic=True) if t is None else
                      replace(options, deterministic=False, temperature=t, seed=(options.seed or 0) + i)
                      for i, t in enumerate(modes.CANDIDATE_TEMPERATURES[:modes.ENSEMBLE_CANDIDATES])]
        return [prompt] * len(candidates), candidates, None

    def _paragraph(self, segment: str, markup: Any, streams: list[Stream]) -> Iterator[str]:
        translator, request = self.translator, self.request
        if request.mode == "formatted":
            text = "".join(self._read(streams[0]))
            if markup is None:
                yield text
                return
            restored = markup.restore(text)
            if restored is None:  # tags lost or unbalanced: translate the bare text instead
                self._format_broken += 1
                plain = translator.prompt_for(modes.strip_markup(segment), self.source, request)
                [fallback] = self._submit_raw(translator.engine, [plain], [request.options])
                restored = "".join(self._read(fallback))
            yield restored
        elif request.mode == "alternatives":
            yield from self._read(streams[0])
            variants = [streams[0].text] + ["".join(self._read(s)) for s in streams[1:]]
            self._alternatives.append(tuple(dict.fromkeys(v for v in variants if v)))
        else:  # ensemble: wait for the candidates, then stream Chimera's fusion
            candidates = list(dict.fromkeys(t for t in ("".join(self._read(s)) for s in streams) if t))
            self._candidates.append(tuple(candidates))
            fusion = prompts.chimera_prompt(segment, self.source, request.target_lang,
                                            candidates or [segment])
            assert translator.chimera is not None
            [fused] = self._submit_raw(translator.chimera, [fusion],
                                       [replace(request.options, deterministic=True)])
            yield from self._read(fused)

    def _submit_raw(self, engine: Engine, prompts_: list[str], options: list[DecodingOptions],
                    first: bool = False) -> list[Stream]:
        streams = engine.submit(prompts_, options)
        self.translator.model_calls += len(streams)
        for stream in streams:
            stream.attach()
            self._streams[len(self._streams) + 1_000_000] = stream
        return streams

    def _submit_upto(self, end: int, first: bool) -> None:
        """Submit, in one engine call, every segment before ``end`` not yet cached or submitted."""
        todo = [i for i in range(end) if i not in self._cached and i not in self._streams]
        if not todo or self._keys is None:
            return
        translator = self.translator
        segments = self.document.segments
        prompts_ = [translator.prompt_for(segments[i], self.source, self.request) for i in todo]
        deadline = time.monotonic() + BUSY_RETRY_S
        while True:
            try:
                streams = translator._submit([self._keys[i] for i in todo], prompts_,
                                             self.request.options, self._cacheable)
                break
            except BusyError:
                # A request that has not started is told at once; a document under way waits.
                if first or time.monotonic() > deadline or self._cancelled.is_set():
                    raise
                time.sleep(0.2)
        for i, stream in zip(todo, streams):
            stream.attach()  # this job is a reader until it finishes or is cancelled
            self._streams[i] = stream

    def _finish(self, text: str) -> TranslationResult:
        now = time.perf_counter()
        streams = list(self._streams.values())
        usage = {
            "prompt_tokens": sum(s.usage.prompt_tokens for s in streams),
            "completion_tokens": sum(s.usage.completion_tokens for s in streams),
            "first_token_s": None if self.first_token_at is None
            else round(self.first_token_at - self.started_at, 4),
            "latency_s": round(now - self.started_at, 4),
        }
        self._release()
        total = len(self.document.segments)
        found, missing = modes.glossary_report(text, self.request.glossary)
        alternatives: tuple[str, ...] = ()
        if self._alternatives:
            # One text in, several variants out: paragraph by paragraph, variant by variant.
            count = min(len(v) for v in self._alternatives)
            alternatives = tuple(
                self.document.render([v[k] for v in self._alternatives]) for k in range(count))
        result = TranslationResult(
            text=text, source_lang=self.source, target_lang=self.request.target_lang,
            model=self.translator.spec.id, cached=total > 0 and len(self._cached) == total,
            detection=self.detection, notice=self.notice, segments=total,
            cached_segments=len(self._cached), usage=usage, glossary_found=found,
            glossary_missing=missing, alternatives=alternatives,
            candidates=tuple(c for cands in self._candidates for c in cands))
        self._result = result
        return result

    def result(self) -> TranslationResult:
        if self._result is not None:
            return self._result
        for update in self:
            if update.result is not None:
                return update.result
        raise CancelledError("The translation was stopped.")


def line_document(text: str) -> Document:
    """Paragraph modes translate whole lines: indentation and line ends stay layout."""
    pieces: list[Piece] = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\r\n")
        core = body.strip()
        if not core or not is_translatable(core):
            pieces.append(Piece(line, False))
            continue
        start = body.index(core)
        for part, translate in ((body[:start], False), (core, True),
                                (body[start + len(core):] + line[len(body):], False)):
            if part:
                pieces.append(Piece(part, translate))
    return Document(tuple(pieces))


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
