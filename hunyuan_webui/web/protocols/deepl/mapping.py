"""DeepL's protocol onto the service's front door: DeepL's language codes onto ours (``EN-US``/
``EN-GB`` -> en, ``PT-BR``/``PT-PT`` -> pt, ``ZH``/``ZH-HANS`` -> zh, ``ZH-HANT`` -> zh-Hant, the
rest by code), its parameters onto a mode (``context`` becomes the context mode), its texts onto
requests (each text's source detected, a too-short one taking all the texts' language), markup
(``tag_handling=html|xml``) onto
:func:`~hunyuan_webui.service.operations.markup.translate_markup`, and the results onto DeepL's
``translations``."""

from __future__ import annotations

from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, UnknownLanguageError
from hunyuan_webui.models import TRANSLATE
from hunyuan_webui.segment import is_translatable
from hunyuan_webui.service import TranslationRequest, TranslationResult, Translator
from hunyuan_webui.service.operations import markup
from hunyuan_webui.web.protocols.deepl.schemas import MAX_TEXTS, one

# DeepL's codes are each row's (Language.deepl_source, Language.deepl_targets): DeepL splits some
# targets into variants, each the same language here; its source codes carry no variant (ZH is
# Chinese in either script).


def _from_variant() -> dict[str, str]:
    return {code: lang.code for lang in languages.LANGUAGES
            for code, _ in lang.deepl_targets}


FORMALITY_OK = ("default", "prefer_more", "prefer_less")


def ours(code: str, param: str) -> str:
    """Our code for a DeepL code (any case), or DeepL's 400 for the parameter."""
    key = code.strip().upper()
    variants = _from_variant()
    if key in variants:
        return variants[key]
    try:
        return languages.normalize(key)
    except UnknownLanguageError:
        raise InputError(f"Value for '{param}' not supported.") from None


def source_code(code: str) -> str:
    """DeepL's spelling of a source language (``detected_source_language``)."""
    if code == languages.AUTO:
        return ""
    row = languages.BY_CODE.get(code)
    return row.deepl_source_code if row is not None else code.upper()


def source_languages() -> list[dict[str, Any]]:
    """Each DeepL source code once (zh-Hant's is Chinese's ZH), named by its first row."""
    out: dict[str, dict[str, Any]] = {}
    for lang in languages.LANGUAGES:
        out.setdefault(lang.deepl_source_code, {"language": lang.deepl_source_code,
                                                "name": lang.english})
    return list(out.values())


def target_languages() -> list[dict[str, Any]]:
    out = []
    for lang in languages.LANGUAGES:
        for code, name in lang.deepl_target_codes:
            out.append({"language": code, "name": name, "supports_formality": False})
    return out


def texts_of(params: dict[str, list[Any]]) -> list[str]:
    texts = params.get("text") or []
    if not texts:
        raise InputError("Parameter 'text' not specified.")
    if not all(isinstance(t, str) for t in texts):
        raise InputError("Value for 'text' not supported.")
    if len(texts) > MAX_TEXTS:
        raise InputError(f"Too many texts: at most {MAX_TEXTS} per request.")
    return texts


def parse_mode(params: dict[str, list[Any]]) -> tuple[str, str]:
    """The translation mode and context DeepL's parameters ask for."""
    formality = one(params, "formality")
    if formality and formality.lower() not in FORMALITY_OK:
        if formality.lower() in ("more", "less"):
            raise InputError("'formality' is not supported for given 'target_lang'.")
        raise InputError("Value for 'formality' not supported.")
    if params.get("glossary_id") or params.get("glossary_ids"):
        raise InputError("Glossaries are not kept here. This server's own API takes term "
                         "pairs: POST /v1/translate with options.glossary.")
    context = one(params, "context") or ""
    return ("context" if context.strip() else TRANSLATE), context


def tag_handling(params: dict[str, list[Any]]) -> str:
    """``html``, ``xml`` or "" (plain text); the markup parameters checked."""
    tags = one(params, "tag_handling") or ""
    if tags and tags not in ("html", "xml"):
        raise InputError("Value for 'tag_handling' not supported.")
    outline = params.get("outline_detection")
    if outline and str(outline[0]).lower() not in ("0", "1", "true", "false"):
        raise InputError("Value for 'outline_detection' not supported.")
    for name in ("ignore_tags", "splitting_tags", "non_splitting_tags"):
        if not all(isinstance(v, str) for v in params.get(name) or []):
            raise InputError(f"Value for '{name}' not supported.")
    return tags


def _ignored(params: dict[str, list[Any]], tags: str) -> frozenset[str]:
    """DeepL's ``ignore_tags`` (HTML's names in any case)."""
    ignore = markup.tag_names(params.get("ignore_tags"))
    return frozenset(t.lower() for t in ignore) if tags == "html" else ignore


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


def translate(translator: Translator, params: dict[str, list[Any]], texts: list[str],
              source: str, target: str) -> tuple[list[tuple[str, str]], list[TranslationResult]]:
    """Each text's translation and source language, and the service's results (the parameters
    checked already: :func:`parse_mode`, :func:`tag_handling`). Detection and the model's work:
    call it off the event loop."""
    mode, context = parse_mode(params)
    tags = tag_handling(params)
    greedy = translator.decoding(deterministic=True)  # the model's repetition penalty
    if tags:
        return markup.translate_markup(translator, texts, source, target, greedy,
                                       tags == "html", _ignored(params, tags), context)
    sources = _sources(translator, texts, source)
    results = translator.translate_many([
        TranslationRequest(text=t, source_lang=s, target_lang=target, options=greedy,
                           mode=mode, context=context) for t, s in zip(texts, sources)])
    return [(r.text, r.source_lang) for r in results], results


def answer(texts: list[str], answers: list[tuple[str, str]]) -> dict[str, Any]:
    return {"translations": [
        {"detected_source_language": source_code(s or languages.AUTO), "text": a,
         "billed_characters": len(t)} for t, (a, s) in zip(texts, answers)]}
