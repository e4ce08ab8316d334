"""The page's one place where an error becomes what a visitor reads.

Each listener of the page is wrapped by :func:`friendly`. A :class:`TranslatorError` shows its
user message; a ``gr.Error`` keeps its own; anything else is a bug: it is logged with its
traceback, and the visitor reads a plain apology, never the exception's text (which can name
server paths or internals, like ``'int' object has no attribute 'strip'``). Every message passes
through ``redact`` so that a local model path reads as the model's name. Visitors are students,
not operators: the common errors read in the visitor's UI language, and advice about server flags
(``--max-input-tokens``, ``--chimera-model``...) goes to the log instead of the page.

The wrapper is the same kind of callable as the listener (function, coroutine, generator, async
generator), so Gradio streams and injects ``gr.Request``/``gr.Progress`` exactly as before, and a
cancelled listener is closed at once, running its ``finally`` (which cancels the translation).
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
import re
from collections.abc import Callable
from typing import Any

import gradio as gr

from hunyuan_webui.errors import (
    BusyError,
    EngineError,
    InputTooLongError,
    ModelLoadError,
    NotReadyError,
    RateLimitError,
    TranslatorError,
)
from hunyuan_webui.web.page.text import say, ui_lang
from hunyuan_webui.web.page.wording import in_page_language

log = logging.getLogger("hunyuan_webui.web.page.ui")

APOLOGY = say("en", "apology")
# Errors a visitor reads in their own words (MESSAGES keys); others keep the service's message.
PLAIN_WORDS: dict[type[TranslatorError], str] = {
    NotReadyError: "not_ready", ModelLoadError: "not_ready"}
# Errors whose service message is plain English already (with numbers worth reading): a visitor
# whose page is in another language reads these words instead.
TRANSLATED: dict[type[TranslatorError], str] = {
    BusyError: "busy", RateLimitError: "rate_limited", InputTooLongError: "input_too_long",
    EngineError: "engine_failed"}
_OPERATOR_ADVICE = re.compile(r"\s*\([^()]*--[a-z][^()]*\)|[^.]*(--[a-z]|launch\.sh)[^.]*\.")


def for_visitor(message: str) -> str:
    """The message without the parts addressed to whoever runs the server."""
    plain = _OPERATOR_ADVICE.sub("", message).strip()
    return plain or message


def visitor_text(exc: TranslatorError, lang: str) -> str:
    """What a visitor whose page is in ``lang`` reads for ``exc``."""
    tables = (PLAIN_WORDS,) if lang == "en" else (PLAIN_WORDS, TRANSLATED)
    for table in tables:
        for kind, key in table.items():
            if isinstance(exc, kind):
                seconds = math.ceil(getattr(exc, "retry_after", 0) or 0) or 2
                return say(lang, key, seconds=seconds)
    return in_page_language(lang, for_visitor(exc.user_message))


def _visitor_lang(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    for value in (*args, *kwargs.values()):
        if isinstance(value, gr.Request):
            return ui_lang(value)
    return "en"


def _as_error(exc: Exception, lang: str, name: str, redact: Callable[[str], str]) -> gr.Error:
    if isinstance(exc, gr.Error):
        exc.message = redact(str(exc.message))
        return exc
    if isinstance(exc, TranslatorError):
        log.info("the page's %s refused: %s", name, redact(exc.user_message))
        return gr.Error(redact(visitor_text(exc, lang)), print_exception=False)
    log.error("the page's %s failed", name, exc_info=exc)
    return gr.Error(say(lang, "apology"), print_exception=False)


def friendly(fn: Callable[..., Any], redact: Callable[[str], str] = str) -> Callable[..., Any]:
    name = getattr(fn, "__name__", "listener")

    def readable(exc: Exception, lang: str = "en") -> gr.Error:
        error = _as_error(exc, lang, name, redact)
        if error.title == "Error":  # Gradio's default: the toast's title in the page's language
            error.title = say(lang, "error_title")
        return error

    if inspect.isasyncgenfunction(fn):
        @functools.wraps(fn)
        async def async_generator(*args: Any, **kwargs: Any) -> Any:
            inner = fn(*args, **kwargs)
            try:
                async for item in inner:
                    yield item
            except Exception as exc:
                raise readable(exc, _visitor_lang(args, kwargs)) from None
            finally:
                await inner.aclose()

        return async_generator

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def generator(*args: Any, **kwargs: Any) -> Any:
            inner = fn(*args, **kwargs)
            try:
                yield from inner
            except Exception as exc:
                raise readable(exc, _visitor_lang(args, kwargs)) from None
            finally:
                inner.close()

        return generator

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def coroutine(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                raise readable(exc, _visitor_lang(args, kwargs)) from None

        return coroutine

    @functools.wraps(fn)
    def function(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise readable(exc, _visitor_lang(args, kwargs)) from None

    return function
