"""Prompt text exactly as the model cards write it, read from one data file per prompt family.

Each function returns the *user message*; the chat format around it (``<|startoftext|>`` ...
``<|extra_0|>`` for the 7B models, other tokens for the 1.8B and 30B ones) is added in the engine,
never here: by the model's own ``tokenizer.apply_chat_template``, or for GGUF files (llama.cpp,
llama-server) from :mod:`hunyuan_webui.core.chat`, their tokens by id. There is no system prompt.

Why data files: a family's prompts are facts copied from its model card, and a new family (Hy-MT3
once its card is readable) must be a new file, not new branches. ``prompt_families/<name>.toml``
holds, per mode (``translate``, ``terminology``, ``context``, ``style``, ...), the Chinese (``zh``)
and the English (``en``) template; modes whose prompt lists things (glossary pairs, numbered
instructions, Chimera's candidates) add an ``item`` template per line and may add a ``last`` line.
TOML rather than a Python table: the texts are read as written, with no escaping of braces, and
comments beside them say where each came from. :class:`PromptFamily` is built from the files too.

Placeholders are ``{name}`` from :data:`PLACEHOLDERS` and are filled in one pass, so text that
contains braces (the user's, or the literal ``{{var}}`` of Hy-MT2's structured-data prompt) is never
filled in. The Chinese template is used when the family's ``chinese_when`` rule says so (for every
family so far: when the source or the target is Chinese: zh, zh-Hant, yue), with Chinese language
names; the English one otherwise, with English names. A mode written in one language only (HY-MT1.5's
extras are Chinese, Chimera's English) always uses it, with that language's names.

:func:`recognize` reads the older families' templates backwards: given a user message that some
other tool filled in (an OpenAI-compatible client with the model card's prompt pasted into it), it
returns the target language and the text, so the request can go through the translator instead of
the model.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, UnsupportedModeError

FAMILIES_DIR = Path(__file__).resolve().parent / "prompt_families"
PLACEHOLDERS = frozenset({"target_language", "source_language", "source_text", "items", "context",
                          "style", "format", "n", "source_term", "target_term", "instruction",
                          "candidate"})
# `{name}` not inside `{{...}}` and not the `${name}` of a shell or JS template.
_PLACEHOLDER = re.compile(r"(?<![{$])\{([a-z_]+)\}(?!\})")
# When the Chinese template is used, by the value of a family's `chinese_when`.
CHINESE_RULES: dict[str, Callable[[str, str], bool]] = {
    "source_or_target": lambda s, t: languages.is_chinese(s) or languages.is_chinese(t),
    "source": lambda s, t: languages.is_chinese(s),
}
CHIMERA_MAX_CANDIDATES = 6


@dataclass(frozen=True)
class Template:
    """One mode's prompt: its text per language, and for lists the line templates."""

    text: Mapping[str, str]
    item: Mapping[str, str] = field(default_factory=dict)
    last: Mapping[str, str] = field(default_factory=dict)

    def language(self, chinese: bool) -> str:
        """``zh`` or ``en``: the one asked for if this mode is written in it, else the other."""
        wanted = "zh" if chinese else "en"
        return wanted if wanted in self.text else next(iter(self.text))


@dataclass(frozen=True)
class Family:
    name: str
    title: str
    chinese_when: str
    templates: Mapping[str, Template]

    @property
    def modes(self) -> frozenset[str]:
        """The modes this family has a prompt for."""
        return frozenset(self.templates)

    def uses_chinese(self, source: str, target: str) -> bool:
        return CHINESE_RULES[self.chinese_when](source, target)


def _load_family(path: Path) -> Family:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    rule = data.get("chinese_when", "source_or_target")
    if rule not in CHINESE_RULES:
        raise ValueError(f"{path.name}: chinese_when must be one of {', '.join(CHINESE_RULES)}")
    templates = {}
    for mode, table in data.items():
        if not isinstance(table, dict):
            continue
        template = Template(text={k: v for k, v in table.items() if k in ("zh", "en")},
                            item=table.get("item", {}), last=table.get("last", {}))
        for text in (*template.text.values(), *template.item.values(), *template.last.values()):
            unknown = set(_PLACEHOLDER.findall(text)) - PLACEHOLDERS
            if unknown:
                raise ValueError(f"{path.name} [{mode}]: unknown placeholder(s) {sorted(unknown)}")
        if not template.text or "{source_text}" not in "".join(template.text.values()):
            raise ValueError(f"{path.name} [{mode}]: needs a zh or en text with {{source_text}}")
        templates[mode] = template
    return Family(name=data["name"], title=data.get("title", data["name"]), chinese_when=rule,
                  templates=templates)


FAMILIES: dict[str, Family] = {
    family.name: family
    for family in (_load_family(p) for p in sorted(FAMILIES_DIR.glob("*.toml")))
}
# One member per file: HUNYUAN_MT = "hunyuan-mt", HY_MT15 = "hy-mt1.5", HY_MT2 = "hy-mt2", ...
PromptFamily = StrEnum(  # type: ignore[misc]
    "PromptFamily", {name.upper().replace("-", "_").replace(".", ""): name for name in FAMILIES})


def family(name: str) -> Family:
    if name not in FAMILIES:
        raise UnsupportedModeError(f"Unknown prompt family {name!r}. Known: {', '.join(FAMILIES)}.")
    return FAMILIES[name]


def fill(text: str, values: Mapping[str, str]) -> str:
    """``text`` with its placeholders replaced by ``values``, in one pass."""
    def value(match: re.Match[str]) -> str:
        if match.group(1) not in values:
            raise InputError(f"This prompt needs a value for {{{match.group(1)}}}.")
        return values[match.group(1)]

    return _PLACEHOLDER.sub(value, text)


def render(family_name: str, mode: str, text: str, source: str, target: str,
           items: Sequence[Mapping[str, str]] = (), **fields: str) -> str:
    """The ``mode`` prompt of a family for one segment.

    ``items`` fill the ``{items}`` list (one ``item`` line each, numbered from 1 as ``{n}``, then
    the ``last`` line if the mode has one); ``fields`` fill ``{context}``, ``{style}``,
    ``{format}``. ``source`` must be a language code (detect it first).
    """
    fam = family(family_name)
    if mode not in fam.templates:
        raise UnsupportedModeError(f"The {fam.title} prompts have no {mode!r} mode.")
    template = fam.templates[mode]
    source, target = languages.normalize(source), languages.normalize(target)
    lang = template.language(fam.uses_chinese(source, target))
    name = (lambda code: languages.get(code).chinese) if lang == "zh" else (
        lambda code: languages.get(code).english)
    values = {"target_language": name(target), "source_language": name(source),
              "source_text": text, **fields}
    lines = [fill(template.item[lang], {**values, **item, "n": str(i)})
             for i, item in enumerate(items, 1)]
    if template.last:
        lines.append(fill(template.last[lang], {**values, "n": str(len(lines) + 1)}))
    values["items"] = "\n".join(lines)
    return fill(template.text[lang], values)


def uses_chinese_template(source: str, target: str,
                          family_name: str = "hunyuan-mt") -> bool:
    """ZH<=>XX whenever either side is Chinese (the source must be known: detect it first)."""
    return family(family_name).uses_chinese(source, target)


def translation_prompt(text: str, source: str, target: str,
                       family: PromptFamily | str = "hunyuan-mt") -> str:
    """The plain translation prompt (ZH<=>XX or XX<=>XX) for one segment."""
    return render(str(family), "translate", text, source, target)


def terminology_prompt(text: str, target: str, terms: Sequence[tuple[str, str]],
                       family: PromptFamily | str = "hy-mt1.5", source: str = "zh") -> str:
    """The terminology prompt: one ``X 翻译成 Y`` (or ``X translates to Y``) line per term."""
    if not terms:
        raise InputError("The terminology prompt needs at least one glossary term.")
    return render(str(family), "terminology", text, source, target,
                  items=[{"source_term": s, "target_term": t} for s, t in terms])


def context_prompt(text: str, target: str, context: str, family: PromptFamily | str = "hy-mt1.5",
                   source: str = "zh") -> str:
    """The contextual (background) translation prompt."""
    return render(str(family), "context", text, source, target, context=context)


def formatted_prompt(text: str, target: str) -> str:
    """HY-MT1.5's format-preserving prompt; the answer is wrapped in ``<target>``."""
    return render("hy-mt1.5", "formatted", text, "zh", target)


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
    return render("hunyuan-mt", "chimera", text, source, target,
                  items=[{"candidate": c} for c in candidates])


# -- the older families' templates as plain strings -------------------------------------------
# For code that reads the template texts themselves (str.format-style, `{terms}` for the glossary
# lines) rather than rendering them: views of the data files, never a second copy of the text.
ZH_TEMPLATE = {PromptFamily(name): FAMILIES[name].templates["translate"].text["zh"]
               for name in ("hunyuan-mt", "hy-mt1.5")}
XX_TEMPLATE = FAMILIES["hunyuan-mt"].templates["translate"].text["en"]
TERMINOLOGY_TEMPLATE = FAMILIES["hy-mt1.5"].templates["terminology"].text["zh"].replace(
    "{items}", "{terms}")
TERM_LINE = FAMILIES["hy-mt1.5"].templates["terminology"].item["zh"]
CONTEXT_TEMPLATE = FAMILIES["hy-mt1.5"].templates["context"].text["zh"]
FORMATTED_TEMPLATE = FAMILIES["hy-mt1.5"].templates["formatted"].text["zh"]


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
# Every family's plain translation prompt, in both wordings (Hy-MT2 adds an English one).
_TRANSLATE_TEMPLATES = tuple(dict.fromkeys(
    text for family in FAMILIES.values() for text in family.templates["translate"].text.values()))
_RECOGNIZED = tuple(_template_pattern(t) for t in (CONTEXT_TEMPLATE, *_TRANSLATE_TEMPLATES))


def recognize(message: str) -> RecognizedPrompt | None:
    """The translation a user message asks for, if it is one of the model cards' translation
    prompts (any family, either wording, any target language of the table; terminology and context
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


def alternative_prompt(family_name: str, mode: str, segment: str, source: str,
                       target: str) -> str | None:
    """The same request in the family's other wording (the English template where the Chinese
    one was used, and back), or None when the mode is written in one language only."""
    fam = family(family_name)
    template = fam.templates.get(mode)
    if template is None or len(template.text) < 2:
        return None
    lang = "en" if fam.uses_chinese(source, target) else "zh"
    name = (lambda c: languages.get(c).chinese) if lang == "zh" else (
        lambda c: languages.get(c).english)
    return fill(template.text[lang], {"target_language": name(target),
                                              "source_language": name(source),
                                              "source_text": segment})
