"""Documents over HTTP: DeepL's document API and the JSON API's ``/v1/documents``.

Both hand the uploaded file to :class:`~hunyuan_webui.service.operations.documents.DocumentJobs` (the file
translators of :mod:`hunyuan_webui.files`, in the background, bounded, kept ``--files-ttl``
seconds, never written to disk) and read it back:

- DeepL's, so that ``deepl.Translator(key, server_url=...).translate_document`` works unchanged:
  ``POST /v2/document`` (multipart: ``file``, ``target_lang``, ``source_lang``...) ->
  ``{"document_id", "document_key"}``; ``POST /v2/document/{id}`` with ``document_key`` ->
  ``{"status": queued|translating|done|error, "seconds_remaining", "billed_characters"}``;
  ``POST /v2/document/{id}/result`` with ``document_key`` -> the file (503 until it is done).
- The JSON API's: ``POST /v1/documents`` (multipart: ``file``, ``target_lang``, ``source_lang``)
  -> ``{"id", "status", ...}``; ``GET /v1/documents/{id}`` (status and progress);
  ``GET /v1/documents/{id}/result`` (the file); ``DELETE /v1/documents/{id}`` (cancel).

A document belongs to the key that uploaded it (else to the uploading address); DeepL's also
needs its ``document_key``. Characters are counted against the caller like any translation.
"""

from __future__ import annotations

import io
import mimetypes
import zipfile
from typing import Any
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError
from hunyuan_webui.files.common import extension
from hunyuan_webui.files.package import Limits, central_entries, is_zip
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.service.operations.documents import (
    DONE,
    ERROR,
    TRANSLATING,
    Document,
    DocumentJobs,
)
from hunyuan_webui.web.bodies import upload_form
from hunyuan_webui.web.deps import CallerDep
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols import deepl
from hunyuan_webui.web.protocols.protocol import Protocol

STATUS_WAIT_S = 1.0  # a status request waits this long for a document about to finish

_UPLOAD_DOC = {"requestBody": {"required": True, "content": {"multipart/form-data": {"schema": {
    "type": "object", "required": ["file", "target_lang"], "properties": {
        "file": {"type": "string", "format": "binary"},
        "target_lang": {"type": "string", "examples": ["EN-US", "ZH-HANS"]},
        "source_lang": {"type": "string", "examples": ["ZH"]}}}}}}}


def owner_of(request: Request, who: Caller) -> str:
    """Whom a document belongs to (and counts against): the key, else the address."""
    if who.key_id is not None:
        return who.key_id
    client = request.client
    return "addr:" + (client.host if client is not None else "unknown")


def _uploaded(upload: tuple[str, bytes] | None) -> tuple[str, bytes]:
    """The file's name and bytes. A file-like object without a name (``io.BytesIO``, which
    ``translate_document`` sends as it is) arrives as ``file``: a Word package is named by its
    content, anything else is taken as text."""
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


async def _submit(documents: DocumentJobs, *args: Any, **kwargs: Any) -> Document:
    """:meth:`DocumentJobs.submit` on a worker thread: it reads the file (a package unpacked
    within its limits) before it accepts it, which must not hold up the event loop."""
    return await anyio.to_thread.run_sync(lambda: documents.submit(*args, **kwargs))


def _template(translator: Translator, source: str, target: str) -> TranslationRequest:
    return TranslationRequest(text="", source_lang=source, target_lang=target,
                              options=translator.decoding(deterministic=True))


def _file_response(data: bytes, filename: str) -> Response:
    media = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return Response(data, media_type=media, headers={
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(filename)}",
        "X-Content-Type-Options": "nosniff"})


async def _settled(doc: Document) -> None:
    """Give a document about to finish a moment, so that a client polling every few seconds
    (DeepL's waits five) need not wait a whole round for a short file."""
    waited = 0.0
    while doc.running and waited < STATUS_WAIT_S:
        await anyio.sleep(0.05)
        waited += 0.05


def _admit(request: Request, who: Caller, deepl_shape: bool) -> Any:
    access: AccessControl = request.app.state.access

    def admit(segments: list[str]) -> None:
        chars = sum(len(s) for s in segments)
        if deepl_shape:
            deepl._charge(request, who, chars)
        else:
            access.charge(who, chars)

    return admit


# -- DeepL -----------------------------------------------------------------------------------------
def create_deepl_router(translator: Translator, documents: DocumentJobs) -> APIRouter:
    router = APIRouter(route_class=deepl.DeepLRoute, tags=["deepl"])

    @router.post("/v2/document", openapi_extra=_UPLOAD_DOC)
    async def deepl_document_upload(request: Request) -> dict[str, str]:
        """DeepL's document upload: translated in the background; poll its status."""
        fields, upload = await upload_form(request)
        params = {k: [v] for k, v in fields.items()}
        who = deepl._caller(request, params)
        filename, data = await anyio.to_thread.run_sync(_uploaded, upload)
        target_code = fields.get("target_lang")
        if not target_code:
            raise InputError("Parameter 'target_lang' not specified.")
        target = deepl.ours(target_code, "target_lang")
        given = fields.get("source_lang")
        source = deepl.ours(given, "source_lang") if given else languages.AUTO
        deepl._mode(params)  # formality and glossaries checked as /v2/translate checks them
        wanted = (fields.get("output_format") or "").lower().lstrip(".")
        if wanted and "." + wanted != extension(filename):
            raise InputError("Value for 'output_format' not supported: a document comes back "
                             "in its own format.")
        doc = await _submit(documents, owner_of(request, who), filename, data,
                            _template(translator, source, target),
                            admit=_admit(request, who, deepl_shape=True))
        return {"document_id": doc.id, "document_key": doc.key}

    async def find(request: Request, document_id: str) -> Document:
        params = await deepl._params(request)
        who = deepl._caller(request, params)
        key = deepl._one(params, "document_key")
        if not key:
            raise InputError("Parameter 'document_key' not specified.")
        return documents.get(document_id, key, owner_of(request, who))

    @router.post("/v2/document/{document_id}")
    async def deepl_document_status(document_id: str, request: Request) -> dict[str, Any]:
        """DeepL's document status: queued, translating, done or error."""
        doc = await find(request, document_id)
        await _settled(doc)
        answer: dict[str, Any] = {"document_id": doc.id,
                                  "status": doc.status if doc.status != "cancelled" else ERROR}
        if doc.status == TRANSLATING:
            remaining = doc.seconds_remaining(documents.clock())
            if remaining is not None:
                answer["seconds_remaining"] = remaining
        if doc.status == DONE:
            answer["billed_characters"] = doc.billed_characters
        if doc.status == ERROR:
            answer["error_message"] = doc.error
        return answer

    @router.post("/v2/document/{document_id}/result")
    async def deepl_document_result(document_id: str, request: Request) -> Response:
        """DeepL's document download: the translated file, once done (503 before)."""
        doc = await find(request, document_id)
        result = documents.result(doc)
        return _file_response(result.data, result.filename)

    return router


# -- the JSON API ----------------------------------------------------------------------------------
def _status(doc: Document, documents: DocumentJobs) -> dict[str, Any]:
    return {"id": doc.id, "filename": doc.filename, "status": doc.status,
            "progress": round(doc.done / doc.total, 4) if doc.total else
            (1.0 if doc.status == DONE else 0.0),
            "segments_done": doc.done, "segments_total": doc.total,
            "seconds_remaining": doc.seconds_remaining(documents.clock()),
            "billed_characters": doc.billed_characters,
            "result_filename": doc.result.filename if doc.result is not None else None,
            # Segments given back as they were: the file was already in the target language.
            "segments_unchanged": doc.result.unchanged if doc.result is not None else 0,
            "notice": _unchanged_notice(doc.result),
            "error": doc.error or None}


def _unchanged_notice(result: Any) -> str | None:
    if result is None or not result.unchanged:
        return None
    name = languages.get(result.target_lang).english
    return f"The file is already in {name}; it was returned unchanged."


def create_router(translator: Translator, documents: DocumentJobs) -> APIRouter:
    router = APIRouter(tags=["documents"])

    @router.post("/v1/documents", status_code=202, openapi_extra=_UPLOAD_DOC)
    async def upload_document(request: Request, who: CallerDep) -> JSONResponse:
        """Upload a file (``.docx .pptx .xlsx .html .txt .md .srt .csv``) to translate in the background; poll
        ``GET /v1/documents/{id}``, then fetch ``/result``."""
        fields, upload = await upload_form(request)
        filename, data = await anyio.to_thread.run_sync(_uploaded, upload)
        target = fields.get("target_lang")
        if not target:
            raise InputError("Field 'target_lang' is required.")
        target = languages.normalize(target)
        source = fields.get("source_lang") or languages.AUTO
        if source != languages.AUTO:
            source = languages.normalize(source)
        doc = await _submit(documents, owner_of(request, who), filename, data,
                            _template(translator, source, target),
                            admit=_admit(request, who, deepl_shape=False))
        return JSONResponse(_status(doc, documents), status_code=202)

    @router.get("/v1/documents/{document_id}")
    async def document_status(document_id: str, request: Request,
                              who: CallerDep) -> dict[str, Any]:
        """A document's status (queued, translating, done, error) and progress."""
        doc = documents.get(document_id, owner=owner_of(request, who), check_key=False)
        return _status(doc, documents)

    @router.get("/v1/documents/{document_id}/result")
    async def document_result(document_id: str, request: Request, who: CallerDep) -> Response:
        """The translated file (503 while it is being translated)."""
        doc = documents.get(document_id, owner=owner_of(request, who), check_key=False)
        result = documents.result(doc)
        return _file_response(result.data, result.filename)

    @router.delete("/v1/documents/{document_id}")
    async def cancel_document(document_id: str, request: Request,
                              who: CallerDep) -> dict[str, Any]:
        """Stop a document being translated (and forget it, finished or not)."""
        doc = documents.get(document_id, owner=owner_of(request, who), check_key=False)
        documents.cancel(doc)
        return {"id": doc.id, "status": "cancelled"}

    return router


PROTOCOL = Protocol("documents", lambda edge: create_router(edge.translator, edge.documents))
# DeepL's document routes: the key may be DeepL's older auth_key field; DeepL's error shape covers
# them through the deepl protocol's "/v2/" prefix.
DEEPL_PROTOCOL = Protocol("deepl-documents",
                          lambda edge: create_deepl_router(edge.translator, edge.documents),
                          key_in_body=frozenset({"/v2/document"}),
                          key_in_body_prefixes=("/v2/document/",))
