"""The documents APIs' routes: DeepL's ``POST /v2/document``, ``/v2/document/{id}`` and
``/v2/document/{id}/result``, and the JSON API's ``/v1/documents`` (upload, status, result,
cancel)."""

from __future__ import annotations

import mimetypes
from functools import partial
from typing import Any
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError
from hunyuan_webui.files import OUTPUTS
from hunyuan_webui.files.common import extension
from hunyuan_webui.service.operations.documents import Document
from hunyuan_webui.web.bodies import upload_form
from hunyuan_webui.web.deps import CallerDep, Edge, EdgeDep
from hunyuan_webui.web.protocols.deepl import mapping as deepl_mapping
from hunyuan_webui.web.protocols.deepl import routes as deepl_routes
from hunyuan_webui.web.protocols.deepl.schemas import DeepLRoute, one, read_params
from hunyuan_webui.web.protocols.documents import mapping
from hunyuan_webui.web.protocols.documents.schemas import UPLOAD_DOC, uploaded
from hunyuan_webui.web.protocols.protocol import Protocol


def file_response(data: bytes, filename: str) -> Response:
    media = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    return Response(data, media_type=media, headers={
        "Content-Disposition": f"attachment; filename*=UTF-8''{quote(filename)}",
        "X-Content-Type-Options": "nosniff"})


# -- DeepL -----------------------------------------------------------------------------------------
deepl_router = APIRouter(route_class=DeepLRoute, tags=["deepl"])


@deepl_router.post("/v2/document", openapi_extra=UPLOAD_DOC)
async def deepl_document_upload(request: Request, edge: EdgeDep) -> dict[str, str]:
    """DeepL's document upload: translated in the background; poll its status."""
    fields, upload = await upload_form(request)
    params = {k: [v] for k, v in fields.items()}
    who = deepl_routes.caller(request, params)
    filename, data = await anyio.to_thread.run_sync(uploaded, upload)
    target_code = fields.get("target_lang")
    if not target_code:
        raise InputError("Parameter 'target_lang' not specified.")
    target = deepl_mapping.ours(target_code, "target_lang")
    given = fields.get("source_lang")
    source = deepl_mapping.ours(given, "source_lang") if given else languages.AUTO
    deepl_mapping.parse_mode(params)  # formality and glossaries checked as /v2/translate does
    wanted = (fields.get("output_format") or "").lower().lstrip(".")
    if wanted and "." + wanted != extension(filename) and \
            "." + wanted not in OUTPUTS.get(extension(filename), ()):
        raise InputError("Value for 'output_format' not supported: a document comes back in "
                         "its own format, and a PDF also as a Word file (docx).")
    charge = partial(deepl_routes.charge, edge.access)  # a spent allowance is DeepL's 456
    doc = await mapping.submit(edge.documents, mapping.owner_of(request, who), filename, data,
                               mapping.template(edge.translator, source, target),
                               admit=mapping.admit(charge, who), output_format=wanted)
    return {"document_id": doc.id, "document_key": doc.key}


async def _deepl_document(request: Request, edge: Edge, document_id: str) -> Document:
    """The document ``document_id``, for whoever holds its ``document_key`` (and owns it)."""
    params = await read_params(request)
    who = deepl_routes.caller(request, params)
    key = one(params, "document_key")
    if not key:
        raise InputError("Parameter 'document_key' not specified.")
    return edge.documents.get(document_id, key, mapping.owner_of(request, who))


@deepl_router.post("/v2/document/{document_id}")
async def deepl_document_status(document_id: str, request: Request,
                                edge: EdgeDep) -> dict[str, Any]:
    """DeepL's document status: queued, translating, done or error."""
    doc = await _deepl_document(request, edge, document_id)
    await mapping.settled(doc)
    return mapping.deepl_status(doc, edge.documents)


@deepl_router.post("/v2/document/{document_id}/result")
async def deepl_document_result(document_id: str, request: Request, edge: EdgeDep) -> Response:
    """DeepL's document download: the translated file, once done (503 before)."""
    doc = await _deepl_document(request, edge, document_id)
    result = edge.documents.result(doc)
    return file_response(result.data, result.filename)


# -- the JSON API ----------------------------------------------------------------------------------
router = APIRouter(tags=["documents"])


@router.post("/v1/documents", status_code=202, openapi_extra=UPLOAD_DOC)
async def upload_document(request: Request, who: CallerDep, edge: EdgeDep) -> JSONResponse:
    """Upload a file (``.docx .pptx .xlsx .odt .odp .ods .epub .pdf .html .txt .md .srt .csv``) to
    translate in the background; poll ``GET /v1/documents/{id}``, then fetch ``/result``.
    ``bilingual=true``: each paragraph followed by its translation (Word, OpenDocument, HTML,
    EPUB, PDF); ``bilingual=columns``: side by side in a two-column table (PDF, Word).
    ``output_format=docx``: a PDF comes back as a Word file."""
    fields, upload = await upload_form(request)
    filename, data = await anyio.to_thread.run_sync(uploaded, upload)
    source, target = mapping.v1_languages(fields)
    doc = await mapping.submit(edge.documents, mapping.owner_of(request, who), filename, data,
                               mapping.template(edge.translator, source, target),
                               admit=mapping.admit(edge.access.charge, who),
                               bilingual=mapping.v1_bilingual(fields),
                               output_format=fields.get("output_format") or "")
    return JSONResponse(mapping.status(doc, edge.documents), status_code=202)


@router.get("/v1/documents/{document_id}")
async def document_status(document_id: str, request: Request, who: CallerDep,
                          edge: EdgeDep) -> dict[str, Any]:
    """A document's status (queued, translating, done, error) and progress."""
    doc = edge.documents.get(document_id, owner=mapping.owner_of(request, who), check_key=False)
    return mapping.status(doc, edge.documents)


@router.get("/v1/documents/{document_id}/result")
async def document_result(document_id: str, request: Request, who: CallerDep,
                          edge: EdgeDep) -> Response:
    """The translated file (503 while it is being translated)."""
    doc = edge.documents.get(document_id, owner=mapping.owner_of(request, who), check_key=False)
    result = edge.documents.result(doc)
    return file_response(result.data, result.filename)


@router.delete("/v1/documents/{document_id}")
async def cancel_document(document_id: str, request: Request, who: CallerDep,
                          edge: EdgeDep) -> dict[str, Any]:
    """Stop a document being translated (and forget it, finished or not)."""
    doc = edge.documents.get(document_id, owner=mapping.owner_of(request, who), check_key=False)
    edge.documents.cancel(doc)
    return {"id": doc.id, "status": "cancelled"}


PROTOCOL = Protocol("documents", router)
# DeepL's document routes: the key may be DeepL's older auth_key field; DeepL's error shape covers
# them through the deepl protocol's "/v2/" prefix.
DEEPL_PROTOCOL = Protocol("deepl-documents", deepl_router, key_in_body=frozenset({"/v2/document"}),
                          key_in_body_prefixes=("/v2/document/",))
