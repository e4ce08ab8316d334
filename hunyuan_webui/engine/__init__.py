"""The engine layer: prompts in, streamed text out. No Gradio, no HTTP, no languages.

``get_engine`` keeps one engine per (kind, model, precision, device) for the whole process, so the
UI, the API and the command line share the weights, loaded once.
"""

from __future__ import annotations

import threading

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
from hunyuan_webui.settings import Settings

__all__ = ["GREEDY", "OPTION_BOUNDS", "DecodingOptions", "Engine", "EngineState", "EngineStatus",
           "Stream", "Usage", "get_engine", "close_engines"]

_engines: dict[tuple[str, ...], Engine] = {}
_lock = threading.Lock()


def get_engine(settings: Settings) -> Engine:
    """The process-wide engine for these settings; created (and its loading started) once."""
    from hunyuan_webui import models

    key = (settings.engine, settings.model, settings.dtype, settings.device, settings.endpoint or "")
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            spec = models.resolve(settings.model)
            if settings.engine == "openai":
                from dataclasses import replace

                from hunyuan_webui.engine.remote import OpenAIEngine
                from hunyuan_webui.engine.replicas import ReplicaEngine

                urls = [u.strip() for u in (settings.endpoint or "").split(",") if u.strip()]
                if len(urls) == 1:
                    engine = OpenAIEngine.from_settings(spec, settings)
                else:
                    engine = ReplicaEngine([OpenAIEngine.from_settings(
                        spec, replace(settings, endpoint=url)) for url in urls])
            else:
                kwargs = dict(dtype=settings.dtype, device=settings.device,
                              max_batch_size=settings.max_batch_size,
                              max_queued=settings.max_queued,
                              max_new_tokens=settings.max_new_tokens,
                              max_input_tokens=settings.max_input_tokens, warmup=settings.warmup,
                              prefill_chunk_tokens=settings.prefill_chunk_tokens,
                              cpu_threads=settings.cpu_threads)
                if settings.engine == "process":
                    from hunyuan_webui.engine.process import ProcessEngine

                    engine = ProcessEngine(spec, **kwargs)
                else:
                    from hunyuan_webui.engine.local import LocalEngine

                    engine = LocalEngine(spec, **kwargs)
            _engines[key] = engine
        return engine


def close_engines() -> None:
    with _lock:
        for engine in _engines.values():
            engine.close()
        _engines.clear()
