"""The demo checkpoint as a GGUF file, for the engines that run only those (llamacpp,
llama-server)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from hunyuan_webui.demo.model import SIDECAR, cache_dir, ensure_demo_model
from hunyuan_webui.engine.gguf_files import WRITER_VERSION, write_gguf


def ensure_demo_gguf() -> Path:
    """The demo checkpoint as an F32 GGUF file (with its ``hymt.json`` beside it), written once
    into the cache for each version of the demo weights."""
    demo = ensure_demo_model()
    digest = hashlib.sha256(WRITER_VERSION.encode())
    for name in ("model.safetensors", "tokenizer.json", "tokenizer_config.json", "config.json"):
        digest.update((demo / name).read_bytes())
    folder = cache_dir().parent / "demo-gguf" / digest.hexdigest()[:16]
    path = folder / "hunyuan-mt-demo-F32.gguf"
    if path.is_file():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(demo / SIDECAR, folder / SIDECAR)
    partial = folder / f".{path.name}.{os.getpid()}"
    write_gguf(demo, partial)
    os.replace(partial, path)  # whole or absent, also with several writers at once
    return path
