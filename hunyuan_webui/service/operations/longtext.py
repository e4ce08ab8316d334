"""A text longer than one request may be, translated in parts as one operation.

One request is bounded by ``--max-input-chars`` and ``--max-input-tokens``; a text up to
:data:`MAX_PARTS` times ``--max-input-chars`` is accepted and cut into parts that fit both
(:mod:`hunyuan_webui.service.operations.parts`), translated one after another (each after the first with the
source language the first one found) and joined with the separators they had. The page, its
``/translate`` endpoint and ``POST /v1/translate`` (JSON and Server-Sent Events) all translate
through :class:`LongText`, so they accept the same lengths and cut the same way. A text within
one request's limits is one part: one :class:`~hunyuan_webui.service.translate.job.Job`, whose result is
handed on unchanged.

Iterating a :class:`LongText` yields :class:`PartUpdate` objects whose ``delta`` strings
concatenate to the final text (after a ``replaced`` update, from its ``text`` on: the answer
checks took back what was shown), the last one carrying the whole text's
:class:`~hunyuan_webui.service.translate.request.TranslationResult`; :meth:`LongText.updates` is the same
for the event loop (one reader thread per operation, :func:`~hunyuan_webui.service.translate.job.batched_updates`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import anyio

from hunyuan_webui import modes
from hunyuan_webui.errors import CancelledError, InputError, InputTooLongError
from hunyuan_webui.service.operations.parts import separator, split_parts
from hunyuan_webui.service.translate.job import Job, batched_updates
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult

if TYPE_CHECKING:
    from hunyuan_webui.service.translate.translator import Translator

MAX_PARTS = 10  # a text may be this many times --max-input-chars long, translated in parts


def max_chars(translator: Translator) -> int:
    """The longest text the service translates (in parts): the page and the API alike."""
    return translator.settings.max_input_chars * MAX_PARTS


@dataclass(frozen=True)
class PartUpdate:
    delta: str  # the text added since the previous update (separators between parts included)
    text: str  # the whole translation so far
    part: int  # the part being translated, from 1
    parts: int
    done_segments: int  # of this part
    total_segments: int
    result: TranslationResult | None = None  # the whole text's, on the last update only
    replaced: bool = False  # ``text`` replaces everything so far (``delta`` is empty)
    warnings: tuple[dict[str, Any], ...] = ()  # this part's marked segments so far, if replaced


class LongText:
    """A text of any accepted length, as parts: iterate for updates, ``cancel()`` to stop."""

    def __init__(self, translator: Translator, requests: list[TranslationRequest]) -> None:
        self.translator = translator
        self.requests = requests  # one per part, validated
        self.parts = len(requests)
        self._first: Job | None = None
        self._job: Job | None = None
        self._cancelled = False
        self._hold = False

    @classmethod
    def plan(cls, translator: Translator, request: TranslationRequest) -> LongText:
        """Check the length and cut the text into parts, each validated; raise user errors now."""
        text = request.text
        if not isinstance(text, str):
            raise InputError("The text must be a string.")
        limit = max_chars(translator)
        if len(text) > limit:
            raise InputTooLongError(
                f"The text is {len(text):,} characters long; the limit is {limit:,} "
                f"(translated in up to {MAX_PARTS} parts). Split it into smaller texts.")
        settings = translator.settings
        parts = split_parts(text, settings.max_input_chars, settings.max_input_tokens,
                            translator.engine.count_tokens) or [""]
        if len(parts) == 1:  # one request: the service's own checks, exactly as for one job
            return cls(translator, [request])
        return cls(translator, [translator.validate(replace(request, text=p)) for p in parts])

    @classmethod
    async def open(cls, translator: Translator, request: TranslationRequest) -> LongText:
        """:meth:`plan` and :meth:`start` off the event loop (token counting, cache I/O)."""
        return await anyio.to_thread.run_sync(lambda: cls.plan(translator, request).start())

    def start(self) -> LongText:
        """Start the first part now, so that its errors (an undetectable language) come before
        any answer is sent."""
        if self._first is None:
            self._first = self._job = self.translator.start(self.requests[0])
            if self._hold:
                self._first.hold()
        return self

    def hold(self) -> LongText:
        """No answer shown before it is judged whole (:meth:`Job.hold`): no ``replaced``
        update."""
        self._hold = True
        for job in (self._first, self._job):
            if job is not None:
                job.hold()
        return self

    def cancel(self) -> None:
        self._cancelled = True
        for job in (self._first, self._job):
            if job is not None:
                job.cancel()

    def __iter__(self) -> Iterator[PartUpdate]:
        started = time.perf_counter()
        done, results = "", []
        for number, request in enumerate(self.requests, 1):
            job = self._next(number, request, results)
            if job is None:
                return
            for update in job:
                if update.result is None:
                    yield PartUpdate(update.delta, done + update.text, number, self.parts,
                                     update.done_segments, update.total_segments,
                                     replaced=update.replaced, warnings=update.warnings)
                else:
                    results.append(update.result)
            if len(results) < number:  # stopped by its owner
                return
            last = number == self.parts
            gap = "" if self.parts == 1 else separator(request.text, results[-1].text,
                                                        results[-1].target_lang, last)
            done += results[-1].text + gap
            if gap and not last:
                yield PartUpdate(gap, done, number, self.parts, job.total_segments,
                                 job.total_segments)
        result = combine(results, done, started, self.requests[0].glossary)
        yield PartUpdate(gap, done, self.parts, self.parts, results[-1].segments,
                         results[-1].segments, result)

    def result(self) -> TranslationResult:
        for update in self:
            if update.result is not None:
                return update.result
        raise CancelledError("The translation was stopped.")

    async def updates(self, every: float = 0.0) -> AsyncIterator[list[PartUpdate]]:
        """The updates in batches on the event loop; the operation is cancelled if the reader
        goes away."""
        async for batch in batched_updates(self, every=every):
            yield batch

    def _next(self, number: int, request: TranslationRequest,
              results: list[TranslationResult]) -> Job | None:
        if self._cancelled:
            return None
        if number == 1:
            return self.start()._first
        # Every part after the first keeps the first part's source language (detected or not).
        self._job = self.translator.start(replace(request, source_lang=results[0].source_lang))
        if self._hold:
            self._job.hold()
        if self._cancelled:  # cancelled while this part started: it must not run on
            self._job.cancel()
            return None
        return self._job


def combine(results: list[TranslationResult], text: str, started: float,
            glossary: tuple[tuple[str, str], ...] = ()) -> TranslationResult:
    """The whole text's result from its parts' (one part: its own result, unchanged)."""
    if len(results) == 1:
        return results[0]
    first = results[0]
    usage = {
        "prompt_tokens": sum(r.usage.get("prompt_tokens") or 0 for r in results),
        "completion_tokens": sum(r.usage.get("completion_tokens") or 0 for r in results),
        "first_token_s": first.usage.get("first_token_s"),
        "latency_s": round(time.perf_counter() - started, 4),
    }
    found, missing = modes.glossary_report(text, glossary)
    return TranslationResult(
        text=text, source_lang=first.source_lang, target_lang=first.target_lang,
        model=first.model, cached=all(r.cached for r in results), detection=first.detection,
        notice=" ".join(dict.fromkeys(r.notice for r in results if r.notice)),
        segments=sum(r.segments for r in results),
        cached_segments=sum(r.cached_segments for r in results), usage=usage,
        glossary_found=found, glossary_missing=missing,
        candidates=tuple(c for r in results for c in r.candidates))

