"""The page's components, by name: what the layout builds (:mod:`.layout`, :mod:`.live`) and what
the listeners read and write (:mod:`.events`, through :class:`~hunyuan_webui.web.page.form.Names`).

One declared field per component, with ``slots``: a name the layout did not declare, or a typo in
the wiring, fails when the page is built, not at a visitor's click. A component that a page may
not have (the demo banner) stays None.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

import gradio as gr


@dataclass(slots=True)
class Page:
    demo: gr.Blocks
    # The top of the page
    banner: gr.Markdown | None = None
    # The language row
    source: gr.Dropdown | None = None
    swap: gr.Button | None = None
    target: gr.Dropdown | None = None
    # The Text tab
    text: gr.Textbox | None = None
    count: gr.Markdown | None = None
    source_romanized: gr.HTML | None = None
    translate_btn: gr.Button | None = None
    retranslate_btn: gr.Button | None = None
    stop_btn: gr.Button | None = None
    clear_btn: gr.Button | None = None
    output: gr.Textbox | None = None
    progress: gr.Markdown | None = None
    romanized: gr.HTML | None = None
    detected: gr.Markdown | None = None
    romanize: gr.Checkbox | None = None
    share: gr.Button | None = None
    star: gr.Button | None = None
    share_link: gr.Textbox | None = None
    sentences: gr.HTML | None = None
    detected_code: gr.Textbox | None = None
    swapped: gr.State | None = None
    examples: gr.Examples | None = None
    # Translate as you type (live.py)
    live: gr.Checkbox | None = None
    live_saved: gr.BrowserState | None = None
    live_btn: gr.Button | None = None
    live_cancel: gr.Button | None = None
    # The bilingual copies of the Text tab
    bilingual_csv: gr.Button | None = None
    bilingual_docx: gr.Button | None = None
    bilingual_file: gr.File | None = None
    # The Document tab
    upload: gr.File | None = None
    download: gr.File | None = None
    columns: gr.CheckboxGroup | None = None
    bilingual_doc: gr.Checkbox | None = None
    doc_status: gr.Markdown | None = None
    doc_btn: gr.Button | None = None
    doc_stop: gr.Button | None = None
    # The decoding options
    deterministic: gr.Checkbox | None = None
    temperature: gr.Slider | None = None
    top_p: gr.Slider | None = None
    top_k: gr.Slider | None = None
    repetition: gr.Slider | None = None
    max_new: gr.Slider | None = None
    # The modes panel
    mode: gr.Radio | None = None
    style: gr.Textbox | None = None
    instructions: gr.Textbox | None = None
    data_format: gr.Dropdown | None = None
    context: gr.Textbox | None = None
    show_candidates: gr.Checkbox | None = None
    glossary: gr.Dataframe | None = None
    glossary_file: gr.File | None = None
    # Below the tabs
    extras: gr.Markdown | None = None
    status: gr.Markdown | None = None
    status_outputs: list[Any] = field(default_factory=list)
    # The history
    history: gr.BrowserState | None = None
    table: gr.Dataframe | None = None
    history_clear: gr.Button | None = None
    history_export: gr.Button | None = None
    history_file: gr.File | None = None
    # The phrasebook and the glossary kept in the browser
    phrasebook: gr.BrowserState | None = None
    glossary_store: gr.BrowserState | None = None
    phrasebook_pick: gr.State | None = None
    star_time: gr.Textbox | None = None
    phrasebook_table: gr.Dataframe | None = None
    phrasebook_remove: gr.Button | None = None
    phrasebook_export: gr.Button | None = None
    phrasebook_file: gr.File | None = None

    def blocks(self) -> dict[str, gr.blocks.Block]:
        """Each component built, by name."""
        return {f.name: value for f in fields(self)
                if isinstance(value := getattr(self, f.name), gr.blocks.Block)}
