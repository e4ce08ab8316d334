"""Request bodies, read and refused in one place for every protocol.

A body that cannot be read is the client's mistake, never a 500: bad JSON or UTF-8, a number of
more than 4,300 digits (Python's ``int`` refuses it with a ``ValueError``), nesting deep enough to
exhaust the parser's recursion (``RecursionError``), a broken multipart form. Each becomes an
:class:`~hunyuan_webui.errors.InputError`, which every route answers as a 400 in its protocol's
own shape (LibreTranslate's ``{"error": ...}``, DeepL's ``{"message": ...}``, OpenAI's error
object, the JSON API's ``{"error": {"code", ...}}``).

The routes that read their own bodies (LibreTranslate's, DeepL's) call :func:`json_body` and
:func:`form_items`; the routes whose bodies FastAPI parses (the JSON API, OpenAI's) get the same
refusal through :func:`unreadable_body`, which recognizes FastAPI's own parse failures.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException
from starlette.formparsers import MultiPartException, MultiPartParser

from hunyuan_webui.errors import InputError

MALFORMED_JSON = "Malformed JSON body."
MALFORMED_FORM = "Malformed form body."
FASTAPI_BODY_ERROR = "There was an error parsing the body"  # FastAPI's 400 for an unreadable body


def decode_json(raw: bytes | str) -> Any:
    """``raw`` as JSON, or :class:`InputError`: bad JSON or UTF-8 (``ValueError``), 5,000-digit
    numbers (``ValueError``), deep nesting (``RecursionError``)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise InputError(MALFORMED_JSON) from None


async def json_body(request: Request) -> Any:
    """The request's JSON body (any JSON value), or :class:`InputError`."""
    return decode_json(await request.body())


async def json_object(request: Request) -> dict[str, Any]:
    """The request's JSON body, which must be an object, or :class:`InputError`."""
    body = await json_body(request)
    if not isinstance(body, dict):
        raise InputError("The JSON body must be an object.")
    return body


async def form_items(request: Request) -> list[tuple[str, Any]]:
    """A form body's fields (urlencoded or multipart) in order, or :class:`InputError`. A file
    part comes back closed (not a string: every route refuses it)."""
    try:
        async with request.form() as form:
            return list(form.multi_items())
    except (HTTPException, MultiPartException, ValueError, RecursionError):
        raise InputError(MALFORMED_FORM) from None


class _InMemoryParser(MultiPartParser):
    """Starlette's multipart parser with the file kept in memory: an upload never spills into
    the system's temporary folder (the body limit bounds it first)."""

    spool_max_size = 1 << 62


async def upload_form(request: Request, file_field: str = "file",
                      ) -> tuple[dict[str, str], tuple[str, bytes] | None]:
    """A multipart upload read in memory: its text fields (the first of each name) and its one
    file as ``(filename, bytes)`` (None when there is none), or :class:`InputError`."""
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise InputError("Send the document as multipart/form-data, in a field named "
                         f"'{file_field}'.")
    parser = _InMemoryParser(request.headers, request.stream(), max_files=1, max_fields=50)
    try:
        form = await parser.parse()
    except (HTTPException, MultiPartException, ValueError, RecursionError):
        raise InputError(MALFORMED_FORM) from None
    fields: dict[str, str] = {}
    upload: tuple[str, bytes] | None = None
    try:
        for key, value in form.multi_items():
            if isinstance(value, UploadFile):
                if key == file_field and upload is None:
                    upload = (value.filename or "", await value.read())
            else:
                fields.setdefault(key, value)
    finally:
        await form.close()
    return fields, upload


def is_json(content_type: str) -> bool:
    """A JSON media type, as the routes read it (``application/json``, ``...+json``)."""
    return "json" in content_type.lower()


def is_form(content_type: str) -> bool:
    return "form" in content_type.lower()


def unreadable_body(exc: Exception) -> InputError | None:
    """FastAPI's own failure to read a body (a 400 ``HTTPException`` for a ValueError or a
    RecursionError; a ``json_invalid`` validation error), as the one refusal above."""
    if isinstance(exc, HTTPException) and exc.status_code == 400 and \
            exc.detail == FASTAPI_BODY_ERROR:
        return InputError(MALFORMED_JSON)
    if isinstance(exc, RequestValidationError) and any(
            e.get("type") == "json_invalid" for e in exc.errors()):
        return InputError(MALFORMED_JSON)
    return None
