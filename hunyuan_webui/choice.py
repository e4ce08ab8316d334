"""Which model to run when none is named (``--model auto``, the default): what fits this machine.

With a GPU, the rows of :data:`GPU_TABLE` are tried in order, the first that fits the free GPU
memory *with room for the KV cache* wins: Hy-MT2-7B in bf16, else int8, else int4, then the 1.8B.
Without one, a 7B is never tried: the rows of :data:`CPU_TABLE` are (a 1.8B model; its GGUF build
first, run by llama.cpp (``--engine llamacpp``) when llama-cpp-python is installed and the
``--gguf-quant`` file is in the hub cache), and when none can be had the bundled demo model is
served, with a banner on the page and a log line that say what it is, that it knows only its
phrase table, and the commands for a real model.

A row is taken only when its weights are in the Hugging Face cache (looked up on disk, never on
the network) or can be downloaded; whether they can is asked with a short deadline, and not at
all when ``HF_HUB_OFFLINE`` is set, so a machine without a network never hangs here. Both probes
are objects with the :class:`Probe` interface: the tests pass fakes with made-up GPU memory and
hub answers.
"""

from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from hunyuan_webui import models
from hunyuan_webui.core import kinds
from hunyuan_webui.errors import InputError
from hunyuan_webui.settings import GGUF_ENGINES, Settings

log = logging.getLogger(__name__)

AUTO = "auto"
KV_ROOM_USERS = 16  # translations in flight the KV-cache room is sized for
KV_ROOM_TOKENS = 2000  # tokens each (prompt + answer)
OVERHEAD_GIB = 1.0  # CUDA context, activations, fragmentation
HUB_TIMEOUT_S = 5.0
# Engines that run a model inside this app: transformers, and llama.cpp for GGUF builds.
IN_PROCESS_ENGINES = frozenset({"transformers", "llama.cpp"})
# --engine values a chosen GGUF row may replace by llamacpp (the in-process ones, and itself).
GGUF_SWITCHABLE = frozenset({*kinds.TRANSFORMERS, kinds.LLAMACPP})


@dataclass(frozen=True)
class Row:
    model: str
    dtype: str  # what --dtype becomes

    @property
    def spec(self) -> models.ModelSpec:
        return models.REGISTRY[self.model]

    def weights_gib(self) -> float:
        dtype = "q4_k_m" if self.spec.prequantized == "gguf" else self.dtype
        return models.estimate_weight_gib(self.spec.params_b, dtype)

    def need_gib(self) -> float:
        """Weights, KV cache for KV_ROOM_USERS x KV_ROOM_TOKENS, and overhead."""
        per_token = self.spec.kv_kib_per_token or 64.0  # unverified for the 1.8B: half the 7B's
        kv = KV_ROOM_USERS * KV_ROOM_TOKENS * per_token / 2**20
        return self.weights_gib() + kv + OVERHEAD_GIB


GPU_TABLE = (Row("tencent/Hy-MT2-7B", "bf16"), Row("tencent/Hy-MT2-7B", "int8"),
             Row("tencent/Hy-MT2-7B", "int4"), Row("tencent/Hy-MT2-1.8B", "bf16"),
             Row("tencent/Hy-MT2-1.8B", "int4"))
CPU_TABLE = (Row("tencent/Hy-MT2-1.8B-GGUF", "auto"), Row("tencent/Hy-MT2-1.8B", "fp32"))


@dataclass(frozen=True)
class Choice:
    settings: Settings  # with model, dtype and device filled in
    reason: str  # one line for the log
    banner: str = ""  # markdown shown on the page (the demo model)


class Probe(Protocol):
    def gpu_free_gib(self) -> list[float]: ...  # one entry per CUDA GPU; empty: none

    def ram_free_gib(self) -> float: ...

    def cached(self, model_id: str) -> bool: ...  # weights in the local hub cache

    def downloadable(self, model_id: str) -> bool: ...

    def runs_gguf(self) -> bool: ...  # llama-cpp-python is importable


class MachineProbe:
    """The real machine and the real hub (cache on disk; the network with a short deadline).
    A GGUF repository counts as cached when its ``gguf_quant`` file is."""

    def __init__(self, gguf_quant: str = "Q4_K_M") -> None:
        self.gguf_quant = gguf_quant

    def runs_gguf(self) -> bool:
        from hunyuan_webui.engine.llama_model import available

        return available()

    def gpu_free_gib(self) -> list[float]:
        import torch

        if not torch.cuda.is_available():
            return []
        return [torch.cuda.mem_get_info(i)[0] / 2**30 for i in range(torch.cuda.device_count())]

    def ram_free_gib(self) -> float:
        try:
            for line in Path("/proc/meminfo").read_text().splitlines():
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
        except OSError:
            pass
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30

    def cached(self, model_id: str) -> bool:
        from huggingface_hub import try_to_load_from_cache

        try:
            config = try_to_load_from_cache(model_id, "config.json")
        except Exception:  # a malformed id, an unreadable cache: not cached
            return False
        snapshot = Path(config).parent if isinstance(config, str) else None
        if snapshot is None:  # GGUF repos carry no config.json: look for a .gguf file
            return _cached_gguf(model_id, self.gguf_quant)
        index = snapshot / "model.safetensors.index.json"
        if index.is_file():
            import json

            shards = set(json.loads(index.read_text())["weight_map"].values())
            return all((snapshot / s).is_file() for s in shards)
        return (snapshot / "model.safetensors").is_file()

    def downloadable(self, model_id: str) -> bool:
        if _offline():
            return False
        answer: list[bool] = []

        def ask() -> None:
            from huggingface_hub import HfApi

            try:
                HfApi().model_info(model_id, timeout=HUB_TIMEOUT_S)
                answer.append(True)
            except Exception:  # unreachable, unknown, gated: not downloadable from here
                answer.append(False)

        thread = threading.Thread(target=ask, name="hymt-hub-probe", daemon=True)
        thread.start()
        thread.join(HUB_TIMEOUT_S + 1)  # name resolution is not covered by the HTTP timeout
        return bool(answer and answer[0])


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")


def _cached_gguf(model_id: str, quant: str) -> bool:
    """Whether the hub cache holds the file of ``model_id`` that ``--gguf-quant`` would load."""
    from huggingface_hub import constants

    from hunyuan_webui.engine.gguf_files import pick_file
    from hunyuan_webui.errors import ModelLoadError

    repo = Path(constants.HF_HUB_CACHE) / f"models--{model_id.replace('/', '--')}"
    for snapshot in repo.glob("snapshots/*"):
        try:
            pick_file([str(p.relative_to(snapshot)) for p in snapshot.rglob("*.gguf")], quant)
            return True
        except ModelLoadError:
            continue
    return False


def choose(settings: Settings, probe: Probe | None = None) -> Choice:
    """The settings to run with: unchanged when a model was named (or --demo given), else the
    best row of the tables that this machine can hold and get."""
    if settings.demo:
        return _demo(settings, "--demo was given.", asked=True)
    if settings.model != AUTO:
        return Choice(settings, f"--model {settings.model}")
    if settings.engine == kinds.OPENAI:
        raise InputError("With --engine openai, say which model the server runs, e.g. --model "
                         "tencent/Hy-MT2-7B (its prompts and decoding defaults follow it).")
    probe = probe or MachineProbe(settings.gguf_quant)
    gpus = [] if settings.device in ("cpu", "mps") else probe.gpu_free_gib()
    free = sum(gpus)  # several GPUs: the layers are spread over them
    if gpus:
        found = _first(GPU_TABLE, free, settings, probe, where=f"{free:.1f} GiB of GPU memory free")
        if found is not None:
            return found
    ram = probe.ram_free_gib()
    # A GPU too small for any row must not be handed a CPU row's fp32 weights.
    found = _first(CPU_TABLE, ram, settings, probe, where=f"{ram:.1f} GiB of RAM free",
                   device="cpu" if gpus else None)
    if found is not None:
        return found
    if not gpus:
        why = "No GPU was found, and no Hy-MT2-1.8B weights are cached here or could be downloaded."
    elif any(row.need_gib() <= free for row in GPU_TABLE):
        why = (f"A GPU was found ({free:.1f} GiB free), but no Hy-MT2 weights are cached here or "
               "could be downloaded.")
    else:
        why = (f"The GPU is too small for any Hy-MT2 model ({free:.1f} GiB free), and no "
               "Hy-MT2-1.8B weights are cached here or could be downloaded.")
    return _demo(settings, why)


def _first(table: tuple[Row, ...], free_gib: float, settings: Settings, probe: Probe,
           where: str, device: str | None = None) -> Choice | None:
    for row in table:
        if settings.dtype not in ("auto", row.dtype) or row.need_gib() > free_gib:
            continue
        gguf = row.spec.prequantized == "gguf"
        engine = _engine_for(row, settings, probe)
        if engine is None:
            continue
        # A GGUF row is taken only from the cache: the 1.8B's safetensors row may still download.
        source = "cached" if probe.cached(row.model) else (
            "to download" if not gguf and probe.downloadable(row.model) else "")
        if not source:
            log.info("launch choice: skipping %s (weights %s)", row.model,
                     "not cached" if gguf else "neither cached nor downloadable")
            continue
        chosen = replace(settings, model=row.model, dtype=row.dtype,
                         device=device or settings.device, engine=engine)
        precision = f"{settings.gguf_quant} through llama.cpp" if gguf else row.dtype
        return Choice(chosen, f"{row.model} in {precision} (about {row.need_gib():.0f} GiB with "
                              f"KV-cache room; {where}; weights {source})")
    return None


def _engine_for(row: Row, settings: Settings, probe: Probe) -> str | None:
    """The --engine that runs ``row`` given the one asked for, or None (logged) if none does."""
    gguf = row.spec.prequantized == "gguf"
    if gguf and settings.engine in GGUF_SWITCHABLE and not probe.runs_gguf():
        log.info("launch choice: skipping %s (needs llama-cpp-python, which is not installed)",
                 row.model)
        return None
    if gguf and settings.engine in GGUF_SWITCHABLE:
        return kinds.LLAMACPP
    if gguf == (settings.engine in GGUF_ENGINES):  # llama-server; or transformers and servers
        return settings.engine
    log.info("launch choice: skipping %s (--engine %s does not run it)", row.model,
             settings.engine)
    return None


def _demo(settings: Settings, why: str, asked: bool = False) -> Choice:
    from hunyuan_webui.demo.model import ensure_demo_model, load_phrases

    directory = ensure_demo_model()
    count = len(load_phrases())
    what = (f"the bundled demo model ({directory.name}, under 1M parameters): it knows only the "
            f"{count} phrases in assets/demo_phrases.tsv, e.g. 谢谢你的帮助。→ Thank you for your "
            "help, and answers anything else with nonsense")
    commands = ("For a real model: `huggingface-cli download tencent/Hy-MT2-1.8B`, then `bash "
                "launch.sh --model tencent/Hy-MT2-1.8B` (slow without a GPU); on a machine with "
                "a GPU, `bash launch.sh` picks what fits; or a translation server: `bash launch.sh "
                "--engine openai --endpoint URL --model tencent/Hy-MT2-7B`.")
    reason = f"{why} Serving {what}. {commands}"
    banner = f"**Demo model.** {why} This is {what}. {commands}"
    if asked:
        banner = f"**Demo model.** This is {what}. {commands}"
    demo = replace(settings, model=str(directory), demo=True)
    if settings.engine in GGUF_ENGINES:  # llama.cpp runs the demo as a GGUF file
        demo = with_demo(demo)
    return Choice(demo, reason, banner)


def with_demo(settings: Settings) -> Settings:
    """The demo model replaces ``model`` (resolved lazily: it may be built on first use); the
    engines that run GGUF files get it as one. :func:`choose` does this for --demo."""
    if settings.engine in GGUF_ENGINES:
        from hunyuan_webui.demo.gguf import ensure_demo_gguf

        return replace(settings, model=str(ensure_demo_gguf()))
    from hunyuan_webui.demo.model import ensure_demo_model

    return replace(settings, model=str(ensure_demo_model()))


def markdown_table() -> str:
    """The README's launch table, generated from the rows above so the two cannot drift."""
    rows = ["| free GPU memory | model | precision | weights | + KV room for "
            f"{KV_ROOM_USERS} × {KV_ROOM_TOKENS:,} tokens and overhead |", "|---|---|---|---|---|"]
    for row in GPU_TABLE:
        rows.append(f"| ≥ {row.need_gib():.1f} GiB | `{row.model}` | {row.dtype} | "
                    f"{row.weights_gib():.1f} GiB | {row.need_gib() - row.weights_gib():.1f} GiB |")
    for row in CPU_TABLE:
        note = (" (`--engine llamacpp`; with llama-cpp-python installed and the file cached)"
                if row.spec.prequantized == "gguf" else "")
        rows.append(f"| no GPU, ≥ {row.need_gib():.1f} GiB of RAM | `{row.model}`{note} | "
                    f"{'Q4_K_M' if row.spec.prequantized == 'gguf' else row.dtype} | "
                    f"{row.weights_gib():.1f} GiB | {row.need_gib() - row.weights_gib():.1f} GiB |")
    rows.append("| otherwise | the bundled demo model, with a banner | fp32 | 3 MB | |")
    return "\n".join(rows)
