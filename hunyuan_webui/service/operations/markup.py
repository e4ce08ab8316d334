"""HTML and XML text cut into what is translated and what is copied, for DeepL's
``tag_handling`` on every model.

Every tag, comment, processing instruction, doctype and CDATA section is copied as it is; so is
everything inside an ignored element (DeepL's ``ignore_tags``; in HTML also ``<script>``,
``<style>``, and any element with ``translate="no"``, as DeepL's HTML handling does). The text
between tags is unescaped (``&amp;`` -> ``&``) before it is translated and escaped again after,
so the answer has the same tags in the same order and is as well-formed as what was sent. Each
run of text between two tags is translated on its own (its sentences through the service as
usual), so a sentence cut by an inline tag is translated in parts; a model with HY-MT1.5's
formatted prompt translates each text whole first (:mod:`hunyuan_webui.web.protocols.deepl`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

import regex

from hunyuan_webui.segment import is_translatable
from hunyuan_webui.service.operations.items import Run

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
