"""What an engine is configured with: the part of the settings the engines read.

:meth:`hunyuan_webui.settings.Settings.engine_config` builds one; the engines never see the whole
``Settings`` (which also holds the server's, the page's and the cache's knobs). The defaults are the
settings' defaults.
"""

from __future__ import annotations

from dataclasses import dataclass

from hunyuan_webui.core import kinds

# Tokens the prompt template, a glossary and context add around the user's text, at most.
PROMPT_OVERHEAD_TOKENS = 1024


@dataclass(frozen=True)
class EngineConfig:
    kind: str = kinds.DEFAULT
    dtype: str = "auto"
    device: str = "auto"
    max_batch_size: int = 16
    max_queued: int = 256
    max_new_tokens: int = 2048
    max_input_tokens: int = 4096
    prefill_chunk_tokens: int = 512
    warmup: bool = True
    cpu_threads: int = 0
    speculative: bool = True  # drafts verified in one step (engine/speculative.py); servers' own
    context_tokens: int = 0  # 0: max_input_tokens + PROMPT_OVERHEAD_TOKENS + max_new_tokens
    gguf_quant: str = "Q4_K_M"
    # a managed server (vllm, sglang, llama-server, transformers-serve)
    gpu_memory: float = 0.9
    engine_args: str = ""
    engine_start_timeout: float = 1800.0
    # a remote server (openai)
    endpoint: str | None = None
    api_key: str | None = None
    remote_model: str | None = None
    remote_timeout: float = 120.0
    remote_retries: int = 3

    def context_length(self) -> int:
        """The longest sequence (prompt and answer, in tokens) a server is sized for."""
        return self.context_tokens or (self.max_input_tokens + PROMPT_OVERHEAD_TOKENS
                                       + self.max_new_tokens)

    def own_engine_kwargs(self) -> dict[str, object]:
        """The keyword arguments of this app's own engines (local, process, llamacpp)."""
        return dict(dtype=self.dtype, device=self.device, max_batch_size=self.max_batch_size,
                    max_queued=self.max_queued, max_new_tokens=self.max_new_tokens,
                    max_input_tokens=self.max_input_tokens, warmup=self.warmup,
                    prefill_chunk_tokens=self.prefill_chunk_tokens, cpu_threads=self.cpu_threads,
                    speculative=self.speculative)

    def __repr__(self) -> str:  # never shows the API key
        return f"EngineConfig(kind={self.kind!r}, dtype={self.dtype!r}, device={self.device!r})"
