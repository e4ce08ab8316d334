"""OpenAI's transcriptions onto the recogniser: OpenAI's language code as ours (or one the
recogniser knows beyond the translator's), and the transcript as each answer format: OpenAI's
JSON, plain text, SRT or WebVTT cues, or the verbose JSON with its segments."""

from __future__ import annotations

import contextlib
from typing import Any

from fastapi.responses import JSONResponse, PlainTextResponse, Response

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, UnknownLanguageError
from hunyuan_webui.speech import Speech, Transcript


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
