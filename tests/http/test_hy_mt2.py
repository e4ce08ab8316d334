"""Hy-MT2 on the page, the JSON API and the command line: per-model decoding defaults and the
instruction modes (terminology, style, personal instructions, structured data, background).

The session's demo engine does the decoding; its spec is swapped for a Hy-MT2 one
(``RecordingEngine.spec``), so what is checked is what each front end sends: the exact prompt and
the decoding options. The demo model memorised plain translations only, so other prompts get
nonsense back; where that matters (the structured-data check) the fallback is what is tested.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from apphelpers import RecordingEngine, running_app

from hunyuan_webui import models
from hunyuan_webui.engine import GREEDY
from hunyuan_webui.prompts import PromptFamily
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.web.page.layout import build_ui

MOE = models.HY_V3_DECODING


def hy_mt2(engine, decoding=MOE, modes=models.REGISTRY["tencent/Hy-MT2-7B"].modes):
    spec = replace(engine.spec, family=PromptFamily.HY_MT2, modes=modes, decoding=decoding)
    return RecordingEngine(engine, spec)


@pytest.fixture(scope="module")
def moe_app(engine):
    """An app whose model decodes with the 30B's defaults: 0.7 / 1.0 / no top-k / no penalty."""
    with running_app(hy_mt2(engine)) as running:
        yield running


def test_requests_start_from_the_loaded_models_decoding_defaults(moe_app):
    rec = moe_app.engine
    with moe_app.client() as c:
        rec.calls.clear()
        assert c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh",
                                             "target_lang": "en"}).status_code == 200
        assert rec.options[-1] == MOE
        c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh", "target_lang": "en",
                                      "options": {"deterministic": True, "top_p": 0.9}})
        assert rec.options[-1] == replace(MOE, deterministic=True, top_p=0.9)
        c.post("/translate", json={"q": "你好", "source": "zh", "target": "en"})  # LibreTranslate
        assert rec.options[-1] == MOE
        info = c.get("/v1/model").json()
    assert info["decoding"] == {"deterministic": False, "temperature": 0.7, "top_p": 1.0,
                                "top_k": 0, "repetition_penalty": 1.0, "max_new_tokens": None,
                                "seed": None}
    assert info["family"] == "hy-mt2" and "structured" in info["modes"]


def test_the_page_starts_from_the_models_defaults(engine, demo_settings):
    translator = Translator(hy_mt2(engine), hy_mt2(engine).spec, demo_settings)
    config = build_ui(translator).config
    values = {c["props"].get("elem_id"): c["props"].get("value") for c in config["components"]}
    assert (values["opt-temperature"], values["opt-top_p"], values["opt-top_k"],
            values["opt-repetition_penalty"]) == (0.7, 1.0, 0, 1.0)
    assert translator.decoding(deterministic=True) == replace(MOE, deterministic=True)


def test_a_request_without_options_gets_the_spec_defaults(engine, demo_settings):
    rec = hy_mt2(engine)
    translator = Translator(rec, rec.spec, demo_settings)
    translator.translate(TranslationRequest(text="谢谢。", source_lang="zh", target_lang="en"))
    assert rec.options == [MOE]
    rec.calls.clear()
    translator.translate(TranslationRequest(text="谢谢。", source_lang="zh", target_lang="en",
                                            options=GREEDY))
    assert rec.options == [GREEDY]


# -- the instruction modes: the exact prompt each sends -----------------------------------------
def make(engine, settings, spec_id="tencent/Hy-MT2-7B"):
    spec = models.REGISTRY[spec_id]
    rec = hy_mt2(engine, decoding=spec.decoding, modes=spec.modes)
    rec.spec = replace(rec.spec, family=spec.family)
    return Translator(rec, rec.spec, settings), rec


def request(text, src="zh", tgt="en", **kw):
    return TranslationRequest(text=text, source_lang=src, target_lang=tgt, options=GREEDY, **kw)


@pytest.mark.parametrize("kw, expected", [
    ({"mode": "style", "style": " formal business English "},
     "请将以下文本翻译为英语。\n注意翻译的风格要严格符合【formal business English】\n\n谢谢。"),
    ({"mode": "instructions", "instructions": "1. Keep names as they are\n\n2、Be brief"},
     "【待翻译文本】\n谢谢。\n\n【翻译任务】\n1、Keep names as they are\n2、Be brief\n"
     "3、将【待翻译文本】翻译为英语。"),
    ({"mode": "terminology", "glossary": (("谢谢", "Thanks"),)},
     "参考下面的翻译：\n谢谢 翻译成 Thanks\n将以下文本翻译为英语，注意只需要输出翻译后的结果，"
     "不要额外解释：\n\n谢谢。"),
    ({"mode": "context", "context": "两人在排查服务器故障。"},
     "【背景信息】\n两人在排查服务器故障。\n\n请结合背景信息将以下文本翻译为英语。\n\n【待翻译文本】\n谢谢。"),
])
def test_each_mode_sends_hy_mt2s_chinese_prompt(engine, demo_settings, kw, expected):
    translator, rec = make(engine, demo_settings)
    result = translator.translate(request("谢谢。", **kw))
    assert rec.prompts == [expected]
    assert result.notice == ""


def test_english_pairs_get_the_english_prompts(engine, demo_settings):
    translator, rec = make(engine, demo_settings)
    translator.translate(request("Good morning.", "en", "fr", mode="style", style="poetic"))
    translator.translate(request("Good morning.", "en", "de", mode="instructions",
                                 instructions=("Use the formal Sie.",)))
    assert rec.prompts == [
        "Please translate the following text into French. Note that the translation style must "
        "strictly conform to [poetic]:\n\nGood morning.",
        "[Source Text]\nGood morning.\n\n[Translation Tasks]\n1. Use the formal Sie.\n"
        "2. Translate the [Source Text] into German."]


def test_structured_data_is_sent_whole_with_its_format(engine, demo_settings):
    translator, rec = make(engine, demo_settings)
    data = '{\n  "title": "Good morning.",\n  "count": 3\n}'
    translator.translate(request(f"\n{data}\n", "en", "fr", mode="structured"))
    assert rec.prompts[0] == (
        "### Task\nTranslate the user-facing text within the following JSON data into French."
        "\n\n### Strict Rules\n1. **Structure Preservation:** You MUST preserve the original JSON "
        "data structure, nesting, hierarchy, and indentation exactly as they are.\n"
        "2. **Selective Translation:** Translate ONLY the visible, user-facing text "
        "content/values.\n3. **Strict Non-Translation:** NEVER translate or alter code tags, "
        "keys, properties, object names, or variable placeholders. Leave them exactly in their "
        f"original English/code form.\n\n### Source Data\n{data}")


def test_a_broken_answer_falls_back_to_the_values_one_by_one(engine, demo_settings):
    """The demo model cannot keep JSON; each text value is then translated with the plain
    prompt, which it knows, and put back with everything else byte for byte."""
    translator, rec = make(engine, demo_settings, "tencent/Hunyuan-MT-7B")
    data = '{"greeting": "谢谢。", "id": "btn_ok", "count": 3, "items": ["早上好。"]}'
    result = translator.translate(request(data, mode="structured"))
    assert result.text == '{"greeting": "Thank you.", "id": "btn_ok", "count": 3, ' \
                          '"items": ["Good morning."]}'
    assert rec.prompts[1:] == ["把下面的文本翻译成英语，不要额外解释。\n\n谢谢。",
                               "把下面的文本翻译成英语，不要额外解释。\n\n早上好。"]
    assert result.notice.startswith(
        "This model has no structured-data prompt (Hy-MT2 has): the data was sent with its plain "
        "prompt as a best effort, and the answer checked. The model's answer was not JSON with "
        "the same structure (it does not parse: ")
    assert result.notice.endswith("); each text value was translated on its own instead.")


def test_older_models_get_the_plain_prompt_and_a_notice(engine, demo_settings):
    translator, rec = make(engine, demo_settings, "tencent/Hunyuan-MT-7B")
    result = translator.translate(request("谢谢。", mode="style", style="formal"))
    assert rec.prompts == ["把下面的文本翻译成英语，不要额外解释。\n\n谢谢。"]
    assert result.text == "Thank you."
    assert result.notice == "This model has no style prompt (Hy-MT2 has): the style was not used."
    result = translator.translate(request("谢谢。", mode="instructions", instructions=("x",)))
    assert result.notice.startswith("This model has no prompt for personal instructions")


@pytest.mark.parametrize("kw, message", [
    ({"mode": "terminology"}, "needs a glossary"),
    ({"mode": "style", "style": "  "}, "needs a style"),
    ({"mode": "instructions", "instructions": "\n \n"}, "at least one instruction"),
    ({"mode": "structured", "text": '{"a": '}, "Could not tell which format"),
    ({"mode": "structured", "text": '{"a": ', "data_format": "json"}, "not valid JSON"),
    ({"mode": "structured", "data_format": "docx"}, "Unknown data format"),
])
def test_a_mode_without_its_input_is_told_before_any_model_work(engine, demo_settings, kw,
                                                                 message):
    translator, rec = make(engine, demo_settings)
    text = kw.pop("text", "谢谢。")
    with pytest.raises(Exception, match=message):
        translator.start(request(text, **kw))
    assert rec.calls == []


def test_the_json_api_takes_the_modes_in_options(engine, demo_settings):
    rec = make(engine, demo_settings)[1]
    with running_app(rec) as app, app.client() as c:
        r = c.post("/v1/translate", json={
            "text": "谢谢。", "source_lang": "zh", "target_lang": "en",
            "options": {"mode": "instructions", "instructions": ["Be brief", "2. Be kind"]}})
        assert r.status_code == 200, r.text
        r = c.post("/v1/translate", json={
            "text": "<p>Hi</p>", "source_lang": "en", "target_lang": "zh",
            "options": {"mode": "structured", "data_format": "xml"}})
        assert r.status_code == 200, r.text
        bad = c.post("/v1/translate", json={"text": "x", "target_lang": "en",
                                            "options": {"mode": "structured",
                                                        "data_format": "docx"}})
    assert rec.prompts[0] == ("【待翻译文本】\n谢谢。\n\n【翻译任务】\n1、Be brief\n2、Be kind\n"
                              "3、将【待翻译文本】翻译为英语。")
    assert rec.prompts[1].startswith("# 任务目标\n将下方<p>Hi</p>中的XML格式数据翻译为中文。")
    assert bad.status_code == 422 and "data_format" in bad.text


async def _last(agen):
    last = None
    async for item in agen:
        last = item
    return last


def test_the_page_sends_style_and_reports_the_notice(engine, demo_settings):
    import asyncio

    from hunyuan_webui.web.page.form import TextForm
    from hunyuan_webui.web.page.layout import MODES_SHOWN, _mode_label, _modes_markdown
    from hunyuan_webui.web.page.ui import TranslatorUI

    translator, rec = make(engine, demo_settings, "tencent/Hunyuan-MT-7B")
    ui = TranslatorUI(translator)
    assert read(_modes_markdown(translator.spec)) == (
        "**demo-model** has only the plain translation prompt: the other modes use it, with a "
        "notice saying what was left out.")
    form = TextForm(text="谢谢。", source="zh", target="en", deterministic=True,
                    temperature=0.7, top_p=0.6, top_k=20, repetition=1.05, mode="style",
                    style="formal", history=[])
    out = asyncio.run(_last(ui.translate(form)))
    assert out["output"] == "Thank you."
    assert ("This model has no style prompt (Hy-MT2 has): the style was not used."
            in out["progress"])
    spec = make(engine, demo_settings)[0].spec
    assert read(_modes_markdown(spec)) == (
        "**demo-model** has prompts of its own for the modes marked ✓; the others use its plain "
        "translation prompt, with a notice saying what was left out.")
    marked = [m for m in MODES_SHOWN if read(_mode_label(m, spec)).endswith("✓")]
    assert marked == ["terminology", "context", "style", "instructions", "structured"]
    assert read(_mode_label("style", spec), "zh") == "指定风格 ✓"


def read(value: str, lang: str = "en") -> str:
    """A page string as the browser shows it: Gradio replaces its one i18n key."""
    import json

    from hunyuan_webui.web.page.text import LABELS

    if "__i18n__" not in value:
        return value
    head, rest = value.split("__i18n__", 1)
    end = rest.index("}") + 1
    return head + LABELS[lang][json.loads(rest[:end])["key"]] + rest[end:]


def test_every_mode_has_a_label_on_the_page():
    from hunyuan_webui.modes import MODES
    from hunyuan_webui.web.page.layout import MODES_SHOWN
    from hunyuan_webui.web.page.text import LABELS

    assert set(MODES_SHOWN) == set(MODES)
    assert all(f"mode_{m}" in LABELS[lang] for m in MODES for lang in LABELS)
