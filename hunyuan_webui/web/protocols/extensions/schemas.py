"""The extensions' schemas: each path's body (JSON, documented here for the OpenAPI page; the key
may come as a ``token`` query parameter) and DeepLX's error shape, ``{"code", "message"}``, which
all four paths take (the others document none)."""

from __future__ import annotations

from typing import Any

from fastapi import Request

from hunyuan_webui.errors import InputError, TranslatorError
from hunyuan_webui.web.responses import ShapedErrorRoute

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


def doc(fields: dict[str, Any], required: tuple[str, ...]) -> dict[str, Any]:
    schema = {"type": "object", "properties": fields, "required": list(required)}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": schema}}},
            "parameters": [{"name": "token", "in": "query", "required": False,
                            "schema": {"type": "string"},
                            "description": "The API key, for extensions that cannot send "
                                           "headers."}]}


async def read_body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (ValueError, RecursionError):
        raise InputError("Malformed JSON body.") from None
    if not isinstance(body, dict):
        raise InputError("The JSON body must be an object.")
    return body


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    """DeepLX's error: ``{"code", "message"}``."""
    return exc.http_status, {"code": exc.http_status, "message": exc.user_message}


# Errors as DeepLX writes them, ``{"code", "message"}``, on all four paths.
ExtensionRoute = ShapedErrorRoute.shaped("ExtensionRoute", error_shape)
