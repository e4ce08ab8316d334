"""The extensions' shapes onto the service: the texts of one request are translated together, in
order, through :func:`~hunyuan_webui.service.operations.items.translate_items` (the front door;
tags and placeholders kept, the cache used), each extension's language names and codes read as
ours, and the answers given in each extension's documented shape."""

from __future__ import annotations

import random
from typing import Any

import anyio

from hunyuan_webui import languages, tool_prompts
from hunyuan_webui.errors import InputError, UnknownLanguageError
from hunyuan_webui.service.operations.items import ItemsResult, item_sources, translate_items
from hunyuan_webui.web.deps import Edge
from hunyuan_webui.web.guards.access import Caller
from hunyuan_webui.web.protocols.deepl import mapping as deepl
from hunyuan_webui.web.protocols.protocol import MAX_LIST_ITEMS


def texts_of(value: object, name: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise InputError(f"'{name}' must be a non-empty list of strings.")
    if len(value) > MAX_LIST_ITEMS:
        raise InputError(f"Too many texts: at most {MAX_LIST_ITEMS} per request.")
    return value


def code_of(value: object, name: str, auto: bool = False) -> str:
    """Our code for a language an extension names (a code such as zh-CN, or a name)."""
    text = str(value or "").strip()
    if auto and (not text or text.lower() == languages.AUTO):
        return languages.AUTO
    code = tool_prompts.language(text) if text else None
    if code is None:
        raise InputError(f"Unknown language for '{name}': {text!r}.")
    return code


async def translate(edge: Edge, who: Caller, texts: list[str], target: str,
                    source: str) -> ItemsResult:
    edge.access.charge(who, sum(len(t) for t in texts))
    done = await anyio.to_thread.run_sync(translate_items, edge.translator, texts, target, source)
    for result in done.results:
        edge.metrics.observe_result(result)
    return done


def browser_code(code: str) -> str:
    """Immersive Translate's and KISS Translator's spelling (zh-CN, zh-TW): the row's."""
    row = languages.BY_CODE.get(code)
    return (row.browser_code or code) if row is not None else code


def imme_answer(done: ItemsResult) -> dict[str, Any]:
    return {"translations": [{"detected_source_lang": browser_code(s), "text": t}
                             for t, s in zip(done.texts, done.sources)]}


def kiss_answers(done: ItemsResult) -> list[dict[str, Any]]:
    return [{"text": t, "src": browser_code(s)} for t, s in zip(done.texts, done.sources)]


def deeplx_languages(body: dict[str, Any]) -> tuple[str, str, str]:
    """DeepLX's ``source_lang`` and ``target_lang`` (DeepL's codes) as ours, and the target as
    sent."""
    target_code = str(body.get("target_lang") or "")
    if not target_code:
        raise InputError("Parameter 'target_lang' not specified.")
    given = str(body.get("source_lang") or "auto")
    source = languages.AUTO if given.lower() == "auto" else deepl.ours(given, "source_lang")
    return source, deepl.ours(target_code, "target_lang"), target_code


def deeplx_answer(done: ItemsResult, target_code: str) -> dict[str, Any]:
    return {"code": 200, "id": random.randrange(10**9, 10**10), "data": done.texts[0],
            "alternatives": [], "source_lang": deepl.source_code(done.sources[0]) if
            done.sources[0] else "", "target_lang": target_code.upper(), "method": "Free"}


async def hcfy(edge: Edge, who: Caller, body: dict[str, Any]) -> dict[str, Any]:
    """划词翻译's request: the fallback target is used when the text is already in the first."""
    [text] = texts_of([body.get("text")], "text")
    destination = body.get("destination")
    names = texts_of([destination] if isinstance(destination, str) else destination, "destination")
    source = code_of(body.get("source"), "source", auto=True)
    if source == languages.AUTO:
        found = await anyio.to_thread.run_sync(item_sources, edge.translator, [text], source)
        source = found[0] or languages.AUTO
    targets = [code_of(n, "destination") for n in names[:2]]
    target = targets[1] if len(targets) > 1 and targets[0] == source else targets[0]
    done = await translate(edge, who, [text], target, source)
    return {"text": text, "from": _hcfy_name(done.sources[0] or source),
            "to": _hcfy_name(target), "result": [done.texts[0]]}


def _hcfy_name(code: str) -> str:
    if code == languages.AUTO:
        return ""
    try:
        row = languages.get(code)
        return row.hcfy_name or row.chinese
    except UnknownLanguageError:
        return code
