"""The page's listeners for files: a document to translate, a glossary CSV, the history export,
the bilingual export of a translated text (:mod:`hunyuan_webui.files.bilingual`).

A document is translated by the service's file job (:class:`~hunyuan_webui.service.FileJob`):
the page reads its progress events on the event loop and holds no thread of its own.

A file reaches a listener only if the visitor's session uploaded it (:mod:`visitor_files`), and
a translated file or an exported history is handed to that session alone.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import gradio as gr

from hunyuan_webui import files, languages, modes
from hunyuan_webui.errors import InputError, InputTooLongError, TranslatorError
from hunyuan_webui.files import bilingual
from hunyuan_webui.service import FileJob, TranslationRequest, Translator
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.guards.visitor_files import NOT_UPLOADED, VisitorFiles, session_of
from hunyuan_webui.web.page.form import DocumentForm
from hunyuan_webui.web.page.report import glossary_table
from hunyuan_webui.web.page.store import export_csv
from hunyuan_webui.web.page.text import language_name, say, ui_lang


class FileListeners:
    """Mixed into :class:`~hunyuan_webui.web.page.ui.TranslatorUI`, which sets these attributes."""

    translator: Translator
    access: AccessControl
    files: VisitorFiles

    async def translate_document(
            self, form: DocumentForm, visitor: gr.Request | None = None,
            progress: gr.Progress = gr.Progress()  # noqa: B008 - Gradio injects it
    ) -> AsyncIterator[dict[str, Any]]:
        """Translate an uploaded file (the service's file job); yields its progress, then the
        translated file to download, by name. A refused file clears the last file's result and
        says it was not translated (a stale "Done" stood beside the refusal's error).
        ``form.bilingual_doc``: each paragraph followed by its translation (the tab's switch)."""
        lang = ui_lang(visitor)
        try:
            async for changes in self._translate_document(form, visitor, progress):
                yield changes
        except (TranslatorError, gr.Error):
            yield {"download": None, "doc_status": say(lang, "doc_refused")}
            raise

    async def _translate_document(self, form: DocumentForm, visitor: gr.Request | None,
                                  progress: gr.Progress) -> AsyncIterator[dict[str, Any]]:
        lang = ui_lang(visitor)
        if not form.upload:
            raise gr.Error(say(lang, "no_file"))
        path = self._uploaded(visitor, form.upload)
        self._admit(visitor, "")  # one request now; its characters once the file is read
        template = TranslationRequest(
            text="", source_lang=form.source, target_lang=form.target,
            options=self.translator.decoding(deterministic=bool(form.deterministic)),
            glossary=self._glossary(form.glossary))
        # A file detected in the target language goes into the page's language (or English)
        # instead, as text does: a Chinese page's default pair is auto → 简体中文.
        job = FileJob(self.translator, path.name, path.read_bytes(), template, form.columns,
                      admit=lambda segments: self._admit(visitor, "".join(segments), count=False),
                      switch=(lang, "en", "zh"), bilingual=bool(form.bilingual_doc))
        yield {"download": None, "doc_status": say(lang, "translating") + "…"}
        try:
            async for event in job.events():  # leaving early (Stop, a closed tab) stops the job
                if event.result is not None:
                    result = event.result
                    out = self.files.new_output(session_of(visitor) or "", result.filename,
                                                result.data)
                    yield {"download": out, "doc_status": document_done(lang, result)}
                elif event.total:
                    progress((event.done, event.total), desc=say(lang, "translating"),
                             unit=say(lang, "segments_unit"))
                    yield {"doc_status": say(lang, "doc_progress", done=event.done,
                                             total=event.total)}
        except InputError:
            if job.unreadable:  # damaged, hostile, not what its name says: not kept on disk
                self.files.forget(session_of(visitor), path)
            raise

    @staticmethod
    def clear_document() -> dict[str, Any]:
        """A new file chosen (or the file removed): the last file's result and status go."""
        return {"download": None, "doc_status": ""}

    def document_columns(self, file: str | None, visitor: gr.Request | None = None) -> Any:
        """The CSV column picker shows the uploaded file's header."""
        if not file or not str(file).lower().endswith(".csv"):
            return gr.update(choices=[], value=[], visible=False)
        names = files.csv_columns(self._uploaded(visitor, file).read_bytes())
        return gr.update(choices=names, value=names, visible=True)

    def load_glossary(self, file: str | None, visitor: gr.Request | None = None) -> Any:
        """A CSV of 'source term, target term' rows fills the glossary table."""
        if not file:
            return gr.skip()
        try:
            text = self._uploaded(visitor, file).read_bytes().decode("utf-8-sig")
            rows = modes.parse_glossary(text)
        except (UnicodeDecodeError, TranslatorError) as exc:
            lang = ui_lang(visitor)
            reason = exc.user_message if isinstance(exc, TranslatorError) else \
                say(lang, "not_utf8")
            raise gr.Error(say(lang, "glossary_unreadable", reason=reason),
                           print_exception=False) from None
        return glossary_table([list(r) for r in rows], ui_lang(visitor))

    def export_history(self, history: list[list[str]] | None,
                       phrasebook: list[list[str]] | None = None,
                       visitor: gr.Request | None = None) -> Any:
        """The browser's phrasebook and history as one CSV file (UTF-8 with BOM, so
        spreadsheets read Chinese: :func:`~hunyuan_webui.web.page.store.export_csv`)."""
        if not history and not phrasebook:
            raise gr.Error(say(ui_lang(visitor), "store_empty"), print_exception=False)
        data = export_csv(history, phrasebook)
        path = self.files.new_output(session_of(visitor) or "", "translation-history.csv", data)
        return gr.update(value=path, visible=True)

    def export_bilingual_csv(self, text: str, output: str, source: str, detected: str,
                             target: str, visitor: gr.Request | None = None) -> Any:
        """The text beside its translation, paragraph by paragraph, as a CSV file (UTF-8 with a
        BOM, so Excel reads Chinese)."""
        return self._bilingual("csv", text, output, source, detected, target, visitor)

    def export_bilingual_docx(self, text: str, output: str, source: str, detected: str,
                              target: str, visitor: gr.Request | None = None) -> Any:
        """The same as a Word document: one two-column table."""
        return self._bilingual("docx", text, output, source, detected, target, visitor)

    def _bilingual(self, kind: str, text: str, output: str, source: str, detected: str,
                   target: str, visitor: gr.Request | None) -> Any:
        lang = ui_lang(visitor)
        if not (text or "").strip() or not (output or "").strip():
            raise gr.Error(say(lang, "bilingual_empty"), print_exception=False)
        def known(code: str | None) -> str:  # a language code, or "" (auto, or not a code)
            try:
                return languages.normalize(code) if code and code != languages.AUTO else ""
            except TranslatorError:
                return ""

        src, dst = known(detected) or known(source), known(target)
        header = [language_name(lang, src) if src else say(lang, "bilingual_source"),
                  language_name(lang, dst) if dst else say(lang, "bilingual_translation")]
        rows = bilingual.pairs(text, output)
        make = bilingual.csv_bytes if kind == "csv" else bilingual.docx_bytes
        name = "-".join(filter(None, ["bilingual", src, dst])) + f".{kind}"
        path = self.files.new_output(session_of(visitor) or "", name, make(rows, header))
        return gr.update(value=path, visible=True)

    def _uploaded(self, visitor: gr.Request | None, file: Any) -> Path:
        """The file, if this visitor's session uploaded it here and it is within the size limit;
        else a readable refusal (the Gatekeeper refuses foreign paths before this, too)."""
        path = self.files.check(session_of(visitor), file if isinstance(file, str) else "")
        try:
            size = path.stat().st_size
        except OSError:  # deleted since (it expired): the same answer as for a foreign path
            raise InputError(NOT_UPLOADED) from None
        limit = self.translator.settings.max_file_bytes
        if size > limit:
            raise InputTooLongError(f"The file is {files.size(size)}; the limit is "
                                    f"{files.size(limit)}.")
        return path

    def _admit(self, visitor: gr.Request | None, text: object, count: bool = True) -> None:
        """Count this translation against the caller's key, else against the visitor."""
        caller = self.access.page_caller(visitor)
        chars = len(text) if isinstance(text, str) else 0
        if count:
            self.access.admit(caller, chars)
        else:
            self.access.charge(caller, chars)

    def _glossary(self, table: Any) -> tuple[tuple[str, str], ...]:
        rows = table.values.tolist() if hasattr(table, "values") else table
        try:
            return modes.parse_glossary(rows or [])
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None


def document_done(lang: str, result: files.FileResult) -> str:
    """What the page says of a translated file: how many segments were translated, or, honestly,
    that the file was already in the target language (and came back unchanged, or was translated
    into the page's language instead)."""
    def name(code: str) -> str:  # as the text path names them (ui.TranslatorUI._switch_target)
        language = languages.get(code)
        return language.chinese if lang == "zh" else language.english

    if result.unchanged and result.unchanged >= result.segments:
        return say(lang, "doc_unchanged", name=name(result.target_lang),
                   filename=result.filename)
    done = say(lang, "doc_done", n=result.segments - result.unchanged, filename=result.filename)
    if result.switched_from:
        done = say(lang, "doc_switched", name=name(result.switched_from),
                   target=name(result.target_lang)) + " " + done
    return " ".join((done, *result.notes))  # a PDF's scanned or reflowed pages (in English)
