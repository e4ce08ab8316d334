"""Segments in flight: identical ones (in one document or across users) share one sequence.

:class:`Flights` submits segments to the engine and remembers, by cache key, the ones being
generated, so a request for the same key joins the sequence already running instead of starting
another. When a sequence ends well its text goes to the phrase cache, before any reader sees the
end (the stream runs its observers first).

Locking: one lock guards the table of keys in flight and the call counter, and nothing that can
block or call back (the engine, stream callbacks, the cache, waiting for another submitter) runs
while it is held, so there is no lock order to get wrong. A key being submitted is held by a
:class:`Flight` whose stream arrives when the engine answers; joiners wait on it outside the
lock, with a deadline.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.errors import BusyError, EngineError

SHARE_WAIT_S = 60.0  # how long a request waits for the engine to accept a segment it shares
JOIN_TRIES = 3  # a joined sequence whose readers all left is submitted afresh, this many times


class Flight:
    """A segment in flight: submitted (its stream not known yet) or generating.

    A request that joins it before the engine answers *reserves* a reader: :meth:`land` attaches
    the stream for each reservation before anyone can read it, so the submitter cannot read a
    chunk, leave and cancel the sequence in the moment between the landing and the joiner's own
    attach (on a busy machine that moment is long enough to lose a shared sequence three times).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()  # guards the reservations against land()
        self._landed = threading.Event()
        self._reserved = 0  # joiners waiting for the stream
        self._granted = 0  # readers attached for them at landing, not yet taken
        self.stream: Stream | None = None
        self.error: BaseException | None = None

    def reserve(self) -> bool:
        """A joiner's reader, attached for it when the stream lands; False once it has landed
        (the joiner then attaches itself, which may fail)."""
        with self._lock:
            if self._landed.is_set():
                return False
            self._reserved += 1
            return True

    def land(self, stream: Stream) -> None:
        with self._lock:
            # The stream was just created and its submitter is attached, so these attaches
            # only fail if it was cancelled meanwhile (a joiner left without a reader retries).
            self._granted = sum(stream.attach() for _ in range(self._reserved))
            self.stream = stream
            self._landed.set()

    def fail(self, error: BaseException) -> None:
        with self._lock:
            self.error = error
            self._landed.set()

    def abandoned(self) -> bool:
        """Failed, or every reader left (its sequence is cancelled): not worth joining."""
        return self._landed.is_set() and (self.stream is None or not self.stream.joinable)

    def wait(self, timeout: float) -> Stream:
        """The stream, once landed (a joiner then :meth:`take` s its reader)."""
        if not self._landed.wait(timeout):
            raise EngineError(f"The engine did not accept a shared segment within {timeout:g}s; "
                              "please try again.")
        if self.stream is None:
            assert self.error is not None
            raise self.error
        return self.stream

    def take(self, reserved: bool) -> bool:
        """After :meth:`wait`: whether this joiner now holds a reader on the stream (its
        reservation's, or its own attach); False: the sequence was left, submit afresh."""
        assert self.stream is not None
        if reserved:
            with self._lock:
                if self._granted > 0:
                    self._granted -= 1
                    return True
            return False
        return self.stream.attach()

    def release(self, reserved: bool) -> None:
        """A joiner that gives up (a deadline, another segment's error) returns its reservation:
        forgotten before the landing, detached after it."""
        if not reserved:
            return
        with self._lock:
            if not self._landed.is_set():
                self._reserved -= 1
                return
            held = self._granted > 0
            if held:
                self._granted -= 1
        if held and self.stream is not None:
            self.stream.detach()


class Flights:
    """Submits segments to ``engine``, sharing identical ones in flight; counts model calls."""

    def __init__(self, engine: Engine, cache: PhraseCache | None) -> None:
        self.engine = engine
        self.cache = cache
        self._lock = threading.Lock()
        self._table: dict[str, Flight] = {}
        self._calls = 0

    @property
    def calls(self) -> int:
        """Sequences submitted to the engine (shared and cached segments are not calls)."""
        with self._lock:
            return self._calls

    def count(self, n: int) -> None:
        """Count sequences submitted directly (paragraph modes, plain generation)."""
        with self._lock:
            self._calls += n

    def __len__(self) -> int:
        """Distinct segments being generated or submitted right now."""
        with self._lock:
            return len(self._table)

    def submit(self, keys: Sequence[str], prompts: Sequence[str], options: DecodingOptions, *,
               share: bool, store: bool) -> list[Stream]:
        """Streams for these segments, each already attached to the caller (who must detach it):
        shared with identical ones in flight when ``share``, else submitted in one engine call.
        ``store``: a sequence that ends well goes to the cache."""
        first_index = {k: i for i, k in reversed(list(enumerate(keys)))}
        streams: dict[str, Stream] = {}
        todo = sorted(first_index, key=first_index.__getitem__)
        try:
            for _ in range(JOIN_TRIES):
                todo = self._gather(todo, [prompts[first_index[k]] for k in todo], options,
                                    share, store, streams)
                if not todo:
                    return [streams[k] for k in keys]
            raise BusyError("The translator is busy; please try again in a moment.")
        except BaseException:
            for stream in streams.values():
                stream.detach()
            raise

    def _gather(self, todo: list[str], prompts: list[str], options: DecodingOptions, share: bool,
                store: bool, streams: dict[str, Stream]) -> list[str]:
        """One round: join or submit every key in ``todo``; returns the keys to try again."""
        prompt_of = dict(zip(todo, prompts))
        joined, mine = self._claim(todo, share)
        again = []
        pending = dict(joined)  # reservations not yet taken: returned if anything fails
        try:
            if mine:
                submitted = self._submit(mine, [prompt_of[k] for k in mine], options, store)
                streams.update(zip(mine, submitted))
            for key, (flight, reserved) in joined.items():
                stream = flight.wait(SHARE_WAIT_S)
                del pending[key]
                if flight.take(reserved):
                    streams[key] = stream
                else:  # its last reader left just before we came: it ends short, not usable
                    again.append(key)
        finally:
            for flight, reserved in pending.values():
                flight.release(reserved)
        return again

    def _claim(self, keys: Sequence[str], share: bool
               ) -> tuple[dict[str, tuple[Flight, bool]], dict[str, Flight | None]]:
        """Split ``keys`` into flights to join and keys this caller submits (with the flight it
        now owns for each; None when not sharing). A joined flight comes with whether a reader was
        reserved on it (it had not landed yet)."""
        joined: dict[str, tuple[Flight, bool]] = {}
        mine: dict[str, Flight | None] = {}
        with self._lock:
            for key in keys:
                flight = self._table.get(key) if share else None
                if flight is not None and not flight.abandoned():
                    joined[key] = (flight, flight.reserve())
                elif share:
                    mine[key] = self._table[key] = Flight()
                else:
                    mine[key] = None
        return joined, mine

    def _submit(self, owned: dict[str, Flight | None], prompts: list[str],
                options: DecodingOptions, store: bool) -> list[Stream]:
        try:
            streams = self.engine.submit(prompts, options)
        except BaseException as exc:
            with self._lock:
                for key, flight in owned.items():
                    if flight is not None and self._table.get(key) is flight:
                        del self._table[key]
            for flight in owned.values():
                if flight is not None:
                    flight.fail(exc)
            raise
        self.count(len(streams))
        landing = list(zip(owned.items(), streams))
        attached: list[Stream] = []
        try:
            for (key, flight), stream in landing:
                stream.attach()
                attached.append(stream)
                if flight is not None:
                    flight.land(stream)
                # Outside the lock: a stream that has already ended runs the callback right here.
                stream.add_done_callback(
                    lambda s, key=key, flight=flight: self._landed(key, flight, s, store))
        except BaseException as exc:  # no joiner may wait out its deadline on a flight never landed
            for (key, flight), stream in landing:
                self._landed(key, flight, stream, store=False)  # not joinable from the table now
                if flight is not None and flight.stream is None:
                    flight.fail(exc)
            for stream in attached:
                stream.detach()
            for _, stream in landing[len(attached):]:  # submitted, and no one will read them
                stream.cancel()
            raise
        return streams

    def _landed(self, key: str, flight: Flight | None, stream: Stream, store: bool) -> None:
        """A sequence ended: forget it, and keep its text if it ended well."""
        if flight is not None:
            with self._lock:
                if self._table.get(key) is flight:
                    del self._table[key]
        if store and stream.finish_reason == "stop" and self.cache is not None:
            self.cache.set(key, stream.text)
