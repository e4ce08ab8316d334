"""Which model to run when none is named (``--model auto``, the default): what fits this machine.

With a GPU, the rows of :data:`GPU_TABLE` are tried in order, the first that fits the free GPU
memory *with room for the KV cache* wins: Hy-MT2-7B in bf16, else int8, else int4, then the 1.8B.
Without one, a 7B is never tried: the rows of :data:`CPU_TABLE` are. First the 1.8B's GGUF build,
run by llama.cpp (``--engine llamacpp``): decoding on a CPU reads every weight once per token, so
the 4-bit file (about a sixth of the fp32 bytes) is the fast choice. Its quantization, with
``--gguf-quant auto``: Q4_K_M, or Q8_0 when the free RAM holds it with :data:`Q8_SPARE_GIB` to
spare (the instruction modes, which the 1.8B has, lose most in 4 bits); a file already cached is
taken before one to download. The row needs llama-cpp-python: ``bash launch.sh`` installs it when
this row would be chosen (:mod:`hunyuan_webui.llama_cpp_setup`). Then the 1.8B in
fp32 through PyTorch, with a banner that says why it is slow and what to install. When none can
be had the bundled demo model is served, with a banner on the page and a log line that say what it
is, that it knows only its phrase table, and the commands for a real model.

A row is taken only when its weights are in the Hugging Face cache (looked up on disk, never on
the network) or can be downloaded; whether they can is asked with a short deadline, and not at
all when ``HF_HUB_OFFLINE`` is set, so a machine without a network never hangs here. Both probes
are objects with the :class:`Probe` interface: the tests pass fakes with made-up GPU memory and
hub answers.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from hunyuan_webui import hub, models
from hunyuan_webui.core import kinds
from hunyuan_webui.errors import InputError
from hunyuan_webui.model_size import GGUF_BYTES_PER_PARAM
from hunyuan_webui.settings import Settings

log = logging.getLogger(__name__)

AUTO = "auto"
KV_ROOM_USERS = 16  # translations in flight the KV-cache room is sized for
KV_ROOM_TOKENS = 2000  # tokens each (prompt + answer)
OVERHEAD_GIB = 1.0  # CUDA context, activations, fragmentation
# RAM left free beside a Q8_0 1.8B (its weights, KV room and overhead) before --gguf-quant auto
# takes it over Q4_K_M: the browser, the OS and the teacher's other programs.
Q8_SPARE_GIB = 8.0
DOWNLOAD = "hf download tencent/Hy-MT2-1.8B-GGUF --include '*Q4_K_M.gguf'"  # hf: huggingface_hub's CLI
LLAMA_CPP_HINT = ("`bash launch.sh` installs it (once: it compiles llama.cpp, about 5-15 minutes, "
                  "and keeps the wheel in .hymt/wheels), or `pip install llama-cpp-python`")
# Engines that run a model inside this app: transformers, and llama.cpp for GGUF builds.
IN_PROCESS_ENGINES = frozenset({"transformers", "llama.cpp"})


@dataclass(frozen=True)
class Row:
    model: str
    dtype: str  # what --dtype becomes

    @property
    def spec(self) -> models.ModelSpec:
        return models.REGISTRY[self.model]

    def weights_gib(self, quant: str = "Q4_K_M") -> float:
        """The weights' memory; ``quant``: a GGUF row's quantization."""
        if self.spec.prequantized == "gguf":
            per_param = GGUF_BYTES_PER_PARAM.get(quant.upper(), 1.0)
            return self.spec.params_b * 1e9 * per_param / 2**30
        return models.estimate_weight_gib(self.spec.params_b, self.dtype)

    def need_gib(self, quant: str = "Q4_K_M") -> float:
        """Weights, KV cache for KV_ROOM_USERS x KV_ROOM_TOKENS, and overhead."""
        per_token = self.spec.kv_kib_per_token or 64.0  # unverified for the 1.8B: half the 7B's
        kv = KV_ROOM_USERS * KV_ROOM_TOKENS * per_token / 2**20
        return self.weights_gib(quant) + kv + OVERHEAD_GIB


GPU_TABLE = (Row("tencent/Hy-MT2-7B", "bf16"), Row("tencent/Hy-MT2-7B", "int8"),
             Row("tencent/Hy-MT2-7B", "int4"), Row("tencent/Hy-MT2-1.8B", "bf16"),
             Row("tencent/Hy-MT2-1.8B", "int4"))
CPU_TABLE = (Row("tencent/Hy-MT2-1.8B-GGUF", "auto"), Row("tencent/Hy-MT2-1.8B", "fp32"))
# A CPU that computes bf16 natively, where PyTorch bf16 measured faster for a class
# (hunyuan_webui.cpu_formats): the bf16 checkpoint first.
CPU_TABLE_BF16 = (Row("tencent/Hy-MT2-1.8B", "bf16"), Row("tencent/Hy-MT2-1.8B-GGUF", "auto"))


@dataclass(frozen=True)
class Choice:
    settings: Settings  # with model, dtype and device filled in
    reason: str  # one line for the log
    banner: str = ""  # markdown shown on the page (the demo model)
    # One line for the terminal when the launch fell back (to the demo, a smaller model, a
    # smaller precision): why; empty when it runs what was asked or the best there is.
    why: str = ""


class Probe(Protocol):
    def gpu_free_gib(self) -> list[float]: ...  # one entry per CUDA GPU; empty: none

    def ram_free_gib(self) -> float: ...

    # Weights in the local hub cache; a GGUF repository's: its file of ``quant``.
    def cached(self, model_id: str, quant: str | None = None) -> bool: ...

    def downloadable(self, model_id: str) -> bool: ...

    def runs_gguf(self) -> bool: ...  # llama-cpp-python is importable

    # The CPU's native bf16 instructions, "AMX", "AVX512-BF16" or "" (a probe without this
    # method is taken to have none).


class MachineProbe:
    """The real machine and the real hub (cache on disk; the network with a short deadline).
    A GGUF repository counts as cached when its ``quant`` file is (else ``gguf_quant``'s)."""

    def __init__(self, gguf_quant: str = "auto") -> None:
        self.gguf_quant = gguf_quant

    def runs_gguf(self) -> bool:
        from hunyuan_webui.engine.llama_model import available

        return available()

    def bf16_instructions(self) -> str:
        from hunyuan_webui.engine.cpuinfo import bf16_instructions

        return bf16_instructions()

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

    def cached(self, model_id: str, quant: str | None = None) -> bool:
        from huggingface_hub import try_to_load_from_cache

        try:
            config = try_to_load_from_cache(model_id, "config.json")
        except Exception:  # a malformed id, an unreadable cache: not cached
            return False
        snapshot = Path(config).parent if isinstance(config, str) else None
        if snapshot is None:  # GGUF repos carry no config.json: look for a .gguf file
            return _cached_gguf(model_id, quant or self.gguf_quant)
        index = snapshot / "model.safetensors.index.json"
        if index.is_file():
            import json

            shards = set(json.loads(index.read_text())["weight_map"].values())
            return all((snapshot / s).is_file() for s in shards)
        return (snapshot / "model.safetensors").is_file()

    def downloadable(self, model_id: str) -> bool:
        return hub.downloadable(model_id)


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
    passed: list[str] = []  # the better rows passed over, and why
    if gpus:
        found = _first(GPU_TABLE, free, settings, probe, where=f"{free:.1f} GiB of GPU memory free",
                       passed=passed)
        if found is not None:
            return _told(found, passed)
    ram = probe.ram_free_gib()
    # A GPU too small for any row must not be handed a CPU row's fp32 weights.
    unrun: list[str] = []  # a GGUF row passed over for want of llama-cpp-python: what it had
    passed.insert(0, "no GPU was found" if not gpus else "the GPU is too small for Hy-MT2")
    found = _first(cpu_table(probe), ram, settings, probe, where=f"{ram:.1f} GiB of RAM free",
                   device="cpu" if gpus else None, unrun=unrun, passed=passed)
    if found is not None:
        if unrun and found.settings.engine != kinds.LLAMACPP:
            passed.append("llama-cpp-python, which runs the GGUF file, is not installed")
            return _told(replace(found, banner=_slow_banner(found, unrun[0], gpus)), passed)
        return _told(found, passed)
    if unrun and unrun[0].startswith("cached"):
        gguf = next(row for row in CPU_TABLE if row.spec.prequantized == "gguf")
        why = (f"{'No GPU was found' if not gpus else 'The GPU is too small'}. The "
               f"{gguf.model} file ({unrun[0].split(' ', 1)[1]}) is cached here, but "
               f"llama-cpp-python, which runs it, is not installed: {LLAMA_CPP_HINT}; then start "
               "the translator again.")
    elif not gpus:
        why = "No GPU was found, and no Hy-MT2-1.8B weights are cached here or could be downloaded."
    elif any(row.need_gib() <= free for row in GPU_TABLE):
        why = (f"A GPU was found ({free:.1f} GiB free), but no Hy-MT2 weights are cached here or "
               "could be downloaded.")
    else:
        why = (f"The GPU is too small for any Hy-MT2 model ({free:.1f} GiB free), and no "
               "Hy-MT2-1.8B weights are cached here or could be downloaded.")
    return _demo(settings, why)


def cpu_table(probe: Probe) -> tuple[Row, ...]:
    """The CPU rows in this machine's order: on a CPU that computes bf16 natively, the format
    that measured faster for a class first (:func:`hunyuan_webui.cpu_formats.bf16_first`)."""
    from hunyuan_webui.cpu_formats import bf16_first

    instructions = getattr(probe, "bf16_instructions", lambda: "")()
    first, why = bf16_first(instructions)
    log.info("launch choice on a CPU: %s", why)
    return CPU_TABLE_BF16 if first else CPU_TABLE


def _told(found: Choice, passed: list[str]) -> Choice:
    """``found``, with the terminal's line when better rows were passed over."""
    if not passed:
        return found
    why = "; ".join(dict.fromkeys(passed))
    return replace(found, why=f"Running {found.reason.split(' (')[0]}: {why}.")


def _slow_banner(found: Choice, unrun: str, gpus: list[float]) -> str:
    """The page's banner when the 1.8B runs through PyTorch only because llama-cpp-python is
    missing: why it is slow, and what to install."""
    gguf = next(row for row in CPU_TABLE if row.spec.prequantized == "gguf")
    state, quant = unrun.split(" ", 1)
    where = "is cached here" if state == "cached" else "can be downloaded"
    return (f"**Slow model path.** {'No GPU was found' if not gpus else 'The GPU is too small'}, "
            f"and llama-cpp-python is not installed, so {found.settings.model} runs in "
            f"{found.settings.dtype} through PyTorch, reading all its weights for every word it "
            f"writes. Its {quant} file ({gguf.model}) {where} and runs through llama.cpp from "
            f"about a sixth of those bytes: to use it, install llama-cpp-python "
            f"({LLAMA_CPP_HINT}).")


def gguf_quants(row: Row, settings: Settings, free_gib: float) -> list[str]:
    """The quantizations of a GGUF row to look for, best first: the one --gguf-quant names, or
    for ``auto`` Q8_0 (when the model has the instruction modes, which lose most in 4 bits, and
    the RAM holds it with Q8_SPARE_GIB to spare) then Q4_K_M."""
    if settings.gguf_quant.lower() != "auto":
        return [settings.gguf_quant]
    roomy = row.need_gib("Q8_0") + Q8_SPARE_GIB <= free_gib
    if roomy and row.spec.supports(models.INSTRUCTIONS):
        return ["Q8_0", "Q4_K_M"]
    return ["Q4_K_M"]


def _first(table: tuple[Row, ...], free_gib: float, settings: Settings, probe: Probe,
           where: str, device: str | None = None, unrun: list[str] | None = None,
           passed: list[str] | None = None) -> Choice | None:
    """The first row of ``table`` that fits, runs and can be had; ``passed`` gets why each
    better one was not (for the terminal's line)."""
    passed = [] if passed is None else passed
    for row in table:
        gguf = row.spec.prequantized == "gguf"
        quants = [q for q in gguf_quants(row, settings, free_gib) if row.need_gib(q) <= free_gib]
        if settings.dtype not in ("auto", row.dtype):
            continue
        if not quants:
            precision = "" if gguf else f" in {row.dtype}"
            passed.append(f"{row.model.split('/')[-1]}{precision} needs about "
                          f"{row.need_gib():.0f} GiB, {where}")
            continue
        engine = _engine_for(row, settings, probe)
        if engine is None:
            if gguf and unrun is not None:  # for the banner: what llama.cpp would have had
                cached = next((q for q in quants if probe.cached(row.model, q)), None)
                if cached or probe.downloadable(row.model):
                    unrun.append(f"cached {cached}" if cached else f"downloadable {quants[0]}")
            continue
        if gguf:
            quant = next((q for q in quants if probe.cached(row.model, q)), None)
            source = "cached" if quant else "to download" if probe.downloadable(row.model) else ""
            quant = quant or quants[0]
        else:
            quant = settings.gguf_quant
            source = "cached" if probe.cached(row.model) else (
                "to download" if probe.downloadable(row.model) else "")
        if not source:
            log.info("launch choice: skipping %s (weights neither cached nor downloadable)",
                     row.model)
            passed.append(f"{row.model.split('/')[-1]} is neither cached nor downloadable")
            continue
        chosen = replace(settings, model=row.model, dtype=row.dtype,
                         device=device or settings.device, engine=engine, gguf_quant=quant)
        precision = f"{quant} through llama.cpp" if gguf else row.dtype
        return Choice(chosen, f"{row.model} in {precision} (about {row.need_gib(quant):.0f} GiB "
                              f"with KV-cache room; {where}; weights {source})")
    return None


def _engine_for(row: Row, settings: Settings, probe: Probe) -> str | None:
    """The --engine that runs ``row`` given the one asked for, or None (logged) if none does."""
    gguf = row.spec.prequantized == "gguf"
    kind = kinds.of(settings.engine)
    if gguf and kind.in_app and not probe.runs_gguf():
        log.info("launch choice: skipping %s (needs llama-cpp-python, which is not installed)",
                 row.model)
        return None
    if gguf and kind.in_app:
        return kinds.LLAMACPP
    if gguf == kind.gguf_only:  # llama-server; or transformers and servers
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
    commands = ("For a real model without a GPU: `hf download "
                "tencent/Hy-MT2-1.8B-GGUF --include '*Q4_K_M.gguf'`, then `bash launch.sh` (it "
                "runs the file through llama.cpp); on a machine with a GPU, `bash launch.sh` "
                "picks what fits; or a translation server: `bash launch.sh --engine openai "
                "--endpoint URL --model tencent/Hy-MT2-7B`.")
    reason = f"{why} Serving {what}. {commands}"
    banner = f"**Demo model.** {why} This is {what}. {commands}"
    if asked:
        banner = f"**Demo model.** This is {what}. {commands}"
    demo = replace(settings, model=str(directory), demo=True)
    if kinds.of(settings.engine).gguf_only:  # llama.cpp runs the demo as a GGUF file
        demo = with_demo(demo)
    told = "" if asked else (f"Serving the demo model, which knows only {count} phrases: {why} "
                             f"For a real one without a GPU: `{DOWNLOAD}`, then `bash launch.sh`.")
    return Choice(demo, reason, banner, told)


def with_demo(settings: Settings) -> Settings:
    """The demo model replaces ``model`` (resolved lazily: it may be built on first use); the
    engines that run GGUF files get it as one. :func:`choose` does this for --demo."""
    if kinds.of(settings.engine).gguf_only:
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
        if row.spec.prequantized == "gguf":
            note = " (llama.cpp; `bash launch.sh` installs llama-cpp-python)"
            for quant, ram in (("Q8_0", row.need_gib("Q8_0") + Q8_SPARE_GIB),
                               ("Q4_K_M", row.need_gib("Q4_K_M"))):
                rows.append(f"| no GPU, ≥ {ram:.1f} GiB of RAM | `{row.model}`{note} | {quant} | "
                            f"{row.weights_gib(quant):.1f} GiB | "
                            f"{row.need_gib(quant) - row.weights_gib(quant):.1f} GiB |")
            continue
        rows.append(f"| no GPU, without llama-cpp-python, ≥ {row.need_gib():.1f} GiB of RAM | "
                    f"`{row.model}` (PyTorch; slow, and the page says so) | {row.dtype} | "
                    f"{row.weights_gib():.1f} GiB | {row.need_gib() - row.weights_gib():.1f} GiB |")
    bf16 = CPU_TABLE_BF16[0]
    rows.append(f"| no GPU, a CPU with AVX512-BF16 or AMX where bf16 measured faster than Q4_K_M "
                f"at {KV_ROOM_USERS // 2} clients (`hunyuan_webui/cpu_formats.py`), ≥ "
                f"{bf16.need_gib():.1f} GiB of RAM | `{bf16.model}` (PyTorch; before the GGUF) | "
                f"{bf16.dtype} | {bf16.weights_gib():.1f} GiB | "
                f"{bf16.need_gib() - bf16.weights_gib():.1f} GiB |")
    rows.append("| otherwise | the bundled demo model, with a banner | fp32 | 3 MB | |")
    return "\n".join(rows)
