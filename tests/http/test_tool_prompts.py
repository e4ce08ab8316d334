"""The tools people translate with, as they send their requests: the prompts of page, PDF,
subtitle and selection translators through the real ``openai`` client, Qwen-MT's
``translation_options``, OpenAI's legacy completions, and the small JSON shapes of browser
extensions (/imme, /kiss, /deeplx, /hcfy) over plain HTTP, against the demo app.

Each prompt below is the tool's current default text (see hunyuan_webui/tool_prompts.py for the
file each comes from) filled in as the tool fills it, with a demo phrase as its text: the answer is
the demo's exact translation. A batch comes back item for item; a repeat costs no model call;
a message that is not a translation request stays plain generation.
"""

from __future__ import annotations

import json
import logging

import pytest

from hunyuan_webui import tool_prompts
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.service.operations.items import runs

KEY = "sk-tools-key"
IMMERSIVE_SYSTEM = (
    "You are a professional {to} native translator who needs to fluently translate text into "
    "{to}.\n\n## Translation Rules\n1. Output only the translated content, without explanations "
    "or additional content (such as \"Here's the translation:\" or \"Translation as follows:\")\n"
    "2. The returned translation must maintain exactly the same number of paragraphs and format "
    "as the original text\n3. If the text contains HTML tags, consider where the tags should be "
    "placed in the translation while maintaining fluency\n4. For content that should not be "
    "translated (such as proper nouns, code, etc.), keep the original text.\n5. Output "
    "translation directly (no separators, no extra text)")
KISS_USER = (
    "# Context\nTitle: \nDescription: \nSummary: \nTone: \n\n# Glossary:\n\n\n# Task\n"
    "Translate the Source Text below to {to}.\n1. Use the Context to ensure accuracy.\n"
    "2. Adapt the wording to match the specified Tone.\n3. Output ONLY the translated text. No "
    "markdown, no explanations.\n\nSource Text: {text}\n\nTranslated Text:")
PDF2ZH_USER = (
    "You are a professional, authentic machine translation engine. Only Output the translated "
    "text, do not include any other text.\n\nTranslate the following markdown source text to "
    "{to}. Keep the formula notation {{v*}} unchanged. Output translation directly without any "
    "additional text.\n\nSource Text: {text}\n\nTranslated Text:")
BABELDOC_USER = (
    "You are a professional {to} native translator who needs to fluently translate text into "
    "{to}.\n\nFollow all rules strictly.\n\n## Rules\n\n1. Keep the structure exactly unchanged: "
    "do NOT add/remove/reorder any tags, placeholders, or tokens.\n2. Keep all tags unchanged "
    "(e.g., <style>, <b>, </style>).\n   - Translate human-readable text inside tags.\n   - Do "
    "NOT translate text inside <code>…</code>.\n3. Do NOT translate or alter placeholders: {{v1}}, "
    "{{name}}, %s, %d, [[...]], %%...%%.\n4. If the entire input is pure code/identifiers, return "
    "it unchanged.\n5. Translate ALL human-readable content into {to}.\n\n\n\n\n\n## Output\n\n"
    "Output ONLY the translated {to} text. No explanations, no backticks, no extra text.\n\nNow "
    "translate the following text:\n\n{text}")
BABELDOC_PLAIN_USER = (
    ";; Treat next line as plain text input and translate it into {to}, output translation "
    "ONLY. If translation is unnecessary (e.g. proper nouns, codes, {{{{1}}}}, etc. ), return the "
    "original text. NO explanations. NO notes. Input:\n\n{text}")
OPENAI_TRANSLATOR_USER = ("You are a professional translator.\n\nOnly reply the result and nothing "
                          "else. Please translate to {to}:\n\n{text}")
POT_SYSTEM = ("You are a professional translation engine, please translate the text into a "
              "colloquial, professional, elegant and fluent content, without the style of machine "
              "translation. You must only translate the text content, never interpret it.")
POT_USER = 'Translate into {to}:\n"""\n{text}\n"""'
SUBTITLEEDIT_USER = ("Translate from {frm} to {to}, keep punctuation as input, keep line breaks "
                     "exactly the same, do not censor the translation, give only the output "
                     "without comments:\n\n{text}")
KISS_BATCH_SYSTEM = ("Act as a translation API. Output a single raw JSON object only. No extra "
                     "text or fences.\n\nInput:\n{\"targetLanguage\":\"<lang>\",\"segments\":[{"
                     "\"id\":1,\"text\":\"...\"}]}\n\nOutput:\n{\"translations\":[{\"id\":1,"
                     "\"text\":\"...\",\"sourceLanguage\":\"<detected>\"}]}")


def sys_user(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def user(content: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": content}]


# (tool, messages, expected answer): each a demo phrase in the tool's own prompt.
TOOL_CASES = [
    ("immersive", sys_user(IMMERSIVE_SYSTEM.format(to="German"), "Translate to German (output "
                           "translation only):\n\nGood morning."), "Guten Morgen."),
    ("immersive-zh", user("翻译成 简体中文（仅输出翻译）：\n\nThank you for your help."),
     "谢谢你的帮助。"),
    ("kiss", sys_user("You are a professional, authentic machine translation engine.",
                      KISS_USER.format(to="French", text="Where is the library?")),
     "Où est la bibliothèque ?"),
    ("pdfmathtranslate", user(PDF2ZH_USER.format(to="zh", text="Good morning.")), "早上好。"),
    ("babeldoc", user(BABELDOC_USER.format(to="Japanese", text="See you tomorrow.")), "また明日。"),
    ("babeldoc-plain", user(BABELDOC_PLAIN_USER.format(to="ru", text="Thank you very much.")),
     "Большое спасибо."),
    ("openai-translator", user(OPENAI_TRANSLATOR_USER.format(to="日本語", text="Good morning.")),
     "おはようございます。"),
    ("pot", sys_user(POT_SYSTEM, POT_USER.format(to="Simplified Chinese", text="Please sit down.")),
     "请坐。"),
    ("subtitleedit", user(SUBTITLEEDIT_USER.format(frm="English", to="Vietnamese",
                                                   text="I speak Vietnamese.")),
     "Tôi nói tiếng Việt."),
    ("general", user("Translate from English into German: The weather is nice today."),
     "Das Wetter ist heute schön."),
    ("general-zh", user("翻译成英文：这本书很有意思。"), "This book is very interesting."),
    ("system", sys_user("Translate the user's text into English. Output only the translation.",
                        "我们明天见。"), "See you tomorrow."),
]


# -- recognising (no model) ------------------------------------------------------------------------
@pytest.mark.parametrize("tool, messages, expected", TOOL_CASES, ids=[c[0] for c in TOOL_CASES])
def test_each_tools_prompt_is_recognised(tool, messages, expected):
    system = [m["content"] for m in messages if m["role"] == "system"]
    found = tool_prompts.recognize(messages[-1]["content"], system)
    assert found is not None and found.form.kind == "text" and len(found.items) == 1
    assert found.items[0].strip() in {"Good morning.", "Thank you for your help.",
                                      "Where is the library?", "See you tomorrow.",
                                      "Thank you very much.", "Please sit down.",
                                      "I speak Vietnamese.", "The weather is nice today.",
                                      "这本书很有意思。", "我们明天见。"}


@pytest.mark.parametrize("message", [
    "What is the capital of France?", "Tell me a joke about translators.",
    "Summarize: Good morning.", "Translate to Klingon: Good morning.",
])
def test_other_messages_are_not_translation_requests(message):
    assert tool_prompts.recognize(message, ["You are a helpful assistant."]) is None


def test_language_names_as_tools_write_them():
    assert [tool_prompts.language(n) for n in (
        "Simplified Chinese", "简体中文", "中文(简体)", "英文", "zh-CN", "zh_TW", "日本語",
        "Brazilian Portuguese", "Klingon")] == ["zh", "zh", "zh", "en", "zh", "zh-Hant", "ja", "pt",
                                                None]


def test_tags_and_placeholders_are_cut_out_of_the_text():
    text = "<b0></b0> Hallo {v1} <i>Welt</i> %s `code` [[2]] <code>x = 1</code>"
    kept = [r.text for r in runs(text) if not r.translate]
    assert "".join(r.text for r in runs(text)) == text
    assert kept == ["<b0>", "</b0>", "{v1}", " ", "<i>", "</i>", " ", "%s", " ", "`code`", " ",
                    "[[2]]", " ", "<code>x = 1</code>"]
    assert [r.text for r in runs(text) if r.translate] == [" Hallo ", "Welt"]


# -- through the app ---------------------------------------------------------------------------------
APP = {"max_input_chars": 4000}  # the app (tests/http/conftest.py)


@pytest.mark.slow
@pytest.mark.parametrize("tool, messages, expected", TOOL_CASES, ids=[c[0] for c in TOOL_CASES])
def test_each_tools_prompt_gets_the_demo_translation(openai_client, tool, messages, expected):
    answer = openai_client.chat.completions.create(model="hunyuan", messages=messages)
    assert answer.choices[0].message.content == expected
    assert "translation" in answer.model_extra


@pytest.mark.slow
def test_a_tools_prompt_streams(openai_client):
    chunks = list(openai_client.chat.completions.create(
        model="hunyuan", stream=True, messages=sys_user(POT_SYSTEM, POT_USER.format(
            to="English", text="今天天气很好。"))))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "The weather is nice today."


@pytest.mark.slow
def test_immersive_translates_paragraphs_between_its_separators_in_order(openai_client):
    text = "Good morning.\n\n%%\n\nThank you very much.\n\n%%\n\nThe weather is nice today."
    for stream in (False, True):
        messages = sys_user(IMMERSIVE_SYSTEM.format(to="German"), f"Translate to German:\n\n{text}")
        if stream:
            chunks = list(openai_client.chat.completions.create(model="m", messages=messages,
                                                         stream=True))
            got = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        else:
            got = openai_client.chat.completions.create(model="m", messages=messages).choices[
                0].message.content
        assert got == ("Guten Morgen.\n\n%%\n\nVielen Dank.\n\n%%\n\n"
                       "Das Wetter ist heute schön.")


@pytest.mark.slow
def test_placeholders_and_inline_tags_come_back_in_place(openai_client):
    message = PDF2ZH_USER.format(to="German", text="{v1} Good morning. {v2}")
    answer = openai_client.chat.completions.create(model="m", messages=user(message))
    assert answer.choices[0].message.content == "{v1} Guten Morgen. {v2}"
    message = "Translate to French (output translation only):\n\n<b>Good morning.</b> <br/>" \
              "<i1>Thank you very much.</i1>"
    answer = openai_client.chat.completions.create(model="m", messages=user(message))
    assert answer.choices[0].message.content == (
        "<b>Bonjour.</b> <br/><i1>Merci beaucoup.</i1>")


@pytest.mark.slow
@pytest.mark.parametrize("system, expected", [
    (KISS_BATCH_SYSTEM, {"translations": [
        {"id": 0, "text": "Guten Morgen.", "sourceLanguage": "en"},
        {"id": 1, "text": "Vielen Dank.", "sourceLanguage": "en"},
        {"id": 2, "text": "Das Wetter ist heute schön.", "sourceLanguage": "en"}]}),
    ('Act as a translation API. Output raw text lines in "ID | Text" format.',
     "0 | Guten Morgen.\n1 | Vielen Dank.\n2 | Das Wetter ist heute schön."),
    ("Act as a translation API. Output raw XML-like format only.\n<root>\n</root>",
     '<root>\n    <t id="0" sourceLanguage="en">Guten Morgen.</t>\n    <t id="1" '
     'sourceLanguage="en">Vielen Dank.</t>\n    <t id="2" sourceLanguage="en">Das Wetter ist '
     'heute schön.</t>\n</root>'),
])
def test_kiss_batches_come_back_item_for_item_in_the_form_asked(openai_client, system, expected):
    segments = ["Good morning.", "Thank you very much.", "The weather is nice today."]
    body = json.dumps({"targetLanguage": "de",
                       "segments": [{"id": i, "text": t} for i, t in enumerate(segments)]})
    answer = openai_client.chat.completions.create(model="m", messages=sys_user(system, body))
    content = answer.choices[0].message.content
    assert (json.loads(content) if isinstance(expected, dict) else content) == expected
    assert answer.model_extra["translation"]["items"] == 3


@pytest.mark.slow
def test_a_json_array_sent_comes_back_as_json(openai_client):
    message = ('Translate the following JSON array into Japanese. Return a JSON array of the '
               'same length:\n["Good morning.", "Thank you.", "See you tomorrow."]')
    answer = openai_client.chat.completions.create(model="m", messages=user(message))
    assert json.loads(answer.choices[0].message.content) == [
        "おはようございます。", "ありがとうございます。", "また明日。"]


@pytest.mark.slow
def test_qwen_mt_translation_options(openai_client):
    """The user message is the text; terms and domains go to the model's terminology and context
    prompts where it has them (the demo model has neither: they are left out)."""
    answer = openai_client.chat.completions.create(
        model="m", messages=user("谢谢。"), extra_body={"translation_options": {
            "source_lang": "Chinese", "target_lang": "English",
            "terms": [{"source": "谢谢", "target": "Thanks"}], "domains": "Everyday speech."}})
    assert answer.choices[0].message.content == "Thank you."
    assert answer.model_extra["translation"]["source_lang"] == "zh"


@pytest.mark.slow
def test_a_repeat_comes_from_the_cache(openai_client, app):
    messages = sys_user(POT_SYSTEM, POT_USER.format(to="English", text="欢迎来到北京。"))
    first = openai_client.chat.completions.create(model="m", messages=messages, max_tokens=61)
    calls = app.translator.model_calls
    second = openai_client.chat.completions.create(model="m", messages=messages, max_tokens=61)
    assert first.choices[0].message.content == second.choices[0].message.content == (
        "Welcome to Beijing.")
    assert second.model_extra["translation"]["cached"] is True
    batch = "Translate to German:\n\nGood morning.\n\n%%\n\nThank you very much."
    openai_client.chat.completions.create(model="m", messages=user(batch), max_tokens=61)
    calls = app.translator.model_calls
    again = openai_client.chat.completions.create(model="m", messages=user(batch), max_tokens=61)
    assert again.model_extra["translation"]["cached"] is True
    assert app.translator.model_calls == calls


@pytest.mark.slow
def test_an_unrecognised_message_stays_plain_generation(openai_client, app):
    prompt = "Summarize this in one word: Good morning."
    expected = app.engine.generate(prompt, DecodingOptions(deterministic=True, max_new_tokens=20))
    answer = openai_client.chat.completions.create(model="m", messages=user(prompt), temperature=0,
                                            max_tokens=20)
    assert answer.choices[0].message.content == expected
    assert "translation" not in answer.model_extra


# -- legacy completions ------------------------------------------------------------------------------
@pytest.mark.slow
def test_legacy_completions_translate_and_stream(openai_client, app):
    answer = openai_client.completions.create(model="m", prompt="Translate to German: Good morning.")
    assert answer.choices[0].text == "Guten Morgen." and answer.object == "text_completion"
    chunks = list(openai_client.completions.create(model="m", prompt="翻译成英文：早上好。", stream=True))
    assert "".join(c.choices[0].text for c in chunks if c.choices) == "Good morning."
    # openai-translator's legacy-completions wrapping of its chat message
    wrapped = ("<|im_start|>user\n" + OPENAI_TRANSLATOR_USER.format(to="Français",
               text="Thank you very much.") + "\n<|im_end|>\n<|im_start|>assistant\n")
    answer = openai_client.completions.create(model="m", prompt=wrapped, stop=["<|im_end|>"])
    assert answer.choices[0].text == "Merci beaucoup."
    prompt = "Tell me a joke."
    expected = app.engine.generate(prompt, DecodingOptions(deterministic=True, max_new_tokens=20))
    answer = openai_client.completions.create(model="m", prompt=prompt, temperature=0, max_tokens=20)
    assert answer.choices[0].text == expected and "translation" not in answer.model_extra


# -- the extensions' JSON shapes ---------------------------------------------------------------------
@pytest.mark.slow
def test_immersive_custom_api(app):
    with app.client() as c:
        r = c.post("/imme", json={"source_lang": "auto", "target_lang": "zh-CN", "text_list": [
            "Good morning.", "Where is the train station?", "Thank you."]})
        assert r.status_code == 200, r.text
        assert r.json() == {"translations": [
            {"detected_source_lang": "en", "text": "早上好。"},
            {"detected_source_lang": "en", "text": "火车站在哪里？"},
            {"detected_source_lang": "en", "text": "谢谢。"}]}


@pytest.mark.slow
def test_kiss_custom_api_single_and_batch(app):
    with app.client() as c:
        r = c.post("/kiss", json={"text": "你好", "from": "auto", "to": "en"})
        assert r.status_code == 200 and r.json() == {"text": "Hello", "src": "zh-CN"}
        r = c.post("/kiss", json={"texts": ["谢谢。", "早上好。", "你叫什么名字？"], "from": "zh-CN",
                                  "to": "en"})
        assert r.json() == [{"text": "Thank you.", "src": "zh-CN"},
                            {"text": "Good morning.", "src": "zh-CN"},
                            {"text": "What is your name?", "src": "zh-CN"}]


@pytest.mark.slow
def test_deeplx(app):
    with app.client() as c:
        r = c.post("/deeplx", json={"text": "Good morning.", "source_lang": "auto",
                                    "target_lang": "FR"})
        body = r.json()
        assert r.status_code == 200 and body["code"] == 200 and body["data"] == "Bonjour."
        assert (body["source_lang"], body["target_lang"], body["alternatives"]) == ("EN", "FR", [])
        r = c.post("/deeplx", json={"text": "Good morning.", "target_lang": "XX"})
        assert r.status_code == 400 and r.json()["code"] == 400 and r.json()["message"]


@pytest.mark.slow
def test_hcfy(app):
    with app.client() as c:
        r = c.post("/hcfy", json={"name": "hunyuan", "text": "Thank you.",
                                  "destination": ["中文(简体)", "英语"]})
        assert r.json() == {"text": "Thank you.", "from": "英语", "to": "中文(简体)",
                            "result": ["谢谢。"]}
        # already Chinese: the second destination is the target
        r = c.post("/hcfy", json={"name": "hunyuan", "text": "谢谢。",
                                  "destination": ["中文(简体)", "英语"]})
        assert r.json()["result"] == ["Thank you."] and r.json()["to"] == "英语"


@pytest.mark.slow
def test_a_repeated_batch_costs_no_model_call(app):
    body = {"source_lang": "en", "target_lang": "ru", "text_list": [
        "Good morning.", "Thank you very much."]}
    with app.client() as c:
        first = c.post("/imme", json=body).json()
        calls = app.translator.model_calls
        assert c.post("/imme", json=body).json() == first
        assert [t["text"] for t in first["translations"]] == ["Доброе утро.", "Большое спасибо."]
    assert app.translator.model_calls == calls


KEYS_APP = {"api_keys": KEY}


@pytest.mark.slow
@pytest.mark.parametrize("path, body", [
    ("/imme", {"target_lang": "en", "text_list": ["你好"]}),
    ("/kiss", {"text": "你好", "from": "auto", "to": "en"}),
    ("/deeplx", {"text": "你好", "target_lang": "EN"}),
    ("/hcfy", {"text": "你好", "destination": ["英语"]}),
])
def test_the_key_may_come_as_a_token_parameter(keys_app, path, body):
    with keys_app.client() as c:
        assert c.post(path, json=body).status_code == 401
        assert c.post(path, params={"token": "sk-wrong"}, json=body).status_code == 401
        good = c.post(path, params={"token": KEY}, json=body)
        assert good.status_code == 200 and "Hello" in good.text
        header = c.post(path, json=body, headers={"Authorization": f"Bearer {KEY}"})
        assert header.status_code == 200 and header.json() == good.json() or path == "/deeplx"


def test_markup_runs_copy_tags_and_ignored_elements():
    from hunyuan_webui.service.operations import markup

    text = ('<p a="1">Tom &amp; Jerry<x>skip <x>inner</x> me</x><br>after</p>'
            '<script>var a = "<b>";</script>')
    cut = markup.runs(text, html_mode=True, ignore=frozenset({"x"}))
    assert [r.text for r in cut if r.translate] == ["Tom & Jerry", "after"]
    assert "".join(r.text if not r.translate else {"Tom & Jerry": "Tom &amp; Jerry"}.get(
        r.text, r.text) for r in cut) == text


@pytest.mark.slow
def test_the_token_is_never_logged(keys_app, caplog):
    with caplog.at_level(logging.DEBUG), keys_app.client() as c:
        r = c.post("/kiss", params={"token": KEY}, json={"text": "你好", "to": "en"})
        assert r.status_code == 200
        bad = c.post("/kiss", params={"token": "sk-not-a-key-42"}, json={"text": "你好", "to": "en"})
        assert bad.status_code == 401
    # The server's own logs (the test's HTTP openai_client logs its URLs itself).
    server = "\n".join(r.getMessage() for r in caplog.records
                       if r.name.startswith(("hunyuan_webui", "uvicorn")))
    assert "/kiss" in server  # the request log saw both
    assert KEY not in server and "sk-not-a-key-42" not in server
