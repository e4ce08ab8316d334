"""One translation in progress: the streaming primitive every front end reads.

:meth:`Translator.start <hunyuan_webui.service.translate.translator.Translator.start>` validates a request
and returns a :class:`Job`. Iterating it yields :class:`~hunyuan_webui.service.translate.request.Update`
objects whose ``delta`` strings concatenate to exactly the final text (layout included); the last
one carries the :class:`~hunyuan_webui.service.translate.request.TranslationResult`. An answer the
checks judged bad once it had ended, after part of it was shown, is taken back: that update is
``replaced``, its ``text`` the whole text so far, and the deltas after it continue from there.
A reader that cannot take text back calls :meth:`Job.hold` first: then no answer is shown before
it is judged whole, and the deltas alone make the text. A whole translation is
``job.result()``, derived from the same iteration. How the segments become text is the job's
strategy (:mod:`hunyuan_webui.service.translate.strategy`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Protocol, TypeVar

from hunyuan_webui import modes
from hunyuan_webui.detect import Detection
from hunyuan_webui.errors import CancelledError
from hunyuan_webui.segment import Document
from hunyuan_webui.service.checks.watch import Correction
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult, Update
from hunyuan_webui.service.translate.strategy import Reader, Strategy


class Job:
    """One translation in progress: iterate for updates, ``cancel()`` to stop it."""

    def __init__(self, strategy: Strategy, detection: Detection | None, notice: str = "",
                 passthrough: bool = False) -> None:
        self.strategy = strategy
        self.request: TranslationRequest = strategy.request
        self.source = strategy.source
        self.document: Document = strategy.document
        self.detection = detection
        self.notice = notice
        self.passthrough = passthrough
        self._reader: Reader = strategy.reader
        self.started_at = time.perf_counter()
        self.first_token_at: float | None = None
        self._result: TranslationResult | None = None

    @property
    def total_segments(self) -> int:
        return len(self.document.segments)

    @property
    def finished(self) -> bool:
        """It has produced its result (a cancelled or failed job never does)."""
        return self._result is not None

    def cancel(self) -> None:
        """Stop: every segment no other request shares is cancelled at the engine's next step."""
        self._reader.cancelled.set()
        self._reader.release()

    def hold(self) -> Job:
        """Show no answer before it is judged whole, so that no update is ever ``replaced``: for
        readers that cannot take text back (a terminal, an OpenAI-style stream)."""
        self._reader.takes_back = False
        return self

    def prime(self) -> Job:
        """Look the segments up in the cache and submit the first ones now, without reading.

        Starting several jobs and priming each before reading any lets their segments share
        batches (the API's list input does this).
        """
        if not self.passthrough and self.document.segments and not self._reader.cancelled.is_set():
            self.strategy.prime()
        return self

    def __iter__(self) -> Iterator[Update]:
        if self._reader.cancelled.is_set():
            return
        total = len(self.document.segments)
        if self.passthrough or not total:
            # Nothing to translate: the text as it is, or its layout alone ("12345", "---").
            text = self.request.text if self.passthrough else self.document.render([])
            yield Update(text, text, 0, 0, self._finish(text))
            return
        out: list[str] = []
        at = 0  # where each segment's translation lies in the text (its alignment):
        spans: dict[int, list[int]] = {}
        try:
            for delta, index, translated in self.strategy.pieces():
                if isinstance(delta, Correction):  # this segment's text, taken back whole
                    start = spans.get(index, [at])[0]
                    out = ["".join(out)[:start] + delta]
                    at = len(out[0])
                    spans[index] = [start, at]
                    yield Update("", out[0], index, total, replaced=True,
                                 warnings=tuple(self.strategy.warnings))
                    continue
                if translated and self.first_token_at is None:
                    self.first_token_at = time.perf_counter()
                if translated:
                    spans.setdefault(index, [at, at])[1] = at + len(delta)
                at += len(delta)
                out.append(delta)
                yield Update(delta, "".join(out), index, total)
            if self._reader.cancelled.is_set():
                return  # stopped by its owner: end quietly, with no result
            text = "".join(out)
            yield Update("", text, total, total, self._finish(text, spans))
        finally:
            if self._result is None:
                self.cancel()

    def result(self) -> TranslationResult:
        if self._result is not None:
            return self._result
        for update in self:
            if update.result is not None:
                return update.result
        raise CancelledError("The translation was stopped.")

    def _finish(self, text: str, spans: dict[int, list[int]] | None = None) -> TranslationResult:
        streams = self._reader.streams()
        usage = {
            "prompt_tokens": sum(s.usage.prompt_tokens for s in streams),
            "completion_tokens": sum(s.usage.completion_tokens for s in streams),
            "first_token_s": None if self.first_token_at is None
            else round(self.first_token_at - self.started_at, 4),
            "latency_s": round(time.perf_counter() - self.started_at, 4),
        }
        self._reader.release()
        strategy = self.strategy
        total = len(self.document.segments)
        found, missing = modes.glossary_report(text, self.request.glossary)
        alternatives: tuple[str, ...] = ()
        if strategy.alternatives:
            # One text in, several variants out: paragraph by paragraph, variant by variant.
            count = min(len(v) for v in strategy.alternatives)
            alternatives = tuple(self.document.render([v[k] for v in strategy.alternatives],
                                                      self.request.target_lang)
                                 for k in range(count))
        self._result = TranslationResult(
            text=text, source_lang=self.source, target_lang=self.request.target_lang,
            model=strategy.backend.spec.id,
            cached=total > 0 and strategy.cached_segments == total, detection=self.detection,
            notice=" ".join(filter(None, [self.notice, *strategy.notices])), segments=total,
            cached_segments=strategy.cached_segments, usage=usage, glossary_found=found,
            glossary_missing=missing, alternatives=alternatives,
            candidates=tuple(c for cands in strategy.candidates for c in cands),
            warnings=tuple(sorted(strategy.warnings, key=lambda w: w["segment"])),
            alignment=alignment(self.document, spans or {}))
        return self._result


def alignment(document: Document,
              spans: dict[int, list[int]]) -> tuple[tuple[int, int, int, int], ...]:
    """Each source segment's place beside its translation's, in document order; nothing unless
    every segment has a translation of its own (a sentence view marks only what is known)."""
    out: list[tuple[int, int, int, int]] = []
    start = 0
    for piece in document.pieces:
        if piece.translate:
            span = spans.get(len(out))
            if span is None or span[1] <= span[0] or (out and span[0] < out[-1][3]):
                return ()
            out.append((start, start + len(piece.text), span[0], span[1]))
        start += len(piece.text)
    return tuple(out)


_DONE = object()


class _Mailbox:
    """What a worker thread hands to the event loop: one wake-up of the loop for everything put
    before the loop takes it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gone: Callable[[], None]) -> None:
        self.loop, self.gone = loop, gone  # gone: called when the loop has closed
        self.ready = asyncio.Event()  # set, on the loop, when ``items`` has something
        self.ending = asyncio.Event()  # set, on the loop, once the last item has been put
        self.lock = threading.Lock()
        self.items: list[Any] = []

    def put(self, item: Any, last: bool = False) -> None:
        with self.lock:
            self.items.append(item)
            first = len(self.items) == 1
        if first or last:
            try:
                self.loop.call_soon_threadsafe(self._wake, last)
            except RuntimeError:  # the event loop is gone: nobody is reading any more
                self.gone()

    def _wake(self, last: bool) -> None:
        self.ready.set()
        if last:
            self.ending.set()

    async def pause(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the last item comes meanwhile."""
        if seconds > 0 and not self.ending.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ending.wait(), seconds)

    async def take(self) -> list[Any]:
        """Everything put so far (at least one item), once there is something."""
        while True:
            await self.ready.wait()
            self.ready.clear()  # before taking: a put after the take sets it again
            with self.lock:
                items = self.items[:]
                self.items.clear()
            if items:
                return items


# A read of a job that took longer than this waited for the model, rather than taking what had
# already come: the moment a paced reader lets the next pieces gather (batched_updates).
WAITED_S = 0.002
# The longest a paced reader's thread lets pieces gather before reading again: the end of a stream
# waits no longer than this to be read (the reader itself is woken by the end at once).
GATHER_S = 0.05
U = TypeVar("U", covariant=True)


class Running(Protocol[U]):
    """What :func:`batched_updates` reads: a :class:`Job`, or a long text's parts
    (:class:`~hunyuan_webui.service.operations.longtext.LongText`); each update has a ``result``."""

    def __iter__(self) -> Iterator[U]: ...

    def cancel(self) -> None: ...


async def batched_updates(job: Running[U], every: float | Callable[[], float] = 0.0
                          ) -> AsyncIterator[list[U]]:
    """A job's updates, read by one worker thread for the whole request and handed to the event
    loop in batches (all that arrived since the last read); the job is cancelled if the reader
    goes away. One thread per stream rather than a thread-pool hop per token: the hop measured
    ~20% of the app's throughput at 8 clients. The thread wakes the event loop once per batch,
    not once per update.

    ``every`` > 0 paces the batches: after one is taken, the next comes no sooner than ``every``
    seconds after it, except the last, which ends the wait as soon as it has been read; so a
    reader that pays per message (Gradio's page protocol) pays per redraw rather than per
    decoding step. The worker thread keeps a pace too: once a piece it had to wait for has come,
    it lets the next ones gather (up to :data:`GATHER_S`) instead of waking for each. A callable
    ``every`` is asked again each time (the page's pace depends on how many pages stream)."""
    loop = asyncio.get_running_loop()
    mailbox = _Mailbox(loop, job.cancel)

    def pace() -> float:
        return every() if callable(every) else every

    def produce() -> None:
        try:
            asked = time.monotonic()
            for update in job:
                waited = time.monotonic() - asked > WAITED_S
                last = getattr(update, "result", None) is not None
                mailbox.put(update, last)
                pause = pace()
                if pause > 0 and waited and not last:
                    time.sleep(min(pause, GATHER_S))  # the next pieces gather meanwhile
                asked = time.monotonic()
        except BaseException as exc:  # handed to the reader, which raises it in its own context
            mailbox.put(exc, last=True)
        finally:
            mailbox.put(_DONE, last=True)

    threading.Thread(target=produce, name="hymt-job-reader", daemon=True).start()
    try:
        while True:
            updates: list[Any] = []
            for item in await mailbox.take():
                if isinstance(item, BaseException):
                    raise item
                if item is _DONE:
                    if updates:
                        yield updates
                    return
                updates.append(item)
            taken = loop.time()
            yield updates
            pause = pace()
            if pause > 0 and getattr(updates[-1], "result", None) is None:
                await mailbox.pause(pause - (loop.time() - taken))
    finally:
        job.cancel()
