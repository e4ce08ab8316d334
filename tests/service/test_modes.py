"""Translation modes on the demo model: the exact prompt each mode sends, and batching.

``RecordingEngine`` wraps the real engine (same interface, real decoding) and notes every
``submit`` call, so a test can see the prompts and how they were grouped into engine passes.
The demo model only memorised plain translations, so outputs of other prompts are nonsense; what
is checked here is what is sent, how it is batched, and how answers are checked and reported.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from apphelpers import RecordingEngine

from hunyuan_webui import models, prompts
from hunyuan_webui.engine import GREEDY
from hunyuan_webui.errors import InputTooLongError, UnsupportedModeError
from hunyuan_webui.modes import GLOSSARY_NOTICE, ProtectedMarkup
from hunyuan_webui.prompts import PromptFamily
from hunyuan_webui.service import TranslationRequest, Translator

ALL_MODES = frozenset({models.TRANSLATE, models.CHIMERA, models.TERMINOLOGY, models.CONTEXT,
                       models.FORMATTED})


def make(engine, settings, family=PromptFamily.HUNYUAN_MT, modes=frozenset({models.TRANSLATE})):
    recorder = RecordingEngine(engine)
    spec = replace(engine.spec, family=family, modes=modes)
    return Translator(recorder, spec, settings), recorder


def request(text, src="en", tgt="zh", **kw):
    return TranslationRequest(text=text, source_lang=src, target_lang=tgt, options=GREEDY, **kw)


def test_plain_mode_sends_the_model_card_prompt(engine, demo_settings):
    translator, rec = make(engine, demo_settings)
    assert translator.translate(request("Thank you.")).text == "谢谢。"
    assert rec.prompts == ["把下面的文本翻译成中文，不要额外解释。\n\nThank you."]


def test_hy_mt15_uses_its_own_chinese_wording(engine, demo_settings):
    translator, rec = make(engine, demo_settings, PromptFamily.HY_MT15)
    translator.translate(request("Thank you."))
    assert rec.prompts == ["将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\n\nThank you."]


def test_glossary_uses_the_terminology_prompt_and_reports_terms(engine, demo_settings):
    translator, rec = make(engine, demo_settings, PromptFamily.HY_MT15, ALL_MODES)
    result = translator.translate(request("Thank you.", glossary=(("Thank you", "谢谢"),
                                                                 ("help", "帮助"))))
    assert rec.prompts == ["参考下面的翻译：\nThank you 翻译成 谢谢\nhelp 翻译成 帮助\n\n"
                           "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\nThank you."]
    assert result.notice == ""
    assert set(result.glossary_found) | set(result.glossary_missing) == {"谢谢", "帮助"}


def test_glossary_on_hunyuan_mt_7b_is_a_documented_best_effort(engine, demo_settings):
    translator, rec = make(engine, demo_settings)
    result = translator.translate(request("Thank you.", glossary=(("Thank you", "谢谢"),)))
    assert rec.prompts == ["参考下面的翻译：\nThank you 翻译成 谢谢\n\n"
                           "把下面的文本翻译成中文，不要额外解释。\n\nThank you."]
    assert result.notice == GLOSSARY_NOTICE


def test_context_mode_sends_the_context_prompt(engine, demo_settings):
    translator, rec = make(engine, demo_settings, PromptFamily.HY_MT15, ALL_MODES)
    translator.translate(request("He left.", mode="context", context="Tom was tired."))
    assert rec.prompts == ["Tom was tired.\n参考上面的信息，把下面的文本翻译成中文，"
                           "注意不需要翻译上文，也不要额外解释：\nHe left.\n"]


def test_context_on_a_model_without_it_is_ignored_with_a_notice(engine, demo_settings):
    translator, rec = make(engine, demo_settings)
    result = translator.translate(request("Thank you.", mode="context", context="Tom."))
    assert rec.prompts == [prompts.translation_prompt("Thank you.", "en", "zh")]
    assert "context was not used" in result.notice


def test_formatted_mode_sends_numbered_tags_with_the_formatted_prompt(engine, demo_settings):
    translator, rec = make(engine, demo_settings, PromptFamily.HY_MT15, ALL_MODES)
    result = translator.translate(request("Click <b>here</b> and **now**.", mode="formatted"))
    assert rec.prompts[0] == (
        "将以下<source></source>之间的文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释，"
        "原文中的<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。"
        "输出格式为：<target>str</target>\n\n<source>Click <s1>here</s1> and <s2>now</s2>.</source>")
    # The demo model cannot keep tags: the bare text is translated instead, and the user is told.
    assert rec.prompts[1] == prompts.translation_prompt("Click here and now.", "en", "zh",
                                                        PromptFamily.HY_MT15)
    assert "did not keep the markup" in result.notice


def test_markup_round_trip_and_broken_tags():
    markup = ProtectedMarkup.parse('See <a href="/x">the <i>docs</i></a> and `code`.')
    assert markup.tagged == "See <s1>the <s2>docs</s2></s1> and <s3>code</s3>."
    assert markup.restore("<target>看<s1>这个<s2>文档</s2></s1>和<s3>code</s3>。</target>") == (
        '看<a href="/x">这个<i>文档</i></a>和`code`。')
    assert markup.restore("看<s1>这个<s2>文档</s1></s2>") is None
    assert markup.restore("看这个文档") is None


def test_alternatives_are_batched_in_one_engine_pass(engine, demo_settings):
    translator, rec = make(engine, demo_settings)
    result = translator.translate(request("Thank you.", mode="alternatives", variants=3))
    assert len(rec.calls) == 1
    sent, options = rec.calls[0]
    assert sent == [prompts.translation_prompt("Thank you.", "en", "zh")] * 3
    assert options[0].deterministic and not options[1].deterministic
    assert options[1].seed != options[2].seed
    assert result.text == "谢谢。"
    assert result.alternatives[0] == "谢谢。"


def test_alternatives_are_for_short_texts(engine, demo_settings):
    translator, _ = make(engine, demo_settings)
    with pytest.raises(InputTooLongError):
        translator.start(request("word " * 300, mode="alternatives"))


def test_ensemble_needs_chimera_and_says_so(engine, demo_settings):
    translator, _ = make(engine, demo_settings)
    with pytest.raises(UnsupportedModeError, match="Hunyuan-MT-Chimera-7B"):
        translator.start(request("Thank you.", mode="ensemble"))


def test_ensemble_batches_candidates_then_sends_the_chimera_prompt(engine, demo_settings):
    translator, rec = make(engine, demo_settings, modes=frozenset({models.TRANSLATE,
                                                                   models.CHIMERA}))
    result = translator.translate(request("Thank you.", mode="ensemble"))
    first, second = rec.calls
    assert first[0] == [prompts.translation_prompt("Thank you.", "en", "zh")] * 4
    assert first[1][0].deterministic and len({o.temperature for o in first[1][1:]}) == 3
    candidates = list(result.candidates)
    assert candidates[0] == "谢谢。"
    assert second[0] == [prompts.chimera_prompt("Thank you.", "en", "zh", candidates)]
    assert second[0][0].startswith("Analyze the following multiple Chinese translations of the "
                                   "English segment surrounded in triple backticks")


def test_unknown_mode_lists_the_modes(engine, demo_settings):
    translator, _ = make(engine, demo_settings)
    with pytest.raises(UnsupportedModeError, match="translate, context, formatted"):
        translator.start(request("Thank you.", mode="poetry"))
