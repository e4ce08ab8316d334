"""What each translation mode sends to the model, and how its answer is checked.

Modes are data for the service: ``translate`` (optionally with a glossary), ``terminology`` (the
same with a glossary required), ``context`` (surrounding text or background information),
``style``, ``instructions``, ``structured``, ``formatted``, ``alternatives`` and ``ensemble``
(Chimera). Where a model was trained on a prompt (HY-MT1.5's terminology, context and formatted
prompts; Hy-MT2's terminology, background, style, personal-instruction and structured-data prompts;
Chimera's fusion prompt) that exact text is used, from the model's prompt family; elsewhere a
documented best-effort form is (often the plain prompt), and the result carries a notice saying so.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex

from hunyuan_webui import prompts, structured
from hunyuan_webui.errors import InputError
from hunyuan_webui.models import (
    CONTEXT,
    FORMATTED,
    INSTRUCTIONS,
    STRUCTURED,
    STYLE,
    TERMINOLOGY,
    TRANSLATE,
    Mode,
    ModelSpec,
)

MODES = tuple(str(m) for m in Mode)
MODE_HELP = {
    "translate": "One translation per sentence (a glossary may be given).",
    "context": "Use surrounding text or background information (`context`) to resolve pronouns "
               "and terms.",
    "formatted": "Keep inline markup (<b>, <i>, links, **emphasis**) in place.",
    "alternatives": "Several different translations of a short text, in one batch.",
    "ensemble": "Best quality: several candidates fused by Hunyuan-MT-Chimera.",
    "terminology": "Translate with a glossary (`glossary`, term pairs): the model's "
                   "terminology prompt.",
    "style": "Translate in the style you describe (`style`, free text).",
    "instructions": "Translate following your own instructions (`instructions`, one per line).",
    "structured": "Translate the text in JSON, XML, YAML, CSV, TSV, TOML or INI data "
                  "(`data_format`, or detected) keeping keys, tags and placeholders; the answer "
                  "is checked.",
}
# Modes whose unit is the whole paragraph (structured: the whole text) rather than the sentence.
PARAGRAPH_MODES = frozenset({Mode.FORMATTED, Mode.ALTERNATIVES, Mode.ENSEMBLE, Mode.STRUCTURED})
WHOLE_TEXT_MODES = frozenset({Mode.STRUCTURED})
MAX_ALTERNATIVES = 6
ENSEMBLE_CANDIDATES = 4
MAX_STYLE_CHARS = 500
MAX_INSTRUCTIONS = 20
MAX_INSTRUCTION_CHARS = 500
# Decoding for the ensemble's candidates: one greedy, the rest sampled a little differently.
CANDIDATE_TEMPERATURES = (None, 0.7, 0.9, 1.1, 0.8, 1.0)

GLOSSARY_NOTICE = ("This model was not trained on glossaries: the terms were given to it in "
                   "HY-MT1.5's terminology wording as a best effort. Check the report below.")
CONTEXT_NOTICE = ("This model has no context prompt (HY-MT1.5 and Hy-MT2 have): the context was "
                  "not used.")
FORMAT_NOTICE = ("This model has no formatted-translation prompt (HY-MT1.5 has): markup was "
                 "protected with numbered tags as a best effort.")
FORMAT_BROKEN = ("The model did not keep the markup intact in {n} paragraph(s); those were "
                 "translated without markup.")
STYLE_NOTICE = "This model has no style prompt (Hy-MT2 has): the style was not used."
INSTRUCTIONS_NOTICE = ("This model has no prompt for personal instructions (Hy-MT2 has): the "
                       "instructions were not used.")
STRUCTURED_NOTICE = ("This model has no structured-data prompt (Hy-MT2 has): the data was sent "
                     "with its plain prompt as a best effort, and the answer checked.")
GLOSSARY_UNUSED = ("The glossary was not used: the {mode} prompt has no place for it (the "
                   "report below still says which terms appear).")
STRUCTURE_BROKEN = ("The model's answer was not {format} with the same structure ({why}); "
                    "each text value was translated on its own instead.")
STRUCTURE_KEPT = ("The model's answer was not {format} with the same structure ({why}); the "
                  "data is shown untranslated.")
# Modes with a prompt of their own, whose text the glossary cannot join.
_OWN_PROMPT = {STYLE: STYLE_NOTICE, INSTRUCTIONS: INSTRUCTIONS_NOTICE,
               STRUCTURED: STRUCTURED_NOTICE}


def translation_prompt(spec: ModelSpec, text: str, source: str, target: str,
                       glossary: tuple[tuple[str, str], ...] = (), context: str = "",
                       mode: str = TRANSLATE, style: str = "",
                       instructions: Sequence[str] = (), data_format: str = "") -> str:
    """The user message for one segment (or a whole structured text) in a prompt mode."""
    family = spec.family
    if mode in _OWN_PROMPT and spec.supports(mode):
        fields = {STYLE: {"style": style},
                  INSTRUCTIONS: {"items": [{"instruction": i} for i in instructions]},
                  STRUCTURED: {"format": structured.FORMATS.get(data_format, data_format)}}
        return prompts.render(family, mode, text, source, target, **fields[mode])  # type: ignore[arg-type]
    if glossary and mode not in _OWN_PROMPT:
        if spec.supports(TERMINOLOGY):
            return prompts.terminology_prompt(text, target, glossary, family, source)
        # Best effort for models without a terminology prompt: the HY-MT1.5 glossary lines in
        # front of the model's own translation prompt.
        lines = [prompts.fill("{source_term} 翻译成 {target_term}",
                              {"source_term": s, "target_term": t}) for s, t in glossary]
        return ("参考下面的翻译：\n" + "\n".join(lines) + "\n\n"
                + prompts.translation_prompt(text, source, target, family))
    if mode == CONTEXT and context.strip() and spec.supports(CONTEXT):
        return prompts.context_prompt(text, target, context, family, source)
    return prompts.translation_prompt(text, source, target, family)


def notices_for(spec: ModelSpec, mode: str, glossary: tuple[tuple[str, str], ...],
                context: str) -> list[str]:
    out = []
    if glossary and mode in _OWN_PROMPT and spec.supports(mode):
        out.append(GLOSSARY_UNUSED.format(mode=mode))
    elif glossary and not spec.supports(TERMINOLOGY):
        out.append(GLOSSARY_NOTICE)
    if mode == CONTEXT and context.strip() and not spec.supports(CONTEXT):
        out.append(CONTEXT_NOTICE)
    if mode == FORMATTED and not spec.supports(FORMATTED):
        out.append(FORMAT_NOTICE)
    if mode in _OWN_PROMPT and not spec.supports(mode):
        out.append(_OWN_PROMPT[mode])
    return out


def check_inputs(mode: str, glossary: tuple[tuple[str, str], ...], style: str,
                 instructions: tuple[str, ...]) -> None:
    """What a mode cannot do without, asked for before any model work."""
    if mode == TERMINOLOGY and not glossary:
        raise InputError("The terminology mode needs a glossary: at least one term pair.")
    if mode == STYLE and not style.strip():
        raise InputError("The style mode needs a style: describe it in a few words "
                         "(e.g. formal business English, 中国古代文言文).")
    if len(style) > MAX_STYLE_CHARS:
        raise InputError(f"A style is at most {MAX_STYLE_CHARS} characters.")
    if mode == INSTRUCTIONS and not instructions:
        raise InputError("The instructions mode needs at least one instruction (one per line).")


def parse_instructions(value: object) -> tuple[str, ...]:
    """Instruction lines from a list or from text (one per line); blank lines are skipped and a
    leading number (``1.``, ``2、``, ``3)``) is removed, since the prompt numbers them itself."""
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        lines: list[object] = value.splitlines()
    elif isinstance(value, list | tuple):
        lines = list(value)
    else:
        raise InputError("Instructions must be text, one per line, or a list of texts.")
    out = []
    for line in lines:
        if not isinstance(line, str):
            raise InputError("Instructions must be text.")
        line = regex.sub(r"^\s*\d{1,2}\s*[.、)）]\s*", "", line).strip()
        if len(line) > MAX_INSTRUCTION_CHARS:
            raise InputError(f"An instruction is at most {MAX_INSTRUCTION_CHARS} characters.")
        if line:
            out.append(line)
    if len(out) > MAX_INSTRUCTIONS:
        raise InputError(f"At most {MAX_INSTRUCTIONS} instructions.")
    return tuple(out)


def glossary_report(text: str, glossary: tuple[tuple[str, str], ...]) -> tuple[tuple[str, ...],
                                                                                tuple[str, ...]]:
    """Which target terms appear in the translation (case-insensitively) and which do not."""
    folded = text.casefold()
    found = tuple(t for _, t in glossary if t.casefold() in folded)
    missing = tuple(t for _, t in glossary if t.casefold() not in folded)
    return found, missing


def parse_glossary(rows: object) -> tuple[tuple[str, str], ...]:
    """Term pairs from a table, a mapping or CSV-like text; blank rows are skipped."""
    from hunyuan_webui.errors import InputError

    if rows is None:
        return ()
    if isinstance(rows, dict):
        pairs = list(rows.items())
    elif isinstance(rows, str):
        import csv
        import io

        pairs = [tuple(r[:2]) for r in csv.reader(io.StringIO(rows)) if len(r) >= 2]
    else:
        pairs = [tuple(r[:2]) for r in rows if r is not None and len(r) >= 2]  # type: ignore[union-attr]
    out = []
    for source, target in pairs:
        if not isinstance(source, str) or not isinstance(target, str):
            raise InputError("Glossary terms must be text.")
        if source.strip() and target.strip():
            out.append((source.strip(), target.strip()))
    if len(out) > 200:
        raise InputError("A glossary holds at most 200 terms.")
    return tuple(out)


# -- formatted mode: inline markup as numbered tags ---------------------------------------------
_MARKUP = regex.compile(
    r"(?P<html><(?P<tag>[a-zA-Z][a-zA-Z0-9]*)\b[^<>]*>(?P<inner>(?:(?!</?(?P=tag)\b).)*?)</(?P=tag)>)"
    r"|(?P<md>(?P<mark>\*\*|__|\*|_|`)(?P<mdinner>(?!\s).+?(?<!\s))(?P=mark))"
    r"|(?P<link>\[(?P<label>[^\[\]]+)\]\((?P<url>[^()\s]+)\))",
    regex.S,
)


@dataclass(frozen=True)
class ProtectedMarkup:
    """Text whose inline markup is replaced by ``<sN>...</sN>``, and the way back."""

    tagged: str
    openers: tuple[str, ...]
    closers: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> ProtectedMarkup:
        openers: list[str] = []
        closers: list[str] = []

        def replace(match: regex.Match) -> str:
            n = len(openers) + 1
            if match.group("html"):
                opener = match.group(0)[: match.start("inner") - match.start(0)]
                closer = f"</{match.group('tag')}>"
                inner = match.group("inner")
            elif match.group("md"):
                opener = closer = match.group("mark")
                inner = match.group("mdinner")
            else:
                opener, closer = "[", f"]({match.group('url')})"
                inner = match.group("label")
            openers.append(opener)
            closers.append(closer)
            return f"<s{n}>{_MARKUP.sub(replace, inner)}</s{n}>"

        tagged = _MARKUP.sub(replace, text)
        return cls(tagged, tuple(openers), tuple(closers))

    @property
    def has_markup(self) -> bool:
        return bool(self.openers)

    def restore(self, answer: str) -> str | None:
        """The answer with the original markup back, or None if the tags came back broken."""
        answer = prompts.strip_target_tags(answer)
        tags = regex.findall(r"</?s(\d+)>", answer)
        expected = sorted(str(i) for i in range(1, len(self.openers) + 1))
        if sorted(tags[::1]) != sorted(expected * 2) or not _balanced(answer):
            return None
        out = answer
        for i, (opener, closer) in enumerate(zip(self.openers, self.closers), 1):
            out = out.replace(f"<s{i}>", opener, 1).replace(f"</s{i}>", closer, 1)
        return out


def _balanced(text: str) -> bool:
    stack: list[str] = []
    for closing, number in regex.findall(r"<(/?)s(\d+)>", text):
        if not closing:
            stack.append(number)
        elif not stack or stack.pop() != number:
            return False
    return not stack


def strip_markup(text: str) -> str:
    """The text without its inline markup (what formatted mode falls back to)."""
    protected = ProtectedMarkup.parse(text)
    return regex.sub(r"</?s\d+>", "", protected.tagged)
