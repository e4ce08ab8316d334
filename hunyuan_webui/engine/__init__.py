"""The engine layer: prompts in, streamed text out. No Gradio, no HTTP, no languages, no settings.

An engine is built from a checkpoint's :class:`~hunyuan_webui.core.spec.ModelSpec` and an
:class:`~hunyuan_webui.core.config.EngineConfig`; :mod:`hunyuan_webui.engine.factory` maps each
engine kind to its class and keeps one engine per model and configuration for the whole process.
"""

from __future__ import annotations

from hunyuan_webui.engine.base import (
    GREEDY,
    OPTION_BOUNDS,
    DecodingOptions,
    Engine,
    EngineState,
    EngineStatus,
    Stream,
    Usage,
)
from hunyuan_webui.engine.factory import close_engines, get_engine

__all__ = ["GREEDY", "OPTION_BOUNDS", "DecodingOptions", "Engine", "EngineState", "EngineStatus",
           "Stream", "Usage", "get_engine", "close_engines"]
