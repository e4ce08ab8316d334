"""One translation in progress: the streaming primitive every front end reads.

:meth:`Translator.start <hunyuan_webui.service.Translator.start>` validates a request and returns a
:class:`Job`. Iterating it yields :class:`Update` objects whose ``delta`` strings concatenate to
exactly the final text (layout included); the last one carries the :class:`TranslationResult`.
A whole translation is ``job.result()``, derived from the same iteration.

Sentence modes submit the document's segments a window ahead of the one being read (so they batch
without overflowing the engine's queue) and stream them in document order, cached ones at once.
Paragraph modes (formatted, alternatives, ensemble) submit every paragraph's first-phase prompts
in one engine call, then check, fuse or fall back paragraph by paragraph. Structured data is one
"paragraph", the whole text: its answer is checked (:mod:`hunyuan_webui.structured`) before it is
shown, and replaced by a value-by-value translation when the model broke the data.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from hunyuan_webui import languages, modes, prompts, structured
from hunyuan_webui.detect import Detection
from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.errors import BusyError, CancelledError
from hunyuan_webui.models import FORMATTED, TRANSLATE
from hunyuan_webui.segment import Document, line_document  # noqa: F401 - was defined here

if TYPE_CHECKING:
    from hunyuan_webui.service import Translator

BUSY_RETRY_S = 60.0  # how long a long document waits for room before giving up


@dataclass(frozen=True)
class TranslationRequest:
    text: str
    target_lang: str
    source_lang: str = languages.AUTO
    options: DecodingOptions | None = None  # None: the loaded model's defaults (its card's)
    mode: str = TRANSLATE
    glossary: tuple[tuple[str, str], ...] = ()
    context: str = ""
    variants: int = 3  # alternatives mode: how many
    cache: bool = True  # False: a fresh answer (Retranslate), not the cached or shared one
    style: str = ""  # style mode: free text
    instructions: tuple[str, ...] = ()  # instructions mode: one per numbered line
    data_format: str = ""  # structured mode: json, xml, yaml, csv...; "" = detect


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
        self._cacheable = False  # answers may come from the cache
        self._shares = request.cache  # identical segments in flight may share one sequence
        self._by_key: dict[str, Stream] = {}  # this job's sequences, by cache key
        self._format_broken = 0
        self._alternatives: list[tuple[str, ...]] = []
        self._candidates: list[tuple[str, ...]] = []
        self._window = translator.settings.segments_in_flight()

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
        if request.mode == "structured":  # the whole data in one prompt; checked when it is back
            return [prompt], [options], None
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
        if request.mode == "structured":
            yield self._checked_data(segment, "".join(self._read(streams[0])))
        elif request.mode == "formatted":
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

    def _checked_data(self, source: str, answer: str) -> str:
        """A structured-data answer if it is still the same data; else each text value translated
        on its own (JSON, XML, CSV, TSV), else the data untranslated, with a notice either way."""
        fmt = self.request.data_format
        answer = structured.unwrap(answer, source)
        why = structured.problem(source, answer, fmt)
        if why is None or self._cancelled.is_set():
            return answer
        split = structured.split_values(source, fmt)
        template = modes.STRUCTURE_BROKEN if split else modes.STRUCTURE_KEPT
        self.notice = " ".join(filter(None, [self.notice, template.format(
            format=structured.FORMATS[fmt], why=why)]))
        if split is None:
            return source
        values, rebuild = split
        plain = replace(self.request, mode=modes.TRANSLATE, glossary=())
        prompts_ = [self.translator.prompt_for(v, self.source, plain) for v in values]
        streams = self._submit_raw(self.translator.engine, prompts_,
                                   [self.request.options] * len(prompts_)) if prompts_ else []
        translated = ["".join(self._read(s)) for s in streams]
        # A value whose placeholders did not survive keeps its original text.
        return rebuild([new if new.strip() and structured.same_placeholders(old, new) else old
                        for old, new in zip(values, translated)])

    def _submit_raw(self, engine: Engine, prompts_: list[str], options: list[DecodingOptions],
                    first: bool = False) -> list[Stream]:
        streams = engine.submit(prompts_, options)
        self.translator.model_calls += len(streams)
        for stream in streams:
            stream.attach()
            self._streams[len(self._streams) + 1_000_000] = stream
        return streams

    def _submit_upto(self, end: int, first: bool) -> None:
        """Submit, in one engine call, every segment before ``end`` not yet cached or submitted.
        A sentence this job has already submitted is read again from that same sequence."""
        todo = [i for i in range(end) if i not in self._cached and i not in self._streams]
        if not todo or self._keys is None:
            return
        keys = self._keys
        for i in [i for i in todo if keys[i] in self._by_key]:
            stream = self._by_key[keys[i]]
            stream.attach()
            self._streams[i] = stream
        todo = [i for i in todo if i not in self._streams]
        if not todo:
            return
        translator = self.translator
        segments = self.document.segments
        prompts_ = [translator.prompt_for(segments[i], self.source, self.request) for i in todo]
        deadline = time.monotonic() + BUSY_RETRY_S
        while True:
            try:
                streams = translator.share_or_submit(
                    [keys[i] for i in todo], prompts_, self.request.options,
                    share=self._shares, store=translator.writes_cache(self.request))
                break
            except BusyError:
                # A request that has not started is told at once; a document under way waits.
                if first or time.monotonic() > deadline or self._cancelled.is_set():
                    raise
                time.sleep(0.2)
        for i, stream in zip(todo, streams):  # attached: this job reads each until it ends
            self._streams[i] = stream
            self._by_key.setdefault(keys[i], stream)

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


_DONE = object()


async def batched_updates(job: Job) -> AsyncIterator[list[Update]]:
    """A job's updates, read by one worker thread for the whole request and handed to the event
    loop in batches (all that arrived since the last read); the job is cancelled if the reader
    goes away. One thread per stream rather than a thread-pool hop per token: the hop measured
    ~20% of the app's throughput at 8 clients."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()

    def hand_over(item: Any) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the event loop is gone: nobody is reading any more
            job.cancel()

    def produce() -> None:
        try:
            for update in job:
                hand_over(update)
        except BaseException as exc:  # handed to the reader, which raises it in its own context
            hand_over(exc)
        finally:
            hand_over(_DONE)

    threading.Thread(target=produce, name="hymt-job-reader", daemon=True).start()
    try:
        while True:
            batch = [await queue.get()]
            while not queue.empty():
                batch.append(queue.get_nowait())
            updates = []
            for item in batch:
                if isinstance(item, BaseException):
                    raise item
                if item is _DONE:
                    if updates:
                        yield updates
                    return
                updates.append(item)
            yield updates
    finally:
        job.cancel()
