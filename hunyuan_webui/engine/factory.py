"""One table from an engine kind (``--engine``, :mod:`hunyuan_webui.core.kinds`) to the engine that
runs it, and the process-wide engines built from it.

``get_engine`` keeps one engine per (kind, model, precision, device, endpoint, GGUF file) for the
whole process, so the page, the API and the command line share the weights, loaded once. A row
names its class as ``module:Class`` (imported only when used: torch, llama.cpp and httpx load only
for the kinds that need them) and, for the kinds whose model runs in a child process of ours, the
class that child builds.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from hunyuan_webui.core import kinds
from hunyuan_webui.core.config import EngineConfig
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import Engine
from hunyuan_webui.errors import InputError


@dataclass(frozen=True)
class Row:
    engine: str  # "module:Class", built in this process
    build: Callable[[Any, ModelSpec, EngineConfig], Engine]  # (class, spec, config) -> engine
    child: str | None = None  # "module:Class" the engine process builds (process, llamacpp)


def _own(cls: Any, spec: ModelSpec, config: EngineConfig) -> Engine:
    from hunyuan_webui.engine.threads import let_idle_threads_sleep

    let_idle_threads_sleep(config.cpu_threads)  # before local.py loads torch
    return cls(spec, **config.own_engine_kwargs())


def _in_child(cls: Any, spec: ModelSpec, config: EngineConfig) -> Engine:
    return cls(spec, runner=config.kind, **config.own_engine_kwargs())


def _llamacpp(cls: Any, spec: ModelSpec, config: EngineConfig) -> Engine:
    from hunyuan_webui.engine import llama_model

    if not llama_model.available():
        raise InputError(llama_model.INSTALL_HINT)
    return cls(spec, runner=config.kind, **config.own_engine_kwargs(),
               gguf_quant=config.gguf_quant, context_tokens=config.context_length())


def _remote(cls: Any, spec: ModelSpec, config: EngineConfig) -> Engine:
    urls = [u.strip() for u in (config.endpoint or "").split(",") if u.strip()]
    if len(urls) <= 1:
        return cls.from_config(spec, config)
    from hunyuan_webui.engine.replicas import ReplicaEngine

    return ReplicaEngine([cls.from_config(spec, replace(config, endpoint=url)) for url in urls])


def _managed(cls: Any, spec: ModelSpec, config: EngineConfig) -> Engine:
    from hunyuan_webui.engine.servers import server_for

    return cls(spec, config, server_for(config.kind))


_LOCAL = "hunyuan_webui.engine.local:LocalEngine"
_PROCESS = "hunyuan_webui.engine.process:ProcessEngine"
ENGINES: dict[str, Row] = {
    kinds.LOCAL: Row(_LOCAL, _own),
    kinds.PROCESS: Row(_PROCESS, _in_child, child=_LOCAL),
    kinds.LLAMACPP: Row(_PROCESS, _llamacpp, child="hunyuan_webui.engine.llamacpp:LlamaCppEngine"),
    kinds.OPENAI: Row("hunyuan_webui.engine.remote:OpenAIEngine", _remote),
    **{kind: Row("hunyuan_webui.engine.managed:ManagedEngine", _managed)
       for kind in kinds.ENGINES if kinds.of(kind).managed},
}
assert set(ENGINES) == set(kinds.ENGINES), "every engine kind has a row"


def load_class(dotted: str) -> Any:
    module, _, name = dotted.partition(":")
    return getattr(importlib.import_module(module), name)


def child_class(kind: str) -> Any:
    """The engine a child process of ``kind`` (process, llamacpp) builds."""
    child = ENGINES[kind].child
    if child is None:
        raise InputError(f"--engine {kind} does not run in an engine process.")
    return load_class(child)


def build(spec: ModelSpec, config: EngineConfig) -> Engine:
    """A new engine of ``config.kind`` for ``spec`` (most callers want :func:`get_engine`)."""
    row = ENGINES[kinds.of(config.kind).name]
    check_format(spec, config.kind)
    return row.build(load_class(row.engine), spec, config)


def check_format(spec: ModelSpec, kind: str) -> None:
    """A GGUF checkpoint needs a GGUF engine, and a GGUF engine a GGUF checkpoint."""
    from hunyuan_webui.engine.gguf_files import is_gguf

    if kinds.of(kind).gguf_only and not is_gguf(spec):
        raise InputError(f"--engine {kind} runs GGUF files, and {spec.id} is not one: pass a "
                         ".gguf file or a -GGUF repository with --model (e.g. "
                         "tencent/Hy-MT2-1.8B-GGUF), or choose another --engine.")
    if kinds.of(kind).own_transformers and is_gguf(spec):
        raise InputError(f"{spec.id} is a GGUF checkpoint, which transformers does not run "
                         "here: use --engine llamacpp (or llama-server).")


_engines: dict[tuple[Any, ...], Engine] = {}
_lock = threading.Lock()


def get_engine(spec: ModelSpec, config: EngineConfig) -> Engine:
    """The process-wide engine for this model and configuration; created (and its loading
    started) once."""
    key = (config.kind, spec, config.dtype, config.device, config.endpoint or "",
           config.gguf_quant)
    with _lock:
        engine = _engines.get(key)
        if engine is None:
            engine = _engines[key] = build(spec, config)
        return engine


def close_engines() -> None:
    with _lock:
        for engine in _engines.values():
            engine.close()
        _engines.clear()
