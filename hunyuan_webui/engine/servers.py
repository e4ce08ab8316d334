"""The serving engines the translator can start and manage: what each is, how to install it, and
its command line, derived from our engine configuration.

A table, not branches (:data:`SERVERS`). Every server is started bound to 127.0.0.1 on a free port,
serves the model under the name the remote engine then asks for, and gets:

* the precision (``--dtype``), the longest sequence (``--context-tokens``: by default our longest
  input, plus the prompt's overhead, plus our longest output), the concurrent sequences
  (``--max-batch-size``) and, on a GPU, the share of its memory (``--gpu-memory``);
* anything in ``--engine-args``, last, so that it wins (``--tensor-parallel-size 2``).

vLLM and SGLang also get their own n-gram speculative decoding (prompt lookup: drafts from the
prompt, verified by the model, the same answers) unless ``--no-speculative`` is given, the device
is the CPU (SGLang's runs on CUDA only) or ``--engine-args`` sets speculation itself; and only
where the installed version has it, which is read from its own source (:func:`ngram_support`),
not assumed: vLLM's ``--speculative-config '{"method": "ngram", ...}'`` (its n-gram method, the
``speculative_config`` documented at docs.vllm.ai, features/speculative_decoding/n_gram), SGLang's
``--speculative-algorithm NGRAM`` (named so since sgl-project/sglang#11010, September 2025; its
docs: "Ngram speculative decoding only supports CUDA").

``llama-server`` (llama.cpp's own server, for GGUF files) also gets the model card's sampling as its
defaults, because its requests spell the repetition penalty ``repeat_penalty``: the remote engine's
``repetition_penalty`` would otherwise be ignored and its 1.1 default used. Its GGUF's chat template
is never used (no ``--jinja``): the remote engine sends the prompt already rendered in the project's
own chat format to ``/v1/completions``, and the file's end-of-generation tokens are overridden with
that format's stop token, by its id in the file's vocabulary (``--override-kv``).
"""

from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from hunyuan_webui.core import kinds
from hunyuan_webui.core.chat import chat_format
from hunyuan_webui.core.config import EngineConfig
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.errors import InputError

LOOPBACK = "127.0.0.1"
# Our --dtype as vLLM, SGLang and transformers spell it. int8/int4 (bitsandbytes) are refused:
# these servers run checkpoints quantized ahead of time (FP8, GPTQ, GGUF).
SERVER_DTYPES = {"auto": "auto", "bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
LLAMA_SERVER_SLOTS = 4  # parallel sequences of llama-server; each gets --context-tokens


@dataclass(frozen=True)
class Server:
    """One kind of OpenAI-compatible server the translator can manage."""

    engine: str  # the --engine value
    title: str  # for people: "vLLM"
    install: str  # how to install it, commands in backticks
    build: Callable[[Server, ModelSpec, EngineConfig, str, int], list[str]]
    requires: tuple[str, ...] = ()  # Python packages it needs
    launcher: tuple[str, ...] = ()  # how it is run ("{python}": this interpreter)...
    executable: str | None = None  # ...or a program beside this interpreter or on the PATH
    gguf: bool = False  # it runs GGUF files

    def program(self) -> list[str] | None:
        """The command that runs it here, or None when it is not installed."""
        if any(importlib.util.find_spec(name) is None for name in self.requires):
            return None
        if self.executable:
            beside = Path(sys.executable).with_name(self.executable)
            found = str(beside) if beside.is_file() else shutil.which(self.executable)
            return [found] if found else None
        return [sys.executable if part == "{python}" else part for part in self.launcher]

    def missing_message(self) -> str:
        """One paragraph: what is missing and the command that installs it."""
        where = (f" into the translator's environment ({Path(sys.executable).parent.parent})"
                 if self.requires else "")
        return (f"--engine {self.engine} starts {self.title} as a managed server, but it is not "
                f"installed here. Install it{where} with {self.install}, then start the "
                "translator again. Or start any OpenAI-compatible server yourself and pass "
                "--engine openai --endpoint http://HOST:PORT/v1.")

    def command(self, spec: ModelSpec, config: EngineConfig, model: str, port: int) -> list[str]:
        """The full command line; ``model`` is what to load (a directory, hub id or file)."""
        program = self.program()
        if program is None:
            raise InputError(self.missing_message())
        extra = shlex.split(config.engine_args)
        check_quantization(spec, extra)
        return [*program, *self.build(self, spec, config, model, port),
                *speculative_args(self, config, extra), *extra]

    def environment(self, config: EngineConfig) -> dict[str, str]:
        """Variables to set for it: ``--cpu-threads`` as OpenMP's thread count."""
        if self.engine == kinds.TRANSFORMERS_SERVE:
            _ensure_hub_cache()
        if not config.cpu_threads:
            return {}
        return {"OMP_NUM_THREADS": str(config.cpu_threads),
                "MKL_NUM_THREADS": str(config.cpu_threads)}

    def served_name(self, spec: ModelSpec, model: str) -> str:
        """The model name requests carry. transformers serve knows a model only by what it
        loaded; the others are told to call it by our id."""
        return model if self.engine == kinds.TRANSFORMERS_SERVE else spec.id


# The managed servers' n-gram speculation: draft tokens per step, and the longest n-gram looked up.
NGRAM_DRAFT_TOKENS = 5
NGRAM_MAX = 4
# Where each server's installed source names its n-gram method (module, the name in quotes).
NGRAM_SOURCES = {kinds.VLLM: ("vllm.config.speculative", '"ngram"'),
                 kinds.SGLANG: ("sglang.srt.server_args", '"NGRAM"')}


def ngram_support(engine: str) -> bool:
    """Whether the installed ``engine`` (vllm, sglang) has n-gram speculative decoding: its own
    source names the method (older versions lack it, or spell it otherwise)."""
    where = NGRAM_SOURCES.get(engine)
    if where is None:
        return False
    try:
        found = importlib.util.find_spec(where[0])
    except (ImportError, ValueError):  # the package or its parent is missing
        return False
    origin = found.origin if found is not None else None
    try:
        return origin is not None and where[1] in Path(origin).read_text(encoding="utf-8")
    except OSError:
        return False


def speculative_args(server: Server, config: EngineConfig, extra: list[str]) -> list[str]:
    """The server's own n-gram speculative decoding flags, where it has them (see the module's
    docstring); none where ``extra`` (--engine-args) already speaks of speculation."""
    if not config.speculative or config.device == "cpu" or \
            any(arg.startswith("--speculative") for arg in extra):
        return []
    if server.engine == kinds.VLLM and ngram_support(kinds.VLLM):
        settings = {"method": "ngram", "num_speculative_tokens": NGRAM_DRAFT_TOKENS,
                    "prompt_lookup_max": NGRAM_MAX}
        return ["--speculative-config", json.dumps(settings)]
    if server.engine == kinds.SGLANG and ngram_support(kinds.SGLANG):
        return ["--speculative-algorithm", "NGRAM",
                "--speculative-num-draft-tokens", str(NGRAM_DRAFT_TOKENS)]
    return []


# Quantization methods that only apply to mixture-of-experts layers.
MOE_QUANTIZATIONS = frozenset({"experts_int8", "moe_wna16"})


def check_quantization(spec: ModelSpec, args: list[str]) -> None:
    """Refuse a mixture-of-experts quantization for a dense model: the official Hy-MT README's
    ``--quantization experts_int8`` turns the dense 7B's every answer into ``!!!!``."""
    if spec.active_params_b is not None:
        return
    values = [a.split("=", 1)[1] for a in args if a.startswith(("--quantization=", "-q="))]
    values += [b for a, b in zip(args, args[1:]) if a in ("--quantization", "-q")]
    wrong = sorted(MOE_QUANTIZATIONS.intersection(values))
    if wrong:
        raise InputError(
            f"--engine-args asks for --quantization {wrong[0]}, which is meant for mixture-of-"
            f"experts models; {spec.id} is dense, and its answers would come out as '!!!!'. "
            "Leave it out, or load an -FP8 or -GPTQ checkpoint.")


def _ensure_hub_cache() -> None:
    """transformers serve answers GET /v1/models with a 500 and a traceback in its log when the
    hub cache directory does not exist (5.23); the remote engine asks every 15 seconds."""
    try:
        from huggingface_hub import constants

        Path(constants.HF_HUB_CACHE).mkdir(parents=True, exist_ok=True)
    except (ImportError, OSError):  # then the log shows the tracebacks: harmless
        pass


def server_dtype(server: Server, config: EngineConfig) -> str:
    dtype = SERVER_DTYPES.get(config.dtype)
    if dtype is None:
        raise InputError(
            f"--dtype {config.dtype} quantizes with bitsandbytes, which {server.title} does not "
            "do: choose a checkpoint quantized ahead of time (an -FP8 or -GPTQ model id), or pass "
            "its own flags with --engine-args.")
    return dtype


def _vllm(server: Server, spec: ModelSpec, config: EngineConfig, model: str,
          port: int) -> list[str]:
    return ["serve", model, "--host", LOOPBACK, "--port", str(port),
            "--served-model-name", spec.id, "--dtype", server_dtype(server, config),
            "--max-model-len", str(config.context_length()),
            "--gpu-memory-utilization", f"{config.gpu_memory:g}",
            "--max-num-seqs", str(config.max_batch_size)]


def _sglang(server: Server, spec: ModelSpec, config: EngineConfig, model: str,
            port: int) -> list[str]:
    return ["--model-path", model, "--host", LOOPBACK, "--port", str(port),
            "--served-model-name", spec.id, "--dtype", server_dtype(server, config),
            "--context-length", str(config.context_length()),
            "--mem-fraction-static", f"{config.gpu_memory:g}",
            "--max-running-requests", str(config.max_batch_size)]


def _llama_server(server: Server, spec: ModelSpec, config: EngineConfig, model: str,
                  port: int) -> list[str]:
    slots = max(1, min(config.max_batch_size, LLAMA_SERVER_SLOTS))
    args = ["-m", model, "--host", LOOPBACK, "--port", str(port), "--alias", spec.id,
            "-c", str(config.context_length() * slots), "--parallel", str(slots),
            "-ngl", "0" if config.device == "cpu" else "99",
            # The model card's sampling, the penalty over the whole sequence as transformers
            # applies it (llama.cpp refuses -1 for that).
            "--temp", "0.7", "--top-k", "20", "--top-p", "0.6", "--min-p", "0",
            "--repeat-penalty", "1.05", "--repeat-last-n", str(config.context_length())]
    if config.cpu_threads:
        args += ["--threads", str(config.cpu_threads)]
    return args + own_stop_overrides(spec, model)


def own_stop_overrides(spec: ModelSpec, model: str) -> list[str]:
    """llama-server's flags that make the chat format's stop token (by its id in the GGUF's
    vocabulary) the one its answers end at, whatever the file's own metadata says, and keep it
    from adding a BOS (the rendered prompt writes it). Nothing until the file is at hand (a hub
    id before its download: the command is built again to start the server)."""
    if not Path(model).is_file():
        return []
    from hunyuan_webui.engine.gguf_files import token_ids

    fmt = chat_format(spec.chat_format)
    stop = token_ids(model, fmt.special_tokens)[fmt.stops[0]]
    return ["--override-kv", f"tokenizer.ggml.eos_token_id=int:{stop}",
            "--override-kv", f"tokenizer.ggml.eot_token_id=int:{stop}",
            "--override-kv", "tokenizer.ggml.add_bos_token=bool:false"]


def _transformers(server: Server, spec: ModelSpec, config: EngineConfig, model: str,
                  port: int) -> list[str]:
    return ["serve", model, "--host", LOOPBACK, "--port", str(port), "--device", config.device,
            "--dtype", server_dtype(server, config), "--log-level", "warning"]


SERVERS: dict[str, Server] = {s.engine: s for s in (
    Server(kinds.VLLM, "vLLM", "`pip install vllm`", _vllm, requires=("vllm",),
           executable="vllm"),
    Server(kinds.SGLANG, "SGLang", '`pip install "sglang[all]"`', _sglang,
           requires=("sglang",), launcher=("{python}", "-m", "sglang.launch_server")),
    Server(kinds.LLAMA_SERVER, "llama.cpp's llama-server",
           "`brew install llama.cpp` (macOS, Linux), or take llama-server from a release at "
           "https://github.com/ggml-org/llama.cpp/releases and put it on the PATH",
           _llama_server, executable="llama-server", gguf=True),
    Server(kinds.TRANSFORMERS_SERVE, "transformers serve", "`pip install 'transformers[serving]'`",
           _transformers, requires=("transformers", "openai", "fastapi"),
           launcher=("{python}", "-m", "transformers.cli.transformers")),
)}


def server_for(engine: str) -> Server:
    try:
        return SERVERS[engine]
    except KeyError:
        raise InputError(f"--engine {engine} is not a managed server; those are "
                         f"{', '.join(SERVERS)}.") from None
