"""One GGUF model loaded by llama.cpp (through ``llama-cpp-python``'s C bindings), and the little
the engine needs of it: tokens in and out (special tokens looked up by id), one batched decoding
call. Its embedded chat template is never read: the engine renders prompts in the project's own
chat format (:mod:`hunyuan_webui.core.chat`).

``llama_cpp.Llama``, the package's high-level class, runs one sequence per context. The engine
decodes many at once (:mod:`hunyuan_webui.engine.llamacpp`), so this wraps the C API directly:
one context with ``n_seq_max`` sequences sharing a unified KV cache, one ``llama_batch`` per
scheduler pass holding every sequence's tokens, ``llama_memory_seq_rm`` when a sequence ends.

Everything here runs on the engine's one scheduler thread, except tokenizing and detokenizing,
which read only the vocabulary and are serialized by a lock of their own.
"""

from __future__ import annotations

import collections
import ctypes
import importlib.util
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hunyuan_webui.engine.llama_repack import repack_overrides
from hunyuan_webui.errors import ModelLoadError

log = logging.getLogger(__name__)

INSTALL_HINT = (
    "llama.cpp runs GGUF checkpoints here through the llama-cpp-python package, which is not "
    "installed. Install it into this environment with `pip install llama-cpp-python` (it "
    "compiles llama.cpp, which takes a few minutes; add CMAKE_ARGS=\"-DGGML_CUDA=on\" for an "
    "NVIDIA GPU or CMAKE_ARGS=\"-DGGML_METAL=on\" on a Mac), then start the translator again.")
_LOG_LINES: collections.deque[str] = collections.deque(maxlen=20)  # llama.cpp's last words
_log_callback: Any = None  # the C callback must outlive every call into llama.cpp
_LEVELS = {4: logging.WARNING, 3: logging.INFO}  # ggml's ERROR and WARN; the rest is debug


def available() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def cpu_has_amx() -> bool:
    """Whether the CPU has Intel AMX (server Xeons from Sapphire Rapids on; no laptop CPU).

    There, llama-cpp-python 0.3.36 built for the machine (``-march=native``) puts quantized
    weights (Q8_0, Q4_K_M...) in AMX buffers, and the first decode dies with SIGSEGV in
    ``ggml_backend_amx_mul_mat`` (seen on this project's Xeon build machines; F32 and F16 are not
    affected). Loading without llama.cpp's extra buffer types avoids it."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("flags"):
                    return "amx_int8" in line.split()
    except OSError:  # not Linux
        pass
    return False


def _bindings() -> Any:
    """The ``llama_cpp`` C bindings, with llama.cpp's own logging routed to ours."""
    global _log_callback
    try:
        import llama_cpp
    except ImportError:
        raise ModelLoadError(INSTALL_HINT) from None
    if _log_callback is None:
        def relay(level: int, text: bytes, _: Any) -> None:
            line = text.decode("utf-8", "replace").rstrip()
            if line:
                _LOG_LINES.append(line)
                log.log(_LEVELS.get(level, logging.DEBUG), "llama.cpp: %s", line)

        _log_callback = llama_cpp.llama_log_callback(relay)
        llama_cpp.llama_log_set(_log_callback, ctypes.c_void_p(0))
        llama_cpp.llama_backend_init()
    return llama_cpp


class LlamaModel:
    """A loaded GGUF: model, vocabulary, one context of ``n_seq_max`` sequences and a batch."""

    def __init__(self, path: Path, *, n_ctx: int, n_seq_max: int, n_batch: int, threads: int,
                 gpu: bool) -> None:
        lib = self._lib = _bindings()
        self.path = path
        _LOG_LINES.clear()
        params = lib.llama_model_default_params()
        params.n_gpu_layers = -1 if gpu else 0  # -1: every layer, where the build can offload
        self._repack = None
        if cpu_has_amx():  # see cpu_has_amx: no AMX; the Q4_K repacking given back by name
            params.use_extra_bufts = False
            self._repack = repack_overrides(path)
            if self._repack is not None:
                params.tensor_buft_overrides = self._repack.address
                log.info("llama.cpp: %d Q4_K weights repacked (AMX left out)",
                         len(self._repack.names))
        model = lib.llama_model_load_from_file(str(path).encode(), params)
        if not model:
            raise ModelLoadError(f"llama.cpp could not load {path.name}: {_last_words()}")
        self._model = model
        self._vocab = lib.llama_model_get_vocab(model)
        cparams = lib.llama_context_default_params()
        cparams.n_ctx = n_ctx
        cparams.n_batch = n_batch
        cparams.n_ubatch = min(n_batch, 512)
        cparams.n_seq_max = n_seq_max
        cparams.kv_unified = True  # sequences of any length share one cache of n_ctx cells
        cparams.n_threads = cparams.n_threads_batch = threads
        cparams.no_perf = True
        ctx = lib.llama_init_from_model(model, cparams)
        if not ctx:
            lib.llama_model_free(model)
            raise ModelLoadError(f"llama.cpp could not make a context of {n_ctx} tokens for "
                                 f"{path.name} (lower --context-tokens?): {_last_words()}")
        self._ctx = ctx
        self._memory = lib.llama_get_memory(ctx)
        self.n_ctx = lib.llama_n_ctx(ctx)
        self.n_vocab = lib.llama_vocab_n_tokens(self._vocab)
        self._batch = lib.llama_batch_init(n_batch, 0, 1)
        self._capacity = n_batch
        self._vocab_lock = threading.Lock()
        self._pieces: dict[int, bytes] = {}
        self.gpu = gpu and bool(lib.llama_supports_gpu_offload())

    # -- text ------------------------------------------------------------------------------------
    def special_id(self, text: str) -> int | None:
        """The id of the vocabulary's one token written ``text`` (a special token such as
        ``<|eos|>``), or None when the vocabulary has no such single token."""
        ids = self.tokenize(text, special=True)
        if len(ids) == 1 and self._text(ids[0]) == text:
            return ids[0]
        return None

    def tokenize(self, text: str, *, special: bool = False) -> list[int]:
        """``text`` as token ids; special tokens written out in it are read as such only when
        ``special`` (else a user's ``<|eos|>`` is plain text)."""
        data = text.encode("utf-8")
        size = len(data) + 8
        with self._vocab_lock:
            while True:
                buf = (self._lib.llama_token * size)()
                n = self._lib.llama_tokenize(self._vocab, data, len(data), buf, size, False,
                                              special)
                if n >= 0:
                    return list(buf[:n])
                size = -n

    def detokenize(self, ids: Sequence[int]) -> str:
        """Special tokens are left out (``skip_special_tokens``)."""
        return b"".join(self._piece(i) for i in ids).decode("utf-8", "replace")

    def _piece(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            buf = ctypes.create_string_buffer(64)
            with self._vocab_lock:
                n = self._lib.llama_token_to_piece(self._vocab, token, buf, 64, 0, False)
                if n < 0:
                    buf = ctypes.create_string_buffer(-n)
                    n = self._lib.llama_token_to_piece(self._vocab, token, buf, -n, 0, False)
            piece = self._pieces[token] = buf.raw[:n]
        return piece

    def _text(self, token: int) -> str:
        if token < 0:
            return ""
        return self._lib.llama_vocab_get_text(self._vocab, token).decode("utf-8", "replace")

    # -- decoding --------------------------------------------------------------------------------
    def decode(self, entries: Sequence[tuple[int, int, int, bool]]) -> list[np.ndarray]:
        """One forward pass over ``entries`` (token, position, sequence, wants logits); the
        logits (float32 [n_vocab]) of each entry that wanted them, in order."""
        if len(entries) > self._capacity:
            raise ValueError(f"{len(entries)} tokens do not fit a batch of {self._capacity}")
        batch = self._batch
        for i, (token, pos, seq, wants) in enumerate(entries):
            batch.token[i] = token
            batch.pos[i] = pos
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = wants
        batch.n_tokens = len(entries)
        code = self._lib.llama_decode(self._ctx, batch)
        if code != 0:
            raise RuntimeError(f"llama.cpp could not decode this batch (code {code}): "
                               f"{_last_words()}")
        out = []
        for i, (_, _, _, wants) in enumerate(entries):
            if wants:
                pointer = self._lib.llama_get_logits_ith(self._ctx, i)
                out.append(np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).copy())
        return out

    def forget(self, seq: int, start: int = -1) -> None:
        """Free sequence ``seq``'s cells of the KV cache: all of them, or those at positions from
        ``start`` on (drafts the model did not accept)."""
        if not self._lib.llama_memory_seq_rm(self._memory, seq, start, -1):
            raise RuntimeError(f"llama.cpp could not remove positions {start}- of sequence {seq}")

    def close(self) -> None:
        if self._ctx:
            self._lib.llama_batch_free(self._batch)
            self._lib.llama_free(self._ctx)
            self._lib.llama_model_free(self._model)
            self._ctx = self._model = None


def _last_words() -> str:
    errors = [line for line in _LOG_LINES if "error" in line.lower() or "failed" in line.lower()]
    return "; ".join((errors or list(_LOG_LINES))[-3:]) or "no details"
