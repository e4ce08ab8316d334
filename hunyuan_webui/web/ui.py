"""The Gradio 6 page's listeners: a thin layer over :class:`~hunyuan_webui.service.Translator`.

The page is built in :mod:`ui_layout` (components) and :mod:`ui_events` (wiring); its words live
in :mod:`ui_text`, its scripts and styles in :mod:`ui_client`. Every model-bound event shares one
``concurrency_id`` whose limit comes from the settings. The one stable programmatic endpoint is
``/translate`` (text, source_lang, target_lang) -> streamed translation string. User errors
become ``gr.Error`` in the listeners' wrapper (:mod:`ui_errors`), in the visitor's UI language.
A text longer than one request may be is translated in parts (:mod:`ui_parts`). Every
translation counts against the visitor's key or its visitor limits (:mod:`access`).
"""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import gradio as gr

from hunyuan_webui import languages, modes
from hunyuan_webui.engine import DecodingOptions, EngineState
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.modes import TRANSLATE
from hunyuan_webui.service import TranslationRequest, TranslationResult, Translator
from hunyuan_webui.service.job import Update, batched_updates
from hunyuan_webui.web.access import AccessControl
from hunyuan_webui.web.security import Redactor
from hunyuan_webui.web.ui_errors import friendly
from hunyuan_webui.web.ui_files import FileListeners
from hunyuan_webui.web.ui_parts import split_parts
from hunyuan_webui.web.ui_report import (
    detection_markdown,
    extras_markdown,
    glossary_table,
    history_rows,
    last_run_markdown,
    romanized_markdown,
)
from hunyuan_webui.web.ui_text import say, state_name, ui_lang
from hunyuan_webui.web.visitor_files import VisitorFiles

HISTORY_LIMIT = 50
STATUS_POLL_S, LOADING_POLL_S = 10.0, 2.0  # seconds between a tab's status polls
# The page's text is redrawn at most this often while it streams (the first words at once): each
# redraw costs the web server a Gradio message (a diff, JSON, an SSE event), and on a 2-core machine
# that CPU is taken from decoding. 20 per second still reads as a continuous stream.
PAGE_REDRAW_S = 0.05
PAGE_PARTS = 10  # the page takes up to this many times --max-input-chars, translated in parts
# The listeners a visitor's input reaches: errors in them become readable messages (ui_errors).
LISTENERS = ("api_translate", "translate", "translate_document", "document_columns",
             "load_glossary", "swap", "restore", "export_history")
_JOIN_WITHOUT_SPACE = frozenset({"zh", "zh-Hant", "yue", "ja", "th", "km", "my", "bo"})


def options_from(deterministic: bool, temperature: float, top_p: float, top_k: float,
                 repetition_penalty: float, max_new_tokens: float) -> DecodingOptions:
    return DecodingOptions(
        deterministic=bool(deterministic), temperature=float(temperature), top_p=float(top_p),
        top_k=int(top_k), repetition_penalty=float(repetition_penalty),
        max_new_tokens=int(max_new_tokens) or None)


class TranslatorUI(FileListeners):
    """Holds the translator; each public method is one listener (the page: ui_layout)."""

    def __init__(self, translator: Translator, banner: str = "",
                 access: AccessControl | None = None, files: VisitorFiles | None = None) -> None:
        self.translator = translator
        self.banner = banner  # markdown at the top of the page (what the demo model is)
        self.access = access or AccessControl.from_settings(translator.settings)
        self.files = files or VisitorFiles(gr.utils.get_upload_folder(),
                                           ttl=translator.settings.files_ttl)
        self.redact = Redactor.for_translator(translator)
        for name in LISTENERS:
            setattr(self, name, friendly(getattr(self, name), self.redact.text))

    @property
    def page_limit(self) -> int:
        return self.translator.settings.max_input_chars * PAGE_PARTS

    # -- translation ------------------------------------------------------------------------------
    async def api_translate(self, text: str, source_lang: str = "auto", target_lang: str = "en",
                            visitor: gr.Request | None = None) -> AsyncIterator[str]:
        """Translate text; streams the translation as it grows. Language codes as in /v1/languages."""
        # The page's own defaults (the model card's decoding, the phrase cache on).
        request = TranslationRequest(text=text, source_lang=source_lang, target_lang=target_lang)
        self._admit(visitor, text)
        async for updates in self._run(request):
            yield updates[-1].text

    async def translate(self, text: str, source: str, target: str, deterministic: bool,
                        temperature: float, top_p: float, top_k: float,
                        repetition_penalty: float, max_new_tokens: float, mode: str,
                        context: str, style: str, instructions: str, data_format: str,
                        glossary: Any, show_candidates: bool, romanize: bool,
                        history: list[list[str]] | None, use_cache: bool = True,
                        visitor: gr.Request | None = None,
                        progress: gr.Progress = gr.Progress()  # noqa: B008 - Gradio injects it
                        ) -> AsyncIterator[tuple[Any, ...]]:
        """``use_cache`` is False for Retranslate: a fresh answer, which replaces the cached one.
        Outputs: translation, detected line, progress line, history (browser), history table,
        extras, detected code, romanization."""
        lang, text = ui_lang(visitor), text or ""
        if len(text) > self.page_limit:
            raise gr.Error(say(lang, "too_long", chars=len(text), limit=self.page_limit),
                           print_exception=False)
        self._admit(visitor, text)
        template = TranslationRequest(
            text="", source_lang=source, target_lang=target,
            options=self._options(deterministic, temperature, top_p, top_k, repetition_penalty,
                                  max_new_tokens),
            mode=mode or TRANSLATE, context=context or "", glossary=self._glossary(glossary),
            cache=bool(use_cache), style=style or "", instructions=self._instructions(instructions),
            data_format=data_format or "")
        parts = await anyio.to_thread.run_sync(self._split, text)
        done, first, result = "", None, None
        yield (gr.skip(),) * 2 + (say(lang, "translating") + "…",) + (gr.skip(),) * 5
        for number, part in enumerate(parts, 1):
            # Every part after the first keeps the first part's detected source language.
            request = replace(template, text=part)
            if first is not None and source == languages.AUTO:
                request = replace(request, source_lang=first.source_lang)
            async for updates in self._run(request):
                update = updates[-1]
                if update.result is None:
                    line = self._progress_line(lang, update, number, len(parts), progress)
                    yield (done + update.text, gr.skip(), line) + (gr.skip(),) * 5
                else:
                    result = update.result
            first = first or result
            done += result.text + _separator(part, target, last=number == len(parts))
        yield self._finished(lang, text, done, first, result, source, target, len(parts),
                             bool(show_candidates), bool(romanize), list(history or []))

    def _finished(self, lang: str, text: str, done: str, first: TranslationResult,
                  result: TranslationResult, source: str, target: str, parts: int,
                  show_candidates: bool, romanize: bool, history: list[list[str]]
                  ) -> tuple[Any, ...]:
        if done.strip():
            pair = f"{first.source_lang} → {target}"
            history.insert(0, [text, done, pair, first.source_lang, target])
        history = history[:HISTORY_LIMIT]
        return (done, detection_markdown(first, source, lang),
                last_run_markdown(result, lang, parts), history, history_rows(history, lang),
                extras_markdown(result, show_candidates, lang),
                first.source_lang if first.detection else "",
                romanized_markdown(done, target, romanize))

    def _split(self, text: str) -> list[str]:
        settings = self.translator.settings
        return split_parts(text, settings.max_input_chars, settings.max_input_tokens,
                           self.translator.engine.count_tokens) or [""]

    @staticmethod
    def _progress_line(lang: str, update: Update, number: int, parts: int,
                       progress: gr.Progress) -> str:
        done, total = update.done_segments, update.total_segments
        if parts > 1:  # a long paste: its parts count
            done, total = number - 1, parts
        elif total <= 1:
            return say(lang, "translating") + "…"
        progress((done, total), desc=say(lang, "translating"), unit="segments")
        return say(lang, "segment", done=done + 1, total=total)

    async def _run(self, request: TranslationRequest) -> AsyncIterator[list[Update]]:
        """The job's updates in batches: all that arrived since the page last took one. Async, so
        Gradio runs it on its event loop instead of one thread-pool hop per token."""
        job = None
        try:
            job = await anyio.to_thread.run_sync(self.translator.start, request)  # cache I/O
            async for updates in batched_updates(job, every=PAGE_REDRAW_S):
                yield updates
        finally:  # also when Gradio cancels this generator (Stop button, closed tab)
            if job is not None:
                job.cancel()

    @staticmethod
    def _instructions(text: str | None) -> tuple[str, ...]:
        try:
            return modes.parse_instructions(text or "")
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None

    def _options(self, *values: Any) -> DecodingOptions:
        try:
            return options_from(*values)
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None

    # -- the rest of the page ---------------------------------------------------------------------
    def status(self, visitor: gr.Request | None = None) -> tuple[Any, Any, Any, Any]:
        """The status line, Translate enabled only once the model is ready, and the next poll
        (sooner while the model loads)."""
        lang = ui_lang(visitor)
        status = self.translator.engine.status()
        parts = [f"**{html.escape(status.model.rsplit('/', 1)[-1])}**", status.device or "?",
                 status.dtype or "?", say(lang, "state", state=state_name(lang, status.label))]
        if status.reason:
            parts.append(f"⚠️ {html.escape(self.redact.text(status.reason))}")
        parts.append(say(lang, "load", active=status.active, size=status.max_batch_size,
                         queued=status.queued))
        cache = self.translator.cache
        if cache is not None and cache.enabled:
            stats = cache.stats()
            parts.append(say(lang, "cache", hits=stats.hits, misses=stats.misses))
        line = " · ".join(parts)
        if status.state in (EngineState.LOADING, EngineState.WARMING):
            line = say(lang, "loading") + "  \n" + line
        button = gr.update(interactive=status.ready)
        poll = STATUS_POLL_S if status.ready else LOADING_POLL_S
        return line, button, button, gr.Timer(value=poll)

    def stopped(self, line: str, visitor: gr.Request | None = None) -> Any:
        """Stop pressed while a translation was running (its progress line ends in '…')."""
        return say(ui_lang(visitor), "stopped") if (line or "").endswith("…") else gr.skip()

    def swap(self, source: str, target: str, detected: str, text: str, output: str,
             visitor: gr.Request | None = None) -> tuple[Any, ...]:
        """Swap the pair and the texts (the translation becomes the text to translate)."""
        if source == languages.AUTO:
            source = detected or None
            if source is None and (text or "").strip():
                source = self.translator.detect(text).code
            if source is None:  # nothing to go by: the other side of the usual pair
                source = "zh" if target != "zh" else "en"
        if output:
            return target, source, output, "", "", ""
        return target, source, gr.skip(), gr.skip(), "", ""

    @staticmethod
    def output_direction(target: str) -> Any:
        try:
            rtl = languages.is_rtl(target)
        except TranslatorError:
            rtl = False
        return gr.update(rtl=rtl, text_align="right" if rtl else "left")

    @staticmethod
    def tables(history: list[list[str]] | None, visitor: gr.Request | None = None
               ) -> tuple[Any, Any]:
        """On load: the history from the browser's storage, and both tables' headers in the
        visitor's UI language."""
        lang = ui_lang(visitor)
        return history_rows(history, lang), glossary_table(None, lang)

    @staticmethod
    def clear_history(visitor: gr.Request | None = None) -> tuple[Any, Any]:
        return [], history_rows([], ui_lang(visitor))

    @staticmethod
    def restore(history: list[list[str]] | None, evt: gr.SelectData) -> tuple[Any, ...]:
        """A history row back in the boxes, with its language pair."""
        rows = history or []
        row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        if not rows or row is None or row >= len(rows):
            return (gr.skip(),) * 4
        text, translation, _pair, source, target = (list(rows[row]) + [""] * 5)[:5]
        return (text, translation, source or gr.skip(), target or gr.skip())


def _separator(part: str, target: str, last: bool) -> str:
    """What joins a part's translation to the next: the part's own trailing whitespace, or a
    space between sentences of a language written with spaces."""
    trail = part[len(part.rstrip()):]
    if trail or last:
        return trail
    return "" if target in _JOIN_WITHOUT_SPACE else " "

