"""Words the server makes, in the visitor's language (a Chinese page that is Chinese).

The status line's model, device and precision in plain words ("演示模型 · 处理器 · 32 位浮点",
not "demo-model · cpu · fp32"); the demo banner in Chinese (its shell commands stay commands); and
the service's English sentences a page shows (the modes' and the glossary's notices, refusals such
as "Could not detect the source language") in Chinese. The service and the HTTP API keep their
English: only the page translates them, by matching the service's own sentence templates.

The words are the ``server`` surface's tables (``web/words/server/<code>.json``, as every word a
visitor reads: :mod:`hunyuan_webui.web.words`); this module only applies them. A ``sentence.*``
entry of the English table is the service's template itself (``tests/fast/test_words.py`` holds
them to the service's constants), which the other tables' entries replace.
"""

from __future__ import annotations

import re
from functools import cache

from hunyuan_webui.web import words
from hunyuan_webui.web.page.text import LABELS

SURFACE = "server"
# The names a precision goes by, as the engines report it, to its table's key.
PRECISION_NAMES = {"fp32": "fp32", "float32": "fp32", "fp16": "fp16", "float16": "fp16",
                   "bf16": "bf16", "bfloat16": "bf16", "fp8": "fp8", "int8": "int8",
                   "int4": "int4", "server": "server"}


def _words(lang: str) -> dict[str, str]:
    return words.table(SURFACE, lang)


# -- the status line --------------------------------------------------------------------------
def model_words(lang: str, model: str, demo: bool) -> str:
    """The model's name: the demo's in the page's words, a real one as it is called."""
    return _words(lang)["demo_name"] if demo else model.rsplit("/", 1)[-1]


def device_words(lang: str, device: str | None) -> str:
    """``cpu`` → 处理器, ``cuda:1`` → 显卡 1; anything else (a remote server) as it is."""
    if not device:
        return "?"
    kind, _, number = device.partition(":")
    name = _words(lang).get(f"device.{kind.strip().lower()}")
    if name is None:
        return device
    return f"{name} {number}" if number else name


def precision_words(lang: str, dtype: str | None) -> str:
    """``fp32`` → 32 位浮点; a GGUF quantization (``Q4_K_M``) → 4 位量化."""
    if not dtype:
        return "?"
    table = _words(lang)
    name = PRECISION_NAMES.get(dtype.lower())
    if name is not None:
        return table[f"precision.{name}"]
    quant = re.fullmatch(r"(?i)i?q(\d)(_\w+)?", dtype.strip())
    return table["precision.quant"].format(bits=quant.group(1)) if quant else dtype


# -- the demo banner ------------------------------------------------------------------------
# Each kind of banner by how the operator's (English) banner starts: its table key, and the
# one-line title over it (a LABELS key: the slow path's said "Demo model").
BANNERS = {"**Demo model.**": ("banner.demo", "banner"),
           "**Slow model path.**": ("banner.slow", "banner_slow")}


def banner_title(banner: str) -> str:
    """The LABELS key of the title over ``banner`` (the accordion that opens on its details)."""
    return next((title for start, (_, title) in BANNERS.items() if banner.startswith(start)),
                "banner_other")


def banner_markdown(lang: str, banner: str) -> str:
    """The banner in the page's language: in English the operator's banner as it is; in another
    language what it means for a student, then the operator's commands as they are (code). A
    banner of another kind stays as it is."""
    if lang == words.REFERENCE or lang not in words.codes(SURFACE):
        return banner
    table = _words(lang)
    for start, (key, _) in BANNERS.items():
        if banner.startswith(start):
            count = re.search(r"the (\d+) phrases", banner)
            out = table[key].format(
                count=table["count.some"].format(n=count.group(1)) if count else "")
            commands = list(dict.fromkeys(re.findall(r"`[^`\n]+`", banner)))
            if commands:
                out += "\n\n" + table["banner.commands"] + "\n\n" + \
                    "\n".join(f"- {c}" for c in commands)
            return out
    return banner


# -- the service's sentences in the page's language -------------------------------------------
def sentences(lang: str) -> list[tuple[str, str]]:
    """(the service's English template, its wording in ``lang``) for every sentence the page
    translates; a sentence not listed stays English."""
    english, table = _words(words.REFERENCE), _words(lang)
    return [(text, table[key]) for key, text in english.items() if key.startswith("sentence.")]


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{(\w+)(?::[^}]*)?\}", template)
    # re.split alternates literal text and field names.
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)"
                              for i, p in enumerate(parts)))


@cache
def _patterns(lang: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((_pattern(english), wording) for english, wording in sentences(lang))


def in_page_language(lang: str, text: str) -> str:
    """``text`` (one or more of the service's sentences) in the page's language."""
    if lang == words.REFERENCE or lang not in words.codes(SURFACE) or not text:
        return text
    for pattern, wording in _patterns(lang):
        def put(match: re.Match[str], wording: str = wording) -> str:
            values = match.groupdict()
            if "mode" in values:
                values["mode"] = LABELS.get(lang, {}).get(f"mode_{values['mode']}", values["mode"])
            return wording.format(**values)
        text = pattern.sub(put, text)
    if lang == "zh":  # no spaces between Chinese sentences
        text = re.sub(r"(?<=[。！？：）])\s+(?=\S)", "", text)
    return text


# -- the speech recogniser on the status line -----------------------------------------------
def speech_words(lang: str, state: str, model: str = "", device: str = "", compute_type: str = "",
                 demo: bool = False) -> str:
    """The recogniser in a few words: which one and where, or that there is none."""
    table = _words(lang)
    if state != "ready":
        return table["speech.label"].format(what=table.get(f"speech.{state}", state))
    what = table["speech.demo"] if demo else model
    if device:
        what = table["speech.where"].format(what=what, where=device_words(lang, device),
                                            compute_type=compute_type)
    return table["speech.label"].format(what=what)
