"""What each translation mode sends to the model, and how its answer is checked.

Modes are data for the service: ``translate`` (optionally with a glossary), ``context``,
``formatted``, ``alternatives`` and ``ensemble`` (Chimera). Where a model was trained on a prompt
(HY-MT1.5's terminology, context and formatted prompts; Chimera's fusion prompt) that exact text is
used; elsewhere a documented best-effort form is, and the result carries a notice saying so.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from hunyuan_webui import prompts
from hunyuan_webui.models import CONTEXT, FORMATTED, TERMINOLOGY, ModelSpec

TRANSLATE = "translate"
MODES = ("translate", "context", "formatted", "alternatives", "ensemble")
MODE_HELP = {
    "translate": "One translation per sentence (a glossary may be given).",
    "context": "Use surrounding text (`context`) to resolve pronouns and terms.",
    "formatted": "Keep inline markup (<b>, <i>, links, **emphasis**) in place.",
    "alternatives": "Several different translations of a short text, in one batch.",
    "ensemble": "Best quality: several candidates fused by Hunyuan-MT-Chimera.",
}
# Modes whose unit is the whole paragraph rather than the sentence.
PARAGRAPH_MODES = frozenset({"formatted", "alternatives", "ensemble"})
MAX_ALTERNATIVES = 6
ENSEMBLE_CANDIDATES = 4
# Decoding for the ensemble's candidates: one greedy, the rest sampled a little differently.
CANDIDATE_TEMPERATURES = (None, 0.7, 0.9, 1.1, 0.8, 1.0)

GLOSSARY_NOTICE = ("This model was not trained on glossaries: the terms were given to it in "
                   "HY-MT1.5's terminology wording as a best effort. Check the report below.")
CONTEXT_NOTICE = ("This model has no context prompt (HY-MT1.5 has): the context was not used.")
FORMAT_NOTICE = ("This model has no formatted-translation prompt (HY-MT1.5 has): markup was "
                 "protected with numbered tags as a best effort.")
FORMAT_BROKEN = ("The model did not keep the markup intact in {n} paragraph(s); those were "
                 "translated without markup.")


def translation_prompt(spec: ModelSpec, text: str, source: str, target: str,
                       glossary: tuple[tuple[str, str], ...] = (), context: str = "",
                       mode: str = TRANSLATE) -> str:
    """The user message for one segment in the plain, glossary or context modes."""
    if glossary:
        if spec.supports(TERMINOLOGY):
            return prompts.terminology_prompt(text, target, glossary, spec.family, source)
        # Best effort for models without a terminology prompt: the HY-MT1.5 glossary lines in
        # front of the model's own translation prompt.
        lines = prompts.terminology_prompt("", target, glossary).split("\n\n", 1)[0]
        return f"{lines}\n\n" + prompts.translation_prompt(text, source, target, spec.family)
    if mode == "context" and context.strip() and spec.supports(CONTEXT):
        return prompts.context_prompt(text, target, context, spec.family, source)
    return prompts.translation_prompt(text, source, target, spec.family)


def notices_for(spec: ModelSpec, mode: str, glossary: tuple[tuple[str, str], ...],
                context: str) -> list[str]:
    out = []
    if glossary and not spec.supports(TERMINOLOGY):
        out.append(GLOSSARY_NOTICE)
    if mode == "context" and context.strip() and not spec.supports(CONTEXT):
        out.append(CONTEXT_NOTICE)
    if mode == "formatted" and not spec.supports(FORMATTED):
        out.append(FORMAT_NOTICE)
    return out


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
