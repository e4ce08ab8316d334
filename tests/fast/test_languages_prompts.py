"""Pure units: the language table, the official prompt wording for all 38 x 37 pairs, options."""

from __future__ import annotations

import itertools

import pytest

from hunyuan_webui import languages, models, modes, prompts
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import InputError, UnknownLanguageError
from hunyuan_webui.prompts import PromptFamily

# The model card's text, typed out independently of prompts.py.
ZH_MT = "把下面的文本翻译成{tgt}，不要额外解释。\n\n{src}"
ZH_MT15 = "将以下文本翻译为{tgt}，注意只需要输出翻译后的结果，不要额外解释：\n\n{src}"
XX = "Translate the following segment into {tgt}, without additional explanation.\n\n{src}"
XX_MT2 = ("Translate the following text into {tgt}. Note that you should only output the "
          "translated result without any additional explanation:\n\n{src}")
# Each family's (Chinese, English) plain template.
TEMPLATES = {PromptFamily.HUNYUAN_MT: (ZH_MT, XX), PromptFamily.HY_MT15: (ZH_MT15, XX),
             PromptFamily.HY_MT2: (ZH_MT15, XX_MT2)}
CHINESE = {"zh", "zh-Hant", "yue"}


def test_table_has_the_38_languages_of_the_model_card():
    assert len(languages.LANGUAGES) == 38
    assert len(set(languages.CODES)) == 38
    assert languages.CODES[:4] == ("zh", "en", "fr", "pt")
    assert {"bo", "kk", "mn", "ug", "yue", "zh-Hant"} <= set(languages.CODES)
    assert {lang.code for lang in languages.LANGUAGES if lang.rtl} == {"ar", "fa", "he", "ur", "ug"}
    for lang in languages.LANGUAGES:
        assert lang.english and lang.chinese and lang.autonym
        assert lang.label == f"{lang.english} · {lang.chinese} · {lang.autonym}"


def test_codes_are_normalised_and_unknown_codes_list_the_valid_ones():
    assert languages.normalize("ZH-hant") == "zh-Hant"
    assert languages.normalize("zh-TW") == "zh-Hant"
    assert languages.normalize("zh_CN") == "zh"
    assert languages.normalize("fil") == "tl"
    with pytest.raises(UnknownLanguageError) as err:
        languages.normalize("xx")
    assert "'xx'" in err.value.user_message
    assert "zh, en, fr" in err.value.user_message and "yue" in err.value.user_message


@pytest.mark.parametrize("family", list(PromptFamily))
def test_every_pair_renders_the_official_prompt(family):
    text = "Hello, world.\n第二行"
    zh_template, xx_template = TEMPLATES[family]
    count = 0
    for src, tgt in itertools.permutations(languages.CODES, 2):
        got = prompts.translation_prompt(text, src, tgt, family)
        target = languages.get(tgt)
        if src in CHINESE or tgt in CHINESE:
            expected = zh_template.format(tgt=target.chinese, src=text)
        else:
            expected = xx_template.format(tgt=target.english, src=text)
        assert got == expected, (src, tgt)
        count += 1
    assert count == 38 * 37


def test_spot_checks_against_the_model_card():
    assert prompts.translation_prompt("It's on the house.", "en", "zh") == (
        "把下面的文本翻译成中文，不要额外解释。\n\nIt's on the house.")
    assert prompts.translation_prompt("Bonjour", "fr", "de") == (
        "Translate the following segment into German, without additional explanation.\n\nBonjour")
    assert prompts.translation_prompt("你好", "zh", "en") == "把下面的文本翻译成英语，不要额外解释。\n\n你好"
    with pytest.raises(UnknownLanguageError):  # the service detects the source first
        prompts.translation_prompt("你好", "auto", "en")


def test_hy_mt15_extra_prompts():
    assert prompts.terminology_prompt("AI is here.", "zh", [("AI", "人工智能")]) == (
        "参考下面的翻译：\nAI 翻译成 人工智能\n\n"
        "将以下文本翻译为中文，注意只需要输出翻译后的结果，不要额外解释：\nAI is here.")
    assert prompts.context_prompt("He left.", "zh", "Tom was tired.") == (
        "Tom was tired.\n参考上面的信息，把下面的文本翻译成中文，注意不需要翻译上文，也不要额外解释：\nHe left.\n")
    formatted = prompts.formatted_prompt("<s1>Hi</s1>", "zh")
    assert formatted.endswith("输出格式为：<target>str</target>\n\n<source><s1>Hi</s1></source>")
    assert prompts.strip_target_tags("<target>你好</target>") == "你好"


def test_chimera_prompt_is_verbatim():
    got = prompts.chimera_prompt("你好", "zh", "en", ["Hello", "Hi"])
    assert got == (
        "Analyze the following multiple English translations of the Chinese segment surrounded in "
        "triple backticks and generate a single refined English translation. Only output the "
        "refined translation, do not explain.\n\n"
        "The Chinese segment:\n```你好```\n\n"
        "The multiple English translations:\n1. ```Hello```\n2. ```Hi```")
    with pytest.raises(InputError):
        prompts.chimera_prompt("x", "zh", "en", ["a"] * 7)


def test_decoding_options_defaults_and_bounds():
    opts = DecodingOptions()
    assert (opts.top_k, opts.top_p, opts.temperature, opts.repetition_penalty) == (20, 0.6, 0.7, 1.05)
    with pytest.raises(InputError, match="temperature"):
        DecodingOptions(temperature=5)
    with pytest.raises(InputError, match="Unknown option"):
        DecodingOptions.from_mapping({"beam": 4})
    with pytest.raises(InputError, match="top_k"):
        DecodingOptions.from_mapping({"top_k": "many"})
    assert DecodingOptions.from_mapping({"top_k": 5.0}).top_k == 5
    # Greedy results do not depend on sampling knobs, so they share cache entries.
    assert (DecodingOptions(deterministic=True, temperature=0.1).cache_fields()
            == DecodingOptions(deterministic=True).cache_fields())


def test_the_template_strings_are_views_of_the_data_files():
    """Code that reads the templates as str.format strings gets the same texts as render()."""
    assert XX.replace("{tgt}", "{target_language}").replace(
        "{src}", "{source_text}") == prompts.XX_TEMPLATE
    assert prompts.ZH_TEMPLATE[PromptFamily.HY_MT15] == ZH_MT15.replace(
        "{tgt}", "{target_language}").replace("{src}", "{source_text}")
    assert prompts.TERMINOLOGY_TEMPLATE.format(
        terms=prompts.TERM_LINE.format(source_term="AI", target_term="人工智能"),
        target_language="中文", source_text="AI is here.") == prompts.terminology_prompt(
        "AI is here.", "zh", [("AI", "人工智能")])


# -- recognising a prompt another tool filled in (the OpenAI-compatible route) -----------------
@pytest.mark.parametrize("family", list(PromptFamily))
def test_every_official_prompt_is_recognised(family):
    text = "Hello, world.\n\n第二行"
    for src, tgt in itertools.permutations(languages.CODES, 2):
        found = prompts.recognize(prompts.translation_prompt(text, src, tgt, family))
        assert found == prompts.RecognizedPrompt(tgt, text), (src, tgt)


def test_terminology_context_and_glossary_prompts_are_recognised():
    found = prompts.recognize(prompts.terminology_prompt("AI is here.", "zh",
                                                         [("AI", "人工智能"), ("here", "这里")]))
    assert found == prompts.RecognizedPrompt("zh", "AI is here.", (("AI", "人工智能"),
                                                                   ("here", "这里")))
    found = prompts.recognize(prompts.context_prompt("He left.", "zh", "Tom was tired."))
    assert found == prompts.RecognizedPrompt("zh", "He left.", context="Tom was tired.")
    # Hunyuan-MT-7B's best-effort glossary: the term lines in front of its own prompt.
    spec = models.REGISTRY["tencent/Hunyuan-MT-7B"]
    found = prompts.recognize(modes.translation_prompt(spec, "Thank you.", "en", "fr",
                                                       (("Thank you", "Merci"),)))
    assert found == prompts.RecognizedPrompt("fr", "Thank you.", (("Thank you", "Merci"),))


def test_what_tools_put_in_the_prompt_is_recognised():
    """Tools fill in their own language names and trim or re-wrap what is pasted into them."""
    for name, code in [("Simplified Chinese", "zh"), ("Chinese (Traditional)", "zh-Hant"),
                       ("english", "en"), ("zh-CN", "zh"), ("日语", "ja")]:
        message = (f"  Translate the following segment into {name}, without additional "
                   "explanation.\n\nBonjour.\n")
        assert prompts.recognize(message) == prompts.RecognizedPrompt(code, "Bonjour.")
    rewrapped = "把下面的文本翻译成英语，不要额外解释。\n你好"
    assert prompts.recognize(rewrapped) == prompts.RecognizedPrompt("en", "你好")


@pytest.mark.parametrize("message", [
    "Tell me a joke.",
    "Translate the following segment into Klingon, without additional explanation.\n\nHi",
    "Translate the following segment into English.\n\nBonjour",  # not the model card's words
    prompts.formatted_prompt("<s1>Hi</s1>", "zh"),
    prompts.chimera_prompt("你好", "zh", "en", ["Hello"]),
    "参考下面的翻译：\nnot a term line\n\n把下面的文本翻译成英语，不要额外解释。\n\n你好",
])
def test_anything_else_is_not_a_translation_prompt(message):
    assert prompts.recognize(message) is None
