"""DeepL's routes: ``POST /v2/translate``, ``GET|POST /v2/languages`` and ``GET|POST /v2/usage``;
the key as ``Authorization: DeepL-Auth-Key K`` (or ``Bearer K``, or the old ``auth_key``
parameter), through the same key check and limits as every other route; every error in DeepL's
shape (:data:`~hunyuan_webui.web.protocols.deepl.schemas.DeepLRoute`)."""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter, Request

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, RateLimitError
from hunyuan_webui.web.deps import EdgeDep
from hunyuan_webui.web.guards.access import AccessControl, Caller
from hunyuan_webui.web.protocols.deepl import mapping
from hunyuan_webui.web.protocols.deepl.schemas import (
    TRANSLATE_FIELDS,
    UNLIMITED,
    DeepLRoute,
    QuotaExceededError,
    body_doc,
    error_shape,
    one,
    read_params,
)
from hunyuan_webui.web.protocols.protocol import Protocol

router = APIRouter(route_class=DeepLRoute, tags=["deepl"])


def caller(request: Request, params: dict[str, list[Any]]) -> Caller:
    """The key from DeepL's header (or a Bearer token, or the old auth_key parameter), checked
    like every other route's."""
    found = getattr(request.state, "caller", None)
    if isinstance(found, Caller):  # a header key, which the Gatekeeper checked and counted
        return found
    access: AccessControl = request.app.state.access
    return access.check_key(params["auth_key"][0] if params.get("auth_key") else None)


def charge(access: AccessControl, who: Caller, chars: int) -> None:
    """Characters against the caller; a spent allowance is DeepL's 456."""
    try:
        access.charge(who, chars)
    except RateLimitError as exc:
        raise QuotaExceededError(exc.user_message, exc.retry_after) from None


@router.post("/v2/translate", openapi_extra=body_doc(TRANSLATE_FIELDS, ("text", "target_lang")))
async def deepl_translate(request: Request, edge: EdgeDep) -> dict[str, Any]:
    """DeepL's /v2/translate: several ``text`` values, DeepL's language codes."""
    params = await read_params(request)
    who = caller(request, params)
    texts = mapping.texts_of(params)
    target_code = one(params, "target_lang")
    if not target_code:
        raise InputError("Parameter 'target_lang' not specified.")
    target = mapping.ours(target_code, "target_lang")
    given = one(params, "source_lang")
    source = mapping.ours(given, "source_lang") if given else languages.AUTO
    mapping.parse_mode(params)  # the parameters refused before any character is counted
    mapping.tag_handling(params)
    charge(edge.access, who, sum(len(t) for t in texts))
    answers, results = await anyio.to_thread.run_sync(
        mapping.translate, edge.translator, params, texts, source, target)
    for result in results:
        edge.metrics.observe_result(result)
    return mapping.answer(texts, answers)


@router.get("/v2/languages")
@router.post("/v2/languages", operation_id="deepl_languages_post")
async def deepl_languages(request: Request) -> list[dict[str, Any]]:
    """DeepL's /v2/languages: ``type=source`` (default) or ``type=target``."""
    kind = one(await read_params(request), "type") or "source"
    if kind not in ("source", "target"):
        raise InputError("Value for 'type' not supported.")
    return mapping.source_languages() if kind == "source" else mapping.target_languages()


@router.get("/v2/usage")
@router.post("/v2/usage", operation_id="deepl_usage_post")
async def deepl_usage(request: Request, edge: EdgeDep) -> dict[str, int]:
    """DeepL's /v2/usage: this key's characters today (UTC) and its daily allowance."""
    who = caller(request, await read_params(request))
    return {"character_count": edge.access.chars_today(who),
            "character_limit": who.policy.chars_per_day or UNLIMITED}


PROTOCOL = Protocol("deepl", router,
                    key_in_body=frozenset({"/v2/translate", "/v2/usage", "/v2/languages"}),
                    error_prefixes=("/v2/",), error_shape=error_shape)  # DeepL's older auth_key
