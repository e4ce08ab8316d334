"""OpenAI's transcriptions' schemas: the multipart form (``file``, ``model``, ``language``,
``prompt``, ``response_format``, ``temperature``), the answer formats, and OpenAI's error shape
(:data:`~hunyuan_webui.web.protocols.openai.schemas.OpenAIRoute`)."""

from __future__ import annotations

from hunyuan_webui.errors import InputError
from hunyuan_webui.web.protocols.openai.schemas import OpenAIRoute, error_shape

__all__ = ["FORMATS", "ROUTE", "OpenAIRoute", "check_format", "error_shape"]

ROUTE = "/v1/audio/transcriptions"
FORMATS = ("json", "text", "srt", "vtt", "verbose_json")


def check_format(response_format: str) -> None:
    if response_format not in FORMATS:
        raise InputError(f"response_format must be one of {', '.join(FORMATS)}; got "
                         f"{response_format!r}.")
