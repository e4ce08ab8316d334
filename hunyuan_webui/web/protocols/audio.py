"""OpenAI's transcription route, spoken by the recogniser: ``POST /v1/audio/transcriptions``.

A multipart form as OpenAI takes it (``file``, ``model``, ``language``, ``prompt``,
``response_format``: ``json``, ``text``, ``srt``, ``vtt`` or ``verbose_json``; ``temperature``),
so that the ``openai`` client's ``audio.transcriptions.create`` works unchanged, and so that
another of these apps (``--asr-endpoint``) or anything written for OpenAI can use this one's
recogniser. Under the same keys, per-minute limits and access policy as the other API routes (the
Gatekeeper applies them: the route is in the API's kind), with the recognised characters charged
to the key's daily quota. The file is read into memory (never written to disk), bounded by
``--max-audio-bytes`` (413); what cannot be read as sound is a 415. Errors in OpenAI's shape.
"""

from __future__ import annotations

import contextlib
from typing import Annotated, Any

import anyio
from fastapi import APIRouter, File, Form, UploadFile
from fastapi.responses import PlainTextResponse, Response

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, ModelLoadError, UnknownLanguageError
from hunyuan_webui.speech import Speech, Transcript
from hunyuan_webui.web.deps import CallerDep
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.protocols.openai import OpenAIRoute, error_shape
from hunyuan_webui.web.protocols.protocol import Protocol

ROUTE = "/v1/audio/transcriptions"
FORMATS = ("json", "text", "srt", "vtt", "verbose_json")


def create_router(speech: Speech | None, access: AccessControl) -> APIRouter:
    router = APIRouter(route_class=OpenAIRoute, tags=["openai"])

    @router.post(ROUTE)
    async def transcriptions(
        who: CallerDep,
        file: Annotated[UploadFile, File(description="The audio: WAV, OGG, WebM, MP3, FLAC...")],
        model: Annotated[str, Form()] = "whisper-1",
        language: Annotated[str | None, Form()] = None,
        prompt: Annotated[str | None, Form()] = None,
        response_format: Annotated[str, Form()] = "json",
        temperature: Annotated[float, Form()] = 0.0,
    ) -> Response:
        """Speech to text in OpenAI's shape; ``model`` is accepted whatever it names (the one
        loaded recogniser answers)."""
        if response_format not in FORMATS:
            raise InputError(f"response_format must be one of {', '.join(FORMATS)}; got "
                             f"{response_format!r}.")
        if speech is None:
            raise ModelLoadError("Speech recognition is not available on this server.")
        code = whisper_code(speech, language)
        data = await file.read()
        transcript = await anyio.to_thread.run_sync(speech.transcribe, data, code)
        access.charge(who, len(transcript.text))
        return answer(transcript, response_format)

    return router


def whisper_code(speech: Speech, language: str | None) -> str | None:
    """One of our language codes, or any code the recogniser itself knows (Whisper has 99
    languages, the translator 38: a transcription may be in one the translator lacks)."""
    if not language:
        return None
    try:
        return languages.normalize(language)
    except UnknownLanguageError:
        status = speech.status()
        if status.state == "ready" and language.lower() in speech.recognizer().languages:
            return language.lower()
        raise


def answer(transcript: Transcript, response_format: str) -> Response:
    if response_format == "text":
        return PlainTextResponse(transcript.text + "\n")
    if response_format in ("srt", "vtt"):
        return PlainTextResponse(subtitles(transcript, response_format),
                                 media_type="text/vtt" if response_format == "vtt"
                                 else "application/x-subrip")
    if response_format == "verbose_json":
        return _json(verbose(transcript))
    return _json({"text": transcript.text})


def _json(body: dict[str, Any]) -> Response:
    from fastapi.responses import JSONResponse

    return JSONResponse(body)


def segments(transcript: Transcript) -> list[dict[str, Any]]:
    """OpenAI's segments: one per recognised piece, its times in the whole file."""
    out: list[dict[str, Any]] = []
    for final in transcript.utterances:
        pieces = final.recognition.pieces if final.recognition else ()
        for piece in pieces:
            start = min(final.end, final.start + piece.start)
            end = min(final.end, final.start + piece.end) if piece.end else final.end
            out.append({"id": len(out), "seek": 0, "start": round(start, 2),
                        "end": round(max(start, end), 2), "text": piece.text.strip(),
                        "tokens": [], "temperature": 0.0,
                        "avg_logprob": round(piece.avg_logprob, 4), "compression_ratio": 0.0,
                        "no_speech_prob": round(piece.no_speech_prob, 4)})
    return out


def verbose(transcript: Transcript) -> dict[str, Any]:
    name = transcript.language
    with contextlib.suppress(InputError, KeyError, AttributeError):
        name = languages.get(transcript.language).english.lower()
    return {"task": "transcribe", "language": name, "duration": transcript.duration,
            "text": transcript.text, "segments": segments(transcript)}


def subtitles(transcript: Transcript, kind: str) -> str:
    """SRT or WebVTT: a cue per recognised piece."""
    cues = segments(transcript)
    sep = "," if kind == "srt" else "."
    lines = ["WEBVTT", ""] if kind == "vtt" else []
    for i, cue in enumerate(cues, 1):
        if kind == "srt":
            lines.append(str(i))
        lines.append(f"{_stamp(cue['start'], sep)} --> {_stamp(cue['end'], sep)}")
        lines += [cue["text"], ""]
    return "\n".join(lines) + ("\n" if lines and lines[-1] else "")


def _stamp(seconds: float, sep: str) -> str:
    ms = int(round(seconds * 1000))
    h, ms = divmod(ms, 3_600_000)
    m, ms = divmod(ms, 60_000)
    s, ms = divmod(ms, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{sep}{ms:03d}"


PROTOCOL = Protocol("audio", lambda edge: create_router(edge.speech, edge.access),
                    error_prefixes=("/v1/audio/",), error_shape=error_shape)
