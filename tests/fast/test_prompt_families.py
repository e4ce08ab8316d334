"""Hy-MT2's prompts character for character, and the prompt families as data files.

The expected texts are typed out from HY-MT2.md §1.6 (the README's cells read as plain text),
independently of ``prompt_families/hy-mt2.toml``, with the two documented readings applied: no
space next to a placeholder in the Chinese prompts (which reproduces HY-MT1.5's Chinese template
exactly), and the structured-data prompt's literal ``**`` rule titles, as the report prints them.
"""

from __future__ import annotations

import itertools

import pytest

from hunyuan_webui import languages, prompts
from hunyuan_webui.errors import InputError, UnsupportedModeError
from hunyuan_webui.prompts import PromptFamily

CHINESE = {"zh", "zh-Hant", "yue"}
TEXT = "Click {here} to save {{name}}."  # braces in the user's text are never filled in

ZH = {
    "translate": "将以下文本翻译为{tgt}，注意只需要输出翻译后的结果，不要额外解释：\n\n{src}",
    "terminology": "参考下面的翻译：\nSave 翻译成 保存\nfile 翻译成 文件\n"
                   "将以下文本翻译为{tgt}，注意只需要输出翻译后的结果，不要额外解释：\n\n{src}",
    "style": "请将以下文本翻译为{tgt}。\n注意翻译的风格要严格符合【中国古代文言文】\n\n{src}",
    "instructions": "【待翻译文本】\n{src}\n\n【翻译任务】\n1、人名保留原文\n2、使用敬语\n"
                    "3、将【待翻译文本】翻译为{tgt}。",
    "structured": "# 任务目标\n将下方{src}中的JSON格式数据翻译为{tgt}。\n\n# 严格约束\n"
                  "1. **结构锁定**：绝对保持原有的JSON数据结构、缩进和层级完全不变。\n"
                  "2. **选择性翻译**：仅翻译面向用户展示的可见文本内容。\n"
                  "3. **禁止修改**：**严禁**翻译或更改任何代码标签、键名 (Key)、变量占位符"
                  "（如 {{var}}、${var}、%s、%d 等）或代码属性。\n\n# 数据输入\n{src}",
    "context": "【背景信息】\n两人在排查服务器故障。\n\n请结合背景信息将以下文本翻译为{tgt}。"
               "\n\n【待翻译文本】\n{src}",
}
EN = {
    "translate": "Translate the following text into {tgt}. Note that you should only output the "
                 "translated result without any additional explanation:\n\n{src}",
    "terminology": "Reference the following translations:\nSave translates to 保存\n"
                   "file translates to 文件\n\nTranslate the following text into {tgt}. Note that "
                   "you must ONLY output the translated result without any additional "
                   "explanation:\n\n{src}",
    "style": "Please translate the following text into {tgt}. Note that the translation style "
             "must strictly conform to [中国古代文言文]:\n\n{src}",
    "instructions": "[Source Text]\n{src}\n\n[Translation Tasks]\n1. 人名保留原文\n2. 使用敬语\n"
                    "3. Translate the [Source Text] into {tgt}.",
    "structured": "### Task\nTranslate the user-facing text within the following JSON data into "
                  "{tgt}.\n\n### Strict Rules\n1. **Structure Preservation:** You MUST preserve "
                  "the original JSON data structure, nesting, hierarchy, and indentation exactly "
                  "as they are.\n2. **Selective Translation:** Translate ONLY the visible, "
                  "user-facing text content/values.\n3. **Strict Non-Translation:** NEVER "
                  "translate or alter code tags, keys, properties, object names, or variable "
                  "placeholders. Leave them exactly in their original English/code form.\n\n"
                  "### Source Data\n{src}",
    "context": "[Background Information]\n两人在排查服务器故障。\n\nPlease translate the following "
               "text into {tgt}, taking the provided background information into "
               "consideration.\n\n[Source Text]\n{src}",
}
FIELDS = {
    "translate": {},
    "terminology": {"items": [{"source_term": "Save", "target_term": "保存"},
                              {"source_term": "file", "target_term": "文件"}]},
    "style": {"style": "中国古代文言文"},
    "instructions": {"items": [{"instruction": "人名保留原文"}, {"instruction": "使用敬语"}]},
    "structured": {"format": "JSON"},
    "context": {"context": "两人在排查服务器故障。"},
}


def _expected(mode: str, chinese: bool, target: str) -> str:
    template = (ZH if chinese else EN)[mode]
    name = languages.get(target).chinese if chinese else languages.get(target).english
    # str.replace, not format: the expected texts hold literal braces.
    return template.replace("{tgt}", name).replace("{src}", TEXT)


@pytest.mark.parametrize("mode", list(ZH))
@pytest.mark.parametrize("source, target, chinese", [
    ("en", "zh", True), ("zh", "en", True), ("yue", "fr", True), ("de", "zh-Hant", True),
    ("en", "fr", False), ("ja", "ko", False), ("bo", "ug", False),
])
def test_every_hy_mt2_template_is_the_official_text(mode, source, target, chinese):
    got = prompts.render("hy-mt2", mode, TEXT, source, target, **FIELDS[mode])
    assert got == _expected(mode, chinese, target)


def test_hy_mt2_template_language_for_every_pair():
    """HY-MT1.5's rule: the Chinese template (with Chinese names) when either side is Chinese."""
    count = 0
    for src, tgt in itertools.permutations(languages.CODES, 2):
        got = prompts.translation_prompt(TEXT, src, tgt, PromptFamily.HY_MT2)
        assert got == _expected("translate", src in CHINESE or tgt in CHINESE, tgt), (src, tgt)
        count += 1
    assert count == 38 * 37


def test_the_english_default_differs_from_the_older_families():
    old = prompts.translation_prompt("Bonjour", "fr", "de", PromptFamily.HY_MT15)
    new = prompts.translation_prompt("Bonjour", "fr", "de", PromptFamily.HY_MT2)
    assert old == ("Translate the following segment into German, without additional "
                   "explanation.\n\nBonjour")
    assert new == ("Translate the following text into German. Note that you should only output "
                   "the translated result without any additional explanation:\n\nBonjour")
    # The Chinese default is HY-MT1.5's, character for character.
    assert (prompts.translation_prompt("Bonjour", "fr", "zh", PromptFamily.HY_MT2)
            == prompts.translation_prompt("Bonjour", "fr", "zh", PromptFamily.HY_MT15))


def test_one_instruction_still_ends_with_the_translation_task():
    got = prompts.render("hy-mt2", "instructions", "Hi", "en", "de",
                         items=[{"instruction": "Use the formal Sie."}])
    assert got == ("[Source Text]\nHi\n\n[Translation Tasks]\n1. Use the formal Sie.\n"
                   "2. Translate the [Source Text] into German.")


def test_families_are_read_from_the_data_files():
    assert [f.value for f in PromptFamily] == sorted(prompts.FAMILIES)
    assert {"hunyuan-mt", "hy-mt1.5", "hy-mt2"} <= set(prompts.FAMILIES)
    assert prompts.family("hy-mt2").modes == {"translate", "terminology", "style", "instructions",
                                              "structured", "context"}
    assert prompts.family("hy-mt1.5").modes == {"translate", "terminology", "context",
                                                "formatted"}
    assert prompts.family("hunyuan-mt").modes == {"translate", "chimera"}
    with pytest.raises(UnsupportedModeError, match="no 'style' mode"):
        prompts.render("hy-mt1.5", "style", "x", "en", "zh", style="formal")
    with pytest.raises(InputError, match="style"):
        prompts.render("hy-mt2", "style", "x", "en", "zh")


def test_a_new_family_is_a_new_file(tmp_path, monkeypatch):
    """Adding Hy-MT3 once its card is readable: a TOML file, no code."""
    (tmp_path / "new.toml").write_text(
        'name = "hy-mt9"\nchinese_when = "source"\n[translate]\n'
        'zh = "译为{target_language}：{source_text}"\nen = "To {target_language}: {source_text}"\n',
        encoding="utf-8")
    family = prompts._load_family(tmp_path / "new.toml")
    monkeypatch.setitem(prompts.FAMILIES, family.name, family)
    assert prompts.render("hy-mt9", "translate", "Hi", "en", "zh") == "To Chinese: Hi"
    assert prompts.render("hy-mt9", "translate", "你好", "zh", "en") == "译为英语：你好"


def test_a_template_with_an_unknown_placeholder_is_refused(tmp_path):
    (tmp_path / "bad.toml").write_text(
        'name = "bad"\n[translate]\nen = "To {target_lang}: {source_text}"\n', encoding="utf-8")
    with pytest.raises(ValueError, match="target_lang"):
        prompts._load_family(tmp_path / "bad.toml")
