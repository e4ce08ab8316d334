"""OpenAI's protocol, through the ``openai`` client from PyPI, unchanged, against the real app
(served by uvicorn on a loopback port, as tests/apphelpers.py starts it).

What a user of a page or PDF translator with an OpenAI-compatible setting sees: a demo phrase in
the model card's prompt is translated exactly, streaming and not; the same request again comes
from the phrase cache at no model cost; other messages get plain generation, compared exactly with
what the engine itself answers for the same user message; keys are enforced when configured.
Exact outputs use temperature 0 (greedy), which the phrase cache serves today and will serve when
it also caches sampled decoding.
"""

from __future__ import annotations

import httpx
import openai
import pytest
from apphelpers import LONG_PAIR, LONG_TEXT, idle, make_engine, running_app, wait_until
from openai import OpenAI

from hunyuan_webui import prompts
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.web.protocols.openai_messages import ChatMessage, StopText, fold

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

KEY = "sk-openai-compat-key"


APP = {"max_input_chars": 2000}  # the app (tests/http/conftest.py)


def make_client(url: str, key: str = "unused") -> OpenAI:
    return OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0,
                  http_client=httpx.Client(trust_env=False, timeout=60))


def user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


def stream_parts(openai_client: OpenAI, messages, **kwargs):
    """(content deltas, finish reasons, extra fields of the finishing chunk, usage)."""
    chunks = list(openai_client.chat.completions.create(
        model="hunyuan", messages=messages, stream=True,
        stream_options={"include_usage": True}, **kwargs))
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    finishing = next(c for c in chunks if c.choices and c.choices[0].finish_reason)
    assert not chunks[-1].choices  # the usage chunk comes last, with no choices
    return deltas, finishes, finishing.model_extra, chunks[-1].usage


# -- translation prompts go through the translator -------------------------------------------------
@pytest.mark.parametrize("message, expected", [
    (prompts.translation_prompt("谢谢你的帮助。", "zh", "en"), "Thank you for your help."),
    (prompts.translation_prompt("Good morning.", "en", "de"), "Guten Morgen."),
    (prompts.translation_prompt("Thank you.", "en", "ja", prompts.PromptFamily.HY_MT15),
     "ありがとうございます。"),
])
def test_a_translation_prompt_is_translated_exactly(openai_client, app, message, expected):
    answer = openai_client.chat.completions.create(model="hunyuan", messages=user(message),
                                            temperature=0)
    assert answer.choices[0].message.content == expected
    assert answer.choices[0].finish_reason == "stop"
    assert answer.model == app.translator.spec.public_id == "demo-model"
    info = answer.model_extra["translation"]
    assert info["target_lang"] == prompts.recognize(message).target and info["segments"] == 1
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens


def test_a_translation_prompt_streams(openai_client):
    message = prompts.translation_prompt("Thank you for your help.", "en", "zh")
    deltas, finishes, extra, usage = stream_parts(openai_client, user(message), temperature=0,
                                                  max_tokens=59)
    assert "".join(deltas) == "谢谢你的帮助。"
    assert len(deltas) >= 2  # it really streams
    assert finishes == ["stop"]
    assert extra["translation"]["cached"] is False and usage.completion_tokens > 0


def test_the_same_request_again_comes_from_the_cache(openai_client, app):
    # max_tokens is part of the cache key: this value keeps the test's entries its own.
    message = prompts.translation_prompt("欢迎来到北京。", "zh", "en")
    first = openai_client.chat.completions.create(model="hunyuan", messages=user(message),
                                           temperature=0, max_tokens=57)
    calls = app.translator.model_calls
    second = openai_client.chat.completions.create(model="hunyuan", messages=user(message),
                                            temperature=0, max_tokens=57)
    assert first.choices[0].message.content == second.choices[0].message.content == (
        "Welcome to Beijing.")
    assert (first.model_extra["translation"]["cached"],
            second.model_extra["translation"]["cached"]) == (False, True)
    assert first.usage.completion_tokens > 0
    assert (second.usage.prompt_tokens, second.usage.completion_tokens) == (0, 0)
    # streamed, the cached answer is one delta
    deltas, _, extra, usage = stream_parts(openai_client, user(message), temperature=0, max_tokens=57)
    assert deltas == ["Welcome to Beijing."]
    assert extra["translation"]["cached"] is True and usage.completion_tokens == 0
    assert app.translator.model_calls == calls  # the model was not asked again


def test_a_client_leaving_mid_stream_stops_the_translation(demo_dir):
    engine = make_engine(demo_dir, max_new_tokens=1024)  # long enough to still be running
    try:
        with running_app(engine, cache_size=0) as running, running.client() as c:
            message = prompts.translation_prompt(LONG_TEXT, *LONG_PAIR)
            body = {"model": "m", "messages": user(message), "stream": True, "temperature": 0,
                    "max_tokens": 600}
            before = engine.status().tokens_generated
            with c.stream("POST", "/v1/chat/completions", json=body) as r:
                assert r.status_code == 200
                data = (line for line in r.iter_lines() if line.startswith("data: "))
                for _ in range(4):
                    next(data)
                assert engine.status().active == 1  # still generating when the client goes
            assert wait_until(lambda: idle(engine), timeout=5), engine.status()
            assert engine.status().tokens_generated - before < 300  # far short of the 600 asked for
            assert running.translator.in_flight() == 0
    finally:
        engine.close()


def test_the_instruction_may_sit_in_the_system_message(openai_client):
    """Several tools keep the prompt in the system message and send only the text as the user's."""
    messages = [{"role": "system", "content": "Translate the following segment into English, "
                                              "without additional explanation."},
                {"role": "user", "content": "早上好。"}]
    answer = openai_client.chat.completions.create(model="hunyuan", messages=messages, temperature=0)
    assert answer.choices[0].message.content == "Good morning."
    assert answer.model_extra["translation"]["source_lang"] == "zh"


def test_many_paragraphs_in_one_request_come_back_in_their_layout(openai_client):
    """Page translators send a batch of paragraphs joined by a separator line: each sentence is
    translated (and cached) on its own, and the separators come back untouched."""
    text = "早上好。\n\n%%\n\n谢谢。我们明天见。\n\n%%\n\n你好"
    message = prompts.translation_prompt(text, "zh", "en")
    answer = openai_client.chat.completions.create(model="hunyuan", messages=user(message), temperature=0)
    assert answer.choices[0].message.content == (
        "Good morning.\n\n%%\n\nThank you. See you tomorrow.\n\n%%\n\nHello")
    assert answer.model_extra["translation"]["segments"] == 4


def test_stop_sequences_cut_the_answer(openai_client):
    message = prompts.translation_prompt("谢谢你的帮助。", "zh", "en")
    answer = openai_client.chat.completions.create(model="hunyuan", messages=user(message),
                                            temperature=0, stop=["help"])
    assert answer.choices[0].message.content == "Thank you for your "
    deltas, finishes, _, _ = stream_parts(openai_client, user(message), temperature=0, stop="your")
    assert "".join(deltas) == "Thank you for " and finishes == ["stop"]


# -- anything else is plain generation -------------------------------------------------------------
def test_other_messages_are_answered_by_plain_generation(openai_client, app):
    greedy = DecodingOptions(deterministic=True, max_new_tokens=20)
    for messages, prompt in [
        (user("Tell me a joke."), "Tell me a joke."),
        ([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}],
         "Be brief.\n\nHi there"),
    ]:
        expected = app.engine.generate(prompt, greedy)  # the engine's own answer to that message
        answer = openai_client.chat.completions.create(model="hunyuan", messages=messages,
                                                temperature=0, max_tokens=20)
        assert answer.choices[0].message.content == expected
        assert "translation" not in answer.model_extra
        assert answer.usage.prompt_tokens > 0 and 0 < answer.usage.completion_tokens <= 20
        assert answer.choices[0].finish_reason in ("stop", "length")
        deltas, finishes, extra, usage = stream_parts(openai_client, messages, temperature=0,
                                                      max_tokens=20)
        assert "".join(deltas) == expected and "translation" not in extra
        assert usage.completion_tokens == answer.usage.completion_tokens


def test_a_conversation_is_folded_into_the_one_user_message_the_model_takes():
    messages = [ChatMessage(role="system", content="Be brief."),
                ChatMessage(role="user", content="Hi"),
                ChatMessage(role="assistant", content="Hello!"),
                ChatMessage(role="user", content=[{"type": "text", "text": "Bye"}])]
    assert fold(messages) == "Be brief.\n\nUser: Hi\n\nAssistant: Hello!\n\nUser: Bye"
    assert fold(messages[1:2]) == "Hi"


def test_stop_text_holds_back_what_may_start_a_stop_string():
    stop = StopText(["END"])
    assert [stop.feed(d) for d in ("abc E", "N", "x E", "ND more")] == ["abc ", "", "ENx ", ""]
    assert stop.stopped and stop.flush() == ""
    stop = StopText(["END"])
    assert stop.feed("tail E") == "tail " and stop.flush() == "E"


# -- models, errors, keys --------------------------------------------------------------------------
def test_models(openai_client, app):
    [model] = openai_client.models.list().data
    assert model.id == app.translator.spec.public_id and model.object == "model"
    assert openai_client.models.retrieve(model.id).id == model.id
    with pytest.raises(openai.NotFoundError):
        openai_client.models.retrieve("gpt-nothing")


@pytest.mark.parametrize("kwargs, status", [
    ({"messages": []}, 400),
    ({"messages": user("hi"), "n": 2}, 400),
    ({"messages": user("hi"), "temperature": 3}, 400),
    ({"messages": user("hi"), "tools": [{"type": "function", "function": {"name": "f"}}]}, 400),
    ({"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": "http://example.invalid/a.png"}}]}]}, 400),
    ({"messages": user(prompts.translation_prompt("好" * 2001, "zh", "en"))}, 413),
    ({"messages": user("x" * 2001)}, 413),
])
def test_errors_come_in_openais_shape(openai_client, kwargs, status):
    with pytest.raises(openai.APIStatusError) as raised:
        openai_client.chat.completions.create(model="hunyuan", **kwargs)
    error = raised.value
    assert error.status_code == status
    assert set(error.body) >= {"message", "type", "code"} and error.body["message"]
    assert "Traceback" not in error.response.text


KEYS_APP = {"api_keys": KEY}


def test_keys_are_required_when_configured(keys_app):
    message = prompts.translation_prompt("你好", "zh", "en")
    with make_client(keys_app.url, KEY) as good:
        answer = good.chat.completions.create(model="m", messages=user(message), temperature=0)
        assert answer.choices[0].message.content == "Hello"
        deltas, _, _, _ = stream_parts(good, user(message), temperature=0)
        assert "".join(deltas) == "Hello"
        assert good.models.list().data
    with make_client(keys_app.url, "sk-wrong") as wrong:
        with pytest.raises(openai.AuthenticationError) as refused:
            wrong.chat.completions.create(model="m", messages=user(message))
        assert refused.value.body["code"] == "invalid_api_key"
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="m", messages=user(message), stream=True)
        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        with pytest.raises(openai.AuthenticationError):  # a route with a path parameter too
            wrong.models.retrieve(keys_app.translator.spec.id)
    with keys_app.client() as bare:  # no key at all (the openai client always sends one)
        r = bare.post("/v1/chat/completions", json={"model": "m", "messages": user(message)})
        assert r.status_code == 401 and r.json()["error"]["type"] == "invalid_request_error"
