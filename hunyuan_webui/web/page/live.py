"""Translate as you type: whether it is on by default, and its controls on the page.

The browser side is ``scripts/21-typing.js``: :data:`DEBOUNCE_MS` after the last keystroke it
presses a hidden button whose event translates the text as Translate does; every keystroke first
presses a hidden one that cancels whatever translation is running, by Gradio's ``cancels``, the
path Stop takes, so the engine's job is cancelled too (not only its text hidden).

On by default only where it is cheap: each pause in typing costs a translation, and on a slow
engine a class of typing students keeps it busy with drafts. The rule is :data:`FIRST_TEXT_S`:
on when the engine's warm first-token time, measured over this page's recent translations
(:class:`LiveRule`, the median of the last :data:`SAMPLES` that were not from the cache), is
under 0.3 s; before there are :data:`MIN_SAMPLES` of them, on for an engine on a GPU or a model
under 1B parameters (the demo), off for a bigger model on a CPU. A visitor's own choice,
kept in the browser (``gr.BrowserState``, localStorage), wins over the rule.
"""

from __future__ import annotations

import statistics
from collections import deque
from typing import Any

import gradio as gr

from hunyuan_webui.service import TranslationResult, Translator
from hunyuan_webui.web.page.components import Page
from hunyuan_webui.web.page.text import I18N as t

# A pause of 600 ms: typists' gaps between keys are mostly under 300 ms, so a draft is sent only
# when the typist stops (one request per pause, not per key), and text still appears under a
# second after the pause on an engine under FIRST_TEXT_S.
DEBOUNCE_MS = 600
FIRST_TEXT_S = 0.3
SAMPLES, MIN_SAMPLES = 16, 3
SMALL_MODEL_B = 1.0  # parameters, in billions, that decode fast on a CPU
GPU_WORDS = ("cuda", "gpu", "mps", "rocm", "xpu")
STORAGE_KEY = "hymt-live-typing"
STORAGE_SECRET = "hunyuan-webui-live-typing"  # fixed: the visitor's choice survives a restart


class LiveRule:
    """Whether translate-as-you-type starts on, from the engine this server runs."""

    def __init__(self, translator: Translator) -> None:
        self.translator = translator
        self.first_token_s: deque[float] = deque(maxlen=SAMPLES)

    def observe(self, result: TranslationResult) -> None:
        """A finished translation of the page: its first-token time counts unless it came from
        the cache (no engine work)."""
        first = (result.usage or {}).get("first_token_s")
        if not result.cached and first is not None:
            self.first_token_s.append(float(first))

    def default(self) -> bool:
        if len(self.first_token_s) >= MIN_SAMPLES:
            return statistics.median(self.first_token_s) < FIRST_TEXT_S
        device = (self.translator.status().device or "").lower()
        if any(word in device for word in GPU_WORDS):
            return True
        params_b = getattr(self.translator.spec, "params_b", None)
        return params_b is not None and params_b < SMALL_MODEL_B

    def choose(self, saved: Any) -> bool:
        """On page load: the visitor's own choice when the browser kept one, else the rule."""
        return saved if isinstance(saved, bool) else self.default()


def controls(page: Page) -> None:
    """The toggle (with the visitor's choice in the browser) and two hidden buttons that the
    script presses: one translates, one cancels the running translation."""
    page.live = gr.Checkbox(False, label=t("live_typing"), elem_id="live-toggle")
    # Outside any accordion: an unmounted BrowserState neither reads nor writes (layout.py).
    page.live_saved = gr.BrowserState(None, storage_key=STORAGE_KEY, secret=STORAGE_SECRET)
    page.live_btn = gr.Button("live", visible="hidden", elem_id="live-btn")
    page.live_cancel = gr.Button("cancel", visible="hidden", elem_id="live-cancel")
