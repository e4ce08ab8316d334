"""The classroom soak's students: what they type (the demo phrase table, the class example,
sentences nobody sent before, 2,000-character documents) and one request over the page's own
protocol (``POST /gradio_api/call/translate``, then that event's stream), with hang detection.
Each request becomes an :class:`~benchmarks.classroom_report.Outcome`.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from benchmarks.classroom_report import Outcome
from benchmarks.clients import sse_lines
from hunyuan_webui.demo.model import load_phrases

CALL = "/gradio_api/call/translate"
CLASS_SHARE = 0.40  # requests for the class example
SHORT_LIMIT_S = 120.0  # a short request in all (each gap still bounded by the hang limit)
CLASS_EXAMPLE = "今天天气很好。"


# -- what the students type ---------------------------------------------------------------------
@dataclass(frozen=True)
class Text:
    source: str
    target: str
    text: str

    @property
    def key(self) -> str:
        return f"{self.source}>{self.target}:{self.text}"


def _sentence(phrase: str) -> str:
    return phrase if phrase.endswith(("。", "！", "？")) else phrase + "。"


class Texts:
    """The demo phrase table, the class example, numbered sentences nobody sent before (so the
    cache cannot answer them) and documents of such sentences."""

    def __init__(self) -> None:
        phrases = load_phrases()
        self.example = Text("zh", "en", CLASS_EXAMPLE)
        self.table = [t for p in phrases if (t := Text(p.source_lang, p.target_lang, p.source))
                      != self.example]
        self._zh = sorted({p.source for p in phrases if p.source_lang == "zh"})
        self._en = sorted({p.source for p in phrases if p.source_lang == "en"})
        self._numbers = itertools.count(1)

    def unique_short(self) -> Text:
        n = next(self._numbers)
        if n % 2:
            return Text("zh", "en", f"第{n}句：{_sentence(self._zh[n % len(self._zh)])}")
        return Text("en", "zh", f"Item {n}: {self._en[n % len(self._en)]}")

    def document(self, chars: int, label: str) -> Text:
        """Chinese prose of about ``chars`` characters, every sentence distinct."""
        sentences: list[str] = []
        while sum(map(len, sentences)) < chars:
            i = len(sentences)
            sentences.append(f"{label}第{i + 1}句：{_sentence(self._zh[i % len(self._zh)])}")
        return Text("zh", "en", "".join(sentences))

    def pick(self, rng: random.Random) -> tuple[str, Text]:
        """A student's next phrase: the class example, a table phrase or a new sentence."""
        r = rng.random()
        if r < CLASS_SHARE:
            return "class example", self.example
        if r < CLASS_SHARE + (1 - CLASS_SHARE) / 2:
            return "short", rng.choice(self.table)
        return "short", self.unique_short()


# -- one request over the page's protocol -------------------------------------------------------
class Watchdog:
    """Hang detection: a request hangs when no progress came for ``hang_s`` seconds; none runs
    past ``limit_s`` in all."""

    def __init__(self, hang_s: float, limit_s: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.clock, self.hang_s = clock, hang_s
        self.last = clock()
        self.deadline = self.last + limit_s

    def progress(self) -> None:
        self.last = self.clock()

    def remaining(self) -> float:
        return max(0.0, min(self.last + self.hang_s, self.deadline) - self.clock())

    def verdict(self) -> str:
        """Why the time ran out: "hang" (silence) or "limit" (too long in all)."""
        return "hang" if self.last + self.hang_s <= self.deadline else "limit"


def error_message(data: str) -> str:
    """The text of a Gradio error event (``{"error": msg, ...}``, a bare string, or null)."""
    try:
        payload = json.loads(data)
    except ValueError:
        return data.strip()
    if isinstance(payload, dict):
        return str(payload.get("error") or "")
    return "" if payload is None else str(payload)


async def _next(events: Any) -> tuple[str | None, str] | None:
    return await anext(events, None)


@dataclass
class Soak:
    """The HTTP client, the soak's clock and every outcome so far."""

    http: httpx.AsyncClient
    url: str
    hang_s: float
    t0: float = field(default_factory=time.monotonic)
    outcomes: list[Outcome] = field(default_factory=list)

    def now(self) -> float:
        return time.monotonic() - self.t0

    async def send(self, kind: str, text: Text, phase: str, close_early: bool = False,
                   limit_s: float = SHORT_LIMIT_S) -> Outcome:
        outcome = Outcome(kind, text.key, phase, started=self.now(), chars=len(text.text))
        watch = Watchdog(self.hang_s, limit_s)
        try:
            await self._exchange(text, outcome, watch, close_early)
        except TimeoutError:
            outcome.hung = watch.verdict() == "hang"
            outcome.error = (f"no progress for {self.hang_s:g} s" if outcome.hung
                             else f"not finished within {limit_s:g} s")
        except (httpx.HTTPError, ValueError, KeyError, IndexError) as exc:
            outcome.error = f"{type(exc).__name__}: {exc}"
        outcome.ended = self.now()
        if phase != "warm-up":
            self.outcomes.append(outcome)
        return outcome

    async def _exchange(self, text: Text, o: Outcome, watch: Watchdog, close_early: bool) -> None:
        sent = time.monotonic()
        started = await asyncio.wait_for(self.http.post(
            self.url + CALL, json={"data": [text.text, text.source, text.target]}),
            watch.remaining())
        event_id = started.raise_for_status().json()["event_id"]
        async with self.http.stream("GET", f"{self.url}{CALL}/{event_id}") as response:
            events, shown = aiter(sse_lines(response)), ""
            while (item := await asyncio.wait_for(_next(events), watch.remaining())) is not None:
                event, data = item
                if event == "error":
                    o.error = error_message(data) or "an error event without a message"
                    return
                if event not in ("generating", "complete"):
                    continue  # heartbeats are not progress
                text = (json.loads(data) or [""])[0] or ""
                if text != shown:  # progress is text that changed, not an event repeated
                    watch.progress()
                    shown = text
                if shown and o.first_text is None:
                    o.first_text = time.monotonic() - sent
                if event == "complete":
                    o.ok = True
                    return
                if close_early and shown:  # the student closes the tab mid-stream
                    o.closed = True
                    return
        o.error = "the event stream ended without a result"
