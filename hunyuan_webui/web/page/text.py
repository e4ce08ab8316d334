"""Every string the page shows, in both of its languages (English and Simplified Chinese).

Two tables: :data:`LABELS` feeds ``gr.I18n`` (labels, buttons, placeholders: the browser picks
the language), and :data:`MESSAGES` holds what the listeners write at run time (the detected
language, progress, the status line, errors), picked per visitor from the request's
``Accept-Language`` by :func:`ui_lang`. Both languages must have the same keys: a test checks.
Student-facing words only here; server flags and advice for the operator go to the log.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gradio as gr
from starlette.datastructures import Headers

from hunyuan_webui import languages

UI_LANGS = ("en", "zh")

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "header": (f"# Hunyuan-MT Translator\n{len(languages.LANGUAGES)} languages · streaming · "
                   "batched · cached · [🎓 Start a class](class)"),
        "banner": "ℹ️ Demo model: a few phrases (details)",
        "banner_slow": "ℹ️ Slow model path: translations take a while (details)",
        "banner_other": "ℹ️ About this server (details)",
        "source": "From", "target": "To", "detect": "Detect language",
        "swap": "⇄", "swap_label": "Swap languages and texts",
        "input": "Text",
        "input_placeholder": "Type or paste text… (Ctrl/Cmd+Enter to translate)",
        "output": "Translation", "translate": "Translate", "stop": "Stop",
        "retranslate": "Retranslate", "clear": "Clear", "share": "🔗 Share link",
        "share_link": "Link to this pair (and text)", "romanize": "Show pinyin / romanization",
        "examples": "Examples (click to translate)", "advanced": "Advanced",
        "deterministic": "Deterministic (greedy) decoding",
        "deterministic_info": "Same input, same output. Off = the model card's sampling.",
        "temperature": "Temperature", "top_p": "Top-p", "top_k": "Top-k (0 = off)",
        "repetition_penalty": "Repetition penalty",
        "max_new_tokens": "Max new tokens (0 = automatic)",
        "history": "History (kept in this browser; click a row to restore it)",
        "history_source": "Source", "history_translation": "Translation", "history_pair": "Pair",
        "history_clear": "Clear history", "history_export": "Export history and phrasebook (CSV)",
        "history_file": "History file", "status": "Status", "tab_text": "Text", "tab_document": "Document",
        "document": "File (.txt .md .srt .docx .pptx .xlsx .odt .odp .ods .epub .csv .html)",
        "document_out": "Translated file", "translate_document": "Translate file",
        "csv_columns": "CSV columns to translate", "bilingual_doc": "Bilingual copy: each "
        "paragraph followed by its translation (.docx .odt .odp .ods .html .epub .pdf)",
        "modes": "Modes & glossary", "mode": "Mode", "context": "Context",
        "context_info": "Surrounding text (previous paragraph, product description); not translated.",
        "glossary": "Glossary (terms to keep)", "glossary_csv": "…or a CSV of term pairs",
        "glossary_source": "Source term", "glossary_target": "Target term",
        "show_candidates": "Show the candidates Chimera fused",
        "style": "Style", "style_info": "In a few words, e.g. formal business English · 中国古代文言文",
        "instructions": "Your instructions, one per line",
        "instructions_info": "e.g. Keep people's names in the original · Use the polite form",
        "data_format": "Data format", "detect_format": "Detect",
        "mode_translate": "Translate", "mode_terminology": "Glossary terms",
        "mode_context": "With context / background", "mode_style": "In a style",
        "mode_instructions": "Your instructions",
        "mode_structured": "Structured data (JSON, XML…)", "mode_formatted": "Keep formatting",
        "mode_alternatives": "3 alternatives", "mode_ensemble": "Best quality (Chimera)",
        "modes_own": "has prompts of its own for the modes marked ✓; the others use its plain "
                     "translation prompt, with a notice saying what was left out.",
        "modes_none": "has only the plain translation prompt: the other modes use it, with a "
                      "notice saying what was left out.",
        # Listen and translate as you type (live.py, scripts/20-listen.js, 21-typing.js)
        "live_typing": "Translate as you type",
        "listen_source": "Listen to the text", "listen_target": "Listen to the translation",
        "listen_stop": "Stop reading aloud",
        # -- the phrasebook, kept in the browser --
        "star": "☆ Save to phrasebook",
        "phrasebook": "Phrasebook (saved translations, kept in this browser)",
        "phrasebook_time": "Saved",
        "phrasebook_remove": "Remove the selected entry",
        "phrasebook_export": "Export phrasebook and history (CSV)",
        "phrasebook_file": "Phrasebook and history file",
        # The bilingual export
        "bilingual_csv": "⬇ Bilingual CSV", "bilingual_docx": "⬇ Bilingual Word (.docx)",
        "bilingual_file": "Bilingual file (source | translation)",
    },
    "zh": {
        "header": (f"# 混元翻译\n{len(languages.LANGUAGES)} 种语言 · 流式输出 · 批量解码 · 缓存 · "
                   "[🎓 开始上课](class)"),
        "banner": "ℹ️ 演示模型：只会少量短语（详情）",
        "banner_slow": "ℹ️ 较慢的运行方式：翻译需要一些时间（详情）",
        "banner_other": "ℹ️ 关于此服务器（详情）",
        "source": "源语言", "target": "目标语言", "detect": "自动检测",
        "swap": "⇄", "swap_label": "交换语言和文本",
        "input": "原文", "input_placeholder": "输入或粘贴文本…（Ctrl/Cmd+Enter 翻译）",
        "output": "译文", "translate": "翻译", "stop": "停止", "retranslate": "重新翻译",
        "clear": "清空", "share": "🔗 分享链接", "share_link": "此语言对（及文本）的链接",
        "romanize": "显示拼音 / 罗马字", "examples": "示例（点击即翻译）", "advanced": "高级设置",
        "deterministic": "确定性（贪心）解码",
        "deterministic_info": "相同输入得到相同输出。关闭则使用模型卡推荐的采样参数。",
        "temperature": "温度（越高越多样）", "top_p": "累积概率上限（越低越保守）",
        "top_k": "候选词数（0 = 不限）",
        "repetition_penalty": "重复惩罚", "max_new_tokens": "最大生成长度（0 = 自动）",
        "history": "历史记录（保存在本浏览器中；点击一行恢复）",
        "history_source": "原文", "history_translation": "译文", "history_pair": "语言对",
        "history_clear": "清除历史", "history_export": "导出历史和短语本（CSV）",
        "history_file": "历史文件",
        "status": "状态", "tab_text": "文本", "tab_document": "文档",
        "document": "文件（.txt .md .srt .docx .pptx .xlsx .odt .odp .ods .epub .csv .html）",
        "document_out": "译文文件", "csv_columns": "要翻译的 CSV 列", "translate_document": "翻译文件",
        "bilingual_doc": "双语对照：每段原文后接译文（.docx .odt .odp .ods .html .epub .pdf）",
        "modes": "模式与术语表", "mode": "模式", "context": "上下文",
        "context_info": "相关文本（上一段、产品说明），不会被翻译。",
        "glossary": "术语表", "glossary_csv": "…或上传术语对 CSV",
        "glossary_source": "原文术语", "glossary_target": "译文术语",
        "show_candidates": "显示 Chimera 融合的候选译文",
        "style": "风格", "style_info": "简短描述，例如：正式商务英语 · 中国古代文言文",
        "instructions": "个性化要求（每行一条）", "instructions_info": "例如：人名保留原文 · 使用敬语",
        "data_format": "数据格式", "detect_format": "自动检测",
        "mode_translate": "翻译", "mode_terminology": "术语干预",
        "mode_context": "结合上下文", "mode_style": "指定风格",
        "mode_instructions": "个性化要求",
        "mode_structured": "结构化数据（JSON、XML…）", "mode_formatted": "保留格式",
        "mode_alternatives": "三种译法", "mode_ensemble": "最佳质量（Chimera 集成）",
        "modes_own": "为标有 ✓ 的模式提供专用提示词；其他模式使用普通翻译提示词，并说明省略了什么。",
        "modes_none": "只有普通翻译提示词：其他模式都使用它，并说明省略了什么。",
        # Listen and translate as you type (live.py, scripts/20-listen.js, 21-typing.js)
        "live_typing": "边输入边翻译",
        "listen_source": "朗读原文", "listen_target": "朗读译文", "listen_stop": "停止朗读",
        # -- 短语本，保存在浏览器中 --
        "star": "☆ 收藏到短语本",
        "phrasebook": "短语本（收藏的译文，保存在本浏览器中）",
        "phrasebook_time": "收藏时间",
        "phrasebook_remove": "删除所选条目",
        "phrasebook_export": "导出短语本和历史（CSV）",
        "phrasebook_file": "短语本和历史文件",
        # The bilingual export
        "bilingual_csv": "⬇ 双语对照（CSV）", "bilingual_docx": "⬇ 双语对照（.docx）",
        "bilingual_file": "双语对照文件（原文 | 译文）",
    },
}

# -- A Chinese page that is Chinese: the pickers' language names, native first -----
def picker_label(lang: str, code: str) -> str:
    """A language as the pickers show it: its own name first, then the page's name for it when
    that differs ("Deutsch · German", "Deutsch · 德语", "简体中文", "English · 英语"). The other
    names are found by the pickers' search (:func:`picker_search`, scripts/10-names.js)."""
    language = languages.get(code)
    own = language.chinese if lang == "zh" else language.english
    return language.autonym if own in language.autonym else f"{language.autonym} · {own}"


def picker_search() -> list[dict[str, object]]:
    """For each picker choice, its labels on both pages and the words that find it (English and
    Chinese names, own name, code, the other names tools use): Gradio's search reads the label."""
    auto = {"labels": [LABELS[lang]["detect"] for lang in UI_LANGS],
            "keys": "\n".join(["auto", "detect language", "自动检测", "检测语言"])}
    return [auto, *({"labels": [picker_label(lang, lg.code) for lang in UI_LANGS],
                     "keys": "\n".join([lg.english, lg.chinese, lg.autonym, lg.code,
                                        *lg.names])}
                    for lg in languages.LANGUAGES)]


# The Advanced panel in plain words: what each sampling setting does to a translation.
ADVANCED: dict[str, dict[str, str]] = {
    "en": {
        "advanced_info": "How the model picks its words. The defaults are the model card's; "
                         "most translations need no change.",
        "temperature_info": "How free the wording is: low keeps to the most likely "
                            "translation, high tries other words (and makes more mistakes).",
        "top_p_info": "Picks each next word only among the likeliest ones that together make "
                      "up this share: lower is safer, higher more varied.",
        "top_k_info": "Picks each next word among at most this many candidates: fewer is "
                      "safer.",
        "repetition_penalty_info": "Above 1 the model avoids repeating words; too high and it "
                                   "drops words the text does repeat.",
        "max_new_tokens_info": "Stops the translation after this many tokens (pieces of "
                               "words); 0 sets it from the text's length.",
    },
    "zh": {
        "advanced_info": "模型如何选词。默认值来自模型卡，大多数翻译无需更改。",
        "temperature_info": "措辞有多自由：低则紧贴最可能的译法，高则尝试其他用词（也更容易出错）。",
        "top_p_info": "每个词只在最可能的候选词中挑选，直到它们的概率加起来达到这个比例：越低越稳妥，"
                      "越高越多样。",
        "top_k_info": "每个词最多在这么多个候选词中挑选：越少越稳妥。",
        "repetition_penalty_info": "大于 1 时模型避免重复用词；太高会漏掉原文本来就重复的词。",
        "max_new_tokens_info": "译文生成这么多个词元（词的片段）后停止；0 表示按原文长度自动决定。",
    },
}
# What Gradio announces to screen readers when an event ends: its Chinese table lacks these two,
# and a Chinese screen reader read out "common.complete".
GRADIO_WORDS: dict[str, dict[str, str]] = {
    "en": {"common.complete": "Complete", "common.error": "Error"},
    "zh": {"common.complete": "完成", "common.error": "出错了"},
}
# The demo model named in the page's words, not as "demo-model" (the modes panel's first line).
DEMO_WORDS: dict[str, dict[str, str]] = {
    "en": {"demo_modes_own": "**The demo model** " + LABELS["en"]["modes_own"],
           "demo_modes_none": "**The demo model** " + LABELS["en"]["modes_none"]},
    "zh": {"demo_modes_own": "**演示模型**" + LABELS["zh"]["modes_own"],
           "demo_modes_none": "**演示模型**" + LABELS["zh"]["modes_none"]},
}
for _lang in UI_LANGS:
    LABELS[_lang].update(ADVANCED[_lang])
    LABELS[_lang].update(DEMO_WORDS[_lang])
    LABELS[_lang].update(GRADIO_WORDS[_lang])
    LABELS[_lang].update({f"lang_{language.code}": picker_label(_lang, language.code)
                          for language in languages.LANGUAGES})

I18N = gr.I18n(en=LABELS["en"], **{"zh-CN": LABELS["zh"], "zh": LABELS["zh"]})

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "detected": "Detected: **{name}** ({confidence:.0%})",
        "low_confidence": " — ⚠️ low confidence: pick the source language if this is wrong",
        "not_recognised": "⚠️ Language not recognised — please choose the source language.",
        "segment": "Part {done} of {total}…",
        "translating": "Translating",
        "last_run": "Last translation: {latency:.2f} s",
        "first_token": "first token {ms:.0f} ms",
        "speed": "{rate:.1f} tokens/s",
        "segments": "{n} segments ({cached} from cache)",
        "from_cache": "⚡ From the phrase cache (Retranslate for a fresh one)",
        "already": "The text is already in {name}; returned unchanged.",
        "switched": "The text is already in {name}: translated into {target} instead.",
        "error_title": "Error",
        "parts": "The text was long, so it was translated in {n} parts.",
        "stopped": "⏹ Stopped: the translation above is partial.",
        "glossary_report": "**Glossary** — in the translation: {found}; missing: {missing}",
        "alternatives": "**Alternatives**",
        "candidates": "**Candidates fused by Chimera**",
        "state": "state: {state}",
        "load": "batch {active}/{size}, queue {queued}",
        "cache": "cache {hits} hits / {misses} misses",
        "loading": "⏳ The model is still loading; Translate will be ready in a moment.",
        "too_long": "This text is too long ({chars:,} characters). The page translates up to "
                    "{limit:,} characters at a time: please split it.",
        "not_ready": "The model is not ready: it is loading, or restarting after a problem. Please try again in a few seconds.",
        "apology": "Something went wrong on the server; it has been logged. Please try again.",
        "busy": "The translator is busy with the whole class; please try again in {seconds} s.",
        "rate_limited": "That was a lot of translating in a short time; please wait {seconds} s.",
        "input_too_long": "This text is longer than the server translates at once: please split "
                          "it into smaller parts.",
        "engine_failed": "The translation engine had a problem and is restarting; please try "
                         "again in a few seconds.",
        "no_detect": "Could not tell which language this is: please choose the source language.",
        "no_file": "Choose a file first (.txt .md .srt .docx .pptx .xlsx .odt .odp .ods .epub .csv .html).",
        "history_empty": "The history is empty.",
        "ensemble_unavailable": "“Best quality” is not available with this model.",
        "segments_unit": "segments",
        "doc_progress": "{done} / {total} segments",
        "doc_done": "Done: {n} distinct segments translated → {filename}",
        "glossary_unreadable": "Could not read the glossary: {reason}",
        "not_utf8": "it is not UTF-8 text",
        "guard_marked": "⚠️ Check this translation: {what} ({n} part(s); Retranslate to try "
                        "again)",
        "guard_language": "it seems to be in {name}",
        "guard_copy": "it repeats the source",
        "guard_loop": "it repeated itself and was cut",
        "guard_length": "it ran far too long and was cut",
        "guard_half": "part of it is still in {name}",
        "guard_empty": "the answer was empty",
        "guard_truncated": "it stopped short",
        "guard_number": "a number of the source ({missing}) is not in it",
        "guard_url": "an address of the source ({missing}) is not in it",
        "guard_code": "code of the source ({missing}) is not in it",
        # Sentence highlight (the sentence view under the boxes: web/page/aligned.py)
        "sentences_title": "Sentence by sentence: point at or tap a sentence to mark its "
                           "counterpart",
        # -- the phrasebook, alternatives and the glossary report --
        "starred": "Saved to the phrasebook.",
        "star_nothing": "Translate something first, then save it to the phrasebook.",
        "star_pick": "Click an entry of the phrasebook first, then remove it.",
        "store_empty": "The phrasebook and the history are empty.",
        "alternatives_one": "**Alternatives** — only one distinct translation: {text}",
        "glossary_in_text": "**Glossary** — {n} of its {total} terms occur in the text; kept in "
                            "the translation: {found}; not in the translation: {missing}",
        "glossary_not_in_text": "**Glossary** — none of its {total} terms occur in the text.",
        # Documents that say what happened, and the bilingual export
        "doc_refused": "✗ This file was not translated (see the message).",
        "doc_unchanged": "The file is already in {name}: nothing was translated; it is given "
                         "back unchanged → {filename}",
        "doc_switched": "The file is already in {name}: translated into {target} instead.",
        "bilingual_empty": "Translate a text first: the export puts it beside its translation.",
        "bilingual_source": "Source", "bilingual_translation": "Translation",
        # -- small fixes: nothing to translate, an empty answer
        "nothing_to_translate": "Nothing to translate (numbers, punctuation or an address): "
                                "returned as it is.",
        "empty_answer": "⚠️ The model gave no translation for this text. Try Retranslate, or "
                        "another language pair.",
    },
    "zh": {
        "detected": "检测到：**{name}**（{confidence:.0%}）",
        "low_confidence": " — ⚠️ 置信度较低：如有误，请选择源语言",
        "not_recognised": "⚠️ 无法识别语言，请选择源语言。",
        "segment": "第 {done} 部分，共 {total} 部分…",
        "translating": "翻译中",
        "last_run": "上次翻译：{latency:.2f} 秒",
        "first_token": "首字 {ms:.0f} 毫秒",
        "speed": "每秒 {rate:.1f} 个词元",
        "segments": "{n} 个片段（{cached} 个来自缓存）",
        "from_cache": "⚡ 来自短语缓存（点“重新翻译”获取新译文）",
        "already": "文本已经是{name}，原样返回。",
        "switched": "原文已是{name}，已改为译成{target}。",
        "error_title": "出错了",
        "parts": "文本较长，已分 {n} 部分翻译。",
        "stopped": "⏹ 已停止：上面的译文不完整。",
        "glossary_report": "**术语表** — 译文中出现：{found}；缺少：{missing}",
        "alternatives": "**其他译法**",
        "candidates": "**Chimera 融合的候选译文**",
        "state": "状态：{state}",
        "load": "批次 {active}/{size}，排队 {queued}",
        "cache": "缓存命中 {hits} / 未命中 {misses}",
        "loading": "⏳ 模型仍在加载，稍后即可翻译。",
        "too_long": "文本太长（{chars:,} 个字符）。本页一次最多翻译 {limit:,} 个字符，请分段。",
        "not_ready": "模型尚未就绪：正在加载，或出现问题后正在重启。请几秒后再试。",
        "apology": "服务器出错了，已记录在日志中。请再试一次。",
        "busy": "全班都在翻译，翻译器正忙；请 {seconds} 秒后再试。",
        "rate_limited": "短时间内翻译得太多了；请等 {seconds} 秒。",
        "input_too_long": "这段文本超出了服务器一次能翻译的长度，请分成几段。",
        "engine_failed": "翻译引擎出了问题，正在重启；请几秒后再试。",
        "no_detect": "无法判断文本的语言，请选择源语言。",
        "no_file": "请先选择文件（.txt .md .srt .docx .pptx .xlsx .odt .odp .ods .epub .csv .html）。",
        "history_empty": "历史记录为空。",
        "ensemble_unavailable": "当前模型不支持“最佳质量”模式。",
        "segments_unit": "个片段",
        "doc_progress": "{done} / {total} 个片段",
        "doc_done": "完成：已翻译 {n} 个不同的片段 → {filename}",
        "glossary_unreadable": "无法读取术语表：{reason}",
        "not_utf8": "文件不是 UTF-8 文本",
        "guard_marked": "⚠️ 请核对译文：{what}（{n} 处；可点“重新翻译”再试）",
        "guard_language": "似乎是{name}",
        "guard_copy": "与原文相同",
        "guard_loop": "出现重复，已截断",
        "guard_length": "过长，已截断",
        "guard_half": "部分内容仍是{name}",
        "guard_empty": "译文为空",
        "guard_truncated": "译文不完整",
        "guard_number": "缺少原文中的数字（{missing}）",
        "guard_url": "缺少原文中的地址（{missing}）",
        "guard_code": "缺少原文中的代码（{missing}）",
        # Sentence highlight
        "sentences_title": "逐句对照：指向或点按一个句子，即可标出与它对应的句子",
        # -- 短语本、其他译法和术语表报告 --
        "starred": "已收藏到短语本。",
        "star_nothing": "请先翻译，再收藏到短语本。",
        "star_pick": "请先点击短语本中的一条，再删除。",
        "store_empty": "短语本和历史记录都是空的。",
        "alternatives_one": "**其他译法** — 只有一种不同的译法：{text}",
        "glossary_in_text": "**术语表** — {total} 个术语中有 {n} 个出现在原文中；译文中已使用：{found}；"
                            "译文中缺少：{missing}",
        "glossary_not_in_text": "**术语表** — {total} 个术语都没有出现在原文中。",
        # Documents that say what happened, and the bilingual export
        "doc_refused": "✗ 此文件未翻译（原因见提示）。",
        "doc_unchanged": "文件已经是{name}：没有翻译任何内容，原样返回 → {filename}",
        "doc_switched": "文件已经是{name}，已改为译成{target}。",
        "bilingual_empty": "请先翻译一段文本：导出文件会把原文和译文并排列出。",
        "bilingual_source": "原文", "bilingual_translation": "译文",
        # -- small fixes: nothing to translate, an empty answer
        "nothing_to_translate": "没有需要翻译的内容（数字、标点或网址），原样返回。",
        "empty_answer": "⚠️ 模型没有给出这段文本的译文。请点“重新翻译”再试，或换一个语言对。",
    },
}

STATES = {"zh": {"ready": "就绪", "loading": "加载中", "busy": "忙碌", "failed": "失败",
                 "starting": "启动中", "warming": "预热中", "restarting": "重启中",
                 "unresponsive": "无响应"}}


def ui_lang(request: Any) -> str:
    """The visitor's UI language: Chinese when the browser asks for it first, else English."""
    headers = getattr(request, "headers", None) or {}
    accept = str(headers.get("accept-language", "") if hasattr(headers, "get") else "")
    first = accept.split(",")[0].strip().lower()
    return "zh" if first.startswith("zh") else "en"


def body_refused(scope: dict) -> str:
    """What the page's visitor reads when the server refuses a call as too large: with the
    history bounded (history.py), it is the text."""
    return say(ui_lang(SimpleNamespace(headers=Headers(scope=scope))), "input_too_long")


def say(lang: str, key: str, **values: Any) -> str:
    return MESSAGES.get(lang, MESSAGES["en"])[key].format(**values)


def headers(lang: str, *keys: str) -> list[str]:
    """Labels for a table's headers, which ``gr.I18n`` does not reach."""
    table = LABELS.get(lang, LABELS["en"])
    return [table[key] for key in keys]


def state_name(lang: str, state: str) -> str:
    return STATES.get(lang, {}).get(state, state)


def language_name(lang: str, code: str) -> str:
    """A language's name for this UI language, with its own name beside it when different."""
    from hunyuan_webui import languages

    language = languages.get(code)
    name = language.chinese if lang == "zh" else language.english
    return name if name == language.autonym else f"{name} · {language.autonym}"
