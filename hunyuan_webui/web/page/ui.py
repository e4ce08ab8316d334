"""The Gradio 6 page's listeners: a thin layer over :class:`~hunyuan_webui.service.Translator`.

The page is built in :mod:`ui_layout` (components) and :mod:`ui_events` (wiring); its words live
in :mod:`ui_text`, its scripts and styles in :mod:`ui_client`. Every model-bound event shares one
``concurrency_id`` whose limit comes from the settings. The one stable programmatic endpoint is
``/translate`` (text, source_lang, target_lang) -> streamed translation string. User errors
become ``gr.Error`` in the listeners' wrapper (:mod:`ui_errors`), in the visitor's UI language.
Every text goes through the service's front door
(:meth:`~hunyuan_webui.service.Translator.translate_texts`: in parts when longer than one request
may be), as every protocol's does; a file by its file job (:mod:`ui_files`). Listeners read and answer by name (:mod:`ui_form`). Every
translation counts against the visitor's key or its visitor limits (:mod:`access`).
"""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import gradio as gr

from hunyuan_webui import languages, modes
from hunyuan_webui.engine import DecodingOptions, EngineState
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.modes import TRANSLATE
from hunyuan_webui.service import (
    NOTHING_TO_TRANSLATE,
    PartUpdate,
    TranslationRequest,
    TranslationResult,
    Translator,
)
from hunyuan_webui.speech import Speech
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.guards.security import Redactor
from hunyuan_webui.web.guards.visitor_files import VisitorFiles
from hunyuan_webui.web.page import store
from hunyuan_webui.web.page.aligned import reading, sentence_view
from hunyuan_webui.web.page.errors import friendly
from hunyuan_webui.web.page.files import FileListeners
from hunyuan_webui.web.page.form import TextForm
from hunyuan_webui.web.page.history import newest_first, previous_translation, within_budget
from hunyuan_webui.web.page.live import LiveRule
from hunyuan_webui.web.page.report import (
    detection_markdown,
    extras_markdown,
    glossary_table,
    history_rows,
    last_run_markdown,
    phrasebook_rows,
)
from hunyuan_webui.web.page.store import glossary_rows
from hunyuan_webui.web.page.text import say, state_name, ui_lang
from hunyuan_webui.web.page.wording import (
    banner_markdown,
    device_words,
    model_words,
    precision_words,
    speech_words,
)

STATUS_POLL_S, LOADING_POLL_S = 10.0, 2.0  # seconds between a tab's status polls
# The page's text is redrawn at most this often while it streams (the first words at once): each
# redraw costs the web server a Gradio message (a diff, JSON, an SSE event through every
# middleware), and on a 2-core machine that CPU is taken from decoding. 20 per second still reads
# as a continuous stream. The web server's redraws are a budget shared by every page that streams:
# with more than PAGE_REDRAWS_PER_S / 20 of them, each is redrawn less often (at 8: 5 per second),
# never less than every PAGE_REDRAW_MAX_S. (py-spy on the web process at 8 clients, 20 redraws
# per second each: a third of a core, nearly all of it per message; docs/PERFORMANCE.md.)
PAGE_REDRAW_S, PAGE_REDRAW_MAX_S = 0.05, 0.25
PAGE_REDRAWS_PER_S = 40
# The listeners a visitor's input reaches: errors in them become readable messages (ui_errors).
LISTENERS = ("api_translate", "translate", "translate_document", "document_columns",
             "load_glossary", "swap", "restore", "export_history", "translate_swapped",
             "export_bilingual_csv", "export_bilingual_docx")


def options_from(deterministic: bool, temperature: float, top_p: float, top_k: float,
                 repetition_penalty: float, max_new_tokens: float) -> DecodingOptions:
    return DecodingOptions(
        deterministic=bool(deterministic), temperature=float(temperature), top_p=float(top_p),
        top_k=int(top_k), repetition_penalty=float(repetition_penalty),
        max_new_tokens=int(max_new_tokens) or None)


class TranslatorUI(FileListeners):
    """Holds the translator; each public method is one listener (the page: ui_layout)."""

    def __init__(self, translator: Translator, banner: str = "",
                 access: AccessControl | None = None, files: VisitorFiles | None = None,
                 speech: Speech | None = None) -> None:
        self.translator = translator
        self.speech = speech  # the recogniser, named on the status line
        self.banner = banner  # markdown at the top of the page (what the demo model is)
        self.access = access or AccessControl.from_settings(translator.settings)
        self.files = files or VisitorFiles(gr.utils.get_upload_folder(),
                                           ttl=translator.settings.files_ttl)
        self.redact = Redactor.for_translator(translator)
        self.live = LiveRule(translator)  # translate as you type: on by default? (live.py)
        self.streaming = 0  # the page's streams now (on the event loop only): the redraw budget
        for name in LISTENERS:
            setattr(self, name, friendly(getattr(self, name), self.redact.text))

    @property
    def page_limit(self) -> int:
        """The longest text the page takes: the service's, as for every protocol."""
        return self.translator.max_chars

    # -- translation ------------------------------------------------------------------------------
    async def api_translate(self, text: str, source_lang: str = "auto", target_lang: str = "en",
                            visitor: gr.Request | None = None) -> AsyncIterator[str]:
        """Translate text; streams the translation as it grows. Language codes as in /v1/languages."""
        # The page's own defaults (the model card's decoding, the phrase cache on).
        request = TranslationRequest(text=text, source_lang=source_lang, target_lang=target_lang)
        self._admit(visitor, text)
        async for update in self._run(request):
            yield update.text

    async def translate(self, form: TextForm, visitor: gr.Request | None = None
                        ) -> AsyncIterator[dict[str, Any]]:
        """The Translate button (Retranslate: ``form.fresh``, a fresh answer that replaces the
        cached one). Yields what changes, by name (:class:`~hunyuan_webui.web.page.form.Names`)."""
        lang, text = ui_lang(visitor), form.text or ""
        if len(text) > self.page_limit:
            raise gr.Error(say(lang, "too_long", chars=len(text), limit=self.page_limit),
                           print_exception=False)
        self._admit(visitor, text)
        form, switched = self._switch_target(form, lang)
        request = TranslationRequest(
            text=text, source_lang=form.source, target_lang=form.target,
            options=self._options(form), mode=form.mode or TRANSLATE,
            context=form.context or "", glossary=self._glossary(form.glossary),
            cache=not form.fresh, style=form.style or "",
            instructions=self._instructions(form.instructions),
            data_format=form.data_format or "",
            previous=previous_translation(form.history, text, form.target))
        # While it streams, the output is plain text: the last one's sentence view and
        # readings go (they are made again once it is done).
        first = {"progress": say(lang, "translating") + "…", "sentences": "", "romanized": "",
                 "source_romanized": ""}
        yield {**first, "target": form.target, "detected": switched} if switched else first
        async for update in self._run(request):
            if update.result is None:
                yield {"output": update.text,
                       "progress": self._progress_line(lang, update)}
            else:
                done = self._finished(lang, form, update.result, update.parts)
                if switched:
                    done["detected"] = "  \n".join(filter(None, [done["detected"], switched]))
                yield done

    def _switch_target(self, form: TextForm, lang: str) -> tuple[TextForm, str]:
        """As DeepL does: a text detected in the target language is translated into English
        (or the page's other language) instead of coming back unchanged. The default pair of a
        Chinese browser is auto → 简体中文, so a class's Chinese homework came back as it was.
        Answers the form to translate and the notice (empty: nothing switched)."""
        if form.source != languages.AUTO or not (form.text or "").strip():
            return form, ""
        found = self.translator.detect(form.text).code
        if found is None or found != form.target:
            return form, ""
        target = next(code for code in (lang, "en", "zh") if code != found)

        def name(code: str) -> str:
            return languages.get(code).chinese if lang == "zh" else languages.get(code).english

        notice = say(lang, "switched", name=name(found), target=name(target))
        return replace(form, target=target), notice

    def _finished(self, lang: str, form: TextForm, result: TranslationResult,
                  parts: int) -> dict[str, Any]:
        done, history = result.text, list(form.history or [])
        self.live.observe(result)
        nothing = result.notice == NOTHING_TO_TRANSLATE  # "12345": echoed, with a quiet note
        if done.strip() and not nothing:
            history = newest_first(history, [form.text, done, f"{result.source_lang} → "
                                             f"{form.target}", result.source_lang, form.target],
                                   live=form.live)
        history = within_budget(history, self.translator.settings.max_body_bytes)
        progress = last_run_markdown(result, lang, parts)
        if nothing:
            progress = say(lang, "nothing_to_translate")
        elif not done.strip() and (form.text or "").strip():
            # An empty answer is no success ("From the phrase cache" over an empty box).
            progress = say(lang, "empty_answer")
        extras = extras_markdown(result, bool(form.show_candidates), lang, source=form.text or "",
                                 glossary=self._glossary(form.glossary))
        return {"output": done, "detected": detection_markdown(result, form.source, lang),
                "progress": progress, "history": history,
                "table": history_rows(history, lang), "extras": extras,
                "detected_code": result.source_lang if result.detection else "",
                **self._readings(form, result, lang)}

    @staticmethod
    def _readings(form: TextForm, result: TranslationResult, lang: str) -> dict[str, str]:
        """The sentence view and the readings of both texts, once a translation is done."""
        text, done = form.text or "", result.text
        return {"romanized": reading(done, result.target_lang, bool(form.romanize), "out"),
                "source_romanized": reading(text, result.source_lang, bool(form.romanize)),
                "sentences": sentence_view(text, done, result.alignment, result.source_lang,
                                           result.target_lang, lang)}

    def readings(self, wanted: bool, text: str, source: str, detected: str, output: str,
                 target: str) -> tuple[str, str]:
        """The pinyin / romanization toggle, at once: the readings of the texts in the boxes
        (ticked) or none (unticked); no new translation."""
        if not wanted:
            return "", ""
        text, output = text or "", output or ""
        code: str | None = source
        if source == languages.AUTO:  # the last translation's detection, else detected now
            code = detected or (self.translator.detect(text).code if text.strip() else None)
        return reading(output, target, True, "out"), reading(text, code, True)

    @staticmethod
    def _progress_line(lang: str, update: PartUpdate) -> str:
        """Progress as a line under the output box: Gradio's tracker covered the box (and the
        words streaming into it) from the second sentence on."""
        done, total = update.done_segments, update.total_segments
        if update.parts > 1:  # a long paste: its parts count
            done, total = update.part - 1, update.parts
        elif total <= 1:
            return say(lang, "translating") + "…"
        return say(lang, "segment", done=done + 1, total=total)

    async def _run(self, request: TranslationRequest) -> AsyncIterator[PartUpdate]:
        """The text through the service's front door (in parts when long), read in batches
        paced for the page: the last update of each. Async, so Gradio runs it on its event loop
        instead of one thread-pool hop per token."""
        operation = None
        self.streaming += 1
        try:
            operation = await self.translator.atranslate_texts([request])
            async for updates in operation.updates(every=self.redraw_every):
                yield updates[-1]
        finally:  # also when Gradio cancels this generator (Stop button, closed tab)
            self.streaming -= 1
            if operation is not None:
                operation.cancel()

    def redraw_every(self) -> float:
        """Seconds between two redraws of one streaming page, now (the budget above)."""
        return min(PAGE_REDRAW_MAX_S, max(PAGE_REDRAW_S, self.streaming / PAGE_REDRAWS_PER_S))

    @staticmethod
    def _instructions(text: str | None) -> tuple[str, ...]:
        try:
            return modes.parse_instructions(text or "")
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None

    def _options(self, form: TextForm) -> DecodingOptions:
        model = self.translator.spec.decoding

        def given(value: float | None, default: float) -> float:
            return default if value is None else value

        try:
            return options_from(form.deterministic, given(form.temperature, model.temperature),
                                given(form.top_p, model.top_p), given(form.top_k, model.top_k),
                                given(form.repetition, model.repetition_penalty),
                                form.max_new or 0)
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None

    # -- the rest of the page ---------------------------------------------------------------------
    def status(self, visitor: gr.Request | None = None) -> tuple[Any, Any, Any, Any]:
        """The status line, Translate enabled only once the model is ready, and the next poll
        (sooner while the model loads)."""
        lang = ui_lang(visitor)
        status = self.translator.status()
        # In plain words ("演示模型 · 处理器 · 32 位浮点", not "demo-model · cpu · fp32").
        model = model_words(lang, status.model, self.translator.spec.demo)
        parts = [f"**{html.escape(model)}**", device_words(lang, status.device),
                 precision_words(lang, status.dtype),
                 say(lang, "state", state=state_name(lang, status.label))]
        if status.reason:
            parts.append(f"⚠️ {html.escape(self.redact.text(status.reason))}")
        parts.append(say(lang, "load", active=status.active, size=status.max_batch_size,
                         queued=status.queued))
        cache = self.translator.cache
        if cache is not None and cache.enabled:
            stats = cache.stats()
            parts.append(say(lang, "cache", hits=stats.hits, misses=stats.misses))
        if self.speech is not None:
            heard = self.speech.status()
            parts.append(speech_words(lang, heard.state, heard.model, heard.device,
                                      heard.compute_type, heard.demo))
        line = " · ".join(parts)
        if status.state in (EngineState.LOADING, EngineState.WARMING):
            line = say(lang, "loading") + "  \n" + line
        button = gr.update(interactive=status.ready)
        poll = STATUS_POLL_S if status.ready else LOADING_POLL_S
        return line, button, button, gr.Timer(value=poll)

    def banner_text(self, visitor: gr.Request | None = None) -> str:
        """The banner's details in the visitor's language (its title is one line of the page's
        words; the operator's commands stay commands)."""
        return banner_markdown(ui_lang(visitor), self.banner)

    def stopped(self, line: str, visitor: gr.Request | None = None) -> Any:
        """Stop pressed while a translation was running (its progress line ends in '…')."""
        return say(ui_lang(visitor), "stopped") if (line or "").endswith("…") else gr.skip()

    def swap(self, source: str, target: str, detected: str, text: str, output: str,
             visitor: gr.Request | None = None) -> dict[str, Any]:
        """Swap the pair and the texts (the translation becomes the text to translate); without
        a translation, the texts stay. ``swapped`` tells :meth:`translate_swapped` (the event
        after this one) whether a translation moved into the text box."""
        if source == languages.AUTO:
            source = detected or None
            if source is None and (text or "").strip():
                source = self.translator.detect(text).code
            if source is None:  # nothing to go by: the other side of the usual pair
                source = "zh" if target != "zh" else "en"
        swapped = {"source": target, "target": source, "detected": "", "romanized": ""}
        if not (output or "").strip():
            return {**swapped, "swapped": False}
        return {**swapped, "text": output, "output": "", "swapped": True}

    async def translate_swapped(self, form: TextForm, visitor: gr.Request | None = None
                                ) -> AsyncIterator[dict[str, Any]]:
        """After Swap, as DeepL does: the translation that moved into the text box is translated
        back into the new target (Swap used to leave the output empty). Nothing when no
        translation moved (the text would be in neither language of the new pair)."""
        if not form.swapped or not (form.text or "").strip():
            yield {}
            return
        async for changes in self.translate(form, visitor):
            yield changes

    @staticmethod
    def output_direction(target: str) -> Any:
        try:
            rtl = languages.is_rtl(target)
        except TranslatorError:
            rtl = False
        return gr.update(rtl=rtl, text_align="right" if rtl else "left")

    @staticmethod
    def tables(history: list[list[str]] | None, glossary: Any = None, phrasebook: Any = None,
               visitor: gr.Request | None = None) -> tuple[Any, Any, Any]:
        """On load: the history, the glossary and the phrasebook from the browser's storage,
        under headers in the visitor's UI language."""
        lang = ui_lang(visitor)
        return (history_rows(history, lang), glossary_table(glossary_rows(glossary), lang),
                phrasebook_rows(phrasebook, lang))

    def star(self, phrasebook: Any, history: Any, text: str, output: str, source: str,
             target: str, detected: str, when: str,
             visitor: gr.Request | None = None) -> tuple[Any, Any]:
        """The star by the output (store.py), within this server's request limit."""
        return store.star(phrasebook, history, text, output, source, target, detected, when,
                          visitor, max_body_bytes=self.translator.settings.max_body_bytes)

    @staticmethod
    def clear_history(visitor: gr.Request | None = None) -> tuple[Any, Any]:
        return [], history_rows([], ui_lang(visitor))

    @staticmethod
    def restore(history: list[list[str]] | None, evt: gr.SelectData) -> dict[str, Any]:
        """A history row back in the boxes, with its language pair."""
        rows = history or []
        row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        if not rows or row is None or row >= len(rows):
            return {}
        text, translation, _pair, source, target = (list(rows[row]) + [""] * 5)[:5]
        pair = {"source": source, "target": target}
        return {"text": text, "output": translation, **{k: v for k, v in pair.items() if v}}

