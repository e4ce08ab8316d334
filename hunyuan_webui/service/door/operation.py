"""Texts translated as one operation: what the front door hands back.

:meth:`Translator.translate_texts <hunyuan_webui.service.door.translator.Translator.translate_texts>`
plans every text (:class:`~hunyuan_webui.service.door.longtext.LongText`: parts when long),
validates each once and starts them; an :class:`Operation` is their translation in progress:

- iterating it yields :class:`~hunyuan_webui.service.door.longtext.PartUpdate` objects as they
  come, text after text (``update.item`` says which), each text's ``delta`` strings concatenating
  to its translation and its last update carrying its result;
- :meth:`Operation.updates` is the same for the event loop, in batches (one reader thread per
  operation, :func:`~hunyuan_webui.service.translate.job.batched_updates`);
- :meth:`Operation.result` (and :meth:`Operation.aresult` on the event loop) is the list of
  results, one per request, in order;
- :meth:`Operation.cancel` stops every text; leaving an iteration early does too.

The texts' first segments are submitted before any is read (``ahead`` texts at a time, or all),
so a tool's batch of short texts shares the engine's batches. With ``errors="report"`` a text
that fails gives one update with its ``error`` and the operation goes on with the next (a
class's sentences, a file's segments); with ``errors="raise"`` (the default) the error is raised.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import anyio

from hunyuan_webui.errors import CancelledError, TranslatorError
from hunyuan_webui.service.door.longtext import LongText, PartUpdate
from hunyuan_webui.service.translate.job import batched_updates
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult

Errors = Literal["raise", "report"]
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Failure:
    """A text of an operation that could not be translated (``errors="report"``)."""

    item: int
    error: TranslatorError
    result: None = None  # read like an update: it carries no result
    delta: str = ""
    text: str = ""


class Operation:
    """Texts in translation: iterate for updates, ``result()`` for all, ``cancel()`` to stop."""

    def __init__(self, texts: Sequence[LongText | TranslatorError], ahead: int | None = None,
                 errors: Errors = "raise") -> None:
        self.texts = list(texts)  # one per request: planned and started, or why it could not be
        self.ahead = ahead  # texts primed ahead of the one being read (None: all at once)
        self.errors = errors
        self._results: list[TranslationResult | None] = [None] * len(self.texts)
        self._failures: list[TranslatorError] = []
        self._cancelled = False

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def requests(self) -> list[TranslationRequest]:
        """Each text's first part's request (its validated languages and options)."""
        return [t.requests[0] for t in self.texts if isinstance(t, LongText)]

    @property
    def parts(self) -> int:
        """How many parts the texts were cut into, in all."""
        return sum(t.parts for t in self.texts if isinstance(t, LongText))

    def prime(self, first: int = 0) -> Operation:
        """Submit the first segments of the texts from ``first`` on (``ahead`` of them, or all)."""
        end = len(self.texts) if self.ahead is None else first + self.ahead
        for text in self.texts[first:end]:
            if isinstance(text, LongText):
                text.prime()
        return self

    def hold(self) -> Operation:
        """No answer shown before it is judged whole (:meth:`LongText.hold`): for readers that
        cannot take text back (an OpenAI-style stream); no update is then ``replaced``."""
        for text in self.texts:
            if isinstance(text, LongText):
                text.hold()
        return self

    def cancel(self) -> None:
        self._cancelled = True
        for text in self.texts:
            if isinstance(text, LongText) and not text.finished:
                text.cancel()

    def __iter__(self) -> Iterator[PartUpdate | Failure]:
        try:
            for item, text in enumerate(self.texts):
                if self._cancelled:
                    return
                if isinstance(text, TranslatorError):
                    yield self._failed(item, text)
                    continue
                if self.ahead is not None:
                    self.prime(item)
                try:
                    for update in text:
                        if update.result is not None:
                            self._results[item] = update.result
                        yield replace(update, item=item)
                except TranslatorError as exc:
                    yield self._failed(item, exc)
                    continue
                except Exception as exc:  # a bug: never lose the other texts to one of them
                    if self.errors == "raise":
                        raise
                    log.exception("translating text %d of %d failed", item + 1, len(self))
                    yield self._failed(item, TranslatorError(str(exc) or type(exc).__name__))
                    continue
                if self._results[item] is None:  # stopped by its owner
                    return
        finally:
            self.cancel()  # whatever is left unread (the finished ones are untouched)

    def _failed(self, item: int, error: TranslatorError) -> Failure:
        self._failures.append(error)
        if self.errors == "raise":
            raise error
        return Failure(item, error)

    def result(self) -> list[TranslationResult]:
        """Every text's result, in order (reading whatever is not read yet); the first text's
        error if one failed, whatever ``errors`` says."""
        for _ in self:
            pass
        return self._collected()

    def _collected(self) -> list[TranslationResult]:
        results = [r for r in self._results if r is not None]
        if len(results) < len(self._results):
            raise self._failures[0] if self._failures else CancelledError(
                "The translation was stopped.")
        return results

    async def updates(self, every: float = 0.0) -> AsyncIterator[list[PartUpdate | Failure]]:
        """The updates in batches on the event loop, paced by ``every`` (see
        :func:`~hunyuan_webui.service.translate.job.batched_updates`); the operation is cancelled
        if the reader goes away."""
        async for batch in batched_updates(self, every=every):
            yield batch

    async def aresult(self) -> list[TranslationResult]:
        """:meth:`result` off the event loop (read on a worker thread)."""
        return await anyio.to_thread.run_sync(self.result)
