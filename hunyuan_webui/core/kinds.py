"""The engine kinds (``--engine``): the one module that spells their names.

Every other module names a kind through these constants, and the engine factory
(:mod:`hunyuan_webui.engine.factory`) maps each one to its class; ``scripts/check_structure.py``
refuses the names written as string literals elsewhere.
"""

from __future__ import annotations

LOCAL = "local"  # our transformers engine, in this process
PROCESS = "process"  # our transformers engine, in a child process
LLAMACPP = "llamacpp"  # llama-cpp-python, in a child process
OPENAI = "openai"  # an OpenAI-compatible server the user runs, at --endpoint
VLLM = "vllm"  # servers the app starts and supervises
SGLANG = "sglang"
LLAMA_SERVER = "llama-server"
TRANSFORMERS_SERVE = "transformers-serve"

ENGINES = (LOCAL, PROCESS, OPENAI, LLAMACPP, VLLM, SGLANG, LLAMA_SERVER, TRANSFORMERS_SERVE)
DEFAULT = PROCESS
MANAGED = (VLLM, SGLANG, LLAMA_SERVER, TRANSFORMERS_SERVE)  # engine.servers starts them
GGUF = (LLAMACPP, LLAMA_SERVER)  # run GGUF files, and only those
TRANSFORMERS = (LOCAL, PROCESS)  # this app's own transformers engine
IN_PROCESS = (LOCAL, PROCESS, LLAMACPP)  # the model runs inside this app (or its child)
