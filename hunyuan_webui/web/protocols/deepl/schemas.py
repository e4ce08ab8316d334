"""DeepL's schemas: its parameters (JSON, forms or query strings, every parameter a list of
values), their documentation for the OpenAPI page, and DeepL's error shape, ``{"message": ...}``
with its status codes (403 for a bad key, 456 for a spent character allowance, 429 for too many
requests), which every error of these routes takes (:data:`DeepLRoute`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fastapi import Request

from hunyuan_webui.errors import AuthError, InputError, RateLimitError, TranslatorError
from hunyuan_webui.web.bodies import form_items, is_form, is_json, json_object
from hunyuan_webui.web.responses import ShapedErrorRoute

MAX_TEXTS = 50  # DeepL's own limit on text parameters per request
UNLIMITED = 1_000_000_000_000  # what DeepL reports as the allowance of an unlimited plan


async def read_params(request: Request) -> dict[str, list[Any]]:
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


def one(params: dict[str, list[Any]], name: str) -> str | None:
    values = params.get(name)
    if not values or values[0] is None:
        return None
    if not isinstance(values[0], str):
        raise InputError(f"Value for '{name}' not supported.")
    return values[0]


class QuotaExceededError(RateLimitError):
    """A key's characters for today are spent: DeepL's 456, which its clients do not retry."""

    http_status = 456


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """DeepL's error: ``{"message": ...}``, 403 for a missing or wrong key."""
    return (403 if isinstance(exc, AuthError) else exc.http_status), {"message": exc.user_message}


# Every error of these routes in DeepL's shape, ``{"message": ...}``.
DeepLRoute = ShapedErrorRoute.shaped("DeepLRoute", error_shape)


def body_doc(fields: dict[str, Any], required: Sequence[str] = ()) -> dict[str, Any]:
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
