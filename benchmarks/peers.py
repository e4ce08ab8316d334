"""The benchmark's shared checkpoint and the servers it compares, each in its own process.

:func:`build_checkpoint` writes a random-weight ``HunYuanDenseV1ForCausalLM`` (the real
architecture, at a size from :data:`SIZES`) with the demo model's Hunyuan tokenizer and chat
template. Its stop and special tokens, and every token that does not decode to clean text on its
own, are made unreachable (their ``lm_head`` rows read one residual dimension that the model keeps
at a positive constant, times a large negative weight), so greedy decoding never ends early and
every system generates exactly the requested number of tokens of streamable text.
:func:`stopping_copy` makes the one exception, for the cache check: a copy whose greedy answer to
one prompt ends by itself.

The peers, all bound to 127.0.0.1 on free ports, started in their own process group and killed
(SIGTERM, then SIGKILL) when the :class:`Peers` context exits, even on error (and sent SIGTERM by
the kernel should the benchmark itself die):

* ``app``: this project, ``python -m hunyuan_webui.app``;
* ``serve`` / ``serve-cb``: ``transformers serve`` (transformers' OpenAI-compatible server) on the
  same directory, without / with ``--continuous-batching``; it needs the ``serving`` extra of
  transformers, of which a plain install lacks only ``openai``. Its paged cache is sized for the
  benchmark's clients (``--cb-num-blocks``) in the controlled condition only: at defaults it
  takes what its users get (60% of free RAM on a CPU, 90% of free GPU memory), or the share
  ``--cb-memory-share`` gives it (its own ``--cb-max-memory-percent``);
* ``baseline``: what this project replaces, a web endpoint that runs one non-streaming
  ``model.generate`` per request behind a global lock (``python -m benchmarks.peers
  baseline --model DIR --port P``, stdlib only, like the Flask WebUI's threaded dev server);
* ``app-llamacpp``: this project on a GGUF of the checkpoint (:func:`bench_gguf`), ``--engine
  llamacpp``;
* ``llama-cpp-server``: llama-cpp-python's own OpenAI-compatible server (``python -m
  llama_cpp.server``) on the same GGUF; it needs the ``server`` extra of llama-cpp-python.

Two conditions (:func:`app_command`, :func:`llama_server_command`): *controlled*, every peer with
the same thread count and the app with the benchmark's batch and queue sizes; *defaults*, every
peer as its users start it, with nothing but the model, host and port.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hunyuan_webui.urls import free_port

START_TIMEOUT_S = 300.0
STOP_TIMEOUT_S = 15.0
# The stop-token trick: dimension 0 of the residual stream is held at CONSTANT by every layer, and
# an unreachable token's logit is -PENALTY times it (after the final norm): hundreds below the rest.
HELD_DIM = 0
CONSTANT = 0.1
PENALTY = 1000.0
# Dimension 1 is read by nothing but the stop token's logit. It is zero everywhere, except in the
# cache-check copy, where one "trigger" token's embedding sets it, so that the stop token wins
# right after the trigger: a request that ends by itself, which the phrase cache then keeps.
TRIGGER_DIM = 1
TRIGGER = 1.0
FORMAT = 1  # bump when build_checkpoint changes, so stale --model-dir checkpoints are rebuilt


@dataclass(frozen=True)
class Shape:
    hidden: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int = 0  # 0: the tokenizer's own size

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads


SIZES: dict[str, Shape] = {
    "tiny": Shape(hidden=128, layers=2, heads=4, kv_heads=2, ffn=512),  # ~1M params, for tests
    "small": Shape(hidden=256, layers=4, heads=4, kv_heads=2, ffn=1024),  # ~4M
    "cpu": Shape(hidden=512, layers=8, heads=8, kv_heads=2, ffn=2048),  # ~31M, the CPU default
    # The 7B shape (REFERENCE.md section 1; vocab of the Hunyuan-7B tokenizer), for a GPU.
    "7b": Shape(hidden=4096, layers=32, heads=32, kv_heads=8, ffn=14336, vocab=128167),
}


# -- the checkpoint ----------------------------------------------------------------------------
def build_checkpoint(out_dir: str | os.PathLike[str], size: str = "cpu", *, device: str = "cpu",
                     dtype: str = "fp32", seed: int = 0) -> Path:
    """Write a random-weight checkpoint of shape ``SIZES[size]`` to ``out_dir``; returns it."""
    import torch
    from transformers import (
        AutoTokenizer,
        GenerationConfig,
        HunYuanDenseV1Config,
        HunYuanDenseV1ForCausalLM,
    )

    from hunyuan_webui.demo.model import ensure_demo_model
    from hunyuan_webui.demo.training import model_config

    shape = SIZES[size]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = AutoTokenizer.from_pretrained(ensure_demo_model())
    settings = model_config(tokenizer).to_dict()
    settings.update(hidden_size=shape.hidden, num_hidden_layers=shape.layers,
                    num_attention_heads=shape.heads, num_key_value_heads=shape.kv_heads,
                    head_dim=shape.head_dim, intermediate_size=shape.ffn,
                    vocab_size=max(shape.vocab, len(tokenizer)))
    config = HunYuanDenseV1Config(**settings)
    torch_dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    torch.manual_seed(seed)
    with torch.device(device):
        model = HunYuanDenseV1ForCausalLM._from_config(config, dtype=torch_dtype).eval()
    blocked = unreachable_tokens(tokenizer, config.vocab_size)
    make_unreachable(model, blocked)
    model.generation_config = GenerationConfig(
        do_sample=False, repetition_penalty=1.0, max_new_tokens=2048,
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id)
    tokenizer.save_pretrained(out, save_jinja_files=False)
    model.save_pretrained(out, safe_serialization=True)
    params = sum(p.numel() for p in model.parameters())
    meta = {"family": "hunyuan-mt", "modes": ["translate"], "params_b": round(params / 1e9, 6),
            "description": f"Random-weight benchmark model ({size}, {params / 1e6:.1f}M params)",
            "bench": {"format": FORMAT, "size": size, "shape": asdict(shape), "seed": seed,
                      "dtype": dtype, "params": params, "unreachable_tokens": len(blocked)}}
    (out / "hymt.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return out


def checkpoint_info(model_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """What :func:`build_checkpoint` recorded about a directory ({} for other checkpoints)."""
    path = Path(model_dir) / "hymt.json"
    if not path.is_file():
        return {}
    return json.loads(path.read_text(encoding="utf-8")).get("bench", {})


def unreachable_tokens(tokenizer: Any, vocab_size: int) -> list[int]:
    """Special tokens, ids past the tokenizer, and tokens whose text alone is not clean output."""
    special = set(tokenizer.all_special_ids)
    blocked = []
    for token_id in range(vocab_size):
        if token_id in special or token_id >= len(tokenizer):
            blocked.append(token_id)
            continue
        text = tokenizer.decode([token_id], skip_special_tokens=False)
        if (not text.strip() or "\ufffd" in text
                or any(unicodedata.category(ch) in ("Cc", "Cf") for ch in text)):
            blocked.append(token_id)
    return blocked


def make_unreachable(model: Any, token_ids: Sequence[int]) -> None:
    """Give ``token_ids`` logits far below every other token's, whatever the input."""
    import torch

    with torch.no_grad():
        model.model.embed_tokens.weight[:, HELD_DIM] = CONSTANT
        model.model.embed_tokens.weight[:, TRIGGER_DIM] = 0
        for layer in model.model.layers:  # no layer writes to the two reserved dimensions
            for dim in (HELD_DIM, TRIGGER_DIM):
                layer.self_attn.o_proj.weight[dim, :] = 0
                layer.mlp.down_proj.weight[dim, :] = 0
            for proj in (layer.self_attn.q_proj, layer.self_attn.k_proj, layer.self_attn.v_proj,
                         layer.mlp.gate_proj, layer.mlp.up_proj):
                proj.weight[:, TRIGGER_DIM] = 0  # and none reads the trigger dimension
        head = model.lm_head.weight
        head[:, HELD_DIM] = 0
        head[:, TRIGGER_DIM] = 0
        index = torch.tensor(list(token_ids), dtype=torch.long, device=head.device)
        head.index_fill_(0, index, 0)
        head[index, HELD_DIM] = -PENALTY


def stopping_copy(model_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                  prompt: str, min_tokens: int, device: str = "cpu") -> tuple[Path, int]:
    """A copy of a bench checkpoint whose greedy answer to ``prompt`` ends after >= min_tokens.

    The answer is the original model's greedy answer up to the first token that appears there
    for the first time at or after ``min_tokens`` tokens (the trigger), then the stop token.
    Returns the directory and the answer's length in tokens.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype="auto").to(device).eval()
    inputs = tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                           add_generation_prompt=True, return_tensors="pt",
                                           return_dict=True).to(device)
    with torch.inference_mode():
        out = model.generate(**inputs, max_new_tokens=4 * min_tokens, do_sample=False,
                             repetition_penalty=1.0)
    prompt_ids = inputs["input_ids"][0].tolist()
    path = out[0, len(prompt_ids):].tolist()
    new = [k for k, t in enumerate(path) if t not in path[:k] and t not in prompt_ids]
    if not new:
        raise PeerError("no trigger token found for the cache check")
    k = next((k for k in new if k + 1 >= min_tokens), new[-1])
    eos = model.generation_config.eos_token_id
    eos = eos[0] if isinstance(eos, list) else eos
    with torch.no_grad():
        model.model.embed_tokens.weight[path[k], TRIGGER_DIM] = TRIGGER
        model.lm_head.weight[eos, TRIGGER_DIM] = 100 * PENALTY
    out_path = Path(out_dir)
    tokenizer.save_pretrained(out_path, save_jinja_files=False)
    model.save_pretrained(out_path, safe_serialization=True)
    shutil.copy(Path(model_dir) / "hymt.json", out_path / "hymt.json")
    return out_path, k + 1


# -- peer processes ----------------------------------------------------------------------------
def serve_missing_packages() -> list[str]:
    """What ``transformers serve`` needs and cannot import here ([] when it can run)."""
    return [name for name in ("openai", "fastapi", "uvicorn", "pydantic")
            if importlib.util.find_spec(name) is None]


class PeerError(RuntimeError):
    """A peer server could not start; the message quotes the end of its log."""


@dataclass
class Peer:
    name: str
    url: str  # scheme://host:port, no trailing slash
    proc: subprocess.Popen[bytes]
    log_path: Path
    command: list[str] = field(default_factory=list)

    def stop(self) -> None:
        """SIGTERM to the peer's process group, SIGKILL if it lingers."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=STOP_TIMEOUT_S)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


# Variables the benchmark set for its own process only (the in-process columns): no peer gets them.
OWN_PROCESS_ONLY: set[str] = set()


def peer_env(threads: int | None) -> dict[str, str]:
    """The environment of every peer: offline, quiet, and the same thread count for all."""
    mine = {k: v for k, v in os.environ.items() if k not in OWN_PROCESS_ONLY}
    env = {**mine, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false",
           "GRADIO_ANALYTICS_ENABLED": "False", "PYTHONUNBUFFERED": "1"}
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    root = str(Path(__file__).resolve().parent.parent)  # `-m hunyuan_webui...` from any cwd
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


def app_command(model_dir: str, port: int, *, max_new_tokens: int, max_batch_size: int = 16,
                cache: bool = False, device: str = "auto", defaults: bool = False,
                threads: int | None = None, guards: bool = False) -> list[str]:
    """The app; a ``.gguf`` model runs on ``--engine llamacpp``. At ``defaults`` it gets what
    ``bash launch.sh --model DIR`` gives it (its own batch size, queue, threads and phrase cache)
    and the answer length: ``--max-new-tokens`` is the only cap the Gradio endpoint has, as
    ``max_tokens`` is in the other systems' requests. Without its answer guards unless asked:
    the random-weight checkpoint answers gibberish, which they would stop and retry, so the app
    would no longer generate the tokens every other system generates."""
    cmd = [sys.executable, "-m", "hunyuan_webui.app", "--model", model_dir, "--host", "127.0.0.1",
           "--port", str(port), "--log-level", "warning", "--max-new-tokens", str(max_new_tokens)]
    if not guards:
        cmd.append("--no-guards")
    if model_dir.endswith(".gguf"):
        cmd += ["--engine", "llamacpp"]
    if defaults:
        return cmd
    cmd += ["--device", device,
            "--max-batch-size", str(max_batch_size), "--concurrency", "64",
            "--queue-size", "256", "--cache-size", "4096" if cache else "0"]
    return cmd + (["--cpu-threads", str(threads)] if threads else [])


def llama_server_command(gguf: str, port: int, *, threads: int | None = None) -> list[str]:
    """llama-cpp-python's server: at its defaults (one sequence at a time, half the cores for
    decoding, 2,048 cells of context), or with ``threads`` for both decoding and prompts.

    One default is overridden in both conditions: ``--interrupt_requests``, by which a new
    request cuts off the answer being streamed (every answer but the last would end early)."""
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", gguf, "--host", "127.0.0.1",
           "--port", str(port), "--interrupt_requests", "False"]
    if threads:
        cmd += ["--n_threads", str(threads), "--n_threads_batch", str(threads)]
    return cmd


def llama_server_missing_packages() -> list[str]:
    """What ``python -m llama_cpp.server`` needs and cannot import here."""
    return [name for name in ("llama_cpp", "sse_starlette", "starlette_context",
                              "pydantic_settings") if importlib.util.find_spec(name) is None]


def bench_gguf(model_dir: str | os.PathLike[str]) -> Path:
    """The checkpoint as an F32 GGUF (written once), for the llama.cpp columns: the same weights,
    so the same unreachable tokens and the same answers. It lives in a folder beside the
    checkpoint's (``DIR.gguf/``, with its ``hymt.json``): a GGUF inside the checkpoint would make
    the directory a GGUF checkpoint for the app."""
    from hunyuan_webui.engine.gguf_files import write_gguf

    src = Path(model_dir).resolve()
    path = src.with_name(src.name + ".gguf") / "bench-F32.gguf"
    if not path.is_file() or path.stat().st_mtime < (src / "config.json").stat().st_mtime:
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / "hymt.json", path.parent / "hymt.json")
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        write_gguf(src, partial)
        os.replace(partial, path)
    return path


def serve_command(model_dir: str, port: int, *, continuous_batching: bool,
                  device: str = "cpu", cb_blocks: int | None = 64,
                  cb_memory: float | None = None) -> list[str]:
    """``transformers serve``; with ``continuous_batching``, its paged cache sized by
    ``cb_blocks`` blocks, or by a ``cb_memory`` share of free memory, or (both None) by its own
    default share (0.6 of free RAM on a CPU, 0.9 of free GPU memory)."""
    cmd = [sys.executable, "-m", "transformers.cli.transformers", "serve", model_dir,
           "--host", "127.0.0.1", "--port", str(port), "--device", device, "--dtype", "auto",
           "--log-level", "warning"]
    if continuous_batching:
        cmd.append("--continuous-batching")
        if cb_blocks:
            cmd += ["--cb-num-blocks", str(cb_blocks)]
        if cb_memory:
            cmd += ["--cb-max-memory-percent", str(cb_memory)]
    return cmd


def cb_blocks_for(clients: int, tokens: int, page_size: int = 256) -> int:
    """Paged-cache blocks for ``clients`` requests of a prompt (< 256 tokens) plus ``tokens``."""
    return max(16, 2 * -(-clients * (256 + tokens) // page_size))


def baseline_command(model_dir: str, port: int, device: str = "cpu") -> list[str]:
    return [sys.executable, "-m", "benchmarks.peers", "baseline", "--model", model_dir,
            "--port", str(port), "--device", device]


HEALTH_PATHS = {"app": "/ready", "app-llamacpp": "/ready", "serve": "/health",
                "serve-cb": "/health", "baseline": "/health", "llama-cpp-server": "/v1/models"}


def command_for(kind: str, model_dir: str, port: int, *, device: str, max_new_tokens: int,
                cache: bool = False, cb_blocks: int = 64, defaults: bool = False,
                threads: int | None = None, cb_memory: float | None = None) -> list[str]:
    if kind in ("app", "app-llamacpp"):
        model = str(bench_gguf(model_dir)) if kind == "app-llamacpp" else model_dir
        return app_command(model, port, max_new_tokens=max_new_tokens, cache=cache,
                           device="cuda" if device.startswith("cuda") else device,
                           defaults=defaults, threads=threads)
    if kind == "llama-cpp-server":
        if llama_server_missing_packages():
            raise PeerError("llama-cpp-python's server needs "
                            + ", ".join(llama_server_missing_packages())
                            + ": pip install 'llama-cpp-python[server]'")
        return llama_server_command(str(bench_gguf(model_dir)), port, threads=threads)
    if kind in ("serve", "serve-cb"):
        if serve_missing_packages():
            raise PeerError("`transformers serve` needs " + ", ".join(serve_missing_packages())
                            + ": pip install 'transformers[serving]' (or: pip install openai)")
        # At defaults its paged cache is as its users get it (or capped by a share they set).
        return serve_command(model_dir, port, continuous_batching=kind == "serve-cb",
                             device=device, cb_blocks=None if defaults else cb_blocks,
                             cb_memory=cb_memory if defaults else None)
    if kind == "baseline":
        return baseline_command(model_dir, port, device=device)
    raise ValueError(f"unknown peer kind {kind!r}")


class Peers:
    """Started peers, stopped together when the context exits (also on errors and Ctrl+C)."""

    def __init__(self, log_dir: str | os.PathLike[str], threads: int | None = None,
                 defaults: bool = False, cb_memory: float | None = None) -> None:
        self.log_dir = Path(log_dir)
        self.threads = threads
        self.defaults = defaults  # every peer at its own defaults (then threads is None)
        self.cb_memory = cb_memory  # at defaults: transformers serve's --cb-max-memory-percent
        self.running: dict[str, Peer] = {}

    def __enter__(self) -> Peers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop_all()

    def start(self, name: str, kind: str, model_dir: str, *, device: str = "cpu",
              max_new_tokens: int = 64, cache: bool = False, cb_blocks: int = 64,
              timeout: float = START_TIMEOUT_S) -> Peer:
        """Start one peer and wait until it answers its health check."""
        port = free_port()
        cmd = command_for(kind, str(Path(model_dir).resolve()), port, device=device,
                          max_new_tokens=max_new_tokens, cache=cache, cb_blocks=cb_blocks,
                          defaults=self.defaults and not cache, threads=self.threads,
                          cb_memory=self.cb_memory)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("wb") as log:
            proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, env=peer_env(self.threads),
                                    start_new_session=True, preexec_fn=_die_with_parent)
        peer = Peer(name, f"http://127.0.0.1:{port}", proc, log_path, cmd)
        self.running[name] = peer
        _wait_healthy(peer, HEALTH_PATHS[kind], timeout)
        return peer

    def stop(self, name: str) -> None:
        peer = self.running.pop(name, None)
        if peer is not None:
            peer.stop()

    def stop_all(self) -> None:
        for name in list(self.running):
            self.stop(name)


def _die_with_parent() -> None:
    """In the child: be sent SIGTERM if the benchmark dies (even by SIGKILL or the OOM killer)."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _wait_healthy(peer: Peer, path: str, timeout: float) -> None:
    import httpx  # here: building a checkpoint (the GPU check) must not need the HTTP stack

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if peer.proc.poll() is not None:
            raise PeerError(f"{peer.name} exited with status {peer.proc.returncode}:\n"
                            f"{peer.log_tail()}")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(peer.url + path, timeout=5.0).status_code == 200:
                return
        time.sleep(0.25)
    raise PeerError(f"{peer.name} did not become healthy within {timeout:.0f}s:\n"
                    f"{peer.log_tail()}")


# -- the baseline server -----------------------------------------------------------------------
class BaselineModel:
    """Plain transformers, one ``generate`` at a time: the WebUI this project replaces."""

    def __init__(self, model_dir: str, device: str = "cpu") -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.torch = torch
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype="auto").to(device).eval()
        self.device = device
        self.lock = threading.Lock()

    def generate(self, prompt: str, max_new_tokens: int) -> dict[str, Any]:
        inputs = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True,
            return_tensors="pt", return_dict=True).to(self.device)
        started = time.perf_counter()
        with self.lock, self.torch.inference_mode():
            out = self.model.generate(**inputs, max_new_tokens=max_new_tokens, do_sample=False,
                                      repetition_penalty=1.0)
        new = out[0, inputs["input_ids"].shape[1]:]
        return {"text": self.tokenizer.decode(new, skip_special_tokens=True),
                "prompt_tokens": int(inputs["input_ids"].shape[1]),
                "completion_tokens": int(new.shape[0]),
                "seconds": round(time.perf_counter() - started, 4)}


def serve_baseline(model_dir: str, port: int, device: str = "cpu") -> None:
    """``POST /generate {"prompt", "max_new_tokens"}`` -> JSON; ``GET /health``."""
    engine = BaselineModel(model_dir, device)
    engine.generate("warm-up", 2)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            self._reply(200 if self.path == "/health" else 404, {"status": "ok"})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/generate":
                self._reply(404, {"error": "not found"})
                return
            try:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                result = engine.generate(str(body["prompt"]), int(body.get("max_new_tokens", 64)))
            except (ValueError, KeyError, TypeError) as exc:
                self._reply(400, {"error": str(exc)})
                return
            self._reply(200, result)

        def _reply(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload, ensure_ascii=False).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    ThreadingHTTPServer.request_queue_size = 256  # the default backlog of 5 drops bursts
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.serve_forever()


def _main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers")
    sub = parser.add_subparsers(dest="command", required=True)
    base = sub.add_parser("baseline", help="serve one model.generate at a time (the old WebUI)")
    base.add_argument("--model", required=True)
    base.add_argument("--port", type=int, required=True)
    base.add_argument("--device", default="cpu")
    build = sub.add_parser("build", help="write a random-weight benchmark checkpoint")
    build.add_argument("out")
    build.add_argument("--size", choices=sorted(SIZES), default="cpu")
    build.add_argument("--device", default="cpu")
    build.add_argument("--dtype", choices=("fp32", "bf16", "fp16"), default="fp32")
    args = parser.parse_args(argv)
    if args.command == "baseline":
        serve_baseline(args.model, args.port, args.device)
    else:
        print(build_checkpoint(args.out, args.size, device=args.device, dtype=args.dtype))
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
