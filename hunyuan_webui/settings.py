"""One settings object for the whole process.

Every knob is a field of :class:`Settings` with its help text beside it. Command-line flags
(``--max-input-chars``) and environment variables (``HYMT_MAX_INPUT_CHARS``) map onto the same
fields; a flag beats the environment, which beats the default. The object is validated once, in
``__post_init__``, and then passed down explicitly: no module reads the environment on import.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from hunyuan_webui.core import kinds
from hunyuan_webui.core.config import PROMPT_OVERHEAD_TOKENS, EngineConfig
from hunyuan_webui.errors import InputError

DTYPES = ("auto", "bf16", "fp16", "fp32", "int8", "int4")
DEVICES = ("auto", "cuda", "mps", "cpu")
ENGINES = kinds.ENGINES
ENV_PREFIX = "HYMT_"


def proxy_list(value: str) -> list[str]:
    """``--forwarded-allow-ips`` as a list (empty: no proxy is trusted)."""
    return [p.strip() for p in (value or "").split(",") if p.strip()]


def _opt(default: Any, help: str, *, choices: Sequence[str] | None = None, secret: bool = False,
         group: str = "model") -> Any:
    meta = {"help": help, "choices": choices, "secret": secret, "group": group}
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class Settings:
    # model and engine
    model: str = _opt("auto", "Hub id or local checkpoint directory; auto = the best model this "
                      "machine can run and get (see README, Hardware): Hy-MT2-7B in bf16, int8 "
                      "or int4 by free GPU memory; without a GPU a 1.8B model, else the demo.")
    demo: bool = _opt(False, "Serve the bundled tiny demo model (no GPU, no download).")
    dtype: str = _opt("auto", "Weights precision: auto = bf16/fp16 on GPU; on CPU bf16 for a bf16 "
                      "checkpoint where the CPU computes bf16 natively (AVX512-BF16 or AMX), else "
                      "fp32; int8/int4 use bitsandbytes.", choices=DTYPES)
    device: str = _opt("auto", "Where to run: auto tries CUDA, then MPS, then CPU.", choices=DEVICES)
    engine: str = _opt(kinds.DEFAULT, "process = the model runs in a child process of its own, so "
                       "the web server does not share its GIL (faster under load); local = in "
                       "this process; llamacpp = a GGUF checkpoint run by llama.cpp "
                       "(llama-cpp-python) in such a child process; vllm, sglang, llama-server, "
                       "transformers-serve = the translator starts that server, sized from these "
                       "settings, and restarts it if it dies; openai = an OpenAI-compatible "
                       "server you run, at --endpoint.", choices=ENGINES)
    gguf_quant: str = _opt("auto", "The file of a GGUF repository to load (llamacpp, "
                           "llama-server), by its quantization: Q4_K_M, Q8_0, F16...; auto = "
                           "Q4_K_M, or Q8_0 when the launch downloads one for a machine with RAM "
                           "to spare (the instruction modes lose most in 4 bits).")
    gpu_memory: float = _opt(0.9, "Share of the GPU's memory a managed vLLM or SGLang server "
                             "may take.")
    engine_args: str = _opt("", "More command-line arguments for a managed server, added last "
                            "(e.g. '--tensor-parallel-size 2').")
    engine_start_timeout: float = _opt(1800.0, "Seconds a managed server may take to answer "
                                       "the first time (a download and compilation included).")
    endpoint: str | None = _opt(None, "Base URL of the OpenAI-compatible server, e.g. "
                                "http://127.0.0.1:8000/v1; several, comma-separated, share the "
                                "load.")
    api_key: str | None = _opt(None, "API key for --endpoint.", secret=True)
    remote_model: str | None = _opt(None, "Model name the remote server knows (default: --model).")
    remote_timeout: float = _opt(120.0, "Seconds before a remote request is abandoned.")
    remote_retries: int = _opt(3, "Retries (with backoff) when the remote server fails to answer.")
    chimera_model: str | None = _opt(None, "A Hunyuan-MT-Chimera checkpoint loaded beside --model "
                                     "for the ensemble mode (not needed when --model is Chimera).")
    warmup: bool = _opt(True, "Run a short generation before serving.")
    speculative: bool = _opt(True, "Speculative decoding: tokens drafted from the source text and "
                             "from the previous translation of the same text are verified in one "
                             "step (answers unchanged; it turns itself down when it would not pay, "
                             "as with a full batch on a CPU); managed vLLM and SGLang servers get "
                             "their own n-gram speculation. --no-speculative turns it off.")
    cpu_threads: int = _opt(0, "Threads for CPU inference; 0 = all cores but one (the web server "
                            "needs the other), both on a 2-core machine, where the engine's idle "
                            "threads then sleep (OMP_WAIT_POLICY=PASSIVE) instead of spinning.")
    # speech (README, Teach a class: speaking)
    speech: bool = _opt(True, "Load a speech recogniser beside the translator (the class's "
                        "speech routes, /v1/audio/transcriptions); --no-speech: none, typing "
                        "only.", group="speech")
    asr_model: str = _opt("auto", "Speech model: a CTranslate2 Whisper directory, a hub id "
                          "(Systran/faster-whisper-small) or a faster-whisper name (small, "
                          "large-v3-turbo); auto = what fits this machine (README, Speech): "
                          "large-v3-turbo on a GPU; on a CPU in int8, small with 8 cores or more, "
                          "else base; the demo recogniser with --demo.", group="speech")
    asr_endpoint: str | None = _opt(None, "Base URL of an OpenAI-compatible transcription "
                                    "server (e.g. vLLM serving Whisper: http://host:8000/v1) to "
                                    "recognise speech instead of a local model.", group="speech")
    asr_api_key: str | None = _opt(None, "API key for --asr-endpoint.", secret=True,
                                   group="speech")
    asr_remote_model: str = _opt("whisper-1", "Model name sent to --asr-endpoint.",
                                 group="speech")
    speech_draft_translations: bool = _opt(True, "While the teacher speaks, translate the "
                                           "words heard so far into the class's languages as "
                                           "drafts (never before a finished sentence, at most "
                                           "twice a second); --no-speech-draft-translations: "
                                           "drafts in the original only.", group="speech")
    max_audio_bytes: int = _opt(25_000_000, "Largest audio file accepted by the speech routes, "
                                "in bytes (413 beyond).", group="speech")
    max_audio_seconds: float = _opt(3600.0, "Longest audio file accepted, in seconds (413 "
                                    "beyond).", group="speech")
    # limits and batching
    max_input_chars: int = _opt(5000, "Longest input accepted, in characters.", group="limits")
    max_input_tokens: int = _opt(4096, "Longest input accepted, in tokens.", group="limits")
    max_new_tokens: int = _opt(2048, "Upper bound on generated tokens per segment.", group="limits")
    context_tokens: int = _opt(0, "Longest sequence (prompt + answer) a managed server or "
                               "llama.cpp is sized for; 0 = --max-input-tokens + "
                               f"{PROMPT_OVERHEAD_TOKENS} (the prompt around the text) + "
                               "--max-new-tokens.", group="limits")
    max_file_bytes: int = _opt(5_000_000, "Largest uploaded file accepted, in bytes (refused "
                               "while it arrives, before it is stored).", group="limits")
    files_ttl: int = _opt(3600, "Seconds an uploaded or translated file is kept for the visitor "
                          "who owns it; then it is deleted.", group="limits")
    upload_quota_mb: int = _opt(50, "Megabytes of uploaded and translated files one browser "
                                "session may hold at once (413 beyond).", group="limits")
    upload_address_mb: int = _opt(200, "Megabytes of uploaded and translated files the sessions "
                                  "of one client address may hold at once (429 beyond), so "
                                  "that one client cannot fill everyone's space.",
                                  group="limits")
    upload_total_mb: int = _opt(1000, "Megabytes of uploaded and translated files all sessions "
                                "together may hold at once (429 beyond).", group="limits")
    upload_dir: str | None = _opt(None, "Folder of uploads and translated files, owned by the app: "
                                  "emptied at every start (what a crash left) and stop; it must "
                                  "be empty or the app's. Default: hunyuan-webui-<uid>-<port> in "
                                  "the system's temp folder (GRADIO_TEMP_DIR is replaced).",
                                  group="limits")
    max_batch_size: int = _opt(16, "Sequences decoded together in one batch.", group="limits")
    max_queued: int = _opt(256, "Segments waiting for a batch slot before 'busy' is answered.",
                           group="limits")
    max_segments_per_request: int = _opt(0, "Segments one request (a long paste, a document) "
                                         "may have waiting or running at once, so it cannot "
                                         "fill every batch slot; 0 = half of "
                                         "--max-batch-size.", group="limits")
    prefill_chunk_tokens: int = _opt(512, "Prompt tokens read per scheduler step: a long "
                                     "prompt is read in chunks between decoding steps of the "
                                     "running requests.", group="limits")
    concurrency: int = _opt(16, "Gradio events that may run at once (shared by all model-bound "
                            "events).", group="limits")
    queue_size: int = _opt(64, "Gradio queue length before new visitors are turned away.",
                           group="limits")
    page_sessions: int = _opt(100, "Page sessions whose state the server keeps (about 0.2 MB "
                              "each; the least recently used are forgotten first).",
                              group="limits")
    # guards (README, Guards)
    guards: bool = _opt(True, "Check every answer before it is shown and cached: --no-guards "
                        "turns all of the guards below off.", group="guards")
    language_guard: bool = _opt(True, "Retry, then mark, an answer in the wrong language or "
                                "half untranslated.",
                                group="guards")
    loop_guard: bool = _opt(True, "Stop, retry, then mark, an answer that repeats itself or "
                            "outgrows its source; retry, then mark, an empty or cut-off one.",
                            group="guards")
    copy_guard: bool = _opt(True, "Retry, then mark, an answer that is the source again.",
                            group="guards")
    kept_guard: bool = _opt(True, "Retry, then mark, an answer that lost a number, a web or "
                            "e-mail address, inline code or a placeholder of its source.",
                            group="guards")
    # cache
    cache_size: int = _opt(4096, "Entries in the in-memory phrase cache (0 disables it).",
                           group="cache")
    cache_dir: str | None = _opt(None, "Directory of a persistent phrase cache (survives restarts).",
                                 group="cache")
    redis_url: str | None = _opt(None, "Redis URL of a phrase cache shared by several processes.",
                                 group="cache")
    # server
    host: str = _opt("127.0.0.1", "Interface to bind; 0.0.0.0 exposes the app to the network.",
                     group="server")
    port: int = _opt(7860, "TCP port.", group="server")
    https: bool = _opt(False, "Serve HTTPS (browsers give a phone on the LAN the microphone only "
                       "on a secure page): with a self-signed certificate made at first start "
                       "and kept in the state folder, or --ssl-certfile/--ssl-keyfile.",
                       group="server")
    ssl_certfile: str | None = _opt(None, "Your own TLS certificate (PEM); implies --https.",
                                    group="server")
    ssl_keyfile: str | None = _opt(None, "The private key of --ssl-certfile (PEM).",
                                   group="server")
    root_path: str = _opt("", "URL prefix when served behind a proxy (JupyterHub, nginx).",
                          group="server")
    auth_file: str | None = _opt(None, "File of 'user:password' lines for the UI login.",
                                 group="server")
    auth: str | None = _opt(None, "Comma-separated 'user:password' pairs for the UI login.",
                            secret=True, group="server")
    api_keys_file: str | None = _opt(None, "File of API keys, one per line: 'key "
                                     "[requests_per_minute] [chars_per_day]'.", group="server")
    api_keys: str | None = _opt(None, "Comma-separated API keys (same limits for all).",
                                secret=True, group="server")
    rate_limit_rpm: int = _opt(60, "Default requests per minute per API key (0 = unlimited).",
                               group="server")
    rate_limit_chars_per_day: int = _opt(1_000_000, "Default characters per day per API key "
                                         "(0 = unlimited).", group="server")
    open_page: bool = _opt(False, "With --api-keys and no --auth: serve the page, and so its own "
                           "endpoints (/gradio_api/*), without a key to anyone who can reach the "
                           "app. Without this, a key is needed there too.", group="server")
    visitor_rpm: int = _opt(0, "Translations per minute per page visitor without a key (its login "
                            "name, else its address); 0 = unlimited.", group="server")
    visitor_chars_per_day: int = _opt(0, "Characters per day per page visitor without a key; 0 = "
                                      "unlimited.", group="server")
    cors_origins: str = _opt("", "Comma-separated origins allowed by CORS ('*' for any).",
                             group="server")
    forwarded_allow_ips: str = _opt("", "Comma-separated addresses or networks (10.0.0.0/8) of "
                                    "reverse proxies whose X-Forwarded-For and X-Forwarded-Proto "
                                    "are believed ('*' = any). Default: none, not even 127.0.0.1: "
                                    "every client is known by the address it connects from.",
                                    group="server")
    max_body_bytes: int = _opt(1_000_000, "Largest HTTP request body accepted (uploads: "
                               "--max-file-bytes).", group="server")
    header_timeout: float = _opt(10.0, "Seconds a client may take to send its request headers; a "
                                 "slower connection is closed.", group="server")
    body_timeout: float = _opt(120.0, "Seconds a client may take to send a whole request body "
                               "(an upload included); a slower one gets 408 and its connection "
                               "is closed. 0 = no limit.", group="server")
    body_min_rate: int = _opt(1024, "Bytes per second a request body must arrive at, on average "
                              "once it has taken 5 s; a slower one gets 408 and its connection "
                              "is closed. 0 = no limit.", group="server")
    enable_monitoring: bool = _opt(False, "Expose Gradio's /monitoring dashboard.", group="server")
    log_level: str = _opt("info", "Logging level.", choices=("debug", "info", "warning", "error"),
                          group="server")

    def __post_init__(self) -> None:
        for f in fields(self):
            choices = f.metadata.get("choices")
            value = getattr(self, f.name)
            if choices and value not in choices:
                raise InputError(f"--{_flag(f.name)} must be one of {', '.join(choices)}; "
                                 f"got {value!r}.")
        for name in ("max_input_chars", "max_input_tokens", "max_new_tokens", "max_batch_size",
                     "concurrency", "queue_size", "prefill_chunk_tokens", "page_sessions"):
            if getattr(self, name) < 1:
                raise InputError(f"--{_flag(name)} must be at least 1.")
        if self.context_tokens < 0:
            raise InputError("--context-tokens must be 0 (automatic) or more.")
        if not 0 < self.gpu_memory <= 1:
            raise InputError(f"--gpu-memory must be a share of the GPU's memory, above 0 and at "
                             f"most 1; got {self.gpu_memory}.")
        if self.engine_start_timeout <= 0:
            raise InputError("--engine-start-timeout must be more than 0 seconds.")
        if self.max_segments_per_request < 0:
            raise InputError("--max-segments-per-request must be 0 (automatic) or more.")
        for name in ("files_ttl", "header_timeout", "max_file_bytes", "max_body_bytes",
                     "upload_quota_mb", "upload_address_mb", "upload_total_mb",
                     "max_audio_bytes", "max_audio_seconds"):
            if getattr(self, name) <= 0:
                raise InputError(f"--{_flag(name)} must be positive.")
        for name in ("visitor_rpm", "visitor_chars_per_day", "rate_limit_rpm",
                     "rate_limit_chars_per_day", "body_timeout", "body_min_rate"):
            if getattr(self, name) < 0:
                raise InputError(f"--{_flag(name)} must be 0 (unlimited) or more.")
        if not 0 < self.port < 65536:
            raise InputError(f"--port must be between 1 and 65535; got {self.port}.")
        if self.engine == kinds.OPENAI and not self.endpoint:
            raise InputError("--engine openai needs --endpoint URL (the server's /v1 base URL).")
        if self.root_path and not self.root_path.startswith("/"):
            raise InputError("--root-path must start with '/'.")
        if bool(self.ssl_certfile) != bool(self.ssl_keyfile):
            raise InputError("--ssl-certfile and --ssl-keyfile go together (a certificate and "
                             "its private key).")
        for proxy in proxy_list(self.forwarded_allow_ips):
            if proxy != "*":
                try:
                    ipaddress.ip_network(proxy, strict=False)
                except ValueError:
                    raise InputError(f"--forwarded-allow-ips: {proxy!r} is not an address or a "
                                     "network (10.0.0.0/8), nor '*'.") from None

    def segments_in_flight(self) -> int:
        """How many segments one request may have submitted and unfinished at once."""
        return self.max_segments_per_request or max(1, self.max_batch_size // 2)

    def context_length(self) -> int:
        """The longest sequence (prompt and answer, in tokens) a server is sized for."""
        return self.engine_config().context_length()

    def engine_config(self) -> EngineConfig:
        """What the engines are configured with: these settings' share of them."""
        names = {f.name for f in fields(EngineConfig)} - {"kind"}
        return EngineConfig(kind=self.engine, **{name: getattr(self, name) for name in names})

    def public(self) -> dict[str, Any]:
        """The settings with secrets masked, for logs: secret fields, and credentials in URLs."""
        from hunyuan_webui.urls import redact_url

        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("secret") and value:
                value = "***"
            elif f.name in ("endpoint", "redis_url", "asr_endpoint") and value:
                value = ",".join(redact_url(u.strip()) for u in value.split(","))
            out[f.name] = value
        return out


def markdown_table() -> str:
    """The README's configuration table, generated from the fields so the two cannot drift."""
    rows = ["| flag | environment | default | meaning |", "|---|---|---|---|"]
    for f in fields(Settings):
        default = f.default
        shown = "—" if default in (None, "") else f"`{default}`"
        choices = f.metadata.get("choices")
        meaning = f.metadata["help"] + (f" One of: {', '.join(choices)}." if choices else "")
        rows.append(f"| `--{_flag(f.name)}` | `{ENV_PREFIX}{f.name.upper()}` | {shown} | "
                    f"{meaning.replace('|', '/')} |")
    return "\n".join(rows)


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _convert(f: Any, raw: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    if kind.startswith("bool"):
        lowered = raw.strip().lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off", ""):
            return False
        raise InputError(f"{ENV_PREFIX}{f.name.upper()} must be true or false; got {raw!r}.")
    try:
        if kind.startswith("int"):
            return int(raw)
        if kind.startswith("float"):
            return float(raw)
    except ValueError:
        raise InputError(f"{ENV_PREFIX}{f.name.upper()} must be a number; got {raw!r}.") from None
    return raw


def build_parser(prog: str = "app.py") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog, description="Hunyuan-MT web translator.",
        epilog=f"Every flag also reads the environment variable {ENV_PREFIX}<FLAG> "
               f"(e.g. {ENV_PREFIX}MAX_INPUT_CHARS); a flag wins over the variable.")
    groups: dict[str, argparse._ArgumentGroup] = {}
    for f in fields(Settings):
        group_name = f.metadata["group"]
        group = groups.setdefault(group_name, parser.add_argument_group(group_name))
        env = f"{ENV_PREFIX}{f.name.upper()}"
        default = f.default if f.default is not MISSING else None
        help_text = f"{f.metadata['help']} [env {env}; default {default!r}]"
        if isinstance(default, bool):
            group.add_argument(f"--{_flag(f.name)}", dest=f.name, default=None,
                               action=argparse.BooleanOptionalAction, help=help_text)
        else:
            group.add_argument(f"--{_flag(f.name)}", dest=f.name, default=None,
                               choices=f.metadata.get("choices"), help=help_text,
                               type=lambda raw, f=f: _convert(f, raw))
    return parser


def from_sources(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None,
                 parser: argparse.ArgumentParser | None = None) -> tuple[Settings, list[str]]:
    """Settings from flags and the environment; returns them with the arguments left over."""
    env = os.environ if env is None else env
    parser = parser or build_parser()
    namespace, rest = parser.parse_known_args(argv)
    values: dict[str, Any] = {}
    for f in fields(Settings):
        flag_value = getattr(namespace, f.name)
        if flag_value is not None:
            values[f.name] = flag_value
        elif f"{ENV_PREFIX}{f.name.upper()}" in env:
            values[f.name] = _convert(f, env[f"{ENV_PREFIX}{f.name.upper()}"])
    return Settings(**values), rest
