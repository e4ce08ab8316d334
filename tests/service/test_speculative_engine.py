"""Speculative decoding on the demo models: the same answers with drafts as without, token for
token (greedy) and draw for draw (sampled with a seed), in both of our engines, for phrases that
copy from their source, for ordinary ones, and for re-translations whose previous translation
(the draft hint) is right, half there, corrected or wrong.

The demo phrase table has copy-heavy rows (names, numbers, URLs, code: the last twelve of
assets/demo_phrases.tsv) so that drafts are really accepted here; each test also checks that
they were, or it would pass with speculation doing nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from hunyuan_webui import models
from hunyuan_webui.demo.model import Phrase, ensure_demo_model, load_phrases
from hunyuan_webui.engine import DecodingOptions, Engine
from hunyuan_webui.engine.local import LocalEngine

pytestmark = pytest.mark.slow

PHRASES = load_phrases()
COPYING = [p for p in PHRASES if p.copies]
GREEDY = DecodingOptions(deterministic=True)  # with the model card's repetition penalty, 1.05
SAMPLED = DecodingOptions(temperature=1.3, top_p=0.95, top_k=40)


def _engines(fmt: str) -> Iterator[dict[bool, LocalEngine]]:
    spec = models.resolve(str(ensure_demo_model(fmt)))
    engines = {on: LocalEngine(spec, device="cpu", max_new_tokens=64, max_batch_size=16,
                               max_queued=256, cpu_threads=1, speculative=on)
               for on in (True, False)}
    for engine in engines.values():
        status = engine.wait_ready(180)
        assert status.state == "ready", status.reason
    yield engines
    for engine in engines.values():
        engine.close()


@pytest.fixture(scope="module", params=["7b", "1.8b"])
def engines(request: pytest.FixtureRequest) -> Iterator[dict[bool, LocalEngine]]:
    yield from _engines(request.param)


def _prompt(engine: Any, phrase: Phrase) -> str:
    return phrase.prompt_in(str(engine.spec.family))


def _accepted(engine: Engine) -> int:
    return int(engine.status().extra["speculative"]["accepted"])


def _answers(engine: Engine, phrases: list[Phrase], options: list[DecodingOptions]) -> list[str]:
    """All at once: one batch, rows joining and leaving, drafts verified together."""
    streams = engine.submit([_prompt(engine, p) for p in phrases], options)
    return [s.result() for s in streams]


def test_the_copy_heavy_phrases_are_the_demo_models(engines: dict[bool, LocalEngine]) -> None:
    assert len(COPYING) >= 10
    assert _answers(engines[True], COPYING, [GREEDY] * len(COPYING)) == [p.target for p in COPYING]


def test_greedy_answers_are_the_same_with_drafts_for_every_phrase_at_once(
        engines: dict[bool, LocalEngine]) -> None:
    before = _accepted(engines[True])
    with_drafts = _answers(engines[True], PHRASES, [GREEDY] * len(PHRASES))
    assert with_drafts == _answers(engines[False], PHRASES, [GREEDY] * len(PHRASES))
    assert with_drafts == [p.target for p in PHRASES]
    assert _accepted(engines[True]) > before, "no draft was accepted: speculation did nothing"


@pytest.mark.parametrize("which", ["copying", "ordinary"])
def test_greedy_answers_are_the_same_with_drafts_one_at_a_time(
        engines: dict[bool, LocalEngine], which: str) -> None:
    phrases = COPYING if which == "copying" else [p for p in PHRASES if p not in COPYING][:20]
    for phrase in phrases:
        assert engines[True].generate(_prompt(engines[True], phrase), GREEDY) == \
            engines[False].generate(_prompt(engines[False], phrase), GREEDY) == phrase.target


def _hints(phrase: Phrase) -> dict[str, str]:
    """Previous translations of the text: right, half of it (the text grew since), corrected
    (a word changed), another phrase's, and none."""
    words = phrase.target.split()
    corrected = " ".join(["Oops", *words[1:]]) if len(words) > 1 else phrase.target[::-1]
    return {"same": phrase.target, "half": phrase.target[:len(phrase.target) // 2],
            "corrected": corrected, "other": PHRASES[0].target, "none": ""}


def test_a_re_translation_of_a_growing_text_is_the_same_whatever_the_previous_translation(
        engines: dict[bool, LocalEngine]) -> None:
    before = _accepted(engines[True])
    for phrase in COPYING:
        hints = _hints(phrase)
        options = [replace(GREEDY, draft=hint) for hint in hints.values()]
        with_drafts = _answers(engines[True], [phrase] * len(hints), options)
        assert with_drafts == [phrase.target] * len(hints), dict(zip(hints, with_drafts))
        assert _answers(engines[False], [phrase] * len(hints), options) == with_drafts
    assert _accepted(engines[True]) - before >= 2 * len(COPYING)


def test_a_growing_speech_draft_is_translated_the_same_at_every_stage(
        engines: dict[bool, LocalEngine]) -> None:
    """A text as a recogniser grows it, word by word: each stage is translated with the previous
    stage's translation as the hint, greedy, on both engines: the same answers at every stage
    (the demo model answers texts it does not know with whatever it makes of them)."""
    words = ["Call", "Anna", "at", "555-0199."]
    previous = {True: "", False: ""}
    for end in range(1, len(words) + 1):
        text = " ".join(words[:end])
        phrase = Phrase("en", "zh", text, "")
        answers = {on: engine.generate(_prompt(engine, phrase), replace(GREEDY,
                                                                        draft=previous[on]))
                   for on, engine in engines.items()}
        assert answers[True] == answers[False], text
        previous = answers
    assert previous[True] == "请拨打555-0199联系Anna。"


def test_sampled_answers_with_a_seed_are_the_same_draw_for_draw(
        engines: dict[bool, LocalEngine]) -> None:
    """A sampled row draws once per token with drafts as without (the acceptance rule's form for
    a one-token draft), so a seeded request gets the very same answer."""
    phrases = COPYING * 2
    options = [replace(SAMPLED, seed=1000 + i, draft=p.target if i % 2 else "")
               for i, p in enumerate(phrases)]
    before = _accepted(engines[True])
    assert _answers(engines[True], phrases, options) == _answers(engines[False], phrases, options)
    assert _accepted(engines[True]) > before


def test_the_status_says_whether_it_is_on(engines: dict[bool, LocalEngine]) -> None:
    on, off = (engines[x].status().extra["speculative"] for x in (True, False))
    assert on["on"] is True and on["draft_tokens"] >= on["accepted"] > 0
    assert off == {"on": False}


# -- the llama.cpp engine: drafts in the pass's llama_batch, rejected cells removed ------------


@pytest.fixture(scope="module")
def llama_engines() -> Iterator[dict[bool, Engine]]:
    from hunyuan_webui.demo.gguf import ensure_demo_gguf
    from hunyuan_webui.engine.llamacpp import LlamaCppEngine

    spec = models.resolve(str(ensure_demo_gguf()))
    engines: dict[bool, Engine] = {
        on: LlamaCppEngine(spec, device="cpu", max_new_tokens=64, max_batch_size=16,
                           max_queued=256, cpu_threads=1, context_tokens=1024, speculative=on)
        for on in (True, False)}
    for engine in engines.values():
        status = engine.wait_ready(180)
        assert status.state == "ready", status.reason
    yield engines
    for engine in engines.values():
        engine.close()


def test_llama_cpp_gives_the_same_answers_with_drafts(llama_engines: dict[bool, Engine]) -> None:
    """Every phrase at once, and every copy-heavy one with each kind of previous translation:
    greedy and seeded sampled answers as without drafts."""
    on, off = llama_engines[True], llama_engines[False]
    before = _accepted(on)
    assert _answers(on, PHRASES, [GREEDY] * len(PHRASES)) == [p.target for p in PHRASES]
    for phrase in COPYING:
        hints = list(_hints(phrase).values())
        options = [replace(GREEDY, draft=h) for h in hints] + \
                  [replace(SAMPLED, seed=7 + i, draft=h) for i, h in enumerate(hints)]
        phrases = [phrase] * len(options)
        assert _answers(on, phrases, options) == _answers(off, phrases, options)
    assert _accepted(on) - before >= 2 * len(COPYING)
