"""The Gradio 6 page: a thin layer over :class:`~hunyuan_webui.service.Translator`.

``build_ui`` builds the Blocks in a function, so importing this module loads nothing. Every
model-bound event shares one ``concurrency_id`` whose limit comes from the settings, the queue is
bounded, and ``api_open=False`` keeps the REST routes from skipping it. The one stable programmatic
endpoint is ``/translate`` (text, source_lang, target_lang) -> streamed translation string. User
errors become ``gr.Error`` in the listeners' wrapper (:mod:`hunyuan_webui.web.ui_errors`). A file
reaches a listener only if the visitor's session uploaded it, and every translation counts
against the visitor's key or its visitor limits (:mod:`hunyuan_webui.web.access`).
"""

from __future__ import annotations

import html
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import gradio as gr

from hunyuan_webui import files, languages, modes
from hunyuan_webui.engine import OPTION_BOUNDS, DecodingOptions
from hunyuan_webui.errors import InputError, InputTooLongError, TranslatorError
from hunyuan_webui.modes import TRANSLATE
from hunyuan_webui.service import TranslationRequest, TranslationResult, Translator
from hunyuan_webui.service.job import Update, batched_updates
from hunyuan_webui.structured import FORMATS
from hunyuan_webui.web.access import AccessControl
from hunyuan_webui.web.security import Redactor
from hunyuan_webui.web.ui_errors import friendly
from hunyuan_webui.web.visitor_files import NOT_UPLOADED, VisitorFiles, session_of

MODE_LABELS = {
    "translate": "Translate · 翻译",
    "terminology": "Glossary terms · 术语干预",
    "context": "With context / background · 结合上下文",
    "style": "In a style · 指定风格",
    "instructions": "Your instructions · 个性化要求",
    "structured": "Structured data (JSON, XML…) · 结构化数据",
    "formatted": "Keep formatting · 保留格式",
    "alternatives": "3 alternatives · 三种译法",
    "ensemble": "Best quality (Chimera) · 集成",
}
DATA_FORMATS = [("Detect · 自动检测", ""), *((name, code) for code, name in FORMATS.items())]
MODEL_EVENTS = "model"  # the concurrency group of every event that reaches the engine
HISTORY_LIMIT = 50
STATUS_POLL_S = 10.0
# The listeners a visitor's input reaches: errors in them become readable messages (ui_errors).
LISTENERS = ("api_translate", "translate", "translate_document", "document_columns",
             "load_glossary", "swap", "restore")
LOW_CONFIDENCE = 0.5

EXAMPLES: list[list[str]] = [
    ["今天天气很好。", "zh", "en"],
    ["Thank you for your help.", "en", "zh"],
    ["Where is the library?", "en", "fr"],
    ["Good morning.", "en", "ja"],
    ["Thank you.", "en", "th"],
    ["你好", "zh", "bo"],
    ["谢谢。", "zh", "ug"],
    ["你好", "zh", "kk"],
    ["你好", "zh", "mn"],
    ["我不知道。", "zh", "yue"],
    ["བཀྲ་ཤིས་བདེ་ལེགས།", "bo", "zh"],
    ["رەھمەت.", "ug", "zh"],
]

I18N = gr.I18n(
    en={
        "header": "## Hunyuan-MT Translator\n38 languages · streaming · batched · cached",
        "source": "From",
        "target": "To",
        "detect": "Detect language",
        "swap": "⇄ Swap",
        "input": "Text",
        "input_placeholder": "Type or paste text… (Ctrl/Cmd+Enter to translate)",
        "output": "Translation",
        "translate": "Translate",
        "stop": "Stop",
        "retranslate": "Retranslate",
        "clear": "Clear",
        "examples": "Examples",
        "advanced": "Advanced",
        "deterministic": "Deterministic (greedy) decoding",
        "deterministic_info": "Same input, same output. Off = the model card's sampling.",
        "temperature": "Temperature",
        "top_p": "Top-p",
        "top_k": "Top-k (0 = off)",
        "repetition_penalty": "Repetition penalty",
        "max_new_tokens": "Max new tokens (0 = automatic)",
        "history": "History (click a row to restore it)",
        "history_source": "Source",
        "history_translation": "Translation",
        "history_pair": "Pair",
        "status": "Status",
        "tab_text": "Text",
        "tab_document": "Document",
        "document": "File (.txt .md .srt .docx .csv)",
        "document_out": "Translated file",
        "csv_columns": "CSV columns to translate",
        "translate_document": "Translate file",
        "modes": "Modes & glossary",
        "mode": "Mode",
        "context": "Context",
        "context_info": "Surrounding text (previous paragraph, product description); not translated.",
        "glossary": "Glossary (terms to keep)",
        "glossary_csv": "…or a CSV of term pairs",
        "show_candidates": "Show the candidates Chimera fused",
        "style": "Style",
        "style_info": "In a few words, e.g. formal business English · 中国古代文言文",
        "instructions": "Your instructions, one per line",
        "instructions_info": "e.g. Keep people's names in the original · Use the polite form",
        "data_format": "Data format",
    },
    **{"zh-CN": {
        "header": "## 混元翻译\n38 种语言 · 流式输出 · 批量解码 · 缓存",
        "source": "源语言",
        "target": "目标语言",
        "detect": "自动检测",
        "swap": "⇄ 交换",
        "input": "原文",
        "input_placeholder": "输入或粘贴文本…（Ctrl/Cmd+Enter 翻译）",
        "output": "译文",
        "translate": "翻译",
        "stop": "停止",
        "retranslate": "重新翻译",
        "clear": "清空",
        "examples": "示例",
        "advanced": "高级设置",
        "deterministic": "确定性（贪心）解码",
        "deterministic_info": "相同输入得到相同输出。关闭则使用模型卡推荐的采样参数。",
        "temperature": "温度",
        "top_p": "Top-p",
        "top_k": "Top-k（0 = 不限）",
        "repetition_penalty": "重复惩罚",
        "max_new_tokens": "最大生成长度（0 = 自动）",
        "history": "历史记录（点击一行恢复）",
        "history_source": "原文",
        "history_translation": "译文",
        "history_pair": "语言对",
        "status": "状态",
        "tab_text": "文本",
        "tab_document": "文档",
        "document": "文件（.txt .md .srt .docx .csv）",
        "document_out": "译文文件",
        "csv_columns": "要翻译的 CSV 列",
        "translate_document": "翻译文件",
        "modes": "模式与术语表",
        "mode": "模式",
        "context": "上下文",
        "context_info": "相关文本（上一段、产品说明），不会被翻译。",
        "glossary": "术语表",
        "glossary_csv": "…或上传术语对 CSV",
        "show_candidates": "显示 Chimera 融合的候选译文",
        "style": "风格",
        "style_info": "简短描述，例如：正式商务英语 · 中国古代文言文",
        "instructions": "个性化要求（每行一条）",
        "instructions_info": "例如：人名保留原文 · 使用敬语",
        "data_format": "数据格式",
    }},
)

# Ctrl/Cmd+Enter anywhere on the page presses Translate; in <head> so it works from the first
# keystroke, before Gradio's own load events have run.
SHORTCUT_HEAD = """<script>
document.addEventListener('keydown', (e) => {
  if ((e.ctrlKey || e.metaKey) && e.key === 'Enter') {
    const button = document.querySelector('#translate-btn');
    if (button) { e.preventDefault(); button.click(); }
  }
});
</script>"""
COUNT_JS = "(text) => `${[...(text || '')].length.toLocaleString()} / %d`"

CSS = """
#output-box textarea { font-size: 1.05rem; }
#status-line { font-size: 0.85rem; opacity: 0.85; }
#char-count { text-align: right; font-size: 0.8rem; opacity: 0.7; margin-top: -0.5rem; }
#banner { border-left: 4px solid #f59e0b; padding: 0.25rem 0.75rem; background: #fffbeb; }
"""


def language_choices(with_auto: bool) -> list[tuple[str, str]]:
    choices = [(lang.label, lang.code) for lang in languages.LANGUAGES]
    return [("Detect language · 自动检测", languages.AUTO), *choices] if with_auto else choices


def options_from(deterministic: bool, temperature: float, top_p: float, top_k: float,
                 repetition_penalty: float, max_new_tokens: float) -> DecodingOptions:
    return DecodingOptions(
        deterministic=bool(deterministic), temperature=float(temperature), top_p=float(top_p),
        top_k=int(top_k), repetition_penalty=float(repetition_penalty),
        max_new_tokens=int(max_new_tokens) or None)


def detection_markdown(result: TranslationResult | None, source: str) -> str:
    if result is None or result.detection is None or source != languages.AUTO:
        return ""
    det = result.detection
    if det.code is None:
        return "⚠️ Language not recognised — please choose the source language."
    lang = languages.get(det.code)
    text = f"Detected: **{lang.english} · {lang.chinese}** ({det.confidence:.0%})"
    if not det.reliable or det.confidence < LOW_CONFIDENCE:
        text += " — ⚠️ low confidence: pick the source language if this is wrong"
    return text


def last_run_markdown(result: TranslationResult) -> str:
    """This visitor's last translation: latency, first-token time, tokens per second."""
    usage = result.usage
    parts = [f"Last translation: {usage.get('latency_s') or 0:.2f} s"]
    if usage.get("first_token_s") is not None:
        parts.append(f"first token {usage['first_token_s'] * 1000:.0f} ms")
    tokens, latency = usage.get("completion_tokens") or 0, usage.get("latency_s") or 0
    if tokens and latency:
        parts.append(f"{tokens / latency:.1f} tokens/s")
    if result.segments > 1:
        parts.append(f"{result.segments} segments ({result.cached_segments} from cache)")
    elif result.cached:
        parts.insert(0, "⚡ From the phrase cache (Retranslate for a fresh one)")
    if result.notice:
        parts.append(result.notice)
    return " · ".join(parts)


def extras_markdown(result: TranslationResult, show_candidates: bool = True) -> str:
    """Glossary report, alternatives and ensemble candidates, when the mode produced them."""
    parts = []
    if result.glossary_found or result.glossary_missing:
        found = ", ".join(html.escape(t) for t in result.glossary_found) or "—"
        missing = ", ".join(html.escape(t) for t in result.glossary_missing) or "—"
        parts.append(f"**Glossary** — in the translation: {found}; missing: {missing}")
    if len(result.alternatives) > 1:
        parts.append("**Alternatives**\n" + "\n".join(
            f"{i}. {html.escape(a)}" for i, a in enumerate(result.alternatives, 1)))
    if result.candidates and show_candidates:
        parts.append("**Candidates fused by Chimera**\n" + "\n".join(
            f"{i}. {html.escape(c)}" for i, c in enumerate(result.candidates, 1)))
    return "\n\n".join(parts)


class TranslatorUI:
    """Holds the translator and builds the page; each method is one listener."""

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

    # -- listeners --------------------------------------------------------------------------------
    async def api_translate(self, text: str, source_lang: str = "auto", target_lang: str = "en",
                            visitor: gr.Request | None = None) -> AsyncIterator[str]:
        """Translate text; streams the translation as it grows. Language codes as in /v1/languages."""
        # The page's own defaults (the model card's decoding, the phrase cache on).
        request = TranslationRequest(text=text, source_lang=source_lang, target_lang=target_lang)
        self._admit(visitor, text)
        async for updates in self._run(request):
            yield updates[-1].text

    async def translate(self, text: str, source: str, target: str, deterministic: bool,
                  temperature: float, top_p: float, top_k: float, repetition_penalty: float,
                  max_new_tokens: float, mode: str, context: str, style: str, instructions: str,
                  data_format: str, glossary: Any, show_candidates: bool,
                  history: list[list[str]] | None, use_cache: bool = True,
                  visitor: gr.Request | None = None,
                  progress: gr.Progress = gr.Progress()  # noqa: B008 - Gradio injects it
                  ) -> AsyncIterator[tuple[Any, ...]]:
        """``use_cache`` is False for Retranslate: a fresh answer, which replaces the cached one."""
        self._admit(visitor, text)
        request = TranslationRequest(
            text=text or "", source_lang=source, target_lang=target,
            options=self._options(deterministic, temperature, top_p, top_k, repetition_penalty,
                                  max_new_tokens),
            mode=mode or TRANSLATE, context=context or "", glossary=self._glossary(glossary),
            cache=bool(use_cache), style=style or "", instructions=self._instructions(instructions),
            data_format=data_format or "")
        history = list(history or [])
        async for updates in self._run(request):
            update = updates[-1]
            result = update.result
            if result is None:
                line = ""
                if update.total_segments > 1:  # a long text: a progress bar and a count
                    progress((update.done_segments, update.total_segments), desc="Translating",
                             unit="segments")
                    line = f"Segment {update.done_segments + 1} of {update.total_segments}…"
                yield update.text, gr.skip(), line or gr.skip(), gr.skip(), gr.skip()
                continue
            if result.text.strip():
                history.insert(0, [text, result.text, f"{result.source_lang} → {target}"])
            yield (result.text, detection_markdown(result, source),
                   last_run_markdown(result), history[:HISTORY_LIMIT],
                   extras_markdown(result, bool(show_candidates)))

    def translate_document(self, file: str | None, source: str, target: str, columns: list[str],
                           deterministic: bool, glossary: Any, visitor: gr.Request | None = None,
                           progress: gr.Progress = gr.Progress()  # noqa: B008 - Gradio injects it
                           ) -> Iterator[tuple[Any, ...]]:
        """Translate an uploaded file; yields progress, then the translated file to download."""
        if not file:
            raise gr.Error("Choose a file first (.txt, .md, .srt, .docx or .csv).")
        path = self._uploaded(visitor, file)
        self._admit(visitor, "")  # one request now; its characters once the file is read
        template = TranslationRequest(text="", source_lang=source, target_lang=target,
                                      options=self.translator.decoding(
                                          deterministic=bool(deterministic)),
                                      glossary=self._glossary(glossary))
        state = {"done": 0, "total": 0}
        stop = threading.Event()
        box: dict[str, Any] = {}

        def translate(segments: list[str]) -> list[str]:
            self._admit(visitor, "".join(segments), count=False)
            state["total"] = len(segments)
            return self.translator.translate_segments(
                segments, template, progress=lambda i, n: state.update(done=i), cancelled=stop)

        def work() -> None:
            try:
                box["result"] = files.translate_file(
                    path.name, path.read_bytes(), translate, lang=source, target_lang=target,
                    csv_columns=columns or None, max_bytes=self.translator.settings.max_file_bytes)
            except Exception as exc:  # handed to the event's thread below
                box["error"] = exc

        worker = threading.Thread(target=work, name="hymt-file", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.25)
                if state["total"]:
                    progress((state["done"], state["total"]), desc="Translating", unit="segments")
                    yield gr.skip(), f"{state['done']} / {state['total']} segments"
        finally:
            stop.set()  # the Stop button or a closed tab ends the generator: stop the work too
        if "error" in box:
            raise box["error"]  # ui_errors makes it readable
        result = box["result"]
        out = self.files.new_output(session_of(visitor) or "", result.filename, result.data)
        yield out, f"Done: {result.segments} distinct segments translated → {result.filename}"

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
            message = exc.user_message if isinstance(exc, TranslatorError) else \
                "it is not UTF-8 text"
            raise gr.Error(f"Could not read the glossary: {message}",
                           print_exception=False) from None
        return [list(r) for r in rows] or [["", ""]]

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

    @staticmethod
    def _instructions(text: str | None) -> tuple[str, ...]:
        try:
            return modes.parse_instructions(text or "")
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None

    def modes_markdown(self) -> str:
        """Which modes the loaded model has prompts for; the others fall back with a notice."""
        spec = self.translator.spec
        own = [label.split(" · ")[0] for m, label in MODE_LABELS.items()
               if m in spec.modes and m != TRANSLATE]
        name = html.escape(spec.id.rsplit("/", 1)[-1])
        if not own:
            return (f"**{name}** has only the plain translation prompt: the other modes use it, "
                    "with a notice saying what was left out.")
        return (f"**{name}** has prompts for: {', '.join(own)}. The other modes use its plain "
                "prompt, with a notice.")

    def _options(self, *values: Any) -> DecodingOptions:
        try:
            return options_from(*values)
        except TranslatorError as exc:
            raise gr.Error(exc.user_message) from None

    async def _run(self, request: TranslationRequest) -> AsyncIterator[list[Update]]:
        """The job's updates in batches: all that arrived since the page last took one. Async, so
        Gradio runs it on its event loop instead of one thread-pool hop per token."""
        job = None
        try:
            job = await anyio.to_thread.run_sync(self.translator.start, request)  # cache I/O
            async for updates in batched_updates(job):
                yield updates
        except TranslatorError as exc:
            raise gr.Error(exc.user_message, print_exception=False) from None
        finally:  # also when Gradio cancels this generator (Stop button, closed tab)
            if job is not None:
                job.cancel()

    def status_markdown(self) -> str:
        """The shared part of the status line: model, device, precision, state, load."""
        status = self.translator.engine.status()
        parts = [f"**{html.escape(status.model.rsplit('/', 1)[-1])}**", status.device or "?",
                 status.dtype or "?", f"state: {status.label}"]
        if status.reason:
            parts.append(f"⚠️ {html.escape(self.redact.text(status.reason))}")
        parts.append(f"batch {status.active}/{status.max_batch_size}, queue {status.queued}")
        cache = self.translator.cache
        if cache is not None and cache.enabled:
            stats = cache.stats()
            parts.append(f"cache {stats.hits} hits / {stats.misses} misses")
        return " · ".join(parts)

    @staticmethod
    def swap(source: str, target: str, detected: str) -> tuple[str, str]:
        """Swap the pair; with detection on, the detected language becomes the target."""
        if source == languages.AUTO:
            code = _detected_code(detected)
            if code is None:
                raise gr.Error("Translate something first so the source language is detected, "
                               "or choose it.")
            source = code
        return target, source

    @staticmethod
    def output_direction(target: str) -> Any:
        try:
            rtl = languages.is_rtl(target)
        except TranslatorError:
            rtl = False
        return gr.update(rtl=rtl, text_align="right" if rtl else "left")

    @staticmethod
    def restore(history: list[list[str]] | None, evt: gr.SelectData) -> tuple[str, str]:
        rows = history or []
        row = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
        if not rows or row is None or row >= len(rows):
            return gr.skip(), gr.skip()
        return rows[row][0], rows[row][1]

    # -- the page ---------------------------------------------------------------------------------
    @staticmethod
    def _mode_inputs(t: gr.I18n) -> tuple[Any, ...]:
        """The style, instructions and data-format inputs, each shown with its mode."""
        style = gr.Textbox(lines=1, label=t("style"), info=t("style_info"), visible=False,
                           max_length=modes.MAX_STYLE_CHARS, elem_id="style-box")
        instructions = gr.Textbox(lines=3, label=t("instructions"), info=t("instructions_info"),
                                  visible=False, elem_id="instructions-box")
        data_format = gr.Dropdown(DATA_FORMATS, value="", label=t("data_format"), visible=False,
                                  elem_id="data-format")
        return style, instructions, data_format

    @staticmethod
    def _text_area(settings: Any, t: gr.I18n) -> tuple[Any, ...]:
        with gr.Row(equal_height=True):
            with gr.Column():
                text = gr.Textbox(lines=8, max_lines=30, label=t("input"),
                                  placeholder=t("input_placeholder"),
                                  max_length=settings.max_input_chars, elem_id="input-box")
                count = gr.Markdown(f"0 / {settings.max_input_chars:,}", elem_id="char-count")
            with gr.Column():
                output = gr.Textbox(lines=8, max_lines=30, label=t("output"), interactive=False,
                                    buttons=["copy"], elem_id="output-box")
                detected = gr.Markdown("", elem_id="detected-lang")
        return text, count, output, detected

    def build(self) -> gr.Blocks:
        settings = self.translator.settings
        t = I18N
        with gr.Blocks(title="Hunyuan-MT Translator", analytics_enabled=False) as demo:
            gr.Markdown(t("header"))
            if self.banner:
                gr.Markdown(self.banner, elem_id="banner")
            with gr.Row(equal_height=True):
                source = gr.Dropdown(language_choices(True), value=languages.AUTO,
                                     label=t("source"), filterable=True, scale=5,
                                     elem_id="source-lang")
                swap = gr.Button(t("swap"), scale=1, min_width=80, elem_id="swap-btn")
                target = gr.Dropdown(language_choices(False), value="en", label=t("target"),
                                     filterable=True, scale=5, elem_id="target-lang")
            with gr.Tabs():
                with gr.Tab(t("tab_text"), id="text"):
                    text, count, output, detected = self._text_area(settings, t)
                    with gr.Row():
                        translate_btn = gr.Button(t("translate"), variant="primary", scale=3,
                                                  elem_id="translate-btn")
                        retranslate_btn = gr.Button(t("retranslate"), scale=1,
                                                    elem_id="retranslate-btn")
                        stop_btn = gr.Button(t("stop"), variant="stop", scale=1, elem_id="stop-btn")
                        clear_btn = gr.Button(t("clear"), scale=1, elem_id="clear-btn")
                    progress = gr.Markdown("", elem_id="progress")
                    gr.Examples(EXAMPLES, inputs=[text, source, target], label=t("examples"),
                                example_labels=[_example_label(*row) for row in EXAMPLES],
                                examples_per_page=len(EXAMPLES))
                with gr.Tab(t("tab_document"), id="document"):
                    with gr.Row(equal_height=True):
                        upload = gr.File(label=t("document"), file_types=sorted(files.SUPPORTED),
                                         type="filepath", elem_id="doc-upload")
                        download = gr.File(label=t("document_out"), interactive=False,
                                           elem_id="doc-download")
                    columns = gr.CheckboxGroup([], label=t("csv_columns"), visible=False,
                                               elem_id="csv-columns")
                    doc_status = gr.Markdown("", elem_id="doc-status")
                    with gr.Row():
                        doc_btn = gr.Button(t("translate_document"), variant="primary", scale=3,
                                            elem_id="doc-translate-btn")
                        doc_stop = gr.Button(t("stop"), variant="stop", scale=1,
                                             elem_id="doc-stop-btn")
            with gr.Accordion(t("advanced"), open=False):
                deterministic = gr.Checkbox(False, label=t("deterministic"),
                                            info=t("deterministic_info"), elem_id="deterministic")
                defaults = self.translator.spec.decoding  # the loaded model's card
                with gr.Row():
                    temperature = _slider("temperature", defaults.temperature, 0.05, t)
                    top_p = _slider("top_p", defaults.top_p, 0.05, t)
                with gr.Row():
                    top_k = _slider("top_k", defaults.top_k, 1, t)
                    repetition = _slider("repetition_penalty", defaults.repetition_penalty, 0.01, t)
                max_new = gr.Slider(0, min(settings.max_new_tokens, OPTION_BOUNDS["max_new_tokens"][1]),
                                    value=0, step=16, label=t("max_new_tokens"))
            with gr.Accordion(t("modes"), open=False, elem_id="modes-panel"):
                gr.Markdown(self.modes_markdown(), elem_id="model-modes")
                mode = gr.Radio([(label, m) for m, label in MODE_LABELS.items()], value=TRANSLATE,
                                label=t("mode"), elem_id="mode")
                context = gr.Textbox(lines=2, label=t("context"), info=t("context_info"),
                                     visible=False, elem_id="context-box")
                style, instructions, data_format = self._mode_inputs(t)
                show_candidates = gr.Checkbox(False, label=t("show_candidates"), visible=False,
                                              elem_id="show-candidates")
                with gr.Row():
                    glossary = gr.Dataframe(headers=["Source term", "Target term"],
                                            value=[["", ""]], column_count=(2, "fixed"),
                                            interactive=True, label=t("glossary"),
                                            elem_id="glossary", scale=3)
                    glossary_file = gr.File(label=t("glossary_csv"), file_types=[".csv"],
                                            type="filepath", scale=1)
            extras = gr.Markdown("", elem_id="extras")
            with gr.Accordion(t("history"), open=False):
                history = gr.State([])
                table = gr.Dataframe(headers=["Source", "Translation", "Pair"], value=[],
                                     interactive=False, wrap=True, elem_id="history")
            status = gr.Markdown(self.status_markdown(), elem_id="status-line")
            # Every open tab polls: 30 tabs every 2 s made 15 requests/s. The line is also
            # refreshed when the page loads and after each translation.
            timer = gr.Timer(STATUS_POLL_S)

            text.change(None, text, count, js=COUNT_JS % settings.max_input_chars, queue=False)
            target.change(self.output_direction, target, output, api_visibility="private",
                          queue=False)
            swap.click(self.swap, [source, target, detected], [source, target],
                       api_visibility="private", queue=False)
            clear_btn.click(lambda: ("", "", "", f"0 / {settings.max_input_chars:,}"), None,
                            [text, output, detected, count], api_visibility="private", queue=False)
            inputs = [text, source, target, deterministic, temperature, top_p, top_k, repetition,
                      max_new, mode, context, style, instructions, data_format, glossary,
                      show_candidates, history]
            outputs = [output, detected, progress, history, extras]
            run = translate_btn.click(
                self.translate, [*inputs, gr.State(True)], outputs, api_name="translate_ui",
                api_visibility="undocumented", concurrency_id=MODEL_EVENTS,
                concurrency_limit=settings.concurrency)
            fresh = retranslate_btn.click(
                self.translate, [*inputs, gr.State(False)], outputs, api_name="retranslate_ui",
                api_visibility="undocumented", concurrency_id=MODEL_EVENTS,
                concurrency_limit=settings.concurrency)
            for event in (run, fresh):
                event.then(lambda h: h, history, table, api_visibility="private", queue=False)
                event.then(self.status_markdown, None, status, api_visibility="private",
                           queue=False)
            stop_btn.click(None, None, None, cancels=[run, fresh], api_visibility="private",
                           queue=False)
            table.select(self.restore, history, [text, output], api_visibility="private",
                         queue=False)
            mode_inputs = {"context": context, "ensemble": show_candidates, "style": style,
                           "instructions": instructions, "structured": data_format}
            mode.change(lambda m: tuple(gr.update(visible=m == name) for name in mode_inputs),
                        mode, list(mode_inputs.values()), api_visibility="private", queue=False)
            glossary_file.upload(self.load_glossary, glossary_file, glossary,
                                 api_visibility="private", queue=False)
            upload.change(self.document_columns, upload, columns, api_visibility="private",
                          queue=False)
            doc_run = doc_btn.click(
                self.translate_document,
                [upload, source, target, columns, deterministic, glossary],
                [download, doc_status], api_name="translate_document",
                api_visibility="undocumented", concurrency_id=MODEL_EVENTS,
                concurrency_limit=settings.concurrency)
            doc_stop.click(None, None, None, cancels=[doc_run], api_visibility="private",
                           queue=False)
            timer.tick(self.status_markdown, None, status, api_visibility="private", queue=False)
            demo.load(self.status_markdown, None, status, api_visibility="private", queue=False)
            gr.api(self.api_translate, api_name="translate", concurrency_id=MODEL_EVENTS,
                   concurrency_limit=settings.concurrency)
        demo.queue(max_size=settings.queue_size, api_open=False)
        return demo


def _slider(name: str, value: float, step: float, t: gr.I18n) -> gr.Slider:
    low, high = OPTION_BOUNDS[name]
    return gr.Slider(low, high, value=value, step=step, label=t(name), elem_id=f"opt-{name}")


def _example_label(text: str, source: str, target: str) -> str:
    return f"{languages.get(source).english} → {languages.get(target).english}: {text}"


def _detected_code(markdown: str) -> str | None:
    """The language code named in the detection line, if any."""
    for lang in languages.LANGUAGES:
        if f"**{lang.english} · {lang.chinese}**" in (markdown or ""):
            return lang.code
    return None


def build_ui(translator: Translator, banner: str = "", *, access: AccessControl | None = None,
             files: VisitorFiles | None = None) -> gr.Blocks:
    return TranslatorUI(translator, banner, access, files).build()
