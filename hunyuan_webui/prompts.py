"""Prompt text exactly as the Hunyuan-MT model cards write it.

Each function returns the *user message*; the chat format around it (``<|startoftext|>`` ...
``<|extra_0|>`` for the 7B models, other tokens for the 1.8B ones) is always added by the model's
own ``tokenizer.apply_chat_template`` in the engine, never here. There is no system prompt.

Two families: ``hunyuan-mt`` (Hunyuan-MT-7B, Chimera) and ``hy-mt1.5`` (HY-MT1.5, which rewords the
Chinese template and adds terminology, context and formatted prompts). The Chinese template is used
when the source or the target is Chinese (zh, zh-Hant, yue), with Chinese language names; the
English template otherwise, with English names.

:func:`recognize` reads the same templates backwards: given a user message that some other tool
filled in (an OpenAI-compatible client with the model card's prompt pasted into it), it returns the
target language and the text, so the request can go through the translator instead of the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, UnsupportedModeError


class PromptFamily(StrEnum):
    HUNYUAN_MT = "hunyuan-mt"
    HY_MT15 = "hy-mt1.5"


ZH_TEMPLATE = {
    PromptFamily.HUNYUAN_MT: "把下面的文本翻译成{target_language}，不要额外解释。\n\n{source_text}",
    PromptFamily.HY_MT15: "将以下文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释：\n\n{source_text}",
}
XX_TEMPLATE = "Translate the following segment into {target_language}, without additional explanation.\n\n{source_text}"

TERMINOLOGY_TEMPLATE = (
    "参考下面的翻译：\n{terms}\n\n"
    "将以下文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释：\n{source_text}"
)
TERM_LINE = "{source_term} 翻译成 {target_term}"
CONTEXT_TEMPLATE = (
    "{context}\n参考上面的信息，把下面的文本翻译成{target_language}，注意不需要翻译上文，也不要额外解释：\n"
    "{source_text}\n"
)
FORMATTED_TEMPLATE = (
    "将以下<source></source>之间的文本翻译为{target_language}，注意只需要输出翻译后的结果，不要额外解释，"
    "原文中的<sn></sn>标签表示标签内文本包含格式信息，需要在译文中相应的位置尽量保留该标签。"
    "输出格式为：<target>str</target>\n\n<source>{source_text}</source>"
)
CHIMERA_TEMPLATE = (
    "Analyze the following multiple {target_language} translations of the {source_language} segment "
    "surrounded in triple backticks and generate a single refined {target_language} translation. "
    "Only output the refined translation, do not explain.\n\n"
    "The {source_language} segment:\n```{source_text}```\n\n"
    "The multiple {target_language} translations:\n{candidates}"
)
CHIMERA_MAX_CANDIDATES = 6


def uses_chinese_template(source: str, target: str) -> bool:
    """ZH<=>XX whenever either side is Chinese (the source must be known: detect it first)."""
    return target in languages.CHINESE_CODES or source in languages.CHINESE_CODES


def target_name(source: str, target: str) -> str:
    lang = languages.get(target)
    return lang.chinese if uses_chinese_template(source, target) else lang.english


def translation_prompt(text: str, source: str, target: str,
                       family: PromptFamily = PromptFamily.HUNYUAN_MT) -> str:
    """The plain translation prompt (ZH<=>XX or XX<=>XX) for one segment."""
    source, target = languages.normalize(source), languages.normalize(target)
    if uses_chinese_template(source, target):
        template = ZH_TEMPLATE[family]
        return template.format(target_language=languages.get(target).chinese, source_text=text)
    return XX_TEMPLATE.format(target_language=languages.get(target).english, source_text=text)


def terminology_prompt(text: str, target: str, terms: Sequence[tuple[str, str]]) -> str:
    """HY-MT1.5's terminology intervention prompt: one ``X 翻译成 Y`` line per term."""
    if not terms:
        raise InputError("The terminology prompt needs at least one glossary term.")
    lines = "\n".join(TERM_LINE.format(source_term=s, target_term=t) for s, t in terms)
    return TERMINOLOGY_TEMPLATE.format(terms=lines, target_language=_chinese_name(target),
                                       source_text=text)


def context_prompt(text: str, target: str, context: str) -> str:
    """HY-MT1.5's contextual translation prompt."""
    return CONTEXT_TEMPLATE.format(context=context, target_language=_chinese_name(target),
                                   source_text=text)


def formatted_prompt(text: str, target: str) -> str:
    """HY-MT1.5's format-preserving prompt; the answer is wrapped in ``<target>``."""
    return FORMATTED_TEMPLATE.format(target_language=_chinese_name(target), source_text=text)


def strip_target_tags(answer: str) -> str:
    """Remove the ``<target>...</target>`` wrapper the formatted prompt asks for."""
    stripped = answer.strip()
    if stripped.startswith("<target>"):
        stripped = stripped[len("<target>"):]
    if stripped.endswith("</target>"):
        stripped = stripped[: -len("</target>")]
    return stripped


def chimera_prompt(text: str, source: str, target: str, candidates: Sequence[str]) -> str:
    """The Chimera fusion prompt over up to six candidate translations (English names)."""
    if not candidates:
        raise InputError("Chimera fusion needs at least one candidate translation.")
    if len(candidates) > CHIMERA_MAX_CANDIDATES:
        raise UnsupportedModeError(
            f"Chimera fuses at most {CHIMERA_MAX_CANDIDATES} candidates, got {len(candidates)}.")
    numbered = "\n".join(f"{i}. ```{c}```" for i, c in enumerate(candidates, 1))
    return CHIMERA_TEMPLATE.format(
        target_language=languages.get(target).english,
        source_language=languages.get(source).english,
        source_text=text,
        candidates=numbered,
    )


def _chinese_name(code: str) -> str:
    return languages.get(code).chinese


# -- recognising a prompt another tool filled in ---------------------------------------------------
@dataclass(frozen=True)
class RecognizedPrompt:
    """What a translation prompt asked for: the target language code and the text (plus the
    glossary and context of HY-MT1.5's terminology and context prompts)."""

    target: str
    text: str
    glossary: tuple[tuple[str, str], ...] = ()
    context: str = ""


def _template_pattern(template: str) -> re.Pattern[str]:
    """A template as a regex: its own words exactly, any run of whitespace for a run of whitespace
    (tools trim and re-wrap what is pasted into them), each slot a named group."""
    out = []
    for part in re.split(r"(\{\w+\})", template):
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            out.append(rf"(?P<{name}>[^\n]+?)" if name == "target_language" else
                       rf"(?P<{name}>.*?)")
        elif part:
            words = re.split(r"(\s+)", part)
            out.append("".join(r"\s+" if w.isspace() else re.escape(w) for w in words if w))
    return re.compile(r"\s*" + "".join(out) + r"\s*", re.S)


_GLOSSARY_HEAD, _ = TERMINOLOGY_TEMPLATE.split("{terms}")
_GLOSSARY = re.compile(r"\s*" + re.escape(_GLOSSARY_HEAD.strip()) + r"\s*\n(?P<terms>.+?)\n\s*\n(?P<rest>.*)",
                       re.S)
_TERM = _template_pattern(TERM_LINE)
# Most specific first: the context prompt ends with the text of the plain Chinese ones.
_RECOGNIZED = tuple(_template_pattern(t) for t in (CONTEXT_TEMPLATE, *ZH_TEMPLATE.values(),
                                                   XX_TEMPLATE))


def recognize(message: str) -> RecognizedPrompt | None:
    """The translation a user message asks for, if it is one of the model cards' translation
    prompts (either family, either wording, any of the 38 target languages; terminology and context
    prompts included); None for anything else. The source language is never in these prompts."""
    glossary: tuple[tuple[str, str], ...] = ()
    head = _GLOSSARY.fullmatch(message)
    if head is not None:
        terms = [_TERM.fullmatch(line) for line in head["terms"].splitlines() if line.strip()]
        if not terms or any(t is None for t in terms):
            return None
        glossary = tuple((t["source_term"].strip(), t["target_term"].strip())
                         for t in terms if t is not None)
        message = head["rest"]
    for pattern in _RECOGNIZED:
        match = pattern.fullmatch(message)
        if match is None:
            continue
        target = languages.by_name(match["target_language"])
        if target is None:
            return None
        context = match.groupdict().get("context") or ""
        return RecognizedPrompt(target, match["source_text"], glossary, context.strip())
    return None
