"""The engine layer: prompts in, streamed text out. No Gradio, no HTTP, no languages.

``get_engine`` keeps one engine per (kind, model, precision, device) for the whole process, so the
UI, the API and the command line share the weights, loaded once.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

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
from hunyuan_webui.errors import InputError
from hunyuan_webui.settings import GGUF_ENGINES, MANAGED_ENGINES, Settings

if TYPE_CHECKING:  # models imports engine.base: importing models here first would be circular
    from hunyuan_webui.models import ModelSpec

__all__ = ["GREEDY", "OPTION_BOUNDS", "DecodingOptions", "Engine", "EngineState", "EngineStatus",
           "Stream", "Usage", "get_engine", "close_engines"]

_engines: dict[tuple[str, ...], Engine] = {}
_lock = threading.Lock()


def get_engine(settings: Settings) -> Engine:
    """The process-wide engine for these settings; created (and its loading started) once."""
    from hunyuan_webui import models

    key = (settings.engine, settings.model, settings.dtype, settings.device, settings.endpoint or "",
           settings.gguf_quant)
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            spec = models.resolve(settings.model)
            _check_format(spec, settings.engine)
            if settings.engine in MANAGED_ENGINES:
                from hunyuan_webui.engine.managed import ManagedEngine
                from hunyuan_webui.engine.servers import server_for

                engine = ManagedEngine(spec, settings, server_for(settings.engine))
            elif settings.engine == "openai":
                engine = _remote_engine(spec, settings)
            else:
                engine = _own_engine(spec, settings)
            _engines[key] = engine
        return engine


def _remote_engine(spec: ModelSpec, settings: Settings) -> Engine:
    from dataclasses import replace

    from hunyuan_webui.engine.remote import OpenAIEngine
    from hunyuan_webui.engine.replicas import ReplicaEngine

    urls = [u.strip() for u in (settings.endpoint or "").split(",") if u.strip()]
    if len(urls) == 1:
        return OpenAIEngine.from_settings(spec, settings)
    return ReplicaEngine([OpenAIEngine.from_settings(spec, replace(settings, endpoint=url))
                          for url in urls])


def _own_engine(spec: ModelSpec, settings: Settings) -> Engine:
    """Our transformers engine (local, or process), or llama.cpp's in the engine process."""
    kwargs = dict(dtype=settings.dtype, device=settings.device,
                  max_batch_size=settings.max_batch_size, max_queued=settings.max_queued,
                  max_new_tokens=settings.max_new_tokens,
                  max_input_tokens=settings.max_input_tokens, warmup=settings.warmup,
                  prefill_chunk_tokens=settings.prefill_chunk_tokens,
                  cpu_threads=settings.cpu_threads)
    if settings.engine == "local":
        from hunyuan_webui.engine.threads import let_idle_threads_sleep

        let_idle_threads_sleep(settings.cpu_threads)  # before local.py loads torch
        from hunyuan_webui.engine.local import LocalEngine

        return LocalEngine(spec, **kwargs)
    from hunyuan_webui.engine.process import ProcessEngine

    if settings.engine == "llamacpp":
        from hunyuan_webui.engine import llama_model

        if not llama_model.available():
            raise InputError(llama_model.INSTALL_HINT)
        return ProcessEngine(spec, runner="llamacpp", **kwargs, gguf_quant=settings.gguf_quant,
                             context_tokens=settings.context_length())
    return ProcessEngine(spec, **kwargs)


def _check_format(spec: ModelSpec, engine: str) -> None:
    """A GGUF checkpoint needs a GGUF engine, and a GGUF engine a GGUF checkpoint."""
    from hunyuan_webui.engine.gguf_files import is_gguf

    if engine in GGUF_ENGINES and not is_gguf(spec):
        raise InputError(f"--engine {engine} runs GGUF files, and {spec.id} is not one: pass a "
                         ".gguf file or a -GGUF repository with --model (e.g. "
                         "tencent/Hy-MT2-1.8B-GGUF), or choose another --engine.")
    if engine in ("local", "process") and is_gguf(spec):
        raise InputError(f"{spec.id} is a GGUF checkpoint, which transformers does not run "
                         "here: use --engine llamacpp (or llama-server).")


def close_engines() -> None:
    with _lock:
        for engine in _engines.values():
            engine.close()
        _engines.clear()
