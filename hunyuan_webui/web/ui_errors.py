"""The page's one place where an error becomes what a visitor reads.

Each listener of the page is wrapped by :func:`friendly`. A :class:`TranslatorError` shows its
user message; a ``gr.Error`` keeps its own; anything else is a bug: it is logged with its
traceback, and the visitor reads a plain apology, never the exception's text (which can name
server paths or internals, like ``'int' object has no attribute 'strip'``). Every message passes
through ``redact`` so that a local model path reads as the model's name.

The wrapper is the same kind of callable as the listener (function, coroutine, generator, async
generator), so Gradio streams and injects ``gr.Request``/``gr.Progress`` exactly as before, and a
cancelled listener is closed at once, running its ``finally`` (which cancels the translation).
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any

import gradio as gr

from hunyuan_webui.errors import TranslatorError

log = logging.getLogger("hunyuan_webui.web.ui")

APOLOGY = "Something went wrong on the server; it has been logged. Please try again."


def friendly(fn: Callable[..., Any], redact: Callable[[str], str] = str) -> Callable[..., Any]:
    name = getattr(fn, "__name__", "listener")

    def readable(exc: Exception) -> gr.Error:
        if isinstance(exc, gr.Error):
            exc.message = redact(str(exc.message))
            return exc
        if isinstance(exc, TranslatorError):
            return gr.Error(redact(exc.user_message), print_exception=False)
        log.error("the page's %s failed", name, exc_info=exc)
        return gr.Error(APOLOGY, print_exception=False)

    if inspect.isasyncgenfunction(fn):
        @functools.wraps(fn)
        async def async_generator(*args: Any, **kwargs: Any) -> Any:
            inner = fn(*args, **kwargs)
            try:
                async for item in inner:
                    yield item
            except Exception as exc:
                raise readable(exc) from None
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
                raise readable(exc) from None
            finally:
                inner.close()

        return generator

    if inspect.iscoroutinefunction(fn):
        @functools.wraps(fn)
        async def coroutine(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                raise readable(exc) from None

        return coroutine

    @functools.wraps(fn)
    def function(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            raise readable(exc) from None

    return function
