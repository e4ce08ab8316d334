"""DeepL's API, spoken by the translator: ``POST /v2/translate``, ``GET|POST /v2/languages`` and
``GET|POST /v2/usage``, so that DeepL clients (the ``deepl`` library, PDF and subtitle tools with a
custom server URL) work unchanged.

DeepL's language codes map onto ours (``EN-US``/``EN-GB`` -> en, ``PT-BR``/``PT-PT`` -> pt,
``ZH``/``ZH-HANS`` -> zh, ``ZH-HANT`` -> zh-Hant, the rest by code); ``tag_handling=html|xml``
works on every model (:mod:`hunyuan_webui.service.operations.markup`: every tag kept, the text between translated;
``ignore_tags`` honoured; the formatted prompt first where the model has one); ``context`` becomes
the context mode. Keys come as ``Authorization: DeepL-Auth-Key K`` (or ``Bearer K``, or the old
``auth_key`` parameter) and go through the same key check and limits as every other route. Errors
are DeepL's: ``{"message": ...}`` with its status codes (403 for a bad key, 456 for a spent
character allowance, 429 for too many requests), converted in one place, :class:`DeepLRoute`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anyio
from fastapi import APIRouter, Request

from hunyuan_webui import languages
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import (
    AuthError,
    InputError,
    RateLimitError,
    TranslatorError,
    UnknownLanguageError,
)
from hunyuan_webui.models import FORMATTED, TRANSLATE
from hunyuan_webui.segment import is_translatable
from hunyuan_webui.service import TranslationRequest, TranslationResult, Translator
from hunyuan_webui.service.operations import items, markup
from hunyuan_webui.web.bodies import form_items, is_form, is_json, json_object
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.protocol import Protocol
from hunyuan_webui.web.responses import ShapedErrorRoute

MAX_TEXTS = 50  # DeepL's own limit on text parameters per request
UNLIMITED = 1_000_000_000_000  # what DeepL reports as the allowance of an unlimited plan

# Target languages DeepL splits into variants; each variant is the same language here.
TARGET_VARIANTS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (("EN-GB", "English (British)"), ("EN-US", "English (American)")),
    "pt": (("PT-BR", "Portuguese (Brazilian)"), ("PT-PT", "Portuguese (European)")),
    "zh": (("ZH-HANS", "Chinese (simplified)"),),
    "zh-Hant": (("ZH-HANT", "Chinese (traditional)"),),
}
_FROM_VARIANT = {code: ours for ours, variants in TARGET_VARIANTS.items() for code, _ in variants}
# DeepL's source codes carry no variant: ZH is Chinese in either script.
SOURCE_CODES = {"zh-Hant": "ZH"}
FORMALITY_OK = ("default", "prefer_more", "prefer_less")


def ours(code: str, param: str) -> str:
    """Our code for a DeepL code (any case), or DeepL's 400 for the parameter."""
    key = code.strip().upper()
    if key in _FROM_VARIANT:
        return _FROM_VARIANT[key]
    try:
        return languages.normalize(key)
    except UnknownLanguageError:
        raise InputError(f"Value for '{param}' not supported.") from None


def source_code(code: str) -> str:
    """DeepL's spelling of a source language (``detected_source_language``)."""
    if code == languages.AUTO:
        return ""
    return SOURCE_CODES.get(code, code.upper())


def source_languages() -> list[dict[str, Any]]:
    return [{"language": source_code(lang.code), "name": lang.english}
            for lang in languages.LANGUAGES if lang.code not in SOURCE_CODES]


def target_languages() -> list[dict[str, Any]]:
    out = []
    for lang in languages.LANGUAGES:
        for code, name in TARGET_VARIANTS.get(lang.code, ((lang.code.upper(), lang.english),)):
            out.append({"language": code, "name": name, "supports_formality": False})
    return out


# -- requests --------------------------------------------------------------------------------------
async def _params(request: Request) -> dict[str, list[Any]]:
    """DeepL's clients send JSON or forms (the ``deepl`` library even sends a form body with a
    GET), old ones query strings: every parameter as a list of values."""
    params: dict[str, list[Any]] = {}
    for key, value in request.query_params.multi_items():
        params.setdefault(key, []).append(value)
    content_type = request.headers.get("content-type", "")
    if is_json(content_type):
        for key, value in (await json_object(request)).items():
            params[key] = value if isinstance(value, list) else [value]
    elif is_form(content_type):
        form: dict[str, list[Any]] = {}
        for key, value in await form_items(request):
            form.setdefault(key, []).append(value)
        params.update(form)
    return params


def _one(params: dict[str, list[Any]], name: str) -> str | None:
    values = params.get(name)
    if not values or values[0] is None:
        return None
    if not isinstance(values[0], str):
        raise InputError(f"Value for '{name}' not supported.")
    return values[0]


def _caller(request: Request, params: dict[str, list[Any]]) -> Caller:
    """The key from DeepL's header (or a Bearer token, or the old auth_key parameter), checked
    like every other route's."""
    caller = getattr(request.state, "caller", None)
    if isinstance(caller, Caller):  # a header key, which the Gatekeeper checked and counted
        return caller
    access: AccessControl = request.app.state.access
    return access.check_key(params["auth_key"][0] if params.get("auth_key") else None)


class QuotaExceededError(RateLimitError):
    """A key's characters for today are spent: DeepL's 456, which its clients do not retry."""

    http_status = 456


def _charge(request: Request, who: Caller, chars: int) -> None:
    access: AccessControl = request.app.state.access
    try:
        access.charge(who, chars)
    except RateLimitError as exc:
        raise QuotaExceededError(exc.user_message, exc.retry_after) from None


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """DeepL's error: ``{"message": ...}``, 403 for a missing or wrong key."""
    return (403 if isinstance(exc, AuthError) else exc.http_status), {"message": exc.user_message}


# Every error of these routes in DeepL's shape, ``{"message": ...}``.
DeepLRoute = ShapedErrorRoute.shaped("DeepLRoute", error_shape)


def _body_doc(fields: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
    schema = {"type": "object", "properties": fields, "required": list(required)}
    return {"requestBody": {"required": bool(required), "content": {
        "application/json": {"schema": schema},
        "application/x-www-form-urlencoded": {"schema": schema}}}}


_TEXTS = {"type": "array", "items": {"type": "string"}, "examples": [["Hello, world!"]]}
TRANSLATE_FIELDS = {
    "text": _TEXTS, "target_lang": {"type": "string", "examples": ["DE", "EN-US", "ZH-HANS"]},
    "source_lang": {"type": "string", "examples": ["EN"]},
    "tag_handling": {"type": "string", "enum": ["html", "xml"]},
    "context": {"type": "string"}, "formality": {"type": "string"},
    "ignore_tags": {"type": "array", "items": {"type": "string"}},
    "non_splitting_tags": {"type": "array", "items": {"type": "string"}},
    "splitting_tags": {"type": "array", "items": {"type": "string"}},
    "outline_detection": {"type": "boolean"},
}


# -- the routes ------------------------------------------------------------------------------------
def create_router(translator: Translator) -> APIRouter:
    router = APIRouter(route_class=DeepLRoute, tags=["deepl"])

    @router.post("/v2/translate", openapi_extra=_body_doc(TRANSLATE_FIELDS,
                                                          ("text", "target_lang")))
    async def deepl_translate(request: Request) -> dict[str, Any]:
        """DeepL's /v2/translate: several ``text`` values, DeepL's language codes."""
        params = await _params(request)
        who = _caller(request, params)
        texts = _texts(params)
        target_code = _one(params, "target_lang")
        if not target_code:
            raise InputError("Parameter 'target_lang' not specified.")
        target = ours(target_code, "target_lang")
        given = _one(params, "source_lang")
        source = ours(given, "source_lang") if given else languages.AUTO
        mode, context = _mode(params)
        tags = _tag_handling(params)
        _charge(request, who, sum(len(t) for t in texts))

        def translate_all() -> tuple[list[tuple[str, str]], list[TranslationResult]]:
            # detection too: off the event loop
            greedy = translator.decoding(deterministic=True)  # the model's repetition penalty
            if tags:
                return _translate_markup(translator, texts, source, target, greedy, params,
                                         context)
            sources = _sources(translator, texts, source)
            results = translator.translate_many([
                TranslationRequest(text=t, source_lang=s, target_lang=target, options=greedy,
                                   mode=mode, context=context) for t, s in zip(texts, sources)])
            return [(r.text, r.source_lang) for r in results], results

        answers, results = await anyio.to_thread.run_sync(translate_all)
        for result in results:
            request.app.state.metrics.observe_result(result)
        return {"translations": [
            {"detected_source_language": source_code(s or languages.AUTO), "text": a,
             "billed_characters": len(t)} for t, (a, s) in zip(texts, answers)]}

    @router.get("/v2/languages")
    @router.post("/v2/languages", operation_id="deepl_languages_post")
    async def deepl_languages(request: Request) -> list[dict[str, Any]]:
        """DeepL's /v2/languages: ``type=source`` (default) or ``type=target``."""
        kind = _one(await _params(request), "type") or "source"
        if kind not in ("source", "target"):
            raise InputError("Value for 'type' not supported.")
        return source_languages() if kind == "source" else target_languages()

    @router.get("/v2/usage")
    @router.post("/v2/usage", operation_id="deepl_usage_post")
    async def deepl_usage(request: Request) -> dict[str, int]:
        """DeepL's /v2/usage: this key's characters today (UTC) and its daily allowance."""
        params = await _params(request)
        who = _caller(request, params)
        access: AccessControl = request.app.state.access
        return {"character_count": access.chars_today(who),
                "character_limit": who.policy.chars_per_day or UNLIMITED}

    return router


def _texts(params: dict[str, list[Any]]) -> list[str]:
    texts = params.get("text") or []
    if not texts:
        raise InputError("Parameter 'text' not specified.")
    if not all(isinstance(t, str) for t in texts):
        raise InputError("Value for 'text' not supported.")
    if len(texts) > MAX_TEXTS:
        raise InputError(f"Too many texts: at most {MAX_TEXTS} per request.")
    return texts


def _mode(params: dict[str, list[Any]]) -> tuple[str, str]:
    """The translation mode and context DeepL's parameters ask for."""
    formality = _one(params, "formality")
    if formality and formality.lower() not in FORMALITY_OK:
        if formality.lower() in ("more", "less"):
            raise InputError("'formality' is not supported for given 'target_lang'.")
        raise InputError("Value for 'formality' not supported.")
    if params.get("glossary_id") or params.get("glossary_ids"):
        raise InputError("Glossaries are not kept here. This server's own API takes term "
                         "pairs: POST /v1/translate with options.glossary.")
    context = _one(params, "context") or ""
    return ("context" if context.strip() else TRANSLATE), context


def _tag_handling(params: dict[str, list[Any]]) -> str:
    """``html``, ``xml`` or "" (plain text); the markup parameters checked."""
    tags = _one(params, "tag_handling") or ""
    if tags and tags not in ("html", "xml"):
        raise InputError("Value for 'tag_handling' not supported.")
    outline = params.get("outline_detection")
    if outline and str(outline[0]).lower() not in ("0", "1", "true", "false"):
        raise InputError("Value for 'outline_detection' not supported.")
    for name in ("ignore_tags", "splitting_tags", "non_splitting_tags"):
        if not all(isinstance(v, str) for v in params.get(name) or []):
            raise InputError(f"Value for '{name}' not supported.")
    return tags


def _translate_markup(translator: Translator, texts: list[str], source: str, target: str,
                      options: DecodingOptions, params: dict[str, list[Any]],
                      context: str) -> tuple[list[tuple[str, str]], list[TranslationResult]]:
    """Markup on any model: tags and ignored elements copied, the text between them translated.
    A model with the formatted prompt translates each text whole first (in context); a text
    whose tags did not all come back is translated run by run instead."""
    html_mode = _one(params, "tag_handling") == "html"
    ignore = markup.tag_names(params.get("ignore_tags"))
    ignore = frozenset(t.lower() for t in ignore) if html_mode else ignore
    cut = [markup.runs(t, html_mode, ignore) for t in texts]
    sources = items.item_sources(translator, cut, source)
    out: list[str | None] = [t if not s else None for t, s in zip(texts, sources)]
    results: list[TranslationResult] = []
    if translator.spec.supports(FORMATTED) and not ignore:
        todo = [i for i, o in enumerate(out) if o is None]
        results = translator.translate_many([TranslationRequest(
            text=texts[i], source_lang=sources[i], target_lang=target, options=options,
            mode=FORMATTED) for i in todo])
        for i, result in zip(todo, results):
            if markup.tag_sequence(result.text) == markup.tag_sequence(texts[i]):
                out[i] = result.text
    todo = [i for i, o in enumerate(out) if o is None]
    done = items.translate_runs(translator, [cut[i] for i in todo], [sources[i] for i in todo],
                                target, options, context=context)
    for i, text in zip(todo, done.texts):
        out[i] = text
    return [(o or "", s) for o, s in zip(out, sources)], [*results, *done.results]


def _sources(translator: Translator, texts: list[str], source: str) -> list[str]:
    """The source language of each text: the given one, else each text's own; a text too short to
    tell (a number, a name) takes the language of all the texts together."""
    if source != languages.AUTO:
        return [source] * len(texts)
    together: str | None = None
    out = []
    for text in texts:
        code = translator.detect(text).code if text.strip() else None
        if code is None and text.strip():
            if together is None:
                together = translator.detect("\n".join(texts)).code or ""
            if not together and is_translatable(text):  # "12345" alone is echoed, as DeepL does
                raise InputError("Could not detect the source language; send source_lang.")
            code = together
        out.append(code or languages.AUTO)
    return out


PROTOCOL = Protocol("deepl", lambda edge: create_router(edge.translator),
                    key_in_body=frozenset({"/v2/translate", "/v2/usage", "/v2/languages"}),
                    error_prefixes=("/v2/",), error_shape=error_shape)  # DeepL's older auth_key
