"""The documents APIs' schemas: the upload (multipart: ``file``, ``target_lang``,
``source_lang``), documented for the OpenAPI page, and the uploaded file read by name or content.
Errors take each API's shape: DeepL's on ``/v2/document`` (its routes are
:data:`~hunyuan_webui.web.protocols.deepl.schemas.DeepLRoute`s), the app's own on
``/v1/documents``."""

from __future__ import annotations

import io
import zipfile

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.package import Limits, central_entries, is_zip

UPLOAD_DOC = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file", "target_lang"], "properties": {
        "file": {"type": "string", "format": "binary"},
        "target_lang": {"type": "string", "examples": ["EN-US", "ZH-HANS"]},
        "source_lang": {"type": "string", "examples": ["ZH"]}}}}}}}


def uploaded(upload: tuple[str, bytes] | None) -> tuple[str, bytes]:
    """The file's name and bytes. A file-like object without a name (``io.BytesIO``, which
    ``translate_document`` sends as it is) arrives as ``file``: a Word package is named by its
    content, anything else is taken as text. A package's members are read: call it off the event
    loop."""
    if upload is None:
        raise InputError("Parameter 'file' not specified.")
    filename, data = upload
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if "." not in base.lstrip("."):
        kind = ".docx" if _is_word(data) else ".txt"
        filename = (base or "document") + kind
    return filename, data


def _is_word(data: bytes) -> bool:
    """Whether a nameless upload is a Word package, by its members' names (counted before a zip
    is opened: 100,000 empty members cost ``zipfile`` half a second and 50 MB)."""
    if not is_zip(data) or central_entries(data) > Limits().members:
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return "word/document.xml" in package.namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return False
