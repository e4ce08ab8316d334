"""LibreTranslate's schemas: its parameters (forms, JSON or query strings, read by hand and
documented here for the OpenAPI page), the file upload of ``/translate_file``, and its error shape,
``{"error": message}``, which every error of its routes takes (:data:`LTRoute`)."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import JSONResponse

from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.web.bodies import form_items, is_form, is_json, json_object
from hunyuan_webui.web.responses import ShapedErrorRoute

# LibreTranslate's parameters, read by hand (forms, JSON or query strings); documented here.
_LT_TEXT = {"type": "string", "examples": ["Where is the train station?"]}
LT_TRANSLATE_FIELDS: dict[str, Any] = {
    "q": {"anyOf": [_LT_TEXT, {"type": "array", "items": {"type": "string"}}]},
    "source": {"type": "string", "default": "auto", "examples": ["auto", "en"]},
    "target": {"type": "string", "examples": ["zh"]},
    "format": {"type": "string", "enum": ["text", "html"]},
    "alternatives": {"type": "integer", "minimum": 0, "default": 0,
                     "description": "How many other translations to give beside the best."},
    "api_key": {"type": "string"},
}
LT_DETECT_FIELDS: dict[str, Any] = {"q": _LT_TEXT, "api_key": {"type": "string"}}


def lt_body(fields: dict[str, Any]) -> dict[str, Any]:
    required = [name for name in ("q", "target") if name in fields]
    schema = {"type": "object", "properties": fields, "required": required}
    form = {**schema, "properties": {k: (_LT_TEXT if k == "q" else v) for k, v in fields.items()}}
    return {"requestBody": {"required": True, "content": {
        "application/json": {"schema": schema},
        "application/x-www-form-urlencoded": {"schema": form}}}}


LT_FILE_DOC = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file", "target"], "properties": {
        "file": {"type": "string", "format": "binary"},
        "source": {"type": "string", "default": "auto", "examples": ["auto", "zh"]},
        "target": {"type": "string", "examples": ["en"]},
        "api_key": {"type": "string"}}}}}}}


def error_shape(exc: TranslatorError) -> tuple[int, dict[str, Any]]:
    return exc.http_status, {"error": exc.user_message}


# Every error of LibreTranslate's routes in its shape, whatever raised it.
LTRoute = ShapedErrorRoute.shaped("LTRoute", error_shape)


def error(message: str, status: int) -> JSONResponse:
    """LibreTranslate's error: ``{"error": message}``."""
    return JSONResponse({"error": message}, status_code=status)


async def read_params(request: Request) -> dict[str, Any]:
    """LibreTranslate clients send forms, JSON or query strings."""
    data: dict[str, Any] = dict(request.query_params)
    content_type = request.headers.get("content-type", "")
    if is_json(content_type):
        data.update(await json_object(request))
    elif is_form(content_type):
        form: dict[str, list[Any]] = {}
        for key, value in await form_items(request):
            form.setdefault(key, []).append(value)
        for key, values in form.items():
            data[key] = values if key == "q" and len(values) > 1 else values[0]
    return data
