"""One segment read through the guards (:mod:`hunyuan_webui.service.checks.answers`): show early,
judge whole, stop, retry, correct, mark.

While an answer streams, a :class:`Watch` decides what may be shown yet:

- an answer is shown as it comes (a student sees words at once), up to 1.5 times its expected
  length, and :data:`SHOW_LAG` characters behind the engine beyond that (where loops show);
- a repeating run, or an answer longer than its pair allows (:mod:`.budget`), stops the segment
  at once (this reader leaves the sequence, which is cancelled unless another request still
  reads it) and the repeated tail is cut;
- an answer clearly in another script than the target's own (Hindi for Japanese: its first few
  letters tell) stops at once too.

**One judgment at the end of every answer.** When an answer ends, the whole of it is checked
(:meth:`Guards.check <hunyuan_webui.service.checks.answers.Guards.check>`), whatever was shown
early. A segment a guard stopped or whose whole answer fails is retried once: greedy, in the
family's other prompt wording for a language, copy, half-translation or empty answer, with a
stronger repetition penalty for a loop, with room for twice the tokens for a cut-off one. The
retry is held until it too is judged whole. A retry that passes is served (and cached); if both
fail, the better answer is served with a warning, and neither is cached.

What was shown early and is not what is served is taken back: the segment's text comes as a
:class:`Correction` (its whole answer, replacing what was shown of it), which the job turns into
a replace-whole-text update (the page redraws it, ``/v1`` sends a ``replace`` event, a class
room a ``correction`` event). A reader that cannot take text back (a terminal, an OpenAI-style
stream) holds every answer until it is judged whole instead (``Reader.takes_back``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Protocol

from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.prompts import alternative_prompt
from hunyuan_webui.service.checks.answers import (
    COPY,
    EMPTY,
    HALF,
    LANGUAGE,
    LENGTH,
    LOOP,
    MARKED,
    SERVED,
    TRUNCATED,
    Finding,
    Guards,
    find_loop,
    judge_script,
    repeats_itself,
)
from hunyuan_webui.service.checks.budget import answer_budget, ratio
from hunyuan_webui.service.checks.writing import decides_early, target_share

LOOP_CHECK_CHARS = 8  # look for a loop each time the answer has grown this much
RETRY_PENALTY = 1.2  # at least this repetition penalty when a loop is retried
PENALTY_STEP = 0.15
SHOW_LAG = 24  # characters kept back from a shown answer, so a loop is cut before it shows
SPACELESS = frozenset({"zh", "zh-Hant", "yue", "ja", "th", "my", "km", "bo"})  # no word breaks
REWORDED = (LANGUAGE, COPY, HALF, EMPTY)  # retried in the family's other prompt wording


class Correction(str):
    """A segment's whole answer, replacing what was shown of it: what an answer shown early
    became once it was judged whole (the retry, or the better answer, marked)."""


class Reader(Protocol):
    """What a segment is read through: the job's reader
    (:class:`hunyuan_webui.service.translate.strategy.Reader`), which the checks need not know."""

    cancelled: threading.Event
    takes_back: bool  # whether what it shows may be replaced later (a Correction)

    def read(self, stream: Stream) -> Iterator[str]: ...

    def submit(self, engine: Engine, prompts: Sequence[str],
               options: Sequence[DecodingOptions]) -> list[Stream]: ...

    def drop(self, stream: Stream) -> None: ...


class Watch:
    """One answer as it streams: what may be shown so far, and the guard that stopped it.
    ``early``: text is shown as it comes (it may be taken back once the answer is judged
    whole); else nothing is shown before that."""

    def __init__(self, guards: Guards, segment: str, source: str, target: str,
                 early: bool = True, keep: tuple[str, ...] = ()) -> None:
        self.guards, self.segment, self.source, self.target = guards, segment, source, target
        self.keep = keep
        self.text = ""
        self.shown = 0  # characters already handed to the reader
        self.cut: int | None = None  # where the answer ends when a guard stopped it
        self.finding: Finding | None = None
        self.budget = answer_budget(segment, source, target)
        self.released = early
        # Where the target has a script of its own, its first letters may show a wrong one.
        self._judging = guards.language and decides_early(source, target)
        self._allow = len(segment) + 16 if guards.loop and repeats_itself(segment) else 0
        self._checked = 0
        self._lag = SHOW_LAG if guards.loop else 0
        self._free = int(len(segment.strip()) * ratio(source, target) * 1.5)  # shown unheld

    def feed(self, chunk: str) -> str:
        """Take a chunk; return the text that may be shown now (sets ``finding`` to stop)."""
        self.text += chunk
        if self.guards.loop:
            self._look_for_loop()
        if self.finding is None and self._judging:
            verdict = judge_script(self.text, self.target, self.segment)
            if verdict is False:  # clearly another script: stopped now, retried at once
                self.finding = Finding(LANGUAGE, self.guards.detector.detect(self.text).code)
            elif verdict:
                self._judging = False  # its start is in the target's script
        return self._showable() if self.released else ""

    def _look_for_loop(self) -> None:
        if len(self.text) > self.budget:
            self.finding, self.cut = Finding(LENGTH), self.budget
        elif len(self.text) - self._checked >= LOOP_CHECK_CHARS:
            self._checked = len(self.text)
            cut = find_loop(self.text, self._allow)
            if cut is not None:
                self.finding, self.cut = Finding(LOOP), cut

    def _showable(self) -> str:
        if self.cut is not None:
            end = self.cut
        elif len(self.text) <= self._free or not self._lag:
            end = len(self.text)
        else:  # longer than expected: keep back SHOW_LAG characters and an unfinished word
            end = max(len(self.text) - self._lag, self._free, self.shown)
            if self.target not in SPACELESS:
                end = self.text.rfind(" ", self.shown, end) + 1 or self.shown
        end = max(end, self.shown)
        out, self.shown = self.text[self.shown:end], end
        return out

    def finish(self, finish_reason: str | None = "stop") -> None:
        """The answer ended on its own: judge the whole of it, shown early or not."""
        if self.finding is None:
            self.finding = self.guards.check(self.text, self.segment, self.source, self.target,
                                             finish_reason, self.keep)

    @property
    def answer(self) -> str:
        """The answer as it will be served: cut after the first copy of a loop."""
        return self.text if self.cut is None else self.text[:self.cut].rstrip()

    def rest(self) -> str:
        """What has not been shown of :attr:`answer`."""
        self.released = True
        answer = self.answer
        out, self.shown = answer[self.shown:], max(self.shown, len(answer))
        return out

    def score(self) -> float:
        share, _ = target_share(self.answer, self.target)
        penalty = 0.5 if self.finding and self.finding.kind in (COPY, EMPTY) else 0.0
        return share - penalty + (0.01 if self.answer.strip() else -1.0)


def retry_options(options: DecodingOptions, kind: str) -> DecodingOptions:
    """Greedy; for a loop or a runaway answer also a stronger repetition penalty, for a cut-off
    one room for twice the tokens."""
    if kind in (LOOP, LENGTH):
        penalty = min(2.0, max(RETRY_PENALTY, options.repetition_penalty + PENALTY_STEP))
        return replace(options, deterministic=True, repetition_penalty=penalty)
    if kind == TRUNCATED and options.max_new_tokens:
        return replace(options, deterministic=True,
                       max_new_tokens=min(4096, 2 * options.max_new_tokens))
    return replace(options, deterministic=True)


class GuardedSegment:
    """Reads one segment's answer through the guards, retrying once; see the module docstring.

    ``store(text)`` keeps an answer that passed (the phrase cache); ``warnings`` collects the
    per-segment warning of a marked answer."""

    def __init__(self, guards: Guards, reader: Reader, engine: Any, request: Any, source: str,
                 segment: str, prompt: str, store: Callable[[str], None] | None,
                 warnings: list[dict[str, Any]], index: int) -> None:
        self.guards, self.reader, self.engine, self.request = guards, reader, engine, request
        self.source, self.segment, self.prompt = source, segment, prompt
        self.store, self.warnings, self.index = store, warnings, index
        self.pair = f"{source}-{request.target_lang}"
        # The glossary's terms: a source term kept as it is ("Dashboard") is no copy, and a
        # target term in the source's script no half translation.
        self.keep = tuple(term for pair in getattr(request, "glossary", ()) for term in pair)

    def _read(self, stream: Stream, watch: Watch) -> Iterator[str]:
        for chunk in self.reader.read(stream):
            shown = watch.feed(chunk)
            if shown:
                yield shown
            if watch.finding is not None:
                self.reader.drop(stream)  # cancelled, unless another request reads it too
                return
        if not self.reader.cancelled.is_set():
            watch.finish(stream.finish_reason)

    def _watch(self, early: bool) -> Watch:
        return Watch(self.guards, self.segment, self.source, self.request.target_lang,
                     early=early, keep=self.keep)

    def _keep(self, watch: Watch, stream: Stream) -> None:
        if self.store is not None and stream.finish_reason == "stop":
            self.store(watch.answer)

    def run(self, stream: Stream) -> Iterator[str]:
        first = self._watch(early=self.reader.takes_back)
        yield from self._read(stream, first)
        if self.reader.cancelled.is_set():
            return
        if first.finding is None:
            yield first.rest()
            self._keep(first, stream)
            return
        kind = first.finding.kind
        second = self._watch(early=False)  # the retry is shown only once it is judged whole
        retry = self._retry(kind)
        yield from self._read(retry, second)
        if self.reader.cancelled.is_set():
            return
        if second.finding is None:
            self.guards.counts.add(kind, SERVED, self.pair)
            yield from self._serve(first, second)
            self._keep(second, retry)
            return
        best = second if second.score() > first.score() else first
        self._mark(best, kind, retried=True)
        yield from self._serve(first, best)

    @staticmethod
    def _serve(first: Watch, chosen: Watch) -> Iterator[str]:
        """``chosen``'s answer: what follows what is on screen, or a :class:`Correction` when
        what is on screen is not its beginning."""
        shown = first.text[:first.shown]
        if chosen.answer.startswith(shown):
            chosen.shown = len(shown)
            yield chosen.rest()
        else:
            chosen.rest()
            yield Correction(chosen.answer)

    def _retry(self, kind: str) -> Stream:
        request = self.request
        prompt = self.prompt
        plain = request.mode == TRANSLATE and not request.glossary
        if kind in REWORDED and plain:
            prompt = alternative_prompt(self.guards.family, request.mode, self.segment,
                                        self.source, request.target_lang) or prompt
        [stream] = self.reader.submit(self.engine, [prompt],
                                      [retry_options(request.options, kind)])
        return stream

    def _mark(self, watch: Watch, kind: str, retried: bool) -> None:
        assert watch.finding is not None
        self.warnings.append(watch.finding.warning(self.index, retried))
        self.guards.counts.add(kind, MARKED, self.pair)
