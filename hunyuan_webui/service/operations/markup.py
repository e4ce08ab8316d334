"""HTML and XML text cut into what is translated and what is copied, for DeepL's
``tag_handling`` on every model.

Every tag, comment, processing instruction, doctype and CDATA section is copied as it is; so is
everything inside an ignored element (DeepL's ``ignore_tags``; in HTML also ``<script>``,
``<style>``, and any element with ``translate="no"``, as DeepL's HTML handling does). The text
between tags is unescaped (``&amp;`` -> ``&``) before it is translated and escaped again after,
so the answer has the same tags in the same order and is as well-formed as what was sent. Each
run of text between two tags is translated on its own (its sentences through the service as
usual), so a sentence cut by an inline tag is translated in parts; a model with HY-MT1.5's
formatted prompt translates each text whole first (:func:`translate_markup`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import regex

from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.models import FORMATTED
from hunyuan_webui.segment import is_translatable
from hunyuan_webui.service.door.translator import Translator
from hunyuan_webui.service.operations import items
from hunyuan_webui.service.operations.items import Run
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult

TAG = regex.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<![^<>]*>"
                    r"|<(?P<close>/)?(?P<name>[A-Za-z_][\w:.-]*)(?P<attrs>[^<>]*?)(?P<empty>/)?>",
                    regex.S)
_NO_TRANSLATE = regex.compile(r"""\btranslate\s*=\s*["']?no\b""", regex.I)
HTML_RAW = frozenset({"script", "style"})  # raw text up to their end tag
HTML_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                       "param", "source", "track", "wbr"})


def tag_names(value: Iterable[str] | str | None) -> frozenset[str]:
    """DeepL's tag lists: comma-separated, or several values."""
    if value is None:
        return frozenset()
    values = [value] if isinstance(value, str) else list(value)
    return frozenset(n.strip() for v in values for n in str(v).split(",") if n.strip())


def runs(text: str, html_mode: bool = True, ignore: frozenset[str] = frozenset()) -> list[Run]:
    """``text`` as runs: tags and ignored content copied, text between tags to translate."""
    out: list[Run] = []
    ignoring: list[str] = []  # the open ignored elements, innermost last
    pos = 0

    def text_run(chunk: str) -> None:
        plain = html.unescape(chunk)
        out.append(Run(plain, True, escape=True) if not ignoring and is_translatable(plain)
                   else Run(chunk, False))

    while (match := TAG.search(text, pos)) is not None:
        if match.start() > pos:
            text_run(text[pos:match.start()])
        pos = match.end()
        name = match["name"]
        key = (name.lower() if html_mode else name) if name else ""
        if html_mode and key in HTML_RAW and not match["close"] and not match["empty"]:
            end = regex.compile(rf"</{key}\s*>", regex.I).search(text, pos)  # raw text to there
            pos = end.end() if end else len(text)
            out.append(Run(text[match.start():pos], False))
            continue
        out.append(Run(match.group(0), False))
        if not name or match["empty"] or (html_mode and key in HTML_VOID):
            continue
        if match["close"]:
            if key in ignoring:  # closes it and anything left open inside
                del ignoring[len(ignoring) - 1 - ignoring[::-1].index(key):]
        elif ignoring or key in ignore or (html_mode and _NO_TRANSLATE.search(match["attrs"])):
            ignoring.append(key)
    if pos < len(text):
        text_run(text[pos:])
    return out


def tag_sequence(text: str) -> list[str]:
    """The tags of ``text`` in order (to check that a translation kept them all)."""
    return [m.group(0) for m in TAG.finditer(text)]


def translate_markup(translator: Translator, texts: list[str], source: str, target: str,
                     options: DecodingOptions, html_mode: bool,
                     ignore: frozenset[str] = frozenset(), context: str = ""
                     ) -> tuple[list[tuple[str, str]], list[TranslationResult]]:
    """Markup on any model: tags and ignored elements copied, the text between them translated;
    each text's translation and source language, and the service's results. A model with the
    formatted prompt translates each text whole first (in context); a text whose tags did not
    all come back is translated run by run instead."""
    cut = [runs(translator.check_length(t), html_mode, ignore) for t in texts]
    sources = items.item_sources(translator, cut, source)
    out: list[str | None] = [t if not s else None for t, s in zip(texts, sources)]
    results: list[TranslationResult] = []
    if translator.spec.supports(FORMATTED) and not ignore:
        todo = [i for i, o in enumerate(out) if o is None]
        results = translator.translate_many([TranslationRequest(
            text=texts[i], source_lang=sources[i], target_lang=target, options=options,
            mode=FORMATTED) for i in todo])
        for i, result in zip(todo, results):
            if tag_sequence(result.text) == tag_sequence(texts[i]):
                out[i] = result.text
    todo = [i for i, o in enumerate(out) if o is None]
    done = items.translate_runs(translator, [cut[i] for i in todo], [sources[i] for i in todo],
                                target, options, context=context)
    for i, text in zip(todo, done.texts):
        out[i] = text
    return [(o or "", s) for o, s in zip(out, sources)], [*results, *done.results]
