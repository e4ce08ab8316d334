"""The few exceptions that mean something to a user.

Every layer raises these; the edges (the Gradio UI, the HTTP API, the command line) turn them into
``gr.Error``, a JSON 4xx/5xx or a one-line message in exactly one place each. ``user_message`` is the
text shown; ``code`` is a stable machine-readable name used by the HTTP API.
"""

from __future__ import annotations

from collections.abc import Iterable


class TranslatorError(Exception):
    """Base class: something the user can read and act on."""

    code = "translator_error"
    http_status = 400

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.user_message = message


class InputError(TranslatorError):
    """The request itself is wrong (too long, wrong type, malformed)."""

    code = "invalid_input"


class InputTooLongError(InputError):
    code = "input_too_long"
    http_status = 413


class UnknownLanguageError(InputError):
    code = "unknown_language"

    def __init__(self, given: str, valid: Iterable[str]) -> None:
        valid = list(valid)
        super().__init__(f"Unknown language code {given!r}. Valid codes: {', '.join(valid)}.")
        self.given = given
        self.valid = valid


class UnsupportedModeError(InputError):
    code = "unsupported_mode"


class BusyError(TranslatorError):
    """Too many requests in flight: the client should retry later."""

    code = "busy"
    http_status = 503

    def __init__(self, message: str = "The translator is busy; please try again in a moment.",
                 retry_after: float = 2.0) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class AuthError(TranslatorError):
    """A missing or unknown API key."""

    code = "unauthorized"
    http_status = 401


class RateLimitError(TranslatorError):
    """A key's request or character quota is spent for now."""

    code = "rate_limited"
    http_status = 429

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotReadyError(TranslatorError):
    """The model is still loading or warming up, or failed to load."""

    code = "not_ready"
    http_status = 503


class ModelLoadError(TranslatorError):
    """Loading failed; the message says what was tried and what to do instead."""

    code = "model_load_failed"
    http_status = 503


class EngineError(TranslatorError):
    """Generation failed (remote server unreachable, out of memory during decoding...)."""

    code = "engine_error"
    http_status = 502


class CancelledError(TranslatorError):
    """The request was cancelled (Stop button, closed tab, disconnected client)."""

    code = "cancelled"
    http_status = 499


class UnsupportedAudioError(InputError):
    """Audio that cannot be read: not a sound file, a format not understood, or no sound in it."""

    code = "unsupported_audio"
    http_status = 415
