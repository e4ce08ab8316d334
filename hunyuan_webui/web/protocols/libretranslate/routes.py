"""LibreTranslate's routes: ``POST /translate``, ``GET /languages``, ``POST /detect``,
``POST /translate_file`` with ``GET /download_file/{name}``, ``GET /frontend/settings`` and
``GET /spec``; the key may come in the body (``api_key``). Every error is LibreTranslate's
``{"error": message}`` (:data:`~.schemas.LTRoute`), and a wrong method its 405, as its own API
tests expect (``tests/http/test_libretranslate_api.py`` runs them over HTTP)."""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from hunyuan_webui import files
from hunyuan_webui.service.operations.documents import DONE
from hunyuan_webui.web.bodies import upload_form
from hunyuan_webui.web.deps import EdgeDep
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.documents import mapping as documents
from hunyuan_webui.web.protocols.documents.routes import file_response
from hunyuan_webui.web.protocols.documents.schemas import uploaded
from hunyuan_webui.web.protocols.libretranslate import mapping
from hunyuan_webui.web.protocols.libretranslate.schemas import (
    LT_DETECT_FIELDS,
    LT_FILE_DOC,
    LT_TRANSLATE_FIELDS,
    LTRoute,
    error,
    lt_body,
    read_params,
)
from hunyuan_webui.web.protocols.protocol import Protocol

router = APIRouter(tags=["libretranslate"], route_class=LTRoute)
DOWNLOAD = "/download_file/"


def _caller(request: Request, access: AccessControl, data: dict[str, Any]) -> Caller:
    """A key from the headers (checked and counted by the Gatekeeper), else the body's api_key."""
    caller = getattr(request.state, "caller", None)
    return caller if isinstance(caller, Caller) else access.check_key(data.get("api_key"))


@router.post("/translate", openapi_extra=lt_body(LT_TRANSLATE_FIELDS))
async def lt_translate(request: Request, edge: EdgeDep) -> JSONResponse:
    """LibreTranslate's /translate: q, source, target, alternatives (form or JSON); api_key in
    the body."""
    data = await read_params(request)
    who = _caller(request, edge.access, data)
    q = data.get("q")
    texts = mapping.texts_of(q)
    if isinstance(texts, str):
        return error(texts, 400)
    source, target = str(data.get("source") or "auto"), data.get("target")
    if not target:
        return error("Invalid request: missing target parameter", 400)
    refusal = mapping.unsupported(source, str(target))
    alternatives = mapping.alternatives_of(data.get("alternatives"))
    if refusal or isinstance(alternatives, str):
        return error(refusal or str(alternatives), 400)
    edge.access.charge(who, sum(len(t) for t in texts))
    results = await edge.translator.atranslate_many(
        mapping.requests_for(texts, source, str(target), alternatives))
    return JSONResponse(mapping.answer(q, source, results, alternatives))


@router.get("/languages")
def lt_languages() -> list[dict[str, Any]]:
    """LibreTranslate's /languages: every language can be translated to every other."""
    return mapping.language_list()


@router.post("/detect", openapi_extra=lt_body(LT_DETECT_FIELDS))
async def lt_detect(request: Request, edge: EdgeDep) -> JSONResponse:
    """LibreTranslate's /detect: q (form or JSON) -> [{confidence (0-100), language}]."""
    data = await read_params(request)
    who = _caller(request, edge.access, data)
    q = data.get("q")
    if not isinstance(q, str):
        return error("Invalid request: missing q parameter", 400)
    edge.access.charge(who, len(q))
    return JSONResponse(mapping.detections(edge.translator.detect(q)))


@router.post("/translate_file", openapi_extra=LT_FILE_DOC)
async def lt_translate_file(request: Request, edge: EdgeDep) -> JSONResponse:
    """LibreTranslate's /translate_file (multipart: file, source, target, api_key): the file is
    translated as ``/v1/documents`` translates it (the same limits, the same honesty), and the
    answer, once it is done, is the ``translatedFileUrl`` that downloads it. A client that
    leaves stops its translation; a file that failed or was stopped is never offered."""
    fields, upload = await upload_form(request)
    who = _caller(request, edge.access, fields)
    if upload is None or not upload[1]:
        return error("Invalid request: missing file parameter" if upload is None
                     else "Invalid request: empty file", 400)
    source, target = fields.get("source") or "auto", fields.get("target")
    if not target:
        return error("Invalid request: missing target parameter", 400)
    refusal = mapping.unsupported(source, target)
    if refusal:
        return error(refusal, 400)
    filename, data = await anyio.to_thread.run_sync(uploaded, upload)
    doc = await documents.submit(edge.documents, documents.owner_of(request, who), filename,
                                 data, documents.template(edge.translator, source, target),
                                 admit=documents.admit(edge.access.charge, who))
    while doc.running:
        if await request.is_disconnected():
            edge.documents.cancel(doc)
            return error("The client left; the translation was stopped.", 499)
        await anyio.to_thread.run_sync(doc.wait, 0.5)
    if doc.status != DONE or doc.result is None:
        edge.documents.cancel(doc)  # forgotten: nothing half-done is kept or offered
        return error(doc.error or "The translation was stopped.", 500)
    token = mapping.download_token(doc.id, doc.key, doc.result.filename)
    url = str(request.url_for("lt_download_file", name=token))
    return JSONResponse(mapping.file_answer(url, doc.result))


@router.get(DOWNLOAD + "{name}")
async def lt_download_file(name: str, edge: EdgeDep) -> Response:
    """The translated file of ``/translate_file``: its URL is the key to it (LibreTranslate's
    clients download with nothing else)."""
    doc_id, key = mapping.parse_token(name)
    result = edge.documents.result(edge.documents.get(doc_id, key))
    return file_response(result.data, result.filename)


@router.get("/frontend/settings")
def lt_frontend_settings(request: Request, edge: EdgeDep) -> dict[str, Any]:
    """LibreTranslate's front-end settings: the character limit, whether keys are needed, the
    file formats ``/translate_file`` takes."""
    settings = edge.translator.settings
    formats = sorted(files.SUPPORTED)
    return mapping.frontend_settings(settings.max_input_chars, formats, edge.access.enabled)


@router.get("/spec")
def lt_spec(request: Request) -> dict[str, Any]:
    """LibreTranslate's API description (OpenAPI): its routes as this server answers them."""
    spec = request.app.openapi()
    paths = {path: ops for path, ops in spec.get("paths", {}).items()
             if any("libretranslate" in op.get("tags", ()) for op in ops.values())}
    return {**{k: v for k, v in spec.items() if k != "paths"}, "paths": paths}


PROTOCOL = Protocol("libretranslate", router,
                    open_routes=frozenset({"/languages", "/frontend/settings", "/spec"}),
                    key_in_body=frozenset({"/translate", "/detect", "/translate_file"}),
                    key_in_body_prefixes=(DOWNLOAD,))  # the URL is the download's key
