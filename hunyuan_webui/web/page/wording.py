"""Words the server makes, in the visitor's language (a Chinese page that is Chinese).

The status line's model, device and precision in plain words ("演示模型 · 处理器 · 32 位浮点",
not "demo-model · cpu · fp32"); the demo banner in Chinese (its shell commands stay commands); and
the service's English sentences a page shows (the modes' and the glossary's notices, refusals such
as "Could not detect the source language") in Chinese. The service and the HTTP API keep their
English: only the page translates them, by matching the service's own sentence templates.
"""

from __future__ import annotations

import re

from hunyuan_webui import modes
from hunyuan_webui.service.operations import items
from hunyuan_webui.web.page.text import LABELS

# -- the status line --------------------------------------------------------------------------
DEVICES = {"en": {"cpu": "CPU", "cuda": "GPU", "mps": "Apple GPU"},
           "zh": {"cpu": "处理器", "cuda": "显卡", "mps": "苹果芯片显卡"}}
PRECISIONS = {
    "en": {"fp32": "32-bit floats", "float32": "32-bit floats", "fp16": "16-bit floats",
           "float16": "16-bit floats", "bf16": "16-bit bfloats", "bfloat16": "16-bit bfloats",
           "fp8": "8-bit floats", "int8": "8-bit integers", "int4": "4-bit integers",
           "server": "the server's precision", "quant": "{bits}-bit quantized"},
    "zh": {"fp32": "32 位浮点", "float32": "32 位浮点", "fp16": "16 位浮点", "float16": "16 位浮点",
           "bf16": "16 位脑浮点", "bfloat16": "16 位脑浮点", "fp8": "8 位浮点", "int8": "8 位整数",
           "int4": "4 位整数", "server": "由服务器决定的精度", "quant": "{bits} 位量化"},
}
DEMO_NAME = {"en": "demo model", "zh": "演示模型"}


def model_words(lang: str, model: str, demo: bool) -> str:
    """The model's name: the demo's in the page's words, a real one as it is called."""
    return DEMO_NAME.get(lang, DEMO_NAME["en"]) if demo else model.rsplit("/", 1)[-1]


def device_words(lang: str, device: str | None) -> str:
    """``cpu`` → 处理器, ``cuda:1`` → 显卡 1; anything else (a remote server) as it is."""
    if not device:
        return "?"
    kind, _, number = device.partition(":")
    name = DEVICES.get(lang, DEVICES["en"]).get(kind.strip().lower())
    if name is None:
        return device
    return f"{name} {number}" if number else name


def precision_words(lang: str, dtype: str | None) -> str:
    """``fp32`` → 32 位浮点; a GGUF quantization (``Q4_K_M``) → 4 位量化."""
    if not dtype:
        return "?"
    table = PRECISIONS.get(lang, PRECISIONS["en"])
    if dtype.lower() in table:
        return table[dtype.lower()]
    quant = re.fullmatch(r"(?i)i?q(\d)(_\w+)?", dtype.strip())
    return table["quant"].format(bits=quant.group(1)) if quant else dtype


# -- the demo banner ------------------------------------------------------------------------
ZH_BANNERS = {
    "**Demo model.**": ("**演示模型。** 这是内置的演示模型（不到一百万个参数）：它只会 "
                        "`assets/demo_phrases.tsv` 里的{count}短语（例如“谢谢你的帮助。”），"
                        "其他内容都会译成没有意义的话。"),
    "**Slow model path.**": ("**较慢的运行方式。** 本机没有合适的显卡，也没有装好更快的运行方式，"
                             "所以模型每写一个词都要读一遍全部权重，翻译会比较慢。"),
}
ZH_COMMANDS = ("运行服务器的人可以用下面的命令换成真正的模型（没有显卡时先下载模型文件再启动；有显卡时"
               "直接启动，它会选择合适的模型；也可以接入翻译服务器）：")


# Each kind of banner's one-line title (a LABELS key): the slow path's said "Demo model".
BANNER_TITLES = {"**Demo model.**": "banner", "**Slow model path.**": "banner_slow"}


def banner_title(banner: str) -> str:
    """The LABELS key of the title over ``banner`` (the accordion that opens on its details)."""
    return next((key for start, key in BANNER_TITLES.items() if banner.startswith(start)),
                "banner_other")


def banner_markdown(lang: str, banner: str) -> str:
    """The banner in the page's language. In Chinese: what it means for a student, then the
    operator's commands as they are (code); a banner of another kind stays as it is."""
    if lang != "zh":
        return banner
    for start, text in ZH_BANNERS.items():
        if banner.startswith(start):
            count = re.search(r"the (\d+) phrases", banner)
            out = text.format(count=f" {count.group(1)} 个" if count else "少量")
            commands = list(dict.fromkeys(re.findall(r"`[^`\n]+`", banner)))
            if commands:
                out += "\n\n" + ZH_COMMANDS + "\n\n" + "\n".join(f"- {c}" for c in commands)
            return out
    return banner


# -- the service's sentences in Chinese ---------------------------------------------------------
def _mode_zh(mode: str) -> str:
    return LABELS["zh"].get(f"mode_{mode}", mode)


# English sentence (the service's template) -> its Chinese. The page reads the English ones in
# notices (joined by spaces) and in refusals; a sentence not listed here stays English.
ZH_SENTENCES: list[tuple[str, str]] = [
    (modes.GLOSSARY_NOTICE, "此模型没有专门的术语表提示词：术语已按通用格式尽量交给它，请核对下面的报告。"),
    (modes.CONTEXT_NOTICE, "此模型没有上下文提示词：上下文没有被使用。"),
    (modes.FORMAT_NOTICE, "此模型没有保留格式的提示词：格式已用编号标记尽量保护。"),
    (modes.FORMAT_BROKEN, "有 {n} 个段落的格式没能保留，这些段落已去掉格式后翻译。"),
    (modes.STYLE_NOTICE, "此模型没有风格提示词：风格没有被使用。"),
    (modes.INSTRUCTIONS_NOTICE, "此模型没有个性化要求的提示词：这些要求没有被使用。"),
    (modes.STRUCTURED_NOTICE, "此模型没有结构化数据提示词：数据已用普通提示词尽量翻译，并检查了结果。"),
    (modes.GLOSSARY_UNUSED, "术语表没有被使用：“{mode}”模式的提示词里没有放术语的地方（下面的报告仍列出出现了哪些术语）。"),
    (modes.STRUCTURE_BROKEN, "模型的回答不再是结构相同的 {format}：已改为逐个翻译每个文本值。"),
    (modes.STRUCTURE_KEPT, "模型的回答不再是结构相同的 {format}：数据按原样显示，没有翻译。"),
    (items.TERMS_UNUSED, "此模型没有术语提示词：术语没有被使用。"),
    (items.CONTEXT_UNUSED, "此模型没有上下文提示词：领域或上下文没有被使用。"),
    ("Could not detect the source language; please choose it.", "无法判断文本的语言，请选择源语言。"),
    ("Could not detect the source language; please send it.", "无法判断文本的语言，请选择源语言。"),
    ("The terminology mode needs a glossary: at least one term pair.",
     "术语干预模式需要术语表：至少一对术语。"),
    ("The style mode needs a style: describe it in a few words (e.g. formal business English, "
     "中国古代文言文).", "指定风格模式需要风格：用几个词描述，例如：正式商务英语、中国古代文言文。"),
    ("A style is at most {n} characters.", "风格描述最多 {n} 个字符。"),
    ("The instructions mode needs at least one instruction (one per line).",
     "个性化要求模式至少需要一条要求（每行一条）。"),
    ("Instructions must be text, one per line, or a list of texts.", "要求必须是文本，每行一条。"),
    ("Instructions must be text.", "要求必须是文本，每行一条。"),
    ("An instruction is at most {n} characters.", "每条要求最多 {n} 个字符。"),
    ("At most {n} instructions.", "最多 {n} 条要求。"),
    ("Glossary terms must be text.", "术语必须是文本。"),
    ("A glossary holds at most 200 terms.", "术语表最多 200 条术语。"),
    ("The text must be a string.", "文本必须是文字。"),
    ("The text contains invalid characters (unpaired surrogates); send valid UTF-8 text.",
     "文本里有无效的字符，请发送正常的文本。"),
    ("The text contains binary data (NUL bytes); send plain text.",
     "文本里有二进制数据，请发送纯文本。"),
    ("The text looks like binary data (many control characters); send plain text.",
     "文本看起来像二进制数据（控制字符太多），请发送纯文本。"),
    ("The translation was stopped.", "翻译已停止。"),
]


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)(?::[^}]*)?\}", template)
    # re.split alternates literal text and field names.
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)"
                              for i, p in enumerate(parts)))


_ZH = [(_pattern(english), chinese) for english, chinese in ZH_SENTENCES]


def in_page_language(lang: str, text: str) -> str:
    """``text`` (one or more of the service's sentences) in the page's language."""
    if lang != "zh" or not text:
        return text
    for pattern, chinese in _ZH:
        def put(match: re.Match[str], chinese: str = chinese) -> str:
            values = match.groupdict()
            if "mode" in values:
                values["mode"] = _mode_zh(values["mode"])
            return chinese.format(**values)
        text = pattern.sub(put, text)
    return re.sub(r"(?<=[。！？：）])\s+(?=\S)", "", text)  # no spaces between Chinese sentences


# -- the speech recogniser on the status line -----------------------------------------------
SPEECH_WORDS = {
    "en": {"label": "🎤 speech: {what}", "demo": "demo recogniser", "loading": "loading",
           "off": "off", "failed": "unavailable (see /ready)"},
    "zh": {"label": "🎤 语音识别：{what}", "demo": "演示模型", "loading": "加载中",
           "off": "未启用", "failed": "不可用（见 /ready）"},
}


def speech_words(lang: str, state: str, model: str = "", device: str = "", compute_type: str = "",
                 demo: bool = False) -> str:
    """The recogniser in a few words: which one and where, or that there is none."""
    table = SPEECH_WORDS.get(lang, SPEECH_WORDS["en"])
    if state != "ready":
        return table["label"].format(what=table.get(state, state))
    what = table["demo"] if demo else model
    if device:
        where = device_words(lang, device)
        what += f"（{where}，{compute_type}）" if lang == "zh" else f" ({where}, {compute_type})"
    return table["label"].format(what=what)
