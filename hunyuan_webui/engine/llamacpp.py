"""The llama.cpp engine: GGUF checkpoints (``--engine llamacpp``), batched like our own engine.

It runs inside the supervised child process of :mod:`~hunyuan_webui.engine.process` (the
``llamacpp`` runner), so it gets the same heartbeats, restarts and GIL of its own as the default
engine, and the web server never shares a process with native code that might crash.

Scheduling is continuous batching, llama.cpp-style: every pass builds one ``llama_batch`` holding
one token for each running sequence plus up to ``prefill_chunk_tokens`` prompt tokens of the
sequences being read, and decodes it in one call. Sequences join and leave between passes; each has
its own id in a KV cache shared by all (``kv_unified``), and a sequence is admitted only when the
cells it may need (prompt + its token cap) are free, so a pass never runs out of room.

Fidelity: the prompt is rendered with the GGUF's own chat template (as transformers renders
``tokenizer.chat_template``) and the next token is chosen by :func:`~hunyuan_webui.engine.sampling.choose`,
the in-process engine's own code: repetition penalty over prompt and answer, temperature, top-k,
top-p, a per-request seed. So the model card's decoding means the same on both engines, and greedy
answers are equal wherever the two forward passes agree. Text goes through
:class:`~hunyuan_webui.engine.textstream.IncrementalText`, so every streamed chunk is valid.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from hunyuan_webui.engine.base import (
    DecodingOptions,
    Engine,
    EngineState,
    EngineStatus,
    Stream,
    options_per_prompt,
)
from hunyuan_webui.engine.gguf_files import DEFAULT_QUANT, locate, quant_of
from hunyuan_webui.engine.llama_model import LlamaModel
from hunyuan_webui.engine.local import WARMUP_PROMPT
from hunyuan_webui.engine.sampling import choose
from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter
from hunyuan_webui.engine.threads import engine_threads, idle_threads_sleep, usable_cores
from hunyuan_webui.errors import (
    BusyError,
    InputTooLongError,
    ModelLoadError,
    NotReadyError,
    TranslatorError,
)
from hunyuan_webui.models import ModelSpec
from hunyuan_webui.settings import PROMPT_OVERHEAD_TOKENS

log = logging.getLogger(__name__)


@dataclass(eq=False)
class _Row:
    stream: Stream
    prompt: list[int]
    max_new_tokens: int
    text: IncrementalText | ReasoningFilter
    generator: torch.Generator | None
    seen: torch.Tensor  # [n_vocab] bool: prompt and answer ids, for the repetition penalty
    seq: int = -1  # llama.cpp's sequence id while admitted
    read: int = 0  # prompt tokens in the KV cache
    next: int | None = None  # the token to feed at the next pass
    generated: list[int] = field(default_factory=list)

    @property
    def cells(self) -> int:
        """KV cells this row may need, at most."""
        return len(self.prompt) + self.max_new_tokens


class LlamaCppEngine(Engine):
    """Loads a GGUF in a background thread, warms it, then serves batched streams.

    The keyword arguments are :class:`~hunyuan_webui.engine.local.LocalEngine`'s, plus
    ``gguf_quant`` (which file of a GGUF repository) and ``context_tokens`` (the longest sequence;
    the KV cache holds twice that). ``dtype`` is the file's own: it is not converted."""

    def __init__(self, spec: ModelSpec, *, dtype: str = "auto", device: str = "auto",
                 max_batch_size: int = 16, max_queued: int = 256, max_new_tokens: int = 2048,
                 max_input_tokens: int = 4096, warmup: bool = True, cpu_threads: int = 0,
                 prefill_chunk_tokens: int = 512, gguf_quant: str = DEFAULT_QUANT,
                 context_tokens: int = 0) -> None:
        self.spec = spec
        self.model_id = spec.id
        self.max_batch_size = max_batch_size
        self.max_queued = max_queued
        self.max_new_tokens = max_new_tokens
        self.max_prompt_tokens = max_input_tokens + PROMPT_OVERHEAD_TOKENS
        self.prefill_chunk_tokens = max(1, prefill_chunk_tokens)
        self.context_tokens = context_tokens or self.max_prompt_tokens + max_new_tokens
        self._device, self._quant, self._warmup = device, gguf_quant, warmup
        if dtype not in ("auto", "fp32", "fp16", "bf16"):
            log.warning("--dtype %s is ignored by llama.cpp: a GGUF file is run as quantized "
                        "(choose the file with --gguf-quant)", dtype)
        # The PyTorch engine's policy (engine/threads.py): llama.cpp's CPU build runs on OpenMP too.
        self._threads = engine_threads(cpu_threads)
        self._state = EngineState.LOADING
        self._reason = ""
        self._model: LlamaModel | None = None
        self._cond = threading.Condition()
        self._pending: collections.deque[_Row] = collections.deque()
        self._rows: list[_Row] = []  # admitted: being read or decoded
        self._free_seqs = list(range(max_batch_size))
        self._closing = False
        self.tokens_generated = 0
        self.steps = 0
        self._pass_at = time.monotonic()
        self.after_step: Callable[[], None] | None = None  # see LocalEngine.after_step
        self._thread = threading.Thread(target=self._main, name="hymt-llamacpp", daemon=True)
        self._thread.start()

    # -- public interface -------------------------------------------------------------------------
    def status(self) -> EngineStatus:
        model = self._model
        with self._cond:
            active, queued = len(self._rows), len(self._pending)
        stalled = time.monotonic() - self._pass_at if active or queued else 0.0
        return EngineStatus(
            state=self._state, model=self.model_id, reason=self._reason,
            device=("gpu" if model.gpu else "cpu") + " (llama.cpp)" if model else self._device,
            dtype=quant_of(model.path.name) if model else self._quant,
            active=active, queued=queued, max_batch_size=self.max_batch_size,
            tokens_generated=self.tokens_generated,
            extra={"steps": self.steps, "stalled_s": round(stalled, 3),
                   "gguf": model.path.name if model else "",
                   "kv_cells": model.n_ctx if model else 0})

    def count_tokens(self, text: str) -> int:
        return len(self._require_model().tokenize(text))

    def render(self, prompt: str) -> list[int]:
        kwargs = dict(getattr(self.spec, "chat_template_kwargs", ()) or ())
        return self._require_model().render(prompt, **kwargs)

    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        if self._state is not EngineState.READY:
            raise NotReadyError(self._not_ready_message())
        return self._enqueue(prompts, options)

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout=10)
        self._state = EngineState.STOPPED

    # -- admission --------------------------------------------------------------------------------
    def _enqueue(self, prompts: Sequence[str],
                 options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        model = self._require_model()
        rows = []
        for prompt, opts in zip(prompts, options_per_prompt(prompts, options)):
            ids = self.render(prompt)
            if len(ids) > self.max_prompt_tokens:
                raise InputTooLongError(
                    f"The prompt is {len(ids)} tokens long; at most {self.max_prompt_tokens} fit.")
            rows.append(self._new_row(prompt, ids, opts, model))
        with self._cond:
            if len(self._pending) + len(rows) > self.max_queued:
                raise BusyError(f"The translator is busy ({len(self._rows)} running, "
                                f"{len(self._pending)} waiting); please try again in a moment.")
            self._pending.extend(rows)
            self._cond.notify_all()
        return [r.stream for r in rows]

    def _new_row(self, prompt: str, ids: list[int], options: DecodingOptions,
                 model: LlamaModel) -> _Row:
        stream = Stream(prompt, options)
        stream.usage.prompt_tokens = len(ids)
        cap = min(options.max_new_tokens or 32 + 3 * len(ids), self.max_new_tokens)
        cap = min(cap, model.n_ctx - len(ids))  # what the cache can hold beside the prompt
        generator = None
        if not options.deterministic and options.seed is not None:
            generator = torch.Generator().manual_seed(options.seed)
        seen = torch.zeros(model.n_vocab, dtype=torch.bool)
        seen[torch.tensor(ids, dtype=torch.long)] = True
        text: IncrementalText | ReasoningFilter = IncrementalText(model.detokenize)
        if self.spec.reasoning_tags:  # Hy-MT2-30B-A3B: its <think> block never reaches the user
            text = ReasoningFilter(text, self.spec.reasoning_tags)
        return _Row(stream=stream, prompt=ids, max_new_tokens=max(1, cap),
                    text=text, generator=generator, seen=seen)

    def _admit(self) -> list[_Row]:
        """Move queued rows into free sequences while their cells fit; drop cancelled ones.
        Called with ``_cond`` held; returns the dropped rows (finished outside the lock)."""
        model = self._require_model()
        used = sum(r.cells for r in self._rows)
        dropped = []
        while self._pending and self._free_seqs:
            row = self._pending[0]
            if row.stream.cancelled:
                dropped.append(self._pending.popleft())
                continue
            if used + row.cells > model.n_ctx:
                break  # it waits for cells to free up, in order
            self._pending.popleft()
            row.seq = self._free_seqs.pop()
            used += row.cells
            self._rows.append(row)
        return dropped

    # -- the scheduler thread ---------------------------------------------------------------------
    def _main(self) -> None:
        try:
            self._load()
            self._state = EngineState.WARMING
            if self._warmup:
                self._run_warmup()
            self._state = EngineState.READY
            log.info("engine ready: %s (%s, llama.cpp)", self.model_id, self.status().dtype)
        except ModelLoadError as exc:
            self._fail(exc.user_message)
            return
        except Exception as exc:  # a load failure must reach /ready, not kill the process silently
            log.exception("loading %s failed", self.model_id)
            self._fail(f"Loading {self.model_id} failed: {exc}")
            return
        while self._loop_once(block=True):
            pass
        self._finish_all("cancelled", None)
        if self.after_step is not None:
            self.after_step()
        assert self._model is not None
        self._model.close()

    def _load(self) -> None:
        path = locate(self.spec, self._quant)
        log.info("loading %s with llama.cpp", path)
        log.info("CPU threads: %d of %d cores (idle threads %s)", self._threads, usable_cores(),
                 "sleep" if idle_threads_sleep() else "spin first")
        self._model = LlamaModel(path, n_ctx=2 * self.context_tokens,
                                 n_seq_max=self.max_batch_size,
                                 n_batch=self.prefill_chunk_tokens + self.max_batch_size,
                                 threads=self._threads, gpu=self._device != "cpu")

    def _fail(self, reason: str) -> None:
        self._reason = reason
        self._state = EngineState.FAILED
        log.error("engine failed: %s", reason)

    def _run_warmup(self) -> None:
        started = time.perf_counter()
        [stream] = self._enqueue([WARMUP_PROMPT], DecodingOptions(deterministic=True,
                                                                 max_new_tokens=8))
        while not stream.done:
            self._loop_once(block=False)
        log.info("warm-up took %.2fs", time.perf_counter() - started)

    def _loop_once(self, block: bool) -> bool:
        """Admit, then decode one batch: a token of every running row and the next prompt chunk
        of the rows being read. False when closing."""
        with self._cond:
            while block and not self._closing and not self._pending and not self._rows:
                self._cond.wait()
            if self._closing:
                return False
            dropped = self._admit()
            rows = list(self._rows)
        for row in dropped:
            row.stream.finish("cancelled")
        rows = [r for r in rows if not self._ended(r)]
        if rows:
            try:
                self._step(rows)
            except Exception as exc:  # fail these requests, keep serving
                log.exception("decoding failed")
                error = exc if isinstance(exc, TranslatorError) else \
                    TranslatorError(f"Generation failed: {exc}")
                for row in rows:
                    if not row.stream.done:
                        row.stream.finish("error", error)
                    self._release(row)
        self._pass_at = time.monotonic()
        if self.after_step is not None:
            self.after_step()
        return True

    def _step(self, rows: list[_Row]) -> None:
        model = self._require_model()
        entries: list[tuple[int, int, int, bool]] = []
        asking: list[_Row] = []  # rows whose next token this pass chooses, in entry order
        budget = self.prefill_chunk_tokens
        for row in rows:
            if row.next is not None:  # decoding: its last token, at the next position
                entries.append((row.next, len(row.prompt) + len(row.generated) - 1, row.seq, True))
                asking.append(row)
        for row in rows:
            if row.next is None and budget > 0:  # reading its prompt, a chunk at a time
                take = min(budget, len(row.prompt) - row.read)
                for pos in range(row.read, row.read + take):
                    last = pos == len(row.prompt) - 1
                    entries.append((row.prompt[pos], pos, row.seq, last))
                row.read += take
                budget -= take
                if row.read == len(row.prompt):
                    asking.append(row)
        # Logits come back in entry order; decoding rows' entries precede the prompts'.
        logits = model.decode(entries)
        self.steps += 1
        if not asking:  # only part of a long prompt was read
            return
        tokens = choose(torch.from_numpy(np.stack(logits)), torch.stack([r.seen for r in asking]),
                        [r.stream.options for r in asking], [r.generator for r in asking])
        for row, token in zip(asking, tokens):
            row.seen[token] = True
            self._accept(row, token)

    def _accept(self, row: _Row, token: int) -> None:
        stream = row.stream
        if stream.usage.first_token_at is None:
            stream.usage.first_token_at = time.perf_counter()
        if self._require_model().is_end(token):
            self._end(row, "stop")
            return
        row.generated.append(token)
        row.next = token
        stream.usage.completion_tokens += 1
        self.tokens_generated += 1
        stream.push(row.text.add(token))
        if len(row.generated) >= row.max_new_tokens:
            self._end(row, "length")

    def _end(self, row: _Row, reason: str) -> None:
        row.stream.push(row.text.finish())
        row.stream.finish(reason)
        self._release(row)

    def _ended(self, row: _Row) -> bool:
        """Whether ``row`` has ended (a cancelled one is ended here); frees its sequence."""
        if row.stream.cancelled and not row.stream.done:
            row.stream.finish("cancelled")
        if row.stream.done:
            self._release(row)
            return True
        return False

    def _release(self, row: _Row) -> None:
        with self._cond:
            if row not in self._rows:
                return
            self._rows.remove(row)
        self._require_model().forget(row.seq)
        with self._cond:
            self._free_seqs.append(row.seq)

    def _finish_all(self, reason: str, error: BaseException | None) -> None:
        with self._cond:
            ending = [*self._rows, *self._pending]
            self._pending.clear()
        for row in ending:
            if not row.stream.done:
                row.stream.finish(reason, error)
            self._release(row)

    # -- helpers ----------------------------------------------------------------------------------
    def _require_model(self) -> LlamaModel:
        if self._model is None:
            raise NotReadyError(self._not_ready_message())
        return self._model

    def _not_ready_message(self) -> str:
        if self._state is EngineState.FAILED:
            return f"The model could not be loaded: {self._reason}"
        if self._state is EngineState.STOPPED:
            return "The translator is shutting down."
        return f"The model is still {self._state.value}; please wait a moment."

