"""The answer checks on corpora of our own: every bad answer caught or fixed, no legitimate one
marked.

``tests/data/guards/legit.tsv`` holds hand-written translations (names in another script, short
answers, numbers, code, lists, headings, quotations, Simplified and Traditional Chinese) that
no guard may mark; ``tests/data/guards/misbehaving.tsv`` bad answers of every kind the guards
know, each with the answer a retry gets (empty: the bad one again). Each is translated through
the service (:class:`~hunyuan_webui.service.Translator`) over :class:`TableEngine`, an engine
that streams the table's answers as a model would: the bad answer to the first prompt for a
source, the retry's to the next. So the count covers what a user sees: caught (the answer
marked), fixed (the retry served), or missed.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hunyuan_webui import models
from hunyuan_webui.engine import Engine, EngineState, EngineStatus, Stream
from hunyuan_webui.engine.base import options_per_prompt

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "data" / "guards"
LEGIT, MISBEHAVING = CORPUS / "legit.tsv", CORPUS / "misbehaving.tsv"
MODEL = "tencent/Hunyuan-MT-7B"  # the prompt family the table's prompts are read in


@dataclass(frozen=True)
class Case:
    kind: str  # the guard that must catch it ("" for a legitimate pair)
    source_lang: str
    target_lang: str
    source: str
    answer: str
    finish: str = "stop"
    retry: str = ""  # the answer a retry gets; empty: the bad answer again
    note: str = ""

    @property
    def answers(self) -> tuple[tuple[str, str], ...]:
        """What the engine answers, in turn: (text, finish reason); the last one repeats."""
        first = (self.answer, self.finish)
        return (first, (self.retry, "stop")) if self.retry else (first,)


def _unescape(text: str) -> str:
    return text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")


def _rows(path: Path) -> list[list[str]]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [[_unescape(c) for c in line.split("\t")] for line in lines
            if line.strip() and not line.startswith("#")]


def load_legit(path: Path = LEGIT) -> list[Case]:
    return [Case("", s, t, src, ans, note=note) for s, t, src, ans, note in _rows(path)]


def load_misbehaving(path: Path = MISBEHAVING) -> list[Case]:
    return [Case(kind, s, t, src, ans, finish, retry)
            for kind, s, t, src, ans, finish, retry in _rows(path)]


def case_prompts(case: Case, family: str) -> tuple[str, ...]:
    """The prompts the service sends for a case: the family's usual wording and the other one
    (the guards' retry)."""
    from hunyuan_webui.prompts import alternative_prompt, translation_prompt

    usual = translation_prompt(case.source, case.source_lang, case.target_lang, family)
    other = alternative_prompt(family, "translate", case.source, case.source_lang,
                               case.target_lang)
    return (usual, other) if other else (usual,)


class TableEngine(Engine):
    """Answers each prompt from a table, a few characters at a time on a thread: the n-th
    prompt for a case (in either wording) gets its n-th answer (the last one again after that).
    A prompt it has no answer for is answered with its last paragraph (the source)."""

    model_id = MODEL

    def __init__(self, cases: Sequence[Case], chunk: int = 3, delay: float = 0.0) -> None:
        family = models.resolve(MODEL).family
        self.table = {prompt: case for case in cases for prompt in case_prompts(case, family)}
        self.chunk, self.delay = chunk, delay
        self.asked: Counter[Case] = Counter()
        self._lock = threading.Lock()

    def status(self) -> EngineStatus:
        return EngineStatus(EngineState.READY, self.model_id)

    def count_tokens(self, text: str) -> int:
        return len(text)

    def submit(self, prompts: Sequence[str], options: Any) -> list[Stream]:
        streams = [Stream(p, o) for p, o in zip(prompts, options_per_prompt(prompts, options))]
        for stream in streams:
            case = self.table.get(stream.prompt)
            if case is None:
                text, finish = stream.prompt.rsplit("\n\n", 1)[-1], "stop"
            else:
                with self._lock:
                    turn = self.asked[case]
                    self.asked[case] += 1
                text, finish = case.answers[min(turn, len(case.answers) - 1)]
            threading.Thread(target=self._type, args=(stream, text, finish), daemon=True).start()
        return streams

    def _type(self, stream: Stream, text: str, finish: str) -> None:
        for at in range(0, len(text), self.chunk):
            if stream.cancelled:
                stream.finish("cancelled")
                return
            stream.usage.completion_tokens += 1
            stream.push(text[at:at + self.chunk])
            if self.delay:
                time.sleep(self.delay)
        stream.finish(finish)


@dataclass
class Outcome:
    case: Case
    text: str
    warnings: tuple[dict[str, Any], ...]

    @property
    def verdict(self) -> str:
        """caught (marked), fixed (a retry served a good answer), missed, or, for a legitimate
        pair, ok / false alarm."""
        if not self.case.kind:
            return "false alarm" if self.warnings or self.text != self.case.answer else "ok"
        if self.warnings:
            return "caught"
        return "fixed" if self.case.retry and self.text == self.case.retry else "missed"

    @property
    def caught_as(self) -> str:
        return ",".join(w["guard"] for w in self.warnings)


def run(cases: Sequence[Case], guards: bool = True) -> list[Outcome]:
    """Every case through the service over a :class:`TableEngine` (no cache: each one fresh)."""
    from hunyuan_webui.service import TranslationRequest, Translator
    from hunyuan_webui.settings import Settings

    spec = models.resolve(MODEL)
    translator = Translator(TableEngine(cases), spec,
                            Settings(model=MODEL, cache_size=0, guards=guards))
    out = []
    for case in cases:
        result = translator.translate(TranslationRequest(case.source, case.target_lang,
                                                         case.source_lang))
        out.append(Outcome(case, result.text, result.warnings))
    return out


def summary(legit: list[Outcome], bad: list[Outcome]) -> dict[str, Any]:
    """Per kind: cases, caught, fixed, missed; and the legitimate pairs' false alarms."""
    kinds: dict[str, dict[str, int]] = {}
    for outcome in bad:
        row = kinds.setdefault(outcome.case.kind, {"cases": 0, "caught": 0, "fixed": 0,
                                                  "missed": 0})
        row["cases"] += 1
        row[outcome.verdict] += 1
    alarms = [o for o in legit if o.verdict != "ok"]
    return {
        "misbehaving": {"cases": len(bad), "kinds": kinds,
                        "caught_or_fixed": sum(o.verdict != "missed" for o in bad),
                        "missed": [f"{o.case.kind}: {o.case.source}" for o in bad
                                   if o.verdict == "missed"]},
        "legit": {"cases": len(legit),
                  "language_pairs": len({(o.case.source_lang, o.case.target_lang)
                                         for o in legit}),
                  "false_alarms": len(alarms),
                  "alarms": [f"{o.case.source_lang}->{o.case.target_lang} {o.case.source}: "
                             f"{o.caught_as or o.text}" for o in alarms]},
    }
