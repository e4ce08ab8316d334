"""The small JSON shapes browser extensions speak, each on its own path, each answered in its
documented shape; the texts of one request are translated together, in order
(:func:`hunyuan_webui.service.operations.items.translate_items`: tags and placeholders kept, the cache used).

- ``POST /imme``: Immersive Translate's custom API (its docs, immersive-translate/i18ns
  official/i18n/*/services/custom.md): ``{source_lang, target_lang, text_list}`` ->
  ``{"translations": [{"detected_source_lang", "text"}]}``.
- ``POST /kiss``: KISS Translator's custom API (fishjar/kiss-translator custom-api_v2.md,
  src/apis/trans.js ``genCustom``): ``{text, from, to}`` -> ``{"text", "src"}``, or
  ``{texts, from, to}`` -> ``[{"text", "src"}]``.
- ``POST /deeplx``: DeepLX's free endpoint (OwO-Network/DeepLX service/service.go):
  ``{text, source_lang, target_lang}`` -> ``{code, id, data, alternatives, source_lang,
  target_lang, method}``; errors as ``{code, message}``.
- ``POST /hcfy``: 划词翻译's custom translator (its shape as DeepLX-style servers implement it):
  ``{name, text, destination: [target, fallback], source?}`` with Chinese language names
  (``中文(简体)``, ``英语``...) -> ``{text, from, to, result: [translation]}``; the fallback target
  is used when the text is already in the first one.

Extensions often cannot set headers: besides ``Authorization: Bearer``, these paths take the key
as a ``token`` query parameter (as DeepLX does). The request log never records query strings.
"""

from __future__ import annotations

import random
from typing import Any

import anyio
from fastapi import APIRouter, Request

from hunyuan_webui import languages, tool_prompts
from hunyuan_webui.errors import InputError, TranslatorError, UnknownLanguageError
from hunyuan_webui.service import Translator
from hunyuan_webui.service.operations.items import ItemsResult, item_sources, translate_items
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols import deepl
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.protocols.schemas import MAX_LIST_ITEMS
from hunyuan_webui.web.responses import ShapedErrorRoute

PATHS = ("/imme", "/kiss", "/deeplx", "/hcfy")
HCFY_NAMES = {"zh": "中文(简体)", "zh-Hant": "中文(繁体)"}
# Immersive Translate and KISS Translator write Chinese as zh-CN and zh-TW.
BROWSER_CODES = {"zh": "zh-CN", "zh-Hant": "zh-TW"}


_TEXT = {"type": "string", "examples": ["Good morning."]}
_TEXTS = {"type": "array", "items": {"type": "string"}, "examples": [["Good morning."]]}
_LANG = {"type": "string", "examples": ["auto", "en", "zh-CN"]}
IMME_FIELDS = {"source_lang": _LANG, "target_lang": _LANG, "text_list": _TEXTS}
KISS_FIELDS = {"text": _TEXT, "texts": _TEXTS, "from": _LANG, "to": _LANG}
DEEPLX_FIELDS = {"text": _TEXT, "source_lang": {"type": "string", "examples": ["auto", "EN"]},
                 "target_lang": {"type": "string", "examples": ["ZH", "EN-US"]}}
HCFY_FIELDS = {"name": {"type": "string"}, "text": _TEXT,
               "destination": {"type": "array", "items": {"type": "string"},
                               "examples": [["中文(简体)", "英语"]]},
               "source": {"type": "string", "examples": ["英语"]}}


def _doc(fields: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    schema = {"type": "object", "properties": fields, "required": list(required)}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
            "parameters": [{"name": "token", "in": "query", "required": False,
                            "schema": {"type": "string"},
                            "description": "The API key, for extensions that cannot send "
                                           "headers."}]}


def _caller(request: Request) -> Caller:
    """A header key (checked and counted by the Gatekeeper), else the ``token`` parameter."""
    caller = getattr(request.state, "caller", None)
    if isinstance(caller, Caller):
        return caller
    access: AccessControl = request.app.state.access
    return access.check_key(request.query_params.get("token"))


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, RecursionError):
        raise InputError("Malformed JSON body.") from None
    if not isinstance(body, dict):
        raise InputError("The JSON body must be an object.")
    return body


def _texts(value: object, name: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(t, str) for t in value):
        raise InputError(f"'{name}' must be a non-empty list of strings.")
    if len(value) > MAX_LIST_ITEMS:
        raise InputError(f"Too many texts: at most {MAX_LIST_ITEMS} per request.")
    return value


def _code(value: object, name: str, auto: bool = False) -> str:
    """Our code for a language an extension names (a code such as zh-CN, or a name)."""
    text = str(value or "").strip()
    if auto and (not text or text.lower() == languages.AUTO):
        return languages.AUTO
    code = tool_prompts.language(text) if text else None
    if code is None:
        raise InputError(f"Unknown language for '{name}': {text!r}.")
    return code


async def _translate(translator: Translator, request: Request, who: Caller, texts: list[str],
                     target: str, source: str) -> ItemsResult:
    access: AccessControl = request.app.state.access
    access.charge(who, sum(len(t) for t in texts))
    done = await anyio.to_thread.run_sync(translate_items, translator, texts, target, source)
    for result in done.results:
        request.app.state.metrics.observe_result(result)
    return done


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """DeepLX's error: ``{"code", "message"}``."""
    return exc.http_status, {"code": exc.http_status, "message": exc.user_message}


def create_router(translator: Translator) -> APIRouter:
    # Errors as DeepLX writes them, ``{"code", "message"}``, on all four paths (the others
    # document no error shape).
    router = APIRouter(route_class=ShapedErrorRoute.shaped("ExtensionRoute", error_shape),
                       tags=["extensions"])

    @router.post("/imme", openapi_extra=_doc(IMME_FIELDS, ("text_list", "target_lang")))
    async def immersive(request: Request) -> dict[str, Any]:
        """Immersive Translate's custom API: source_lang, target_lang, text_list."""
        who = _caller(request)
        body = await _body(request)
        texts = _texts(body.get("text_list"), "text_list")
        target = _code(body.get("target_lang"), "target_lang")
        source = _code(body.get("source_lang"), "source_lang", auto=True)
        done = await _translate(translator, request, who, texts, target, source)
        return {"translations": [{"detected_source_lang": BROWSER_CODES.get(s, s), "text": t}
                                 for t, s in zip(done.texts, done.sources)]}

    @router.post("/kiss", response_model=None, openapi_extra=_doc(KISS_FIELDS, ("to",)))
    async def kiss(request: Request) -> dict[str, Any] | list[dict[str, Any]]:
        """KISS Translator's custom API: text (or texts), from, to."""
        who = _caller(request)
        body = await _body(request)
        single = "texts" not in body
        texts = [body.get("text")] if single else body.get("texts")
        texts = _texts(texts, "text" if single else "texts")
        target, source = _code(body.get("to"), "to"), _code(body.get("from"), "from", auto=True)
        done = await _translate(translator, request, who, texts, target, source)
        answers = [{"text": t, "src": BROWSER_CODES.get(s, s)}
                   for t, s in zip(done.texts, done.sources)]
        return answers[0] if single else answers

    @router.post("/deeplx", openapi_extra=_doc(DEEPLX_FIELDS, ("text", "target_lang")))
    async def deeplx(request: Request) -> dict[str, Any]:
        """DeepLX: text, source_lang, target_lang (DeepL's codes)."""
        who = _caller(request)
        body = await _body(request)
        [text] = _texts([body.get("text")], "text")
        target_code = str(body.get("target_lang") or "")
        if not target_code:
            raise InputError("Parameter 'target_lang' not specified.")
        given = str(body.get("source_lang") or "auto")
        source = languages.AUTO if given.lower() == "auto" else deepl.ours(given, "source_lang")
        target = deepl.ours(target_code, "target_lang")
        done = await _translate(translator, request, who, [text], target, source)
        return {"code": 200, "id": random.randrange(10**9, 10**10), "data": done.texts[0],
                "alternatives": [], "source_lang": deepl.source_code(done.sources[0]) if
                done.sources[0] else "", "target_lang": target_code.upper(), "method": "Free"}

    @router.post("/hcfy", openapi_extra=_doc(HCFY_FIELDS, ("text", "destination")))
    async def hcfy(request: Request) -> dict[str, Any]:
        """划词翻译: name, text, destination (Chinese language names), source."""
        return await _hcfy(translator, request)

    return router


async def _hcfy(translator: Translator, request: Request) -> dict[str, Any]:
    who = _caller(request)
    body = await _body(request)
    [text] = _texts([body.get("text")], "text")
    destination = body.get("destination")
    names = _texts([destination] if isinstance(destination, str) else destination, "destination")
    source = _code(body.get("source"), "source", auto=True)
    if source == languages.AUTO:
        found = await anyio.to_thread.run_sync(item_sources, translator, [text], source)
        source = found[0] or languages.AUTO
    targets = [_code(n, "destination") for n in names[:2]]
    target = targets[1] if len(targets) > 1 and targets[0] == source else targets[0]
    done = await _translate(translator, request, who, [text], target, source)
    return {"text": text, "from": _hcfy_name(done.sources[0] or source),
            "to": _hcfy_name(target), "result": [done.texts[0]]}


def _hcfy_name(code: str) -> str:
    if code == languages.AUTO:
        return ""
    try:
        return HCFY_NAMES.get(code) or languages.get(code).chinese
    except UnknownLanguageError:
        return code


PROTOCOL = Protocol("extensions", lambda edge: create_router(edge.translator),
                    key_in_body=frozenset({"/imme", "/kiss", "/deeplx", "/hcfy"}))  # ?token=
