"""The service's front door on a fake engine (its "translation" is the text upper-cased):
``Translator.translate_texts`` plans, validates once, batches, and hands back an ``Operation``."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from fakes import InstantEngine, TypingEngine

from hunyuan_webui import models
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.engine import Engine, EngineState
from hunyuan_webui.errors import InputTooLongError, UnknownLanguageError
from hunyuan_webui.service import Failure, TranslationRequest, Translator
from hunyuan_webui.settings import Settings

PARAGRAPH = "Thank you for your help. See you tomorrow. The weather is nice today.\n"
LONG = PARAGRAPH * 12 + "Good morning."  # 853 characters: 12 parts of at most 100


def _translator(engine: Engine, **settings: Any) -> Translator:
    settings.setdefault("max_input_chars", 100)
    settings.setdefault("guards", False)  # an upper-cased "translation" is no copy to retry
    spec = models.resolve("tencent/Hunyuan-MT-7B")
    return Translator(engine, spec, Settings(**settings), cache=PhraseCache(size=100))


def _request(text: str, target: str = "de", **kwargs: Any) -> TranslationRequest:
    return TranslationRequest(text=text, source_lang="en", target_lang=target, **kwargs)


def _drained(translator: Translator) -> bool:
    deadline = time.monotonic() + 10
    while translator.in_flight() and time.monotonic() < deadline:
        time.sleep(0.02)
    return translator.in_flight() == 0


def test_short_and_long_texts_come_back_in_order_the_long_one_in_parts():
    translator = _translator(InstantEngine())
    texts = ["Good morning.", LONG, "See you tomorrow."]
    operation = translator.translate_texts([_request(t) for t in texts])
    assert len(operation) == 3 and operation.parts == 1 + 12 + 1
    updates = list(operation)
    assert [u.item for u in updates] == sorted(u.item for u in updates)  # text after text
    for item, text in enumerate(texts):
        mine = [u for u in updates if u.item == item]
        assert "".join(u.delta for u in mine) == mine[-1].result.text == text.upper()
        assert [u for u in mine if u.result is not None] == [mine[-1]]
    assert [r.text for r in operation.result()] == [t.upper() for t in texts]


def test_every_text_is_checked_before_any_starts():
    translator = _translator(InstantEngine())
    with pytest.raises(InputTooLongError, match="1,001 characters long; the limit is 1,000"):
        translator.translate_texts([_request("Good morning."), _request("a" * 1001)])
    with pytest.raises(UnknownLanguageError):
        translator.translate_texts([_request("Good morning."), _request("Hello.", "xx")])
    assert translator.model_calls == 0


def test_short_texts_are_submitted_together_or_a_window_ahead():
    texts = [f"Sentence number {i}." for i in range(6)]
    together = _translator(InstantEngine())
    together.translate_texts([_request(t) for t in texts])
    assert together.model_calls == 6  # all submitted before any is read: they share batches
    windowed = _translator(InstantEngine())
    operation = windowed.translate_texts([_request(t) for t in texts], ahead=2)
    assert windowed.model_calls == 2
    assert [r.text for r in operation.result()] == [t.upper() for t in texts]
    assert windowed.model_calls == 6


def test_a_text_that_fails_is_reported_and_the_others_go_on():
    translator = _translator(InstantEngine())
    requests = [_request("Good morning."), _request("Hello.", "xx"), _request("See you.")]
    operation = translator.translate_texts(requests, errors="report")
    updates = list(operation)
    [failure] = [u for u in updates if isinstance(u, Failure)]
    assert failure.item == 1 and isinstance(failure.error, UnknownLanguageError)
    done = {u.item: u.result.text for u in updates if u.result is not None}
    assert done == {0: "GOOD MORNING.", 2: "SEE YOU."}
    with pytest.raises(UnknownLanguageError):
        operation.result()  # the whole list was not translated


def test_an_operation_left_early_on_the_event_loop_stops_its_work():
    translator = _translator(TypingEngine(delay=0.005))

    async def read() -> list[Any]:
        operation = await translator.atranslate_texts([_request(LONG, cache=False),
                                                       _request(PARAGRAPH, cache=False)])
        seen: list[Any] = []
        async for batch in operation.updates():
            seen.extend(batch)
            if len(seen) >= 3:
                break
        return seen

    seen = asyncio.run(read())
    assert seen[-1].result is None and seen[-1].item == 0
    assert _drained(translator)


def test_the_front_ends_learn_what_they_may_of_the_engine_through_the_translator():
    translator = _translator(InstantEngine())
    assert translator.status().state == EngineState.READY
    assert translator.count_tokens("Good morning.") == len("Good morning.")
    assert translator.max_chars == 1000
