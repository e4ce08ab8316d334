"""How a job turns its document into streamed text: the interface of the two strategies, and the
reader they share.

A :class:`Strategy` submits a document's segments and yields its text piece by piece, in document
order: :class:`~hunyuan_webui.service.translate.sentences.Sentences` (one prompt per sentence, through the
cache and the in-flight table) and :class:`~hunyuan_webui.service.translate.paragraphs.Paragraphs`
(formatted, alternatives and ensemble modes: one paragraph at a time, their first phase batched).
The :class:`Reader` holds every sequence a job reads, so one ``release()`` lets them all go.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.segment import Document
from hunyuan_webui.service.translate.backend import Backend
from hunyuan_webui.service.translate.request import TranslationRequest

READ_POLL_S = 0.25  # how often a reader waiting for text checks whether its job was cancelled


class Reader:
    """The sequences one job reads (each attached once per use) and its cancellation."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.cancelled = threading.Event()
        # Whether text shown may later be replaced (the guards' corrections); a reader that
        # cannot take text back holds every answer until it is judged whole (Job.hold).
        self.takes_back = True
        self._streams: list[Stream] = []  # attached, until release() or drop()
        self._read: list[Stream] = []  # every one ever held, for the usage
        self._lock = threading.Lock()  # release() may come from another thread than drop()

    def hold(self, stream: Stream) -> Stream:
        """Keep an attached stream until :meth:`release`."""
        with self._lock:
            self._streams.append(stream)
            self._read.append(stream)
        return stream

    def submit(self, engine: Engine, prompts: Sequence[str],
               options: Sequence[DecodingOptions]) -> list[Stream]:
        """Straight to ``engine``, not shared or cached (paragraph modes)."""
        streams = engine.submit(prompts, options)
        self.backend.flights.count(len(streams))
        for stream in streams:
            stream.attach()
            self.hold(stream)
        return streams

    def read(self, stream: Stream) -> Iterator[str]:
        """The stream's text as it arrives; returns early once the job is cancelled."""
        for chunk in stream.follow(READ_POLL_S, stop=self.cancelled.is_set):
            if chunk:
                yield chunk

    def drop(self, stream: Stream) -> None:
        """Stop reading ``stream`` (a guard stopped its answer): detached now, so its sequence is
        cancelled unless another request still reads it (and gets its whole answer)."""
        with self._lock:
            at = next((i for i, held in enumerate(self._streams) if held is stream), None)
            if at is None:
                return  # released already
            del self._streams[at]
        stream.detach()

    def streams(self) -> list[Stream]:
        """Each distinct sequence read so far."""
        with self._lock:
            return list({id(s): s for s in self._read}.values())

    def release(self) -> None:
        """Detach from every sequence: those no other reader shares are cancelled."""
        with self._lock:
            streams, self._streams = self._streams, []
        for stream in streams:
            stream.detach()


class Strategy:
    """Submits a document's segments and yields ``(text, segment index, translated)`` pieces in
    document order (``translated`` is False for layout kept as it was)."""

    def __init__(self, backend: Backend, request: TranslationRequest, source: str,
                 document: Document, reader: Reader) -> None:
        self.backend = backend
        self.request = request
        self.source = source
        self.document = document
        self.reader = reader
        self.cached_segments = 0  # answered from the cache, for the result
        self.alternatives: list[tuple[str, ...]] = []  # per paragraph, alternatives mode
        self.candidates: list[tuple[str, ...]] = []  # per paragraph, ensemble mode
        self.notices: list[str] = []  # found while translating
        self.warnings: list[dict[str, Any]] = []  # per marked segment (service.checks.watch)

    def prime(self) -> None:
        """Submit the first segments now, without reading (so several jobs batch together)."""

    def pieces(self) -> Iterator[tuple[str, int, bool]]:
        raise NotImplementedError
