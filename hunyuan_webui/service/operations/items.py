"""Several short texts a tool sent together (a page's paragraphs, a subtitle's lines, a JSON
array's strings), translated in one batch and given back item for item, in order.

What a tool inserted into its texts is copied, never sent to the model: inline tags (``<b>``,
``</b0>``, ``<br/>``), placeholders (``{v1}``, ``{{1}}``, ``{name}``, ``${x}``, ``%s``,
``[[1]]``), text in backticks, ``<code>``/``<pre>`` blocks and the ``%%`` separator of Immersive
Translate's multi-paragraph prompt. The text between them is translated through the service as
usual (sentence segments, the phrase cache, in-flight sharing), so every tag comes back, in the
same order, and the result is as well-formed as what was sent. The price: a sentence cut by a tag
is translated in parts.

One source language is found per item (given, else detected); an item too short to tell (a name,
a number) takes the language of all the items together, as DeepL's route does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from hunyuan_webui import languages
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import InputError, InputTooLongError
from hunyuan_webui.models import CONTEXT, TERMINOLOGY, TRANSLATE
from hunyuan_webui.segment import is_translatable
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult
from hunyuan_webui.service.translate.translator import Translator

KEPT = regex.compile(
    r"<(?P<block>code|pre)\b[^<>]*>.*?</(?P=block)\s*>"  # code is never translated
    r"|</?[A-Za-z][\w:.-]*(?:\s[^<>]*)?/?>"  # tags: <b>, </b0>, <a href=...>, <br/>
    r"|<!--.*?-->"
    r"|\{\{[^{}\n]*\}\}|\$\{[\w.]+\}|\{[\w.*]*\}"  # {{1}}, ${name}, {v1}, {0}, {}
    r"|%(?:\d+\$)?[sdif@]|%%"  # printf slots; Immersive Translate's paragraph separator
    r"|\[\[[^\[\]\n]*\]\]"  # [[1]]
    r"|`[^`\n]+`",  # code spans
    regex.S | regex.I,
)
TERMS_UNUSED = ("This model has no terminology prompt (HY-MT1.5 and Hy-MT2 have): the terms "
                "were not used.")
CONTEXT_UNUSED = ("This model has no context prompt (HY-MT1.5 and Hy-MT2 have): the domain or "
                  "context was not used.")


@dataclass(frozen=True)
class Run:
    text: str
    translate: bool
    escape: bool = False  # markup text: its translation is escaped (&, <, >) on the way back


def runs(text: str) -> list[Run]:
    """``text`` cut at what is kept verbatim: the runs in order, joined they are ``text``."""
    out: list[Run] = []
    pos = 0
    for match in KEPT.finditer(text):
        if match.start() > pos:
            out.append(Run(text[pos:match.start()], True))
        out.append(Run(match.group(0), False))
        pos = match.end()
    if pos < len(text):
        out.append(Run(text[pos:], True))
    return [r if not r.translate or is_translatable(r.text) else Run(r.text, False) for r in out]


def has_kept(text: str) -> bool:
    """Does ``text`` hold a tag or placeholder that :func:`translate_items` keeps verbatim?"""
    return KEPT.search(text) is not None


@dataclass
class ItemsResult:
    """The translations, item for item, and what the service reported for their pieces."""

    texts: list[str]
    sources: list[str]  # each item's source language code ("" for an item with no text)
    target: str
    results: list[TranslationResult] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    @property
    def cached(self) -> bool:
        """True when no piece needed the model."""
        return all(r.cached for r in self.results)

    @property
    def usage(self) -> dict[str, int]:
        prompt = sum(r.usage.get("prompt_tokens") or 0 for r in self.results)
        completion = sum(r.usage.get("completion_tokens") or 0 for r in self.results)
        return {"prompt_tokens": prompt, "completion_tokens": completion,
                "total_tokens": prompt + completion}

    def info(self) -> dict[str, Any]:
        """What was done, for an answer's ``translation`` object."""
        known = [s for s in self.sources if s]
        info: dict[str, Any] = {
            "source_lang": known[0] if len(set(known)) == 1 else known, "target_lang": self.target,
            "cached": self.cached, "items": len(self.texts),
            "segments": sum(r.segments for r in self.results),
            "cached_segments": sum(r.cached_segments for r in self.results)}
        notices = [*self.notices, *(r.notice for r in self.results if r.notice)]
        if notices:
            info["notice"] = " ".join(dict.fromkeys(notices))
        return info


def item_sources(translator: Translator, items: Sequence[str] | Sequence[Sequence[Run]],
                 source: str) -> list[str]:
    """The source language of each item (a text, or a text already cut into runs): ``source``
    unless it is ``auto``, else each item's own, else (too short to tell) all the items'
    together; "" for an item with nothing to translate."""
    if source != languages.AUTO:
        return [languages.normalize(source)] * len(items)
    texts = ["".join(r.text for r in (runs(item) if isinstance(item, str) else item)
                     if r.translate) for item in items]
    together: str | None = None
    out = []
    for text in texts:
        if not text.strip():
            out.append("")
            continue
        code = translator.detect(text).code
        if code is None:
            if together is None:
                together = translator.detect("\n".join(texts)).code or ""
            if not together:
                raise InputError("Could not detect the source language; please send it.")
            code = together
        out.append(code)
    return out


def usable(translator: Translator, glossary: Sequence[tuple[str, str]],
           context: str) -> tuple[tuple[tuple[str, str], ...], str, list[str]]:
    """The glossary and context the loaded model has a prompt for, and notices for the rest."""
    notices = []
    if glossary and not translator.spec.supports(TERMINOLOGY):
        notices.append(TERMS_UNUSED)
        glossary = ()
    if context.strip() and not translator.spec.supports(CONTEXT):
        notices.append(CONTEXT_UNUSED)
        context = ""
    return tuple(glossary), context, notices


def request_for(translator: Translator, text: str, target: str, source: str,
                options: DecodingOptions, glossary: Sequence[tuple[str, str]] = (),
                context: str = "") -> TranslationRequest:
    """One plain text as a :class:`TranslationRequest` (its source found as for an item)."""
    glossary, context, _ = usable(translator, glossary, context)
    [found] = item_sources(translator, [text], languages.normalize_source(source))
    return TranslationRequest(text=text, target_lang=target, source_lang=found or source,
                              options=options, mode=CONTEXT if context.strip() else TRANSLATE,
                              glossary=glossary, context=context)


def translate_items(translator: Translator, items: Sequence[str], target: str,
                    source: str = languages.AUTO, options: DecodingOptions | None = None,
                    glossary: Sequence[tuple[str, str]] = (),
                    context: str = "") -> ItemsResult:
    """Translate ``items`` together (their pieces share the engine's batches) into ``target``;
    the glossary and context are used where the loaded model has a prompt for them."""
    limit = translator.settings.max_input_chars
    if sum(len(item) for item in items) > limit:
        raise InputTooLongError(f"The texts are {sum(len(i) for i in items):,} characters long "
                                f"together; the limit is {limit:,}. Send fewer at a time.")
    cut = [runs(item) for item in items]
    sources = item_sources(translator, cut, languages.normalize_source(source))
    return translate_runs(translator, cut, sources, target, options, glossary, context)


def translate_runs(translator: Translator, cut: Sequence[Sequence[Run]], sources: Sequence[str],
                   target: str, options: DecodingOptions | None = None,
                   glossary: Sequence[tuple[str, str]] = (), context: str = "") -> ItemsResult:
    """Translate the translatable runs of every item together, each item from its source, and
    join each item's runs again."""
    target = languages.normalize(target)
    glossary, context, notices = usable(translator, glossary, context)
    options = options or translator.decoding(deterministic=True)
    mode = CONTEXT if context.strip() else TRANSLATE
    requests = [TranslationRequest(text=r.text, source_lang=src or languages.AUTO,
                                   target_lang=target, options=options, mode=mode,
                                   glossary=glossary, context=context)
                for pieces, src in zip(cut, sources) for r in pieces if r.translate]
    results = translator.translate_many(requests) if requests else []
    done = iter(results)
    texts = ["".join(_back(next(done).text, r) if r.translate else r.text for r in pieces)
             for pieces in cut]
    return ItemsResult(texts, list(sources), target, results, notices)


def _back(translation: str, run: Run) -> str:
    if run.escape:
        return translation.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return translation
