"""The documents APIs' schemas: the upload (multipart: ``file``, ``target_lang``,
``source_lang``), documented for the OpenAPI page, and the uploaded file read by name or content.
Errors take each API's shape: DeepL's on ``/v2/document`` (its routes are
:data:`~hunyuan_webui.web.protocols.deepl.schemas.DeepLRoute`s), the app's own on
``/v1/documents``."""

from __future__ import annotations

import io
import zipfile
import zlib

from hunyuan_webui.errors import InputError
from hunyuan_webui.files.package import Limits, central_entries, is_zip

UPLOAD_DOC = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file", "target_lang"], "properties": {
        "file": {"type": "string", "format": "binary"},
        "target_lang": {"type": "string", "examples": ["EN-US", "ZH-HANS"]},
        "source_lang": {"type": "string", "examples": ["ZH"]},
        "bilingual": {"type": "string", "default": "false",
                      "enum": ["false", "true", "paragraphs", "columns"],
                      "description": "/v1/documents: true (or paragraphs): each paragraph "
                                     "followed by its translation (.docx .odt .odp .ods .html "
                                     ".epub .pdf); columns: side by side in a two-column table "
                                     "(.pdf .docx)."},
        "output_format": {"type": "string", "examples": ["docx"],
                          "description": "What the file comes back as: its own format, or "
                                         "docx for a .pdf (a Word file)."}}}}}}}


def uploaded(upload: tuple[str, bytes] | None) -> tuple[str, bytes]:
    """The file's name and bytes. A file-like object without a name (``io.BytesIO``, which
    ``translate_document`` sends as it is) arrives as ``file``: a package is named by its
    content (Office, OpenDocument, EPUB, PDF), anything else is taken as text. A package's members are
    read: call it off the event loop."""
    if upload is None:
        raise InputError("Parameter 'file' not specified.")
    filename, data = upload
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    if "." not in base.lstrip("."):
        kind = _package_kind(data) or (".pdf" if data.startswith(b"%PDF-") else ".txt")
        filename = (base or "document") + kind
    return filename, data


_OFFICE_PARTS = {"word/document.xml": ".docx", "ppt/presentation.xml": ".pptx",
                 "xl/workbook.xml": ".xlsx"}
_MIMETYPES = {b"application/vnd.oasis.opendocument.text": ".odt",
              b"application/vnd.oasis.opendocument.presentation": ".odp",
              b"application/vnd.oasis.opendocument.spreadsheet": ".ods",
              b"application/epub+zip": ".epub"}


def _package_kind(data: bytes) -> str | None:
    """The extension of a nameless package: an Office file by its members' names, an
    OpenDocument file or an e-book by its ``mimetype`` member (counted before a zip is opened:
    100,000 empty members cost ``zipfile`` half a second and 50 MB)."""
    if not is_zip(data) or central_entries(data) > Limits().members:
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = package.namelist()
            kind = next((ext for part, ext in _OFFICE_PARTS.items() if part in names), None)
            if kind is None and "mimetype" in names and \
                    package.getinfo("mimetype").file_size <= 100:
                kind = _MIMETYPES.get(package.read("mimetype").strip())
            return kind
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, RuntimeError, zlib.error):
        return None
