"""The service's operations for long texts and files, and the page and the API as thin edges.

A long paste used to be cut into parts by the page alone (``/v1/translate`` refused the same
text), and documents ran in a worker thread the page polled every 250 ms, so no protocol could
translate a file. Both are service operations now (the front door's :class:`LongText` texts,
:class:`FileJob`): these tests drive them directly on a fake engine (its "translation" is the text upper-cased), then the
same long text through the page's Translate button, the page's ``/translate`` endpoint and
``POST /v1/translate`` (JSON and Server-Sent Events), which must agree exactly.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from apphelpers import completed, run_event, running_app, visitor
from fakes import InstantEngine, TypingEngine
from gradio_client import Client

from hunyuan_webui import models
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.engine import Engine
from hunyuan_webui.errors import InputError, InputTooLongError, RateLimitError
from hunyuan_webui.service import FileJob, LongText, TranslationRequest, Translator
from hunyuan_webui.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PARAGRAPH = "Thank you for your help. See you tomorrow. The weather is nice today.\n"
LONG = PARAGRAPH * 12 + "Good morning."  # 853 characters: 12 parts of at most 100
DEADLINE_S = 10


def _translator(engine: Engine, **settings: Any) -> Translator:
    spec = models.resolve("tencent/Hunyuan-MT-7B")
    return Translator(engine, spec, Settings(**settings), cache=PhraseCache(size=100))


def _request(text: str, **kwargs: Any) -> TranslationRequest:
    return TranslationRequest(text=text, source_lang="en", target_lang="de", **kwargs)


def _drained(translator: Translator) -> bool:
    deadline = time.monotonic() + DEADLINE_S
    while translator.in_flight() and time.monotonic() < deadline:
        time.sleep(0.02)
    return translator.in_flight() == 0


# -- a long text -----------------------------------------------------------------------------------
def test_a_long_text_is_translated_in_parts_whose_deltas_make_the_whole():
    translator = _translator(InstantEngine(), max_input_chars=100)
    text = LongText.plan(translator, _request(LONG))
    assert text.parts > 1 and all(len(r.text) <= 100 for r in text.requests)
    assert "".join(r.text for r in text.requests) == LONG
    updates = list(text)
    final = updates[-1].result
    assert final is not None and [u for u in updates if u.result is not None] == [updates[-1]]
    assert "".join(u.delta for u in updates) == final.text == LONG.upper()
    assert [u.part for u in updates] == sorted(u.part for u in updates)  # parts in order
    assert final.segments == 12 * 3 + 1 and final.source_lang == "en"


def test_a_text_within_one_request_is_one_job_with_its_own_result():
    translator = _translator(InstantEngine(), max_input_chars=100)
    text = LongText.plan(translator, _request("Good morning. See you tomorrow."))
    assert text.parts == 1
    assert text.result().to_dict()["translation"] == "GOOD MORNING. SEE YOU TOMORROW."


def test_a_text_longer_than_the_parts_allow_is_refused_before_any_work():
    translator = _translator(InstantEngine(), max_input_chars=100)
    with pytest.raises(InputTooLongError, match="the limit is 1,000"):
        LongText.plan(translator, _request("a" * 1001))
    assert translator.model_calls == 0


def test_a_long_text_read_on_the_event_loop_and_left_early_stops():
    # Read whole, the text types fast (the 853 characters took 4 s at the pace below); left
    # early, it types slowly enough that three updates come long before its end.
    whole = _translator(TypingEngine(delay=0.001), max_input_chars=100)
    left = _translator(TypingEngine(delay=0.005), max_input_chars=100)

    async def read(translator: Translator, stop_after: int | None) -> list[Any]:
        # fresh each time (no cache)
        operation = await translator.atranslate_texts([_request(LONG, cache=False)])
        seen = []
        async for batch in operation.updates():
            seen.extend(batch)
            if stop_after is not None and len(seen) >= stop_after:
                break
        return seen

    seen = asyncio.run(read(whole, None))
    assert "".join(u.delta for u in seen) == seen[-1].result.text == LONG.upper()
    assert _drained(whole)
    partial = asyncio.run(read(left, 3))
    assert partial[-1].result is None
    assert _drained(left)


# -- a file ----------------------------------------------------------------------------------------
def _events(job: FileJob, stop_after: int | None = None) -> list[Any]:
    async def read() -> list[Any]:
        seen = []
        async for event in job.events(every=0.01):
            seen.append(event)
            if stop_after is not None and len(seen) >= stop_after:
                break
        return seen

    return asyncio.run(read())


def test_a_file_job_reports_progress_then_the_translated_file():
    translator = _translator(InstantEngine())
    data = PARAGRAPH.encode() * 3
    admitted: list[list[str]] = []
    job = FileJob(translator, "notes.txt", data, _request(""), admit=admitted.append)
    events = _events(job)
    result = events[-1].result
    assert result is not None and result.filename == "notes.de.txt"
    assert result.data.decode() == PARAGRAPH.upper() * 3
    assert admitted == [["Thank you for your help.", "See you tomorrow.",
                         "The weather is nice today."]]  # each distinct sentence once
    assert all(e.total == 3 and 0 <= e.done <= 3 for e in events)
    assert job.run().data == result.data  # the same operation, blocking


def test_a_file_job_refuses_what_no_front_end_accepts():
    translator = _translator(InstantEngine(), max_file_bytes=1000)
    with pytest.raises(InputError, match="not supported"):
        FileJob(translator, "scan.tiff", b"II*\x00", _request(""))
    with pytest.raises(InputTooLongError, match="the limit is"):
        FileJob(translator, "big.txt", b"a" * 1001, _request(""))

    def refuse(segments: list[str]) -> None:
        raise RateLimitError("Too many characters for this key.", retry_after=5)

    job = FileJob(translator, "notes.txt", b"Hello.", _request(""), admit=refuse)
    with pytest.raises(RateLimitError):
        _events(job)
    assert translator.model_calls == 0


def test_leaving_a_file_job_early_stops_its_work():
    translator = _translator(TypingEngine(delay=0.01))
    data = "".join(f"Sentence number {i} is here.\n" for i in range(40)).encode()
    job = FileJob(translator, "long.txt", data, _request(""))
    events = _events(job, stop_after=1)
    assert events[-1].result is None and job.cancelled
    assert _drained(translator)


# -- the page and the API over the same operations --------------------------------------------------
def _button_call(c: httpx.Client, text: str, chosen: dict[str, Any] | None = None) -> list[Any]:
    """The Translate button's event, its inputs' values from the page's own config (each at its
    default) but those ``chosen`` by element id (the text, the pair, greedy decoding)."""
    config = c.get("/config").json()
    props = {comp["id"]: comp.get("props", {}) for comp in config["components"]}
    [dep] = [d for d in config["dependencies"] if d.get("api_name") == "translate_ui"]
    chosen = chosen or {"input-box": text, "source-lang": "en", "target-lang": "de",
                        "deterministic": True}
    data = [chosen.get(props[i].get("elem_id"), props[i].get("value")) for i in dep["inputs"]]
    status, stream = run_event(c, "translate_ui", {"data": data})
    assert status == 200, stream
    return completed(stream)


def test_the_page_and_the_api_translate_a_long_text_alike():
    with running_app(InstantEngine(), max_input_chars=100) as app, visitor(app) as c:
        button = _button_call(c, LONG)
        client = Client(app.url, verbose=False)
        endpoint = client.predict(LONG, "en", "de", api_name="/translate")
        client.close()
        body = {"text": LONG, "source_lang": "en", "target_lang": "de"}
        answer = c.post("/v1/translate", json=body).json()
        with c.stream("POST", "/v1/translate", json={**body, "stream": True}) as response:
            events = [json.loads(line[5:]) for line in response.iter_lines()
                      if line.startswith("data:")]
        too_long = c.post("/v1/translate", json={**body, "text": "a" * 1001})
    assert button[0] == endpoint == answer["translation"] == LONG.upper()
    assert "translated in 12 parts" in button[2]
    assert answer["usage"]["segments"] == 37
    assert "".join(e.get("delta", "") for e in events) == LONG.upper()
    assert events[-1]["done"] and events[-1]["translation"] == LONG.upper()
    assert too_long.status_code == 413 and "1,000" in too_long.json()["error"]["message"]


def test_the_demo_model_translates_a_long_text_alike_on_the_page_and_the_api(engine):
    """The same check on the real model: greedy decoding, no cache, a text of demo phrases four
    times longer than one request may be."""
    text = "谢谢你的帮助。这本书很有意思。今天天气很好。\n\n" * 30  # 720 characters
    with running_app(engine, max_input_chars=200, cache_size=0) as app, visitor(app) as c:
        config = {"input-box": text, "source-lang": "zh", "target-lang": "en",
                  "deterministic": True}
        button = _button_call(c, text, config)
        answer = c.post("/v1/translate", json={"text": text, "source_lang": "zh",
                                               "target_lang": "en",
                                               "options": {"deterministic": True}}).json()
    expected = ("Thank you for your help. This book is very interesting. The weather is nice "
                "today.\n\n") * 30
    assert button[0] == answer["translation"] == expected
    assert "translated in 4 parts" in button[2]


# -- the page's listeners: by name, no threads ------------------------------------------------------
def _page_modules() -> list[Path]:
    found = sorted((ROOT / "hunyuan_webui" / "web" / "page").glob("*.py"))
    assert len(found) > 5, "the page's modules moved: point this test at them"
    return found


def test_the_page_holds_no_threads():
    for path in _page_modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
                 for a in n.names} | {n.module or "" for n in ast.walk(tree)
                                      if isinstance(n, ast.ImportFrom)}
        assert "threading" not in names, path.name
        assert "to_thread" not in path.read_text(encoding="utf-8"), path.name


def test_listeners_answer_by_name_and_translate_takes_a_handful():
    from hunyuan_webui.web.page.ui import TranslatorUI

    assert len(inspect.signature(TranslatorUI.translate).parameters) - 1 <= 6  # less self
    padded = re.compile(r"\(gr\.skip\(\),?\)\s*\*|gr\.skip\(\)\s*,\s*gr\.skip\(\)")
    for path in sorted((ROOT / "hunyuan_webui").rglob("*.py")):
        assert not padded.search(path.read_text(encoding="utf-8")), path.name
