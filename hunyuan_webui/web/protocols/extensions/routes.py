"""The extensions' routes: ``POST /imme``, ``/kiss``, ``/deeplx`` and ``/hcfy``; the key in a
header or as the ``token`` query parameter; errors in DeepLX's shape."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from hunyuan_webui.web.deps import EdgeDep
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.extensions import mapping
from hunyuan_webui.web.protocols.extensions.mapping import code_of, texts_of
from hunyuan_webui.web.protocols.extensions.schemas import (
    DEEPLX_FIELDS,
    HCFY_FIELDS,
    IMME_FIELDS,
    KISS_FIELDS,
    ExtensionRoute,
    doc,
    read_body,
)
from hunyuan_webui.web.protocols.protocol import Protocol

PATHS = ("/imme", "/kiss", "/deeplx", "/hcfy")
router = APIRouter(route_class=ExtensionRoute, tags=["extensions"])


def _caller(request: Request) -> Caller:
    """A header key (checked and counted by the Gatekeeper), else the ``token`` parameter."""
    caller = getattr(request.state, "caller", None)
    if isinstance(caller, Caller):
        return caller
    access: AccessControl = request.app.state.access
    return access.check_key(request.query_params.get("token"))


@router.post("/imme", openapi_extra=doc(IMME_FIELDS, ("text_list", "target_lang")))
async def immersive(request: Request, edge: EdgeDep) -> dict[str, Any]:
    """Immersive Translate's custom API: source_lang, target_lang, text_list."""
    who = _caller(request)
    body = await read_body(request)
    texts = texts_of(body.get("text_list"), "text_list")
    target = code_of(body.get("target_lang"), "target_lang")
    source = code_of(body.get("source_lang"), "source_lang", auto=True)
    return mapping.imme_answer(await mapping.translate(edge, who, texts, target, source))


@router.post("/kiss", response_model=None, openapi_extra=doc(KISS_FIELDS, ("to",)))
async def kiss(request: Request, edge: EdgeDep) -> dict[str, Any] | list[dict[str, Any]]:
    """KISS Translator's custom API: text (or texts), from, to."""
    who = _caller(request)
    body = await read_body(request)
    single = "texts" not in body
    texts = texts_of([body.get("text")] if single else body.get("texts"),
                     "text" if single else "texts")
    target, source = code_of(body.get("to"), "to"), code_of(body.get("from"), "from", auto=True)
    answers = mapping.kiss_answers(await mapping.translate(edge, who, texts, target, source))
    return answers[0] if single else answers


@router.post("/deeplx", openapi_extra=doc(DEEPLX_FIELDS, ("text", "target_lang")))
async def deeplx(request: Request, edge: EdgeDep) -> dict[str, Any]:
    """DeepLX: text, source_lang, target_lang (DeepL's codes)."""
    who = _caller(request)
    body = await read_body(request)
    [text] = texts_of([body.get("text")], "text")
    source, target, target_code = mapping.deeplx_languages(body)
    done = await mapping.translate(edge, who, [text], target, source)
    return mapping.deeplx_answer(done, target_code)


@router.post("/hcfy", openapi_extra=doc(HCFY_FIELDS, ("text", "destination")))
async def hcfy(request: Request, edge: EdgeDep) -> dict[str, Any]:
    """划词翻译: name, text, destination (Chinese language names), source."""
    who = _caller(request)
    return await mapping.hcfy(edge, who, await read_body(request))


PROTOCOL = Protocol("extensions", router, key_in_body=frozenset(PATHS))  # ?token=
