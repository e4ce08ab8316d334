"""OpenAI's routes: ``POST /v1/chat/completions`` (streaming and not), the legacy
``POST /v1/completions``, ``GET /v1/models`` and ``GET /v1/models/{model}``; every error in
OpenAI's shape (:data:`~hunyuan_webui.web.protocols.openai.schemas.OpenAIRoute`)."""

from __future__ import annotations

from typing import Any

import anyio
from fastapi import APIRouter

from hunyuan_webui.errors import InputError
from hunyuan_webui.service.operations import chat
from hunyuan_webui.web.deps import CallerDep, Edge, EdgeDep
from hunyuan_webui.web.protocols.openai import mapping
from hunyuan_webui.web.protocols.openai.schemas import (
    Answer,
    ChatRequest,
    CompletionRequest,
    ModelNotFoundError,
    OpenAIRoute,
    TextAnswer,
    error_shape,
)
from hunyuan_webui.web.protocols.protocol import Protocol

router = APIRouter(route_class=OpenAIRoute, tags=["openai"])


def _model_card(edge: Edge) -> dict[str, Any]:
    name = edge.translator.spec.public_id  # never a local checkpoint's path
    return {"id": name, "object": "model", "created": 0, "owned_by": "tencent"}


@router.get("/v1/models")
def list_models(who: CallerDep, edge: EdgeDep) -> dict[str, Any]:
    """OpenAI's model list: the one model served here."""
    return {"object": "list", "data": [_model_card(edge)]}


@router.get("/v1/models/{model:path}")
def get_model(model: str, who: CallerDep, edge: EdgeDep) -> dict[str, Any]:
    card = _model_card(edge)
    if model != card["id"]:
        raise ModelNotFoundError(f"The model {model!r} does not exist; this server has "
                                 f"{card['id']!r}.")
    return card


@router.post("/v1/chat/completions")
async def chat_completions(body: ChatRequest, who: CallerDep, edge: EdgeDep) -> Any:
    """OpenAI's chat completions. A translation prompt (the model cards', a known tool's,
    "Translate to X: ...", Qwen-MT's translation_options) goes through the translator
    (cache, segments); anything else is plain generation."""
    translator = edge.translator
    defaults = translator.spec.decoding
    options, tool_options = body.decoding(defaults), body.tool_decoding(defaults)
    # Detection and a few regular expressions per message: off the event loop.
    asked = await anyio.to_thread.run_sync(lambda: chat.read_chat(
        translator, body.messages, options, tool_options, body.translation_options))
    if not (asked.translation or asked.tool or asked.prompt.strip()):
        raise InputError("The messages have no text.")
    answer = Answer(translator.spec.public_id, edge.redact.text)
    return await mapping.serve(asked, mapping.Ask(body, edge, who, answer))


@router.post("/v1/completions")
async def completions(body: CompletionRequest, who: CallerDep, edge: EdgeDep) -> Any:
    """OpenAI's legacy completions: the prompt is read like a chat's user message (a
    translation prompt goes through the translator); anything else is plain generation."""
    prompt = body.text()
    if not prompt.strip():
        raise InputError("The prompt has no text.")
    translator = edge.translator
    defaults = translator.spec.decoding
    options, tool_options = body.decoding(defaults), body.tool_decoding(defaults)
    asked = await anyio.to_thread.run_sync(lambda: chat.read_prompt(
        translator, prompt, options, tool_options, body.translation_options))
    answer = TextAnswer(translator.spec.public_id, edge.redact.text)
    return await mapping.serve(asked, mapping.Ask(body, edge, who, answer))


PROTOCOL = Protocol("openai", router,
                    error_prefixes=("/v1/chat/", "/v1/models", "/v1/completions"),
                    error_shape=error_shape)
