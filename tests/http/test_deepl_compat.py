"""DeepL's API, through the ``deepl`` client from PyPI, unchanged (``deepl.Translator(key,
server_url=...)``), against the real app served as tests/apphelpers.py serves it.

Demo phrases translate exactly with DeepL's language codes; the language lists and usage read as
DeepL's do; an unsupported language, a bad key and a spent allowance are refused with DeepL's
status codes and messages, which the client turns into its own exceptions. Forms (several
``text`` fields) and JSON are both read.
"""

from __future__ import annotations

from contextlib import closing
from dataclasses import replace

import deepl
import pytest
from apphelpers import RecordingEngine, running_app

from hunyuan_webui import languages, models

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

KEY = "deepl-key-0123:fx"  # a DeepL-looking key (":fx" marks DeepL's free keys)
SMALL = "deepl-small-key"  # 40 characters a day


KEYS_APP_FILE = f"{KEY} 0 0\n{SMALL} 0 40\n"  # keys_app (tests/http/conftest.py)


def test_translate_text_single_and_list(deepl_client):
    result = deepl_client.translate_text("谢谢你的帮助。", target_lang="EN-US")
    assert result.text == "Thank you for your help."
    assert result.detected_source_lang == "ZH" and result.billed_characters == 7
    results = deepl_client.translate_text(["Good morning.", "Thank you very much."], source_lang="EN",
                                    target_lang="DE")
    assert [r.text for r in results] == ["Guten Morgen.", "Vielen Dank."]
    assert [r.detected_source_lang for r in results] == ["EN", "EN"]
    assert deepl_client.translate_text("Thank you.", target_lang="ZH-HANS").text == "谢谢。"
    assert deepl_client.translate_text("今天天气很好。", source_lang="zh", target_lang="en-gb").text == (
        "The weather is nice today.")


def test_each_text_is_detected_and_a_bare_number_takes_the_others_language(deepl_client):
    """Page translators send lone numbers and symbols among the texts. A text with nothing to
    translate once came back empty (its layout was dropped) instead of as it was."""
    results = deepl_client.translate_text(["Where is the train station?", "12345", "谢谢。"],
                                    target_lang="ZH-HANT")
    assert [r.detected_source_lang for r in results] == ["EN", "EN", "ZH"]
    assert results[1].text == "12345"


def test_language_lists(deepl_client):
    sources = {lang.code: lang.name for lang in deepl_client.get_source_languages()}
    assert len(sources) == 37  # 38 less Traditional Chinese: DeepL's ZH is either script
    assert sources["ZH"] == "Chinese" and sources["EN"] == "English" and "YUE" in sources
    targets = {lang.code: lang for lang in deepl_client.get_target_languages()}
    assert {"EN-US", "EN-GB", "PT-BR", "PT-PT", "ZH-HANS", "ZH-HANT", "DE", "BO", "UG"} <= set(
        targets)
    assert "EN" not in targets and "PT" not in targets
    assert targets["EN-US"].name == "English (American)"
    assert targets["DE"].supports_formality is False
    assert len(targets) == len(languages.CODES) + 2  # en and pt have two variants each


def test_usage_and_keys(keys_app):
    with closing(deepl.Translator(SMALL, server_url=keys_app.url)) as small:
        usage = small.get_usage()
        assert (usage.character.count, usage.character.limit) == (0, 40)
        assert small.translate_text("Good morning.", target_lang="FR").text == "Bonjour."
        assert small.get_usage().character.count == 13
        with pytest.raises(deepl.QuotaExceededException):  # 456: 13 + 33 > 40
            small.translate_text("The meeting starts at nine o'clock.", target_lang="ZH")
    with closing(deepl.Translator(KEY, server_url=keys_app.url)) as unlimited:
        assert unlimited.translate_text("Hello", target_lang="KO").text == "안녕하세요"
        usage = unlimited.get_usage()
        assert usage.character.count == 5 and not usage.any_limit_reached
    with closing(deepl.Translator("not-a-key", server_url=keys_app.url)) as wrong:
        with pytest.raises(deepl.AuthorizationException):  # DeepL's 403
            wrong.translate_text("Hello", target_lang="KO")
        with pytest.raises(deepl.AuthorizationException):
            wrong.get_usage()
    with keys_app.client() as c:
        r = c.post("/v2/translate", data={"text": "Hello", "target_lang": "ko"})
        assert r.status_code == 403 and r.json()["message"]
        for headers, data in [({"Authorization": f"Bearer {KEY}"}, {}),
                              ({}, {"auth_key": KEY})]:  # a Bearer token, the old form field
            r = c.post("/v2/translate", headers=headers,
                       data={"text": "Hello", "target_lang": "ko", **data})
            assert r.status_code == 200 and r.json()["translations"][0]["text"] == "안녕하세요"


def test_an_unsupported_language_is_refused_the_way_deepl_refuses_it(deepl_client, app):
    with pytest.raises(deepl.DeepLException) as refused:
        deepl_client.translate_text("Good morning.", target_lang="NB")  # Norwegian: not ours
    assert refused.value.http_status_code == 400
    assert str(refused.value) == "Bad request, message: Value for 'target_lang' not supported."
    with pytest.raises(deepl.DeepLException, match="Value for 'source_lang' not supported."):
        deepl_client.translate_text("Good morning.", source_lang="SV", target_lang="DE")
    with app.client() as c:
        r = c.post("/v2/translate", json={"text": ["hi"], "target_lang": "NB"})
        assert r.status_code == 400
        assert r.json() == {"message": "Value for 'target_lang' not supported."}


def test_forms_with_several_texts_and_deepl_style_errors(app):
    with app.client() as c:
        r = c.post("/v2/translate", data={"text": ["你好", "谢谢。"], "target_lang": "EN-US"},
                   headers={"Authorization": "DeepL-Auth-Key whatever"})
        assert r.status_code == 200, r.text
        assert [t["text"] for t in r.json()["translations"]] == ["Hello", "Thank you."]
        r = c.get("/v2/languages", params={"type": "target"})
        assert {"language": "PT-BR", "name": "Portuguese (Brazilian)",
                "supports_formality": False} in r.json()
        for body, message in [
            ({"target_lang": "DE"}, "Parameter 'text' not specified."),
            ({"text": ["hi"]}, "Parameter 'target_lang' not specified."),
            ({"text": ["hi", 3], "target_lang": "DE"}, "Value for 'text' not supported."),
            ({"text": ["hi"], "target_lang": "DE", "formality": "more"},
             "'formality' is not supported for given 'target_lang'."),
            ({"text": ["hi"], "target_lang": "DE", "tag_handling": "markdown"},
             "Value for 'tag_handling' not supported."),
            ({"text": ["hi"], "target_lang": "DE", "glossary_id": "g-1"}, "Glossaries"),
        ]:
            r = c.post("/v2/translate", json=body)
            assert r.status_code == 400 and message in r.json()["message"], (body, r.text)
        r = c.get("/v2/languages", params={"type": "both"})
        assert r.status_code == 400 and r.json() == {"message": "Value for 'type' not supported."}
        r = c.post("/v2/translate", content=b'{"text": ', headers={"content-type": "application/json"})
        assert r.status_code == 400 and r.json() == {"message": "Malformed JSON body."}


HTML_DOCUMENT = (
    '<!DOCTYPE html>\n<html lang="en"><head><title>Good morning.</title>'
    "<style>p { color: red; }</style></head>\n<body>\n<div class=\"note\">"
    "<h1>Thank you very much.</h1>\n<ul><li><a href=\"/x?a=1&amp;b=2\"><b>Good morning."
    "</b></a></li><li><span>The weather is nice today.</span><br/></li></ul>"
    '<p translate="no">Good morning.</p><!-- Good morning. -->'
    "<p><code>Thank you very much.</code></p></div>\n</body></html>")
HTML_EXPECTED = HTML_DOCUMENT.replace("<title>Good morning.", "<title>Guten Morgen.").replace(
    "<h1>Thank you very much.", "<h1>Vielen Dank.").replace(
    "<b>Good morning.", "<b>Guten Morgen.").replace(
    "<span>The weather is nice today.", "<span>Das Wetter ist heute schön.")


def test_tag_handling_keeps_every_tag_of_a_nested_html_document_on_any_model(deepl_client):
    """The demo model has no formatted prompt: the tags are copied in order, the text between them
    translated; style, translate="no", comments and ignore_tags (code) are left alone."""
    result = deepl_client.translate_text(HTML_DOCUMENT, source_lang="EN", target_lang="DE",
                                   tag_handling="html", ignore_tags=["code"],
                                   outline_detection=False, non_splitting_tags=["b"])
    assert result.text == HTML_EXPECTED
    xml = '<doc><t id="1">Thank you.</t><t id="2"><x/>See you tomorrow.</t></doc>'
    result = deepl_client.translate_text(xml, target_lang="JA", tag_handling="xml")
    assert result.text == ('<doc><t id="1">ありがとうございます。</t><t id="2"><x/>また明日。</t>'
                           "</doc>")
    assert result.detected_source_lang == "EN"


def test_markup_parameters_are_checked(app):
    with app.client() as c:
        for extra, message in [({"outline_detection": "maybe"}, "'outline_detection'"),
                               ({"ignore_tags": [3]}, "'ignore_tags'")]:
            r = c.post("/v2/translate", json={"text": ["<b>Thank you.</b>"], "target_lang": "ZH",
                                              "tag_handling": "html", **extra})
            assert r.status_code == 400 and message in r.json()["message"]


class FormattedModel(RecordingEngine):
    """The demo model, presented as a model with HY-MT1.5's formatted prompt."""

    def __init__(self, inner) -> None:
        super().__init__(inner)
        self.spec = replace(inner.spec, modes=inner.spec.modes | {models.FORMATTED})
        self.max_new_tokens = inner.max_new_tokens


def test_tag_handling_is_the_formatted_mode_where_the_model_has_it(engine):
    """Texts are translated together (translate_many), which primes each job first. Priming once
    submitted every paragraph-mode text with the plain sentence prompt too, markup and all, before
    the formatted prompt went out: the model did the work twice, once with the wrong prompt."""
    recorder = FormattedModel(engine)
    with running_app(recorder) as running, closing(
            deepl.Translator("k", server_url=running.url)) as dl:
        result = dl.translate_text("<b>Thank you.</b>", source_lang="EN", target_lang="ZH",
                                   tag_handling="xml")
    # The demo model never learnt the formatted prompt: its answer is checked, found to have lost
    # the tags, and the text between the tags is translated instead.
    assert recorder.prompts[0] == (
        "将以下<source></source>之间的文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释，"
        "原文中的<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。"
        "输出格式为：<target>str</target>\n\n<source><s1>Thank you.</s1></source>")
    assert not any("<b>" in prompt for prompt in recorder.prompts)
    # The tags that the formatted answer lost are put back: the text between them is translated
    # on its own.
    assert result.text == "<b>谢谢。</b>"
