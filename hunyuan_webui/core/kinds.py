"""The engine kinds (``--engine``): the one module that spells their names, and one row per kind
that says what it can do.

Every other module names a kind through these constants and asks its row (:func:`of`) what it
runs and where, instead of keeping its own tuple of kinds; the engine factory
(:mod:`hunyuan_webui.engine.factory`) maps each kind to its class. ``scripts/check_structure.py``
refuses the names written as string literals elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from hunyuan_webui.errors import InputError

LOCAL = "local"  # our transformers engine, in this process
PROCESS = "process"  # our transformers engine, in a child process
LLAMACPP = "llamacpp"  # llama-cpp-python, in a child process
OPENAI = "openai"  # an OpenAI-compatible server the user runs, at --endpoint
VLLM = "vllm"  # servers the app starts and supervises
SGLANG = "sglang"
LLAMA_SERVER = "llama-server"
TRANSFORMERS_SERVE = "transformers-serve"

# Where a kind's model runs.
HERE = "this process"
CHILD = "a child process of this app"
SERVER = "a server this app starts and supervises"
ELSEWHERE = "a server the user runs"

# Which checkpoints a kind runs.
TRANSFORMERS_FILES = "transformers checkpoints (safetensors), not GGUF files"
GGUF_FILES = "GGUF files, and only those"
ITS_OWN = "whatever its server loads"


@dataclass(frozen=True)
class Kind:
    name: str
    runs_in: str  # HERE, CHILD, SERVER or ELSEWHERE
    checkpoints: str  # TRANSFORMERS_FILES, GGUF_FILES or ITS_OWN

    @property
    def managed(self) -> bool:
        """Started and supervised by this app (engine.servers)."""
        return self.runs_in == SERVER

    @property
    def in_app(self) -> bool:
        """The model runs inside this app or its child: the launch may switch it to llama.cpp
        for a GGUF file."""
        return self.runs_in in (HERE, CHILD)

    @property
    def child_process(self) -> bool:
        return self.runs_in == CHILD

    @property
    def gguf_only(self) -> bool:
        return self.checkpoints == GGUF_FILES

    @property
    def own_transformers(self) -> bool:
        """This app's own transformers engine (in this process or its child)."""
        return self.checkpoints == TRANSFORMERS_FILES


KINDS: dict[str, Kind] = {kind.name: kind for kind in (
    Kind(LOCAL, HERE, TRANSFORMERS_FILES),
    Kind(PROCESS, CHILD, TRANSFORMERS_FILES),
    Kind(OPENAI, ELSEWHERE, ITS_OWN),
    Kind(LLAMACPP, CHILD, GGUF_FILES),
    Kind(VLLM, SERVER, ITS_OWN),
    Kind(SGLANG, SERVER, ITS_OWN),
    Kind(LLAMA_SERVER, SERVER, GGUF_FILES),
    Kind(TRANSFORMERS_SERVE, SERVER, ITS_OWN),
)}
ENGINES = tuple(KINDS)
DEFAULT = PROCESS


def of(name: str) -> Kind:
    """The row of the kind called ``name``."""
    try:
        return KINDS[name]
    except KeyError:
        raise InputError(f"--engine must be one of {', '.join(ENGINES)}; got {name!r}.") from None
