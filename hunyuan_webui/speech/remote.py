"""A recogniser on another machine: an OpenAI-compatible ``/v1/audio/transcriptions`` server
(vLLM serves Whisper models there; so does another of these apps).

Each utterance is sent as a 16 kHz mono WAV with the language, asking for ``verbose_json`` so
that the pieces come back with their no-speech probability and average log probability and the
same gate applies as at home (:func:`~hunyuan_webui.speech.recognizer.keep`). A server that does
not give ``verbose_json`` is asked for plain ``json`` from then on (its text is then taken as it
is: voice activity detection has already kept silence away). Failures retry with a short backoff
and end as an :class:`~hunyuan_webui.errors.EngineError` that names the server.
"""

from __future__ import annotations

import time

import httpx
import numpy as np

from hunyuan_webui.errors import AuthError, EngineError, InputError
from hunyuan_webui.speech.audio import RATE, wav_bytes
from hunyuan_webui.speech.recognizer import Described, Piece, Recognition, Recognizer, gated
from hunyuan_webui.urls import redact_url

ROUTE = "/audio/transcriptions"
# Whisper's language codes: a remote model is taken to know them all (large-v3's list).
WHISPER_LANGUAGES = frozenset(["en", "zh", "de", "es", "ru", "ko", "fr", "ja", "pt", "tr", "pl", "ca", "nl", "ar", "sv", "it", "id", "hi", "fi", "vi", "he", "uk", "el", "ms", "cs", "ro", "da", "hu", "ta", "no", "th", "ur", "hr", "bg", "lt", "la", "mi", "ml", "cy", "sk", "te", "fa", "lv", "bn", "sr", "az", "sl", "kn", "et", "mk", "br", "eu", "is", "hy", "ne", "mn", "bs", "kk", "sq", "sw", "gl", "mr", "pa", "si", "km", "sn", "yo", "so", "af", "oc", "ka", "be", "tg", "sd", "gu", "am", "yi", "lo", "uz", "fo", "ht", "ps", "tk", "nn", "mt", "sa", "lb", "my", "bo", "tl", "mg", "as", "tt", "haw", "ln", "ha", "ba", "jw", "su", "yue"])


def transcription_url(endpoint: str) -> str:
    """``http://host:8000/v1`` (like --endpoint) or the full route, as given."""
    base = endpoint.rstrip("/")
    return base if base.endswith(ROUTE) else base + ROUTE


class RemoteRecognizer(Recognizer):
    def __init__(self, endpoint: str, *, model: str = "whisper-1", api_key: str | None = None,
                 timeout: float = 60.0, retries: int = 2) -> None:
        self.url = transcription_url(endpoint)
        self.model = model
        self.retries = retries
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=httpx.Timeout(timeout, connect=10.0),
                                   headers=headers, trust_env=False)
        self.verbose = True  # until the server refuses verbose_json
        self.described = Described(model=f"{model} at {redact_url(self.url)}", backend="remote")
        self.languages = WHISPER_LANGUAGES

    def recognize(self, samples: np.ndarray, language: str | None, *,
                  draft: bool = False) -> Recognition:
        duration = samples.size / RATE
        body = self._post(wav_bytes(samples), language)
        if not self.verbose:
            return gated([Piece(str(body.get("text", "")), 0.0, duration)],
                         language or "", duration)
        pieces = [Piece(str(s.get("text", "")), float(s.get("start", 0.0)),
                        float(s.get("end", duration)), float(s.get("no_speech_prob", 0.0)),
                        float(s.get("avg_logprob", 0.0))) for s in body.get("segments") or []]
        if not pieces and body.get("text"):
            pieces = [Piece(str(body["text"]), 0.0, duration)]
        return gated(pieces, str(body.get("language") or language or ""), duration)

    def _post(self, wav: bytes, language: str | None) -> dict:
        last = ""
        for attempt in range(self.retries + 1):
            data = {"model": self.model,
                    "response_format": "verbose_json" if self.verbose else "json"}
            if language:
                data["language"] = language
            try:
                response = self.client.post(self.url, data=data,
                                            files={"file": ("speech.wav", wav, "audio/wav")})
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return response.json()
                last = f"HTTP {response.status_code}: {response.text[:200]}"
                if response.status_code in (400, 422) and self.verbose:
                    self.verbose = False  # try the plain shape at once
                    continue
                if response.status_code in (401, 403):
                    raise AuthError(f"The speech server {redact_url(self.url)} refused the key "
                                    "(--asr-api-key).")
                if response.status_code in (413, 415):
                    raise InputError(f"The speech server refused the audio: {last}")
            time.sleep(min(2.0, 0.25 * 2 ** attempt))
        raise EngineError(f"The speech server {redact_url(self.url)} did not answer: {last}")

    def close(self) -> None:
        self.client.close()
