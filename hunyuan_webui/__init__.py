"""Hunyuan-MT web translator: a streaming, batching, caching browser UI and API for Tencent's
Hunyuan-MT model family, and the same translator as a Python library:

    from hunyuan_webui import Translator
    Translator.load(demo=True).translate("谢谢你的帮助。", to="en")   # 'Thank you for your help.'
    Transcriber.load(demo=True).transcribe("speech.wav", language="zh").text   # speech in

Layers, one way: ``engine`` (tokens, no Gradio or HTTP) -> ``service`` (validation, detection,
segmentation, cache) -> ``library`` (the Python facade), ``ui`` (Gradio) and ``api`` (FastAPI, with
OpenAI's and DeepL's protocols beside it) as thin edges; ``app`` wires them.
Importing the package never loads weights or starts a server, and imports nothing heavy:
``Translator`` is looked up on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hunyuan_webui.library import Transcriber, Translator

__version__ = "0.1.0"
__all__ = ["Transcriber", "Translator", "__version__"]


def __getattr__(name: str) -> Any:
    if name in ("Translator", "Transcriber"):
        from hunyuan_webui import library

        return getattr(library, name)
    raise AttributeError(f"module 'hunyuan_webui' has no attribute {name!r}")
