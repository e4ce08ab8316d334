"""OpenAI's transcription route: ``POST /v1/audio/transcriptions``."""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import Response

from hunyuan_webui.errors import ModelLoadError
from hunyuan_webui.web.deps import CallerDep, EdgeDep
from hunyuan_webui.web.protocols.audio import mapping
from hunyuan_webui.web.protocols.audio.schemas import ROUTE, OpenAIRoute, check_format, error_shape
from hunyuan_webui.web.protocols.protocol import Protocol

router = APIRouter(route_class=OpenAIRoute, tags=["openai"])


@router.post(ROUTE)
async def transcriptions(
    who: CallerDep,
    edge: EdgeDep,
    file: Annotated[UploadFile, File(description="The audio: WAV, OGG, WebM, MP3, FLAC...")],
    model: Annotated[str, Form()] = "whisper-1",
    language: Annotated[str | None, Form()] = None,
    prompt: Annotated[str | None, Form()] = None,
    response_format: Annotated[str, Form()] = "json",
    temperature: Annotated[float, Form()] = 0.0,
) -> Response:
    """Speech to text in OpenAI's shape; ``model`` is accepted whatever it names (the one
    loaded recogniser answers)."""
    check_format(response_format)
    speech = edge.speech
    if speech is None:
        raise ModelLoadError("Speech recognition is not available on this server.")
    code = mapping.whisper_code(speech, language)
    data = await file.read()
    transcript = await anyio.to_thread.run_sync(speech.transcribe, data, code)
    edge.access.charge(who, len(transcript.text))
    return mapping.answer(transcript, response_format)


PROTOCOL = Protocol("audio", router, error_prefixes=("/v1/audio/",), error_shape=error_shape)
