"""The sentence strategy (translate, context and glossary modes): one prompt per segment.

Each segment is looked up in the phrase cache; the rest are submitted through the in-flight table
(:mod:`hunyuan_webui.service.translate.inflight`) at most ``backend.window`` ahead of the one being read, so
one long document never fills every batch slot, and streamed in document order, cached ones at
once. A sentence that occurs twice in the document is generated once.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.engine import Stream
from hunyuan_webui.errors import BusyError
from hunyuan_webui.service.checks.watch import Correction, GuardedSegment
from hunyuan_webui.service.translate.strategy import Strategy

BUSY_RETRY_S = 60.0  # how long a long document waits for room before giving up


class Sentences(Strategy):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._keys: list[str] = []  # per segment; filled by prime()
        self._primed = False
        self._cached: dict[int, str] = {}
        self._streams: dict[int, Stream] = {}
        self._by_key: dict[str, Stream] = {}  # this job's sequences, by cache key

    def prime(self) -> None:
        if self._primed:
            return
        self._primed = True
        backend, request = self.backend, self.request
        segments = self.document.segments
        self._keys = [backend.key_for(s, self.source, request) for s in segments]
        if backend.reads_cache(request) and backend.cache is not None:
            for i, hit in enumerate(backend.cache.get_many(self._keys)):
                if hit is not None:
                    self._cached[i] = hit
        self.cached_segments = len(self._cached)
        self._submit_upto(min(len(segments), backend.window), first=True)

    def pieces(self) -> Iterator[tuple[str, int, bool]]:
        self.prime()
        segments = self.document.segments
        target = self.request.target_lang
        gap = languages.sentence_gap(target)  # as Document.render does
        index = 0
        previous_translated = False
        pieces = self.document.pieces
        last = ""  # the end of the translation just streamed
        for at, piece in enumerate(pieces):
            if not piece.translate:
                previous_translated = False
                between = at + 1 < len(pieces) and pieces[at + 1].translate
                closed = between and languages.closes_up(target, last, piece.text)
                last = ""
                if not closed:
                    yield piece.text, index, False
                continue
            self._submit_upto(min(len(segments), index + self.backend.window), first=False)
            if previous_translated and gap:
                yield gap, index, False
            previous_translated = True
            if index in self._cached:
                last = self._cached[index][-1:]
                yield self._cached[index], index, True
            else:
                for chunk in self._read(index):
                    if chunk or isinstance(chunk, Correction):
                        last = chunk[-1:]
                        yield chunk, index, True
            if self.reader.cancelled.is_set():
                return
            index += 1

    def _read(self, index: int) -> Iterator[str]:
        """A segment's answer as it streams: straight from the engine, or through the guards,
        which store it in the cache once it has passed them."""
        stream, backend, request = self._streams[index], self.backend, self.request
        if backend.guards is None:
            return self.reader.read(stream)
        store = None
        if backend.writes_cache(request) and backend.cache is not None:
            cache, key = backend.cache, self._keys[index]
            store = lambda text: cache.set(key, text)  # noqa: E731
        return GuardedSegment(backend.guards, self.reader, backend.engine, request, self.source,
                              self.document.segments[index], stream.prompt, store, self.warnings,
                              index).run(stream)

    def _submit_upto(self, end: int, first: bool) -> None:
        """Submit, in one engine call, every segment before ``end`` not yet cached or submitted.
        A sentence this job has already submitted is read again from that same sequence."""
        todo = [i for i in range(end) if i not in self._cached and i not in self._streams]
        for i in [i for i in todo if self._keys[i] in self._by_key]:
            stream = self._by_key[self._keys[i]]
            if stream.attach():  # else a guard left it and it was cancelled: submitted afresh
                self._streams[i] = self.reader.hold(stream)
        todo = [i for i in todo if i not in self._streams]
        if not todo:
            return
        streams = self._submit([self._keys[i] for i in todo],
                               [self.backend.prompt_for(self.document.segments[i], self.source,
                                                        self.request) for i in todo], first)
        for i, stream in zip(todo, streams):  # attached: this job reads each until it ends
            self._streams[i] = self.reader.hold(stream)
            self._by_key.setdefault(self._keys[i], stream)

    def _submit(self, keys: list[str], prompts: list[str], first: bool) -> list[Stream]:
        backend, request = self.backend, self.request
        deadline = time.monotonic() + BUSY_RETRY_S
        while True:
            try:
                # With the guards on, an answer is stored once it has passed them (self._read).
                store = backend.writes_cache(request) and backend.guards is None
                return backend.flights.submit(keys, prompts, request.options, share=request.cache,
                                              store=store)
            except BusyError:
                # A request that has not started is told at once; a document under way waits.
                if first or time.monotonic() > deadline or self.reader.cancelled.is_set():
                    raise
                time.sleep(0.2)
