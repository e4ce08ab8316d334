"""Every string the page shows, in both of its languages (English and Simplified Chinese): the
``page`` tables of :mod:`hunyuan_webui.web.words` (``words/page/<code>.json``), with what is
derived from the language table (the pickers' names, the header's count).

:data:`LABELS` feeds ``gr.I18n`` (labels, buttons, placeholders: the browser picks the language),
and the listeners write the same tables' messages at run time (the detected language, progress,
the status line, errors), picked per visitor from the request's ``Accept-Language`` by
:func:`ui_lang`. Student-facing words only here; server flags and advice for the operator go to
the log.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import gradio as gr
from starlette.datastructures import Headers

from hunyuan_webui import languages
from hunyuan_webui.web import words

UI_LANGS = words.codes("page")  # ("en", "zh")
# Each UI language's words (words/page/<code>.json); the header counts the languages served.
LABELS: dict[str, dict[str, str]] = {
    lang: {key: value.replace("{count}", str(len(languages.LANGUAGES))) if key == "header"
           else value for key, value in words.table("page", lang).items()}
    for lang in UI_LANGS}


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


# The demo model named in the page's words, not as "demo-model" (the modes panel's first line).
DEMO_WORDS: dict[str, dict[str, str]] = {
    "en": {"demo_modes_own": "**The demo model** " + LABELS["en"]["modes_own"],
           "demo_modes_none": "**The demo model** " + LABELS["en"]["modes_none"]},
    "zh": {"demo_modes_own": "**演示模型**" + LABELS["zh"]["modes_own"],
           "demo_modes_none": "**演示模型**" + LABELS["zh"]["modes_none"]},
}
for _lang in UI_LANGS:
    LABELS[_lang].update(DEMO_WORDS[_lang])
    LABELS[_lang].update({f"lang_{language.code}": picker_label(_lang, language.code)
                          for language in languages.LANGUAGES})

I18N = gr.I18n(en=LABELS["en"], **{"zh-CN": LABELS["zh"], "zh": LABELS["zh"]})
# What the listeners write at run time, from the same tables.
MESSAGES = LABELS


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
    return LABELS.get(lang, LABELS["en"]).get(f"state_{state}", state)


def language_name(lang: str, code: str) -> str:
    """A language's name for this UI language, with its own name beside it when different."""
    language = languages.get(code)
    name = language.chinese if lang == "zh" else language.english
    return name if name == language.autonym else f"{name} · {language.autonym}"
