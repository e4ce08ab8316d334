"""The page's listeners read and write components by name, not by position.

Translate reads a :class:`TextForm` (one dataclass of named values, filled from Gradio's dict
inputs) and Translate file a :class:`DocumentForm`, and the listeners answer with a dict of only
the names that change (``{"progress": "Translating…"}``). :class:`Names` is the one place that turns those names into
the page's components (the fields of :class:`~hunyuan_webui.web.page.components.Page`) when :mod:`ui_events` wires a
listener, so adding an output is one name in the listener and one in the wiring.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from typing import Any

import gradio as gr

from hunyuan_webui import languages
from hunyuan_webui.modes import TRANSLATE
from hunyuan_webui.web.page.components import Page


@dataclass(frozen=True)
class TextForm:
    """What the Translate listener reads from the page. A decoding value left None is the
    loaded model's (its model card's)."""

    text: str = ""
    source: str = languages.AUTO
    target: str = "en"
    deterministic: bool = False
    temperature: float | None = None
    top_p: float | None = None
    top_k: float | None = None
    repetition: float | None = None
    max_new: float = 0  # 0: automatic
    mode: str = TRANSLATE
    context: str = ""
    style: str = ""
    instructions: str = ""
    data_format: str = ""
    glossary: Any = None
    show_candidates: bool = False
    romanize: bool = False
    history: list[list[str]] | None = None
    fresh: bool = False  # Retranslate: a fresh answer, which replaces the cached one
    swapped: bool = False  # Swap moved the translation into the text box (translate it back)
    live: bool = False  # as you type: the text may be a draft of the newest history row's

    @classmethod
    def names(cls) -> tuple[str, ...]:
        """The components it reads (``fresh`` and ``live`` are set by the button, not read)."""
        return tuple(f.name for f in fields(cls) if f.name not in ("fresh", "live"))


@dataclass(frozen=True)
class DocumentForm:
    """What the Translate-file listener reads from the page, by the components' names. Its
    inputs are wired in this order (:meth:`names`), which is also the order of the
    ``/translate_document`` API's arguments that gradio_client sends."""

    upload: str | None = None  # the uploaded file's path
    source: str = languages.AUTO
    target: str = "en"
    columns: list[str] | None = None  # a CSV's columns to translate
    deterministic: bool = False
    glossary: Any = None
    bilingual_doc: bool = False  # each paragraph followed by its translation

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


class Names:
    """The page's components by name, for wiring listeners by name."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self._by_id = {block._id: name for name, block in page.blocks().items()}

    def inputs(self, names: Iterable[str]) -> set[Any]:
        """Gradio dict inputs: the listener gets one ``{component: value}`` dict."""
        return {getattr(self.page, name) for name in names}

    def outputs(self, names: Iterable[str]) -> list[Any]:
        return [getattr(self.page, name) for name in names]

    def read(self, values: dict[Any, Any]) -> dict[str, Any]:
        return {self._by_id[block._id]: value for block, value in values.items()}

    def write(self, changes: dict[str, Any]) -> Any:
        """A listener's ``{name: value}`` as Gradio's ``{component: value}`` (nothing: skip)."""
        if not changes:
            return gr.skip()
        return {getattr(self.page, name): value for name, value in changes.items()}

    def listener(self, fn: Callable[..., Any], form: type | None = None,
                 positional: Iterable[str] | None = None, **fixed: Any) -> Callable[..., Any]:
        """``fn`` as Gradio calls it: with dict inputs read into ``form(**values, **fixed)``
        when ``form`` is given, its answers (dicts by name) written to components. With
        ``positional`` (the names of list inputs, in their order: an API whose callers send
        arguments by position keeps it), the form is filled from those arguments instead. The
        wrapper has ``fn``'s signature (with those names in the form's place), so Gradio still
        injects ``gr.Request`` and ``gr.Progress`` where ``fn`` takes them."""
        order = tuple(positional) if positional is not None else None
        wrapped = _signed(fn, order)

        def convert(args: tuple[Any, ...]) -> tuple[Any, ...]:
            if form is None:
                return args
            if order is not None:
                values = dict(zip(order, args, strict=False))
                return (form(**values, **fixed), *args[len(order):])
            return (form(**self.read(args[0]), **fixed), *args[1:])

        if inspect.isasyncgenfunction(fn):
            @functools.wraps(fn)
            async def streamed(*args: Any, **kwargs: Any) -> Any:
                inner = fn(*convert(args), **kwargs)
                try:
                    async for changes in inner:
                        yield self.write(changes)
                finally:
                    await inner.aclose()

            return wrapped(streamed)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awaited(*args: Any, **kwargs: Any) -> Any:
                return self.write(await fn(*convert(args), **kwargs))

            return wrapped(awaited)

        @functools.wraps(fn)
        def answered(*args: Any, **kwargs: Any) -> Any:
            return self.write(fn(*convert(args), **kwargs))

        return wrapped(answered)


def _signed(fn: Callable[..., Any], order: tuple[str, ...] | None
            ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Gives a wrapper of ``fn`` the signature Gradio reads to place what it injects: ``fn``'s,
    or, where the form is filled from positional inputs, those inputs in the form's place."""
    def sign(wrapper: Callable[..., Any]) -> Callable[..., Any]:
        if order is not None:
            rest = list(inspect.signature(fn).parameters.values())[1:]
            wrapper.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
                [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                 for name in order] + rest)
        return wrapper

    return sign
