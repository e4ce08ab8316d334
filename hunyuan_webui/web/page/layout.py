"""The page's layout: which components there are and where, built in a function.

Importing this module builds nothing. :func:`build_page` lays the page out top to bottom (the
language pair, the text and document tabs, the panels, the status line) and hands the components
to :func:`~hunyuan_webui.web.page.events.wire`. The Translate button sits under the text box, so on
a phone the text, the pair and Translate fit the first screen.
"""

from __future__ import annotations

import html
from typing import Any

import gradio as gr

from hunyuan_webui import languages, modes
from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions
from hunyuan_webui.modes import TRANSLATE
from hunyuan_webui.service import Translator
from hunyuan_webui.service.operations.filejob import FILE_TYPES
from hunyuan_webui.speech import Speech
from hunyuan_webui.structured import FORMATS
from hunyuan_webui.web.guards.access import AccessControl
from hunyuan_webui.web.guards.visitor_files import VisitorFiles
from hunyuan_webui.web.page.client import count_text
from hunyuan_webui.web.page.components import Page
from hunyuan_webui.web.page.events import wire
from hunyuan_webui.web.page.live import controls as live_controls
from hunyuan_webui.web.page.store import GLOSSARY_KEY, PHRASEBOOK_KEY
from hunyuan_webui.web.page.text import I18N as t
from hunyuan_webui.web.page.ui import TranslatorUI
from hunyuan_webui.web.page.wording import banner_title

# Each mode's name in the visitor's UI language (ui_text's ``mode_*`` labels), in page order.
MODES_SHOWN = ("translate", "terminology", "context", "style", "instructions", "structured",
               "formatted", "alternatives", "ensemble")
DATA_FORMATS = [(str(t("detect_format")), ""), *((name, code) for code, name in FORMATS.items())]
# The history lives in the visitor's browser (localStorage). Gradio encrypts it with this key;
# a fixed one keeps it readable after a server restart (it is the visitor's own data).
HISTORY_KEY = "hymt-history"
HISTORY_SECRET = "hunyuan-webui-history"

# Each one a phrase the demo model knows (assets/demo_phrases.tsv; a test checks): three were
# not, and ug → zh gave an empty answer on the demo page.
EXAMPLES: list[list[str]] = [
    ["今天天气很好。", "zh", "en"],
    ["Thank you for your help.", "en", "zh"],
    ["Where is the library?", "en", "fr"],
    ["Good morning.", "en", "ja"],
    ["Thank you.", "en", "th"],
    ["你好", "zh", "bo"],
    ["谢谢。", "zh", "ug"],
    ["你好", "zh", "kk"],
    ["请打开书。", "zh", "ar"],
    ["我不知道。", "zh", "yue"],
    ["Hello", "en", "ko"],
    ["Thank you.", "en", "hi"],
]


def language_choices(with_auto: bool) -> list[tuple[str, str]]:
    """Each language by its own name first, then the page's name for it (text.picker_label, an
    i18n key per language: Gradio shows the one of the visitor's language). The values, codes,
    are what the API and the listeners read."""
    choices = [(str(t(f"lang_{lang.code}")), lang.code) for lang in languages.LANGUAGES]
    # "Detect language" in the visitor's UI language (Gradio translates a choice's i18n key).
    return [(str(t("detect")), languages.AUTO), *choices] if with_auto else choices


def build_ui(translator: Translator, banner: str = "", *, access: AccessControl | None = None,
             files: VisitorFiles | None = None, speech: Speech | None = None) -> gr.Blocks:
    """``banner``: markdown at the top of the page (what the demo model is, when it is served);
    ``speech``: the recogniser the status line names."""
    return build_page(TranslatorUI(translator, banner, access, files, speech))


def build_page(ui: TranslatorUI) -> gr.Blocks:
    """The whole page for one :class:`~hunyuan_webui.web.page.ui.TranslatorUI`."""
    settings = ui.translator.settings
    with gr.Blocks(title="Hunyuan-MT Translator", analytics_enabled=False) as demo:
        page = Page(demo=demo)
        gr.Markdown(t("header"), elem_id="app-header")
        if ui.banner:  # one line in the page's language; the operator's details on a tap
            with gr.Accordion(t(banner_title(ui.banner)), open=False, elem_id="demo-banner"):
                page.banner = gr.Markdown(ui.banner, elem_id="banner")
        _language_row(page)
        with gr.Tabs():
            with gr.Tab(t("tab_text"), id="text"):
                _text_tab(page, settings.max_input_chars, ui.page_limit)
                _bilingual_row(page)
            with gr.Tab(t("tab_document"), id="document"):
                _document_tab(page)
        _advanced_panel(page, settings, ui.translator.spec.decoding)
        _modes_panel(page, ui.translator, ui.translator.spec.demo)
        page.extras = gr.Markdown("", elem_id="extras")
        _history_panel(page)
        _phrasebook_panel(page)
        page.status = gr.Markdown("", elem_id="status-line")
        wire(ui, page, settings)
    demo.queue(max_size=settings.queue_size, api_open=False)
    return demo


def _language_row(page: Page) -> None:
    with gr.Row(equal_height=True, elem_id="lang-row"):
        page.source = gr.Dropdown(language_choices(True), value=languages.AUTO, label=t("source"),
                                  filterable=True, scale=5, elem_id="source-lang")
        page.swap = gr.Button(t("swap"), scale=0, min_width=44, elem_id="swap-btn",
                              elem_classes=["swap"])
        page.target = gr.Dropdown(language_choices(False), value="en", label=t("target"),
                                  filterable=True, scale=5, elem_id="target-lang")


def _text_tab(page: Page, limit: int, page_limit: int) -> None:
    with gr.Row():
        with gr.Column():
            # No max_length: the browser cut a longer paste silently (51,000 characters became
            # 50,000). The counter says it is too long, and Translate refuses it with a message.
            page.text = gr.Textbox(lines=6, max_lines=30, label=t("input"),
                                   placeholder=t("input_placeholder"), elem_id="input-box")
            page.count = gr.Markdown(count_text(0, page_limit), elem_id="char-count")
            # The source's pinyin / romanization (the toggle under the output; web/page/aligned.py)
            page.source_romanized = gr.HTML("", elem_id="source-romanized", js_on_load=None)
            with gr.Row(elem_id="action-row"):
                page.translate_btn = gr.Button(t("translate"), variant="primary", scale=3,
                                               min_width=90, elem_id="translate-btn")
                page.retranslate_btn = gr.Button(t("retranslate"), scale=1, min_width=60,
                                                 elem_id="retranslate-btn")
                # Not a red button on an idle page.
                page.stop_btn = gr.Button(t("stop"), variant="secondary", scale=1, min_width=50,
                                          elem_id="stop-btn")
                page.clear_btn = gr.Button(t("clear"), scale=1, min_width=50, elem_id="clear-btn")
        with gr.Column():
            page.output = gr.Textbox(lines=6, max_lines=30, label=t("output"), interactive=False,
                                     buttons=["copy"], elem_id="output-box")
            # Progress under the box, never over it (the events hide Gradio's tracker).
            page.progress = gr.Markdown("", elem_id="progress")
            page.romanized = gr.HTML("", elem_id="romanized", js_on_load=None)
            page.detected = gr.Markdown("", elem_id="detected-lang")
            with gr.Row(equal_height=True):
                page.romanize = gr.Checkbox(False, label=t("romanize"), elem_id="romanize")
                page.share = gr.Button(t("share"), size="sm", elem_id="share-btn")
                page.star = gr.Button(t("star"), size="sm", elem_id="star-btn")  # phrasebook
            page.share_link = gr.Textbox(label=t("share_link"), interactive=False, max_lines=1,
                                         buttons=["copy"], elem_id="share-link")
            live_controls(page)  # translate as you type (live.py)
    # Sentence by sentence, hover or tap to mark a counterpart (22-highlight.js), once done.
    page.sentences = gr.HTML("", elem_id="sentence-view", js_on_load=None)
    # The detected language's code, hidden: the Listen script reads it (scripts/20-listen.js).
    page.detected_code = gr.Textbox("", visible="hidden", elem_id="detected-code",
                                    show_label=False)
    page.swapped = gr.State(False)  # Swap moved a translation into the text box (events.py)
    page.examples = gr.Examples(EXAMPLES, inputs=[page.text, page.source, page.target],
                                label=t("examples"), examples_per_page=len(EXAMPLES),
                                example_labels=[_example_label(*row) for row in EXAMPLES])


def _bilingual_row(page: Page) -> None:
    """The translated text beside its source, two columns, as a CSV or a Word table."""
    with gr.Row(elem_id="bilingual-row"):
        page.bilingual_csv = gr.Button(t("bilingual_csv"), size="sm", elem_id="bilingual-csv-btn")
        page.bilingual_docx = gr.Button(t("bilingual_docx"), size="sm",
                                        elem_id="bilingual-docx-btn")
    page.bilingual_file = gr.File(label=t("bilingual_file"), interactive=False, visible=False,
                                  elem_id="bilingual-file")


def _document_tab(page: Page) -> None:
    with gr.Row(equal_height=True):
        page.upload = gr.File(label=t("document"), file_types=sorted(FILE_TYPES),
                              type="filepath", elem_id="doc-upload")
        page.download = gr.File(label=t("document_out"), interactive=False,
                                elem_id="doc-download")
    page.columns = gr.CheckboxGroup([], label=t("csv_columns"), visible=False,
                                    elem_id="csv-columns")
    page.bilingual_doc = gr.Checkbox(False, label=t("bilingual_doc"), elem_id="doc-bilingual")
    page.doc_status = gr.Markdown("", elem_id="doc-status")
    with gr.Row():
        page.doc_btn = gr.Button(t("translate_document"), variant="primary", scale=3,
                                 elem_id="doc-translate-btn")
        # As the text tab's Stop: not red while there is nothing to stop.
        page.doc_stop = gr.Button(t("stop"), variant="secondary", scale=1, min_width=50,
                                  elem_id="doc-stop-btn")


def _advanced_panel(page: Page, settings: Any, defaults: DecodingOptions) -> None:
    """``defaults``: the loaded model's decoding (its model card's)."""
    with gr.Accordion(t("advanced"), open=False, elem_id="advanced-panel"):
        gr.Markdown(t("advanced_info"), elem_id="advanced-info")
        page.deterministic = gr.Checkbox(False, label=t("deterministic"),
                                         info=t("deterministic_info"), elem_id="deterministic")
        with gr.Row():
            page.temperature = _slider("temperature", defaults.temperature, 0.05)
            page.top_p = _slider("top_p", defaults.top_p, 0.05)
        with gr.Row():
            page.top_k = _slider("top_k", defaults.top_k, 1)
            page.repetition = _slider("repetition_penalty", defaults.repetition_penalty, 0.01)
        page.max_new = gr.Slider(0, min(settings.max_new_tokens, OPTION_BOUNDS["max_new_tokens"][1]),
                                 value=0, step=16, label=t("max_new_tokens"),
                                 info=t("max_new_tokens_info"), elem_id="opt-max-new-tokens")


def _modes_panel(page: Page, translator: Translator, demo: bool = False) -> None:
    # Best quality needs Chimera loaded: offering it elsewhere only led to an error.
    offered = [m for m in MODES_SHOWN if m in modes.MODES
               and (m != "ensemble" or translator.chimera is not None)]
    with gr.Accordion(t("modes"), open=False, elem_id="modes-panel"):
        gr.Markdown(_modes_markdown(translator.spec, demo), elem_id="model-modes")
        page.mode = gr.Radio([(_mode_label(m, translator.spec), m) for m in offered],
                             value=TRANSLATE,
                             label=t("mode"), elem_id="mode")
        page.style = gr.Textbox(lines=1, label=t("style"), info=t("style_info"), visible=False,
                                max_length=modes.MAX_STYLE_CHARS, elem_id="style-box")
        page.instructions = gr.Textbox(lines=3, label=t("instructions"),
                                       info=t("instructions_info"), visible=False,
                                       elem_id="instructions-box")
        page.data_format = gr.Dropdown(DATA_FORMATS, value="", label=t("data_format"),
                                       visible=False, elem_id="data-format")
        page.context = gr.Textbox(lines=2, label=t("context"), info=t("context_info"),
                                  visible=False, elem_id="context-box")
        page.show_candidates = gr.Checkbox(False, label=t("show_candidates"), visible=False,
                                           elem_id="show-candidates")
        with gr.Row():
            page.glossary = gr.Dataframe(headers=["Source term · 原文术语", "Target term · 译文术语"],
                                         value=[["", ""]], column_count=(2, "fixed"),
                                         interactive=True, label=t("glossary"),
                                         elem_id="glossary", scale=3)
            page.glossary_file = gr.File(label=t("glossary_csv"), file_types=[".csv"],
                                         type="filepath", scale=1, elem_id="glossary-file")


def _modes_markdown(spec: Any, demo: bool = False) -> str:
    """Whether the loaded model has prompts of its own for some modes (marked ✓ by
    :func:`_mode_label`); the others fall back to its plain prompt, with a notice. The demo model
    is named in the page's words (one i18n key: Gradio translates one per string)."""
    own = any(m in spec.modes for m in MODES_SHOWN if m != TRANSLATE)
    if demo:
        return t("demo_modes_own" if own else "demo_modes_none")
    name = html.escape(spec.id.rsplit("/", 1)[-1])
    return f"**{name}** " + t("modes_own" if own else "modes_none")


def _mode_label(mode: str, spec: Any) -> str:
    """The mode's name in the visitor's UI language (Gradio translates one i18n key per string,
    and keeps what surrounds it), marked ✓ where the model has a prompt of its own for it."""
    return t(f"mode_{mode}") + (" ✓" if mode != TRANSLATE and mode in spec.modes else "")


def _history_panel(page: Page) -> None:
    # Outside the accordion: a closed accordion's children are not mounted, and an unmounted
    # BrowserState neither reads nor writes the browser's storage.
    page.history = gr.BrowserState([], storage_key=HISTORY_KEY, secret=HISTORY_SECRET)
    with gr.Accordion(t("history"), open=False, elem_id="history-panel"):
        # Headers in the visitor's UI language come with the rows (ui_report.history_rows).
        page.table = gr.Dataframe(headers=["Source · 原文", "Translation · 译文", "Pair · 语言对"],
                                  value=[], interactive=False, wrap=True, elem_id="history")
        with gr.Row():
            page.history_clear = gr.Button(t("history_clear"), size="sm",
                                           elem_id="history-clear")
            page.history_export = gr.Button(t("history_export"), size="sm",
                                            elem_id="history-export")
        page.history_file = gr.File(label=t("history_file"), interactive=False, visible=False,
                                    elem_id="history-file")


def _phrasebook_panel(page: Page) -> None:
    """The saved translations, and the glossary's storage: in the browser, as the
    history is, so outside the accordion too."""
    page.phrasebook = gr.BrowserState([], storage_key=PHRASEBOOK_KEY, secret=HISTORY_SECRET)
    page.glossary_store = gr.BrowserState([], storage_key=GLOSSARY_KEY, secret=HISTORY_SECRET)
    page.phrasebook_pick = gr.State(None)  # the row Remove removes
    page.star_time = gr.Textbox("", visible=False, elem_id="star-time")  # the browser's clock
    with gr.Accordion(t("phrasebook"), open=False, elem_id="phrasebook-panel"):
        page.phrasebook_table = gr.Dataframe(
            headers=["Source · 原文", "Translation · 译文", "Pair · 语言对", "Saved · 收藏时间"],
            value=[], interactive=False, wrap=True, elem_id="phrasebook")
        with gr.Row():
            page.phrasebook_remove = gr.Button(t("phrasebook_remove"), size="sm",
                                               elem_id="phrasebook-remove")
            page.phrasebook_export = gr.Button(t("phrasebook_export"), size="sm",
                                               elem_id="phrasebook-export")
        page.phrasebook_file = gr.File(label=t("phrasebook_file"), interactive=False,
                                       visible=False, elem_id="phrasebook-file")


def _slider(name: str, value: float, step: float) -> gr.Slider:
    low, high = OPTION_BOUNDS[name]
    # Each with a plain-words line on what it does to a translation.
    return gr.Slider(low, high, value=value, step=step, label=t(name), info=t(f"{name}_info"),
                     elem_id=f"opt-{name}")


def _example_label(text: str, source: str, target: str) -> str:
    """Each language by its own name, so the label reads the same in either UI language."""
    return f"{languages.get(source).autonym} → {languages.get(target).autonym}: {text}"
