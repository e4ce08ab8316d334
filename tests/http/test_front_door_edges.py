"""One front door: the page and every protocol translate through ``Translator.translate_texts``.

The page and ``/v1/translate`` used to take ten times ``--max-input-chars`` in parts while
OpenAI's, DeepL's and LibreTranslate's routes and the extensions' refused past one. Now the same
text of eight times ``--max-input-chars`` goes through the page's ``/translate`` endpoint,
``/v1/translate``, OpenAI's chat completions, DeepL's ``/v2/translate``, LibreTranslate's
``/translate`` and Immersive Translate's ``/imme``, each with the client its users have, and
comes back the same; one character past ten times is refused by all with the same limit, each
in its own error shape. The engine is a fake whose "translation" is the text upper-cased.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import closing
from typing import Any

import deepl
import httpx
import openai
import pytest
from apphelpers import RunningApp, running_app
from fakes import InstantEngine
from gradio_client import Client

from hunyuan_webui import prompts

MAX_CHARS = 100
SENTENCE = "The weather is nice today. "  # 27 characters
TEXT = (SENTENCE * 30)[: 8 * MAX_CHARS - 1] + "."  # eight times --max-input-chars
TOO_LONG = "a" * (10 * MAX_CHARS + 1)
LIMIT = "the limit is 1,000"


@pytest.fixture(scope="module")
def door_app() -> Iterator[RunningApp]:
    with running_app(InstantEngine(), max_input_chars=MAX_CHARS) as app:
        yield app


def _page(app: RunningApp, text: str) -> str:
    client = Client(app.url, verbose=False)
    try:
        return client.predict(text, "en", "de", api_name="/translate")
    finally:
        client.close()


def _openai(app: RunningApp, text: str) -> str:
    with openai.OpenAI(base_url=f"{app.url}/v1", api_key="unused", max_retries=0,
                       http_client=httpx.Client(trust_env=False, timeout=60)) as c:
        answer = c.chat.completions.create(model="hunyuan", temperature=0, messages=[
            {"role": "user", "content": prompts.translation_prompt(text, "en", "de")}])
    return answer.choices[0].message.content or ""


def _deepl(app: RunningApp, text: str) -> str:
    with closing(deepl.Translator("any-key", server_url=app.url)) as c:
        return c.translate_text(text, source_lang="EN", target_lang="DE").text


def _json(app: RunningApp, path: str, body: dict[str, Any]) -> httpx.Response:
    with app.client() as c:
        return c.post(path, json=body)


def _v1(app: RunningApp, text: str) -> str:
    answer = _json(app, "/v1/translate", {"text": text, "source_lang": "en",
                                          "target_lang": "de"})
    assert answer.status_code == 200, answer.text
    return answer.json()["translation"]


def _libretranslate(app: RunningApp, text: str) -> str:
    answer = _json(app, "/translate", {"q": text, "source": "en", "target": "de"})
    assert answer.status_code == 200, answer.text
    return answer.json()["translatedText"]


def _imme(app: RunningApp, text: str) -> str:
    answer = _json(app, "/imme", {"source_lang": "en", "target_lang": "de", "text_list": [text]})
    assert answer.status_code == 200, answer.text
    return answer.json()["translations"][0]["text"]


EDGES = {"page": _page, "v1": _v1, "openai": _openai, "deepl": _deepl,
         "libretranslate": _libretranslate, "imme": _imme}


def test_a_text_of_eight_times_the_request_limit_comes_back_the_same_through_every_edge(
        door_app):
    assert len(TEXT) == 8 * MAX_CHARS
    answers = {name: edge(door_app, TEXT) for name, edge in EDGES.items()}
    assert answers == {name: TEXT.upper() for name in EDGES}


def test_one_character_past_ten_times_is_refused_by_every_edge_with_the_same_limit(door_app):
    refusals: dict[str, str] = {}
    with pytest.raises(Exception) as page:  # gradio_client raises the page's message
        _page(door_app, TOO_LONG)
    refusals["page"] = str(page.value)
    for path, body, message in (
            ("/v1/translate", {"text": TOO_LONG, "target_lang": "de"},
             lambda b: b["error"]["message"]),
            ("/translate", {"q": TOO_LONG, "source": "en", "target": "de"},
             lambda b: b["error"]),
            ("/imme", {"target_lang": "de", "text_list": [TOO_LONG]}, lambda b: b["message"])):
        answer = _json(door_app, path, body)
        assert answer.status_code == 413, (path, answer.text)
        refusals[path] = message(answer.json())
    with pytest.raises(openai.APIStatusError) as chat:
        _openai(door_app, TOO_LONG)
    assert chat.value.status_code == 413
    refusals["openai"] = chat.value.body["message"]
    with pytest.raises(deepl.DeepLException) as deepl_refusal:
        _deepl(door_app, TOO_LONG)
    refusals["deepl"] = str(deepl_refusal.value)
    assert all(LIMIT in message for message in refusals.values()), refusals
    assert all("1,001 characters long" in message for message in refusals.values()), refusals
