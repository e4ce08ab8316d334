"""One segment read through the guards (:mod:`hunyuan_webui.service.checks.answers`): hold, stop, retry,
mark.

While an answer streams, a :class:`Watch` decides what may be shown yet:

- an answer is held back until it is judged. Where the target's script is not the source's
  (en->ja, zh->en) its first few letters judge it; where they share one (en->fr) its first 20
  letters, unless they are the source again or (reliably) the source's language, which hold it
  to its end. Then it streams as it comes up to 1.5 times its expected length, and
  :data:`SHOW_LAG` characters behind the engine beyond that (where loops show);
- a repeating run, or an answer longer than its pair allows (:mod:`.budget`), stops the segment
  at once (the sequence is cancelled) and the repeated tail is cut;
- an answer clearly in the wrong script stops at once too.

A segment a guard stopped, or whose finished answer is a copy or in the wrong language, is retried
once if nothing of it has been shown yet: greedy, in the family's other prompt wording for a
language or copy problem, with a stronger repetition penalty for a loop. A retry that passes is
served (and cached); if both fail, the better answer is served with a warning, and neither is
cached. A segment already partly shown (its script passed) cannot be taken back: it is cut and
marked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any, Protocol

from hunyuan_webui import languages
from hunyuan_webui.engine import DecodingOptions, Engine, Stream
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.prompts import alternative_prompt
from hunyuan_webui.service.checks.answers import (
    COPY,
    LANGUAGE,
    LENGTH,
    LOOP,
    MARKED,
    SERVED,
    SHARED_RELEASE_LETTERS,
    Finding,
    Guards,
    check_answer,
    decides_early,
    find_loop,
    judge_script,
    judge_shared,
    letters_in,
    repeats_itself,
    target_share,
)
from hunyuan_webui.service.checks.budget import answer_budget, ratio

LOOP_CHECK_CHARS = 8  # look for a loop each time the answer has grown this much
RETRY_PENALTY = 1.2  # at least this repetition penalty when a loop is retried
PENALTY_STEP = 0.15
SHOW_LAG = 24  # characters kept back from a shown answer, so a loop is cut before it shows


class Reader(Protocol):
    """What a segment is read through: the job's reader
    (:class:`hunyuan_webui.service.translate.strategy.Reader`), which the checks need not know."""

    cancelled: threading.Event

    def read(self, stream: Stream) -> Iterator[str]: ...

    def submit(self, engine: Engine, prompts: Sequence[str],
               options: Sequence[DecodingOptions]) -> list[Stream]: ...


class Watch:
    """One answer as it streams: what may be shown so far, and the guard that stopped it."""

    def __init__(self, guards: Guards, segment: str, source: str, target: str) -> None:
        self.guards, self.segment, self.source, self.target = guards, segment, source, target
        self.text = ""
        self.shown = 0  # characters already handed to the reader
        self.cut: int | None = None  # where the answer ends when a guard stopped it
        self.finding: Finding | None = None
        self.budget = answer_budget(segment, source, target)
        self.early = guards.judges and decides_early(source, target)
        self.released = not guards.judges
        self._allow = len(segment) + 16 if guards.loop and repeats_itself(segment) else 0
        self._checked = self._judged = 0
        self._lag = SHOW_LAG if guards.loop else 0
        self._free = int(len(segment.strip()) * ratio(source, target) * 1.5)  # shown unheld

    def feed(self, chunk: str) -> str:
        """Take a chunk; return the text that may be shown now (sets ``finding`` to stop)."""
        self.text += chunk
        if self.guards.loop:
            self._look_for_loop()
        if self.finding is None and not self.released:
            verdict = self._judge()
            if verdict is False and not self.guards.language:
                verdict = None  # the copy guard alone: judged when the answer ends
            if verdict is False:
                self.finding = Finding(LANGUAGE, self.guards.detector.detect(self.text).code)
            self.released = bool(verdict)
        return self._showable() if self.released else ""

    def _judge(self) -> bool | None:
        if self.early:
            return judge_script(self.text, self.target, self.segment)
        if self._judged < 0 or len(self.text) - self._judged < LOOP_CHECK_CHARS:
            return None
        self._judged = len(self.text)
        verdict = judge_shared(self.text, self.segment, self.source, self.target,
                               self.guards.detector)
        if verdict is None and self._judged and letters_in(self.text) >= SHARED_RELEASE_LETTERS:
            self._judged = -1  # judged and held: no more detection until the answer ends
        return verdict

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
            if not languages.is_spaceless(self.target):  # else: no word breaks to keep to
                end = self.text.rfind(" ", self.shown, end) + 1 or self.shown
        end = max(end, self.shown)
        out, self.shown = self.text[self.shown:end], end
        return out

    def finish(self) -> None:
        """The answer ended on its own: judge it whole, unless it was judged and shown already."""
        if self.finding is None and self.guards.judges and not self.released:
            self.finding = check_answer(self.text, self.segment, self.source, self.target,
                                        self.guards.detector, copy=self.guards.copy,
                                        language=self.guards.language)

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
        return share - (0.5 if self.finding and self.finding.kind == COPY else 0.0)


def retry_options(options: DecodingOptions, kind: str) -> DecodingOptions:
    """Greedy; for a loop or a runaway answer also a stronger repetition penalty."""
    if kind in (LOOP, LENGTH):
        penalty = min(2.0, max(RETRY_PENALTY, options.repetition_penalty + PENALTY_STEP))
        return replace(options, deterministic=True, repetition_penalty=penalty)
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

    def _read(self, stream: Stream, watch: Watch) -> Iterator[str]:
        for chunk in self.reader.read(stream):
            shown = watch.feed(chunk)
            if shown:
                yield shown
            if watch.finding is not None:
                stream.cancel()
                return
        if not self.reader.cancelled.is_set():
            watch.finish()

    def _watch(self) -> Watch:
        return Watch(self.guards, self.segment, self.source, self.request.target_lang)

    def _keep(self, watch: Watch, stream: Stream) -> None:
        if self.store is not None and stream.finish_reason == "stop":
            self.store(watch.answer)

    def run(self, stream: Stream) -> Iterator[str]:
        first = self._watch()
        yield from self._read(stream, first)
        if self.reader.cancelled.is_set():
            return
        if first.finding is None:
            yield first.rest()
            self._keep(first, stream)
            return
        kind = first.finding.kind
        if first.shown:  # part of it is on screen already: cut it there and say so
            yield first.rest()
            self._mark(first, kind, retried=False)
            return
        second = self._watch()
        retry = self._retry(kind)
        yield from self._read(retry, second)
        if self.reader.cancelled.is_set():
            return
        if second.finding is None:
            yield second.rest()
            self._keep(second, retry)
            self.guards.counts.add(kind, SERVED, self.pair)
            return
        best = second if second.shown or second.score() > first.score() else first
        yield best.rest()
        self._mark(best, kind, retried=True)

    def _retry(self, kind: str) -> Stream:
        request = self.request
        prompt = self.prompt
        plain = request.mode == TRANSLATE and not request.glossary
        if kind in (LANGUAGE, COPY) and plain:
            prompt = alternative_prompt(self.guards.family, request.mode, self.segment,
                                        self.source, request.target_lang) or prompt
        [stream] = self.reader.submit(self.engine, [prompt],
                                      [retry_options(request.options, kind)])
        return stream

    def _mark(self, watch: Watch, kind: str, retried: bool) -> None:
        assert watch.finding is not None
        self.warnings.append(watch.finding.warning(self.index, retried))
        self.guards.counts.add(kind, MARKED, self.pair)
