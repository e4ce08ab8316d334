"""The page's events: which listener runs when, with which components in and out.

Model-bound events share one ``concurrency_id`` (:data:`MODEL_EVENTS`) whose limit comes from the
settings; everything else is unqueued and private (not part of the page's API). The status line
is polled every ``STATUS_POLL_S`` seconds per tab (2 s while the model loads) and refreshed on load and after each
translation; it also enables Translate once the model is ready. Listeners that answer with what
changes are wired by name (:class:`~hunyuan_webui.web.page.form.Names`).
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import gradio as gr

from hunyuan_webui.urls import lan_ip
from hunyuan_webui.web.page import store
from hunyuan_webui.web.page.client import START_JS, count_js, count_text, share_js
from hunyuan_webui.web.page.components import Page
from hunyuan_webui.web.page.form import DocumentForm, Names, TextForm
from hunyuan_webui.web.page.ui import STATUS_POLL_S

MODEL_EVENTS = "model"  # the concurrency group of every event that reaches the engine
PRIVATE: dict[str, Any] = {"api_visibility": "private", "queue": False}
# Private but queued: the page shows a queued event's gr.Error as a message, while an unqueued
# one's (answered with a 500) is dropped without a word. For the listeners whose refusals a
# visitor must read (a glossary that is not UTF-8, an empty history, a foreign file).
SPEAKING: dict[str, Any] = {"api_visibility": "private", "queue": True}
SETTLE_JS = "() => new Promise((done) => setTimeout(() => done([]), 800))"
LISTEN_JS = "(source, target, detected) => { window.hymt.listenPair(source, target, detected); }"
# scripts/21-typing.js: the pair when a picker takes focus, and when it may have changed.
PAIR_SEEN_JS = "(source, target) => { window.hymt.pairSeen(source, target); }"
PAIR_CHANGED_JS = "(source, target) => { window.hymt.pairChanged(source, target); }"


def wire(ui: Any, page: Page, settings: Any) -> None:
    model = {"concurrency_id": MODEL_EVENTS, "concurrency_limit": settings.concurrency}
    names = Names(page)
    _wire_start(ui, page, settings)
    _wire_text(ui, page, names, settings, model)
    _wire_panels(ui, page, names)
    _wire_documents(ui, page, names, model)
    _wire_store(ui, page)
    _wire_bilingual(ui, page)
    gr.api(ui.api_translate, api_name="translate", **model)


def _wire_start(ui: Any, page: Page, settings: Any) -> None:
    """Page load: the pair from a shared link or the browser's language, the status line with
    Translate enabled when ready, the history table from the browser's storage."""
    demo = page.demo
    started = demo.load(None, [page.source, page.target, page.text],
                        [page.source, page.target, page.text], js=START_JS, **PRIVATE)
    started.then(None, page.text, page.count,
                 js=count_js(settings.max_input_chars, _parts(ui, settings)), **PRIVATE)
    # Every open tab polls: 30 tabs every 2 s made 15 requests/s. Faster only while loading.
    timer = gr.Timer(STATUS_POLL_S)
    status_outputs = [page.status, page.translate_btn, page.retranslate_btn, timer]
    # A poll never fades the status line and the buttons (Gradio's progress on its outputs):
    # axe caught the faded status line's contrast when a tick fell on its check.
    demo.load(ui.status, None, status_outputs, show_progress="hidden", **PRIVATE)
    demo.load(ui.tables, [page.history, page.glossary_store, page.phrasebook],
              [page.table, page.glossary, page.phrasebook_table], **PRIVATE)
    if ui.banner:  # its details in the visitor's language
        demo.load(ui.banner_text, None, page.banner, show_progress="hidden", **PRIVATE)
    timer.tick(ui.status, None, status_outputs, show_progress="hidden", **PRIVATE)
    page.status_outputs = status_outputs


def _wire_text(ui: Any, page: Page, names: Names, settings: Any,
               model: dict[str, Any]) -> None:
    limit = settings.max_input_chars
    page.text.change(None, page.text, page.count, js=count_js(limit, _parts(ui, settings)),
                     **PRIVATE)
    page.target.change(ui.output_direction, page.target, page.output, **PRIVATE)
    swapped = page.swap.click(names.listener(ui.swap),
                              [page.source, page.target, page.detected_code, page.text,
                               page.output],
                              names.outputs(["source", "target", "text", "output", "detected",
                                             "romanized", "swapped"]), **PRIVATE)
    page.clear_btn.click(lambda: ("", "", "", "", count_text(0, ui.page_limit)), None,
                         [page.text, page.output, page.detected, page.romanized, page.count],
                         **PRIVATE)
    inputs = names.inputs(TextForm.names())
    outputs = names.outputs(["output", "detected", "progress", "history", "table", "extras",
                             "detected_code", "romanized", "target", "source_romanized",
                             "sentences"])
    translate = names.listener(ui.translate, TextForm)
    # The stream stays readable: Gradio's tracker ("Translating 22%") covered the output box
    # while it filled; progress is the line under the box instead.
    model = {**model, "show_progress": "hidden"}
    run = page.translate_btn.click(translate, inputs, outputs, api_name="translate_ui",
                                   api_visibility="undocumented", **model)
    fresh = page.retranslate_btn.click(names.listener(ui.translate, TextForm, fresh=True),
                                       inputs, outputs, api_name="retranslate_ui",
                                       api_visibility="undocumented", **model)
    # An example fills the boxes, then translates (clicking one used to only fill the box).
    example = page.examples.load_input_event.then(
        translate, inputs, outputs, api_name="translate_example", api_visibility="private",
        **model)
    # Swap, as DeepL does: the translation that moved into the text box is translated back.
    back = swapped.then(names.listener(ui.translate_swapped, TextForm), inputs, outputs,
                        api_name="translate_swapped", api_visibility="private", **model)
    live = names.listener(ui.translate, TextForm, live=True)
    _wire_live(ui, page, (live, inputs, outputs), model, [run, fresh, example, back])
    for event in (run, fresh, example, back):
        event.then(ui.status, None, page.status_outputs, show_progress="hidden", **PRIVATE)
    stop = page.stop_btn.click(ui.stopped, page.progress, page.progress,
                               cancels=[run, fresh, example, back], **PRIVATE)
    # A redraw the cancelled stream had already sent can land after Stop's line ("Part 41 of
    # 189…" stayed on screen in 2 of 4 tries): a moment later Stop says it again if so.
    stop.then(None, None, None, js=SETTLE_JS, **PRIVATE).then(
        ui.stopped, page.progress, page.progress, **PRIVATE)
    # The pinyin / romanization toggle acts at once on the texts in the boxes (it only took
    # effect at the next translation, and unticking left the pinyin on screen).
    page.romanize.change(ui.readings, [page.romanize, page.text, page.source, page.detected_code,
                                       page.output, page.target],
                         [page.romanized, page.source_romanized], show_progress="hidden",
                         **PRIVATE)
    lan = lan_ip() if settings.host in ("0.0.0.0", "::") else None
    page.share.click(None, [page.source, page.target, page.text], page.share_link,
                     js=share_js(lan), **PRIVATE)


def _wire_live(ui: Any, page: Page, listener: tuple[Any, Any, Any],
               model: dict[str, Any], others: list[Any]) -> None:
    """Translate as you type (live.py, scripts/21-typing.js): a hidden button translates as
    Translate does; another cancels every running translation, the engine's job included, as
    Stop does. The toggle starts as the visitor left it, else as the server's rule says. Listen
    (scripts/20-listen.js) is told the pair and the detected language, to pick its voices."""
    translate, inputs, outputs = listener
    live = page.live_btn.click(translate, inputs, outputs, api_name="translate_live",
                               api_visibility="private", trigger_mode="always_last", **model)
    live.then(ui.status, None, page.status_outputs, show_progress="hidden", **PRIVATE)
    page.live_cancel.click(None, None, None, cancels=[*others, live], **PRIVATE)
    page.stop_btn.click(None, None, None, cancels=[live], **PRIVATE)
    page.demo.load(ui.live.choose, page.live_saved, page.live, **PRIVATE)
    page.live.input(lambda on: on, page.live, page.live_saved, **PRIVATE)
    # A language the visitor picks, with the mouse or the keys, translates again at once. Gradio's
    # dropdown sends input on a choice and on every blur, select only for a click: the script
    # compares the pair with the one at focus, so that a look at the list restarts nothing.
    chosen = [page.source, page.target]
    for picker in chosen:
        picker.focus(None, chosen, None, js=PAIR_SEEN_JS, **PRIVATE)
        picker.input(None, chosen, None, js=PAIR_CHANGED_JS, **PRIVATE)
    pair = [page.source, page.target, page.detected_code]
    for event in (page.demo.load, page.source.change, page.target.change,
                  page.detected_code.change):
        event(None, pair, None, js=LISTEN_JS, **PRIVATE)


def _wire_panels(ui: Any, page: Page, names: Names) -> None:
    page.table.select(names.listener(ui.restore), page.history,
                      names.outputs(["text", "output", "source", "target"]), **PRIVATE)
    page.history_clear.click(ui.clear_history, None, [page.history, page.table], **PRIVATE)
    page.history_export.click(ui.export_history, [page.history, page.phrasebook],
                              page.history_file, **SPEAKING)
    # Each mode shows its own inputs.
    mode_inputs = {"context": page.context, "ensemble": page.show_candidates,
                   "style": page.style, "instructions": page.instructions,
                   "structured": page.data_format}
    page.mode.change(lambda m: tuple(gr.update(visible=m == name) for name in mode_inputs),
                     page.mode, list(mode_inputs.values()), **PRIVATE)
    page.glossary_file.upload(ui.load_glossary, page.glossary_file, page.glossary, **SPEAKING)


def _wire_documents(ui: Any, page: Page, names: Names,
                    model: dict[str, Any]) -> None:
    # A new file (or none): the last file's result and status go with it.
    page.upload.change(names.listener(ui.clear_document), None,
                       names.outputs(["download", "doc_status"]), **PRIVATE)
    page.upload.change(ui.document_columns, page.upload, page.columns, **SPEAKING)
    doc_run = page.doc_btn.click(
        names.listener(ui.translate_document, DocumentForm, positional=DocumentForm.names()),
        names.outputs(DocumentForm.names()),
        names.outputs(["download", "doc_status"]), api_name="translate_document",
        api_visibility="undocumented", **model)
    page.doc_stop.click(None, None, None, cancels=[doc_run], **PRIVATE)


def _wire_store(ui: Any, page: Page) -> None:
    """The phrasebook and the glossary, kept in the visitor's browser."""
    page.star.click(ui.star, [page.phrasebook, page.history, page.text, page.output,
                              page.source, page.target, page.detected_code, page.star_time],
                    [page.phrasebook, page.phrasebook_table], js=store.STAR_JS, **SPEAKING)
    page.phrasebook_table.select(store.pick, page.phrasebook, page.phrasebook_pick, **PRIVATE)
    page.phrasebook_remove.click(store.remove, [page.phrasebook, page.phrasebook_pick],
                                 [page.phrasebook, page.phrasebook_table, page.phrasebook_pick],
                                 **SPEAKING)
    page.phrasebook_export.click(ui.export_history, [page.history, page.phrasebook],
                                 page.phrasebook_file, **SPEAKING)
    page.glossary.change(store.remember_glossary, page.glossary, page.glossary_store, **PRIVATE)


def _wire_bilingual(ui: Any, page: Page) -> None:
    """The text tab's bilingual export: the text and its translation as shown, two columns."""
    inputs = [page.text, page.output, page.source, page.detected_code, page.target]
    page.bilingual_csv.click(ui.export_bilingual_csv, inputs, page.bilingual_file, **SPEAKING)
    page.bilingual_docx.click(ui.export_bilingual_docx, inputs, page.bilingual_file, **SPEAKING)


def _parts(ui: Any, settings: Any) -> int:
    return max(1, ui.page_limit // settings.max_input_chars)


def skip_absent_matplotlib() -> bool:
    """Gradio runs every event, and each step of a streaming listener, inside a context that tries
    ``import matplotlib`` on the way in and out. Where matplotlib is not installed, every try
    searches ``sys.path`` again (Python does not remember a failed import): 11% of the web
    process's CPU at 8 streaming clients (py-spy, docs/PERFORMANCE.md). A server process without
    matplotlib marks it absent once, so those imports fail at once; the page draws no plots.
    Only for the app's own process: a notebook's user may install matplotlib later."""
    if "matplotlib" in sys.modules or importlib.util.find_spec("matplotlib") is not None:
        return False
    sys.modules["matplotlib"] = None  # type: ignore[assignment]  # "import matplotlib" raises
    return True
