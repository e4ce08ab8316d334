"""The llama.cpp engine: GGUF checkpoints (``--engine llamacpp``), batched like our own engine.

It runs inside the supervised child process of :mod:`~hunyuan_webui.engine.process` (the
``llamacpp`` runner), so it gets the same heartbeats, restarts and GIL of its own as the default
engine, and the web server never shares a process with native code that might crash.

Scheduling is continuous batching, llama.cpp-style: every pass builds one ``llama_batch`` holding
one token for each running sequence plus up to ``prefill_chunk_tokens`` prompt tokens of the
sequences being read, and decodes it in one call. Sequences join and leave between passes; each has
its own id in a KV cache shared by all (``kv_unified``), and a sequence is admitted only when the
cells it may need (prompt + its token cap) are free, so a pass never runs out of room.

Fidelity: the prompt is rendered in the project's own chat format for the model
(:mod:`hunyuan_webui.core.chat`, by ``ModelSpec.chat_format``), its special tokens looked up by id
in the GGUF's vocabulary, and an answer ends only at that format's stop token, by id. The GGUF's
embedded chat template and its end-of-generation metadata are never trusted: a converter's wrong
template is a known cause of garbage answers that never end. The next token is chosen by
:func:`~hunyuan_webui.engine.sampling.choose`,
the in-process engine's own code: repetition penalty over prompt and answer, temperature, top-k,
top-p, a per-request seed. So the model card's decoding means the same on both engines, and greedy
answers are equal wherever the two forward passes agree. Text goes through
:class:`~hunyuan_webui.engine.textstream.IncrementalText`, so every streamed chunk is valid.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
import torch

from hunyuan_webui.core.chat import ChatFormat, chat_format
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import DecodingOptions, EngineStatus, Stream
from hunyuan_webui.engine.drafts import NOTHING, Drafter, Proposal
from hunyuan_webui.engine.gguf_files import DEFAULT_QUANT, locate, quant_of
from hunyuan_webui.engine.llama_model import LlamaModel
from hunyuan_webui.engine.sampling import choose
from hunyuan_webui.engine.scheduler import BatchingEngine
from hunyuan_webui.engine.speculative import Planner, RowDrafts, speculation_status, verify
from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter
from hunyuan_webui.engine.threads import engine_threads, idle_threads_sleep, usable_cores
from hunyuan_webui.errors import ModelLoadError, TranslatorError

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
    drafter: Drafter | None = None  # speculative decoding's source of drafts (None: off)

    @property
    def cells(self) -> int:
        """KV cells this row may need, at most (its drafts stay within its token cap)."""
        return len(self.prompt) + self.max_new_tokens

    @property
    def position(self) -> int:
        """Where its next token goes in its sequence."""
        return len(self.prompt) + len(self.generated) - 1


class LlamaCppEngine(BatchingEngine):
    """Loads a GGUF in a background thread, warms it, then serves batched streams (the
    scheduler: :class:`~hunyuan_webui.engine.scheduler.BatchingEngine`).

    The keyword arguments are :class:`~hunyuan_webui.engine.local.LocalEngine`'s, plus
    ``gguf_quant`` (which file of a GGUF repository) and ``context_tokens`` (the longest sequence;
    the KV cache holds twice that). ``dtype`` is the file's own: it is not converted."""

    thread_name = "hymt-llamacpp"

    def __init__(self, spec: ModelSpec, *, dtype: str = "auto", device: str = "auto",
                 max_batch_size: int = 16, max_queued: int = 256, max_new_tokens: int = 2048,
                 max_input_tokens: int = 4096, warmup: bool = True, cpu_threads: int = 0,
                 prefill_chunk_tokens: int = 512, gguf_quant: str = DEFAULT_QUANT,
                 context_tokens: int = 0, speculative: bool = True) -> None:
        super().__init__(spec, device=device, max_batch_size=max_batch_size,
                         max_queued=max_queued, max_new_tokens=max_new_tokens,
                         max_input_tokens=max_input_tokens, warmup=warmup,
                         prefill_chunk_tokens=prefill_chunk_tokens)
        self.context_tokens = context_tokens or self.max_prompt_tokens + max_new_tokens
        self._quant = gguf_quant
        if dtype not in ("auto", "fp32", "fp16", "bf16"):
            log.warning("--dtype %s is ignored by llama.cpp: a GGUF file is run as quantized "
                        "(choose the file with --gguf-quant)", dtype)
        # The PyTorch engine's policy (engine/threads.py): llama.cpp's CPU build runs on OpenMP too.
        self._threads = engine_threads(cpu_threads)
        self._model: LlamaModel | None = None
        self._format: ChatFormat = chat_format(spec.chat_format)
        self._special_ids: dict[str, int] = {}  # the format's special tokens in this vocabulary
        self.stop_ids: frozenset[int] = frozenset()
        self._rows: list[_Row] = []  # admitted: being read or decoded
        self._free_seqs = list(range(max_batch_size))
        # Speculative decoding: each running row's drafts ride in the pass's llama_batch with
        # its next token, and the cells of the rejected ones are removed from its sequence.
        self._planner: Planner | None = Planner(padded=False) if speculative else None
        self._start()

    # -- public interface -------------------------------------------------------------------------
    def status(self) -> EngineStatus:
        model = self._model
        return self._status(
            device=("gpu" if model.gpu else "cpu") + " (llama.cpp)" if model else self._device,
            dtype=quant_of(model.path.name) if model else self._quant,
            extra={"gguf": model.path.name if model else "",
                   "kv_cells": model.n_ctx if model else 0,
                   "speculative": speculation_status(self._planner)})

    def count_tokens(self, text: str) -> int:
        return len(self._require_loaded().tokenize(text))

    def render(self, prompt: str) -> list[int]:
        """Token ids of one user message in the model's chat format, ready for its answer: the
        format's special tokens by id, the message as plain text."""
        model = self._require_loaded()
        ids: list[int] = []
        for text, special in self._format.pieces(prompt):
            ids += [self._special_ids[text]] if special else model.tokenize(text)
        return ids

    # -- admission --------------------------------------------------------------------------------
    def _new_row(self, prompt: str, ids: list[int], options: DecodingOptions) -> _Row:
        model = self._require_loaded()
        stream, max_new_tokens, text = self._row_parts(prompt, ids, options, model.detokenize)
        # what the cache can hold beside the prompt
        max_new_tokens = min(max_new_tokens, model.n_ctx - len(ids))
        generator = None
        if not options.deterministic and options.seed is not None:
            generator = torch.Generator().manual_seed(options.seed)
        seen = torch.zeros(model.n_vocab, dtype=torch.bool)
        seen[torch.tensor(ids, dtype=torch.long)] = True
        drafter = None
        if self._planner is not None:
            hint = model.tokenize(options.draft) if options.draft else []
            drafter = Drafter(ids, hint, banned=frozenset(self._special_ids.values()))
        return _Row(stream=stream, prompt=ids, max_new_tokens=max(1, max_new_tokens),
                    text=text, generator=generator, seen=seen, drafter=drafter)

    def _admit(self) -> tuple[list[_Row], list[_Row]]:
        """Move queued rows into free sequences while their cells fit; drop cancelled ones.
        Called with ``_cond`` held; returns the rows admitted (all that run this pass) and the
        dropped ones (finished outside the lock)."""
        model = self._require_loaded()
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
        return list(self._rows), dropped

    def _running(self) -> int:
        return len(self._rows)

    # -- the scheduler thread ---------------------------------------------------------------------
    def _load(self) -> None:
        path = locate(self.spec, self._quant)
        log.info("loading %s with llama.cpp", path)
        log.info("CPU threads: %d of %d cores (idle threads %s)", self._threads, usable_cores(),
                 "sleep" if idle_threads_sleep() else "spin first")
        drafts = self.max_batch_size * self._planner.max_draft if self._planner else 0
        model = LlamaModel(path, n_ctx=2 * self.context_tokens, n_seq_max=self.max_batch_size,
                           n_batch=self.prefill_chunk_tokens + self.max_batch_size + drafts,
                           threads=self._threads, gpu=self._device != "cpu")
        found = {text: model.special_id(text) for text in self._format.special_tokens}
        missing = [text for text, token in found.items() if token is None]
        if missing:
            model.close()
            raise ModelLoadError(
                f"{path.name} has no {', '.join(missing)} token, which the {self._format.name} "
                f"chat format of {self.spec.public_id} needs: is it a model of that family? (A "
                "hymt.json beside the file can name its chat_format.)")
        self._special_ids = {text: token for text, token in found.items() if token is not None}
        self.stop_ids = frozenset(self._special_ids[text] for text in self._format.stops)
        self._model = model

    def _loaded(self) -> LlamaModel | None:
        return self._model

    def _ready_message(self) -> str:
        return f"engine ready: {self.model_id} ({self.status().dtype}, llama.cpp)"

    def _unload(self) -> None:
        self._require_loaded().close()

    def _step(self, admitted: list[_Row]) -> None:
        """Decode one batch: a token of every running row (with its drafts, if any) and the next
        prompt chunk of the rows being read."""
        rows = [r for r in admitted if not self._ended(r)]
        if not rows:
            return
        decoding = [r for r in rows if r.next is not None]
        proposals = self._plan(decoding)
        drafts = [p.tokens for p in proposals]
        entries, asking, reading = self._entries(rows, decoding, drafts)
        # Logits come back in entry order; decoding rows' entries precede the prompts'.
        started = time.perf_counter()
        logits = self._require_loaded().decode(entries)
        self.steps += 1
        if not asking:  # only part of a long prompt was read
            return
        drafts += [[] for _ in asking[len(decoding):]]
        produced = self._choose(asking, logits, drafts)
        for row, proposal, tokens in zip(asking, proposals, produced):  # the decoding rows
            if proposal.tokens:
                self._settle(row, proposal, len(tokens) - 1)
        chosen = time.perf_counter()
        for row, tokens in zip(asking, produced):
            for token in tokens:
                row.seen[token] = True
                self._accept(row, token)
        if self._planner is not None:
            self._planner.steps += any(drafts)
            if not reading:  # a pass of decoding alone: what it cost
                self._planner.cost.observe(len(entries), chosen - started, rows=len(asking))
                self._planner.cost.per_token(sum(map(len, produced)),
                                             time.perf_counter() - chosen)

    def _entries(self, rows: list[_Row], decoding: list[_Row], drafts: list[list[int]]
                 ) -> tuple[list[tuple[int, int, int, bool]], list[_Row], bool]:
        """The pass's batch: each decoding row's last token and drafts at its next positions,
        then prompt chunks within the budget; the rows whose next token it chooses, in entry
        order; and whether it reads prompts."""
        entries: list[tuple[int, int, int, bool]] = []
        asking: list[_Row] = list(decoding)
        for row, run in zip(decoding, drafts):
            entries += [(token, row.position + i, row.seq, True)
                        for i, token in enumerate([row.next, *run])]
        budget = self.prefill_chunk_tokens
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
        return entries, asking, budget < self.prefill_chunk_tokens

    def _plan(self, rows: list[_Row]) -> list[Proposal]:
        """Each decoding row's drafts for this pass (engine/speculative.py)."""
        if self._planner is None:
            return [NOTHING for _ in rows]
        return self._planner.plan([
            RowDrafts(row.drafter, row.generated, row.max_new_tokens - len(row.generated))
            if row.drafter is not None and row.generated else None for row in rows])

    def _choose(self, rows: list[_Row], logits: list[np.ndarray],
                drafts: list[list[int]]) -> list[list[int]]:
        """The tokens each row produces: one (plain decoding, the model card's choice), or its
        accepted drafts and the model's token after them."""
        seen = torch.stack([r.seen for r in rows])
        options = [r.stream.options for r in rows]
        generators = [r.generator for r in rows]
        if not any(drafts):
            return [[t] for t in choose(torch.from_numpy(np.stack(logits)), seen, options,
                                        generators)]
        width = 1 + max(len(run) for run in drafts)
        table = torch.zeros((len(rows), width, len(logits[0])), dtype=torch.float32)
        at = 0
        for i, run in enumerate(drafts):
            for depth in range(1 + len(run)):
                table[i, depth] = torch.from_numpy(logits[at])
                at += 1
        return verify(table, drafts, seen, options, generators)

    def _settle(self, row: _Row, proposal: Proposal, accepted: int) -> None:
        """After verifying ``row``'s drafts: the cells of the rejected ones leave its sequence."""
        assert self._planner is not None and row.drafter is not None
        self._planner.settle(row.drafter, proposal, accepted)
        if accepted < len(proposal.tokens):
            self._require_loaded().forget(row.seq, row.position + 1 + accepted)

    def _step_failed(self, admitted: list[_Row], error: TranslatorError) -> None:
        for row in admitted:
            if not row.stream.done:
                row.stream.finish("error", error)
            self._release(row)

    def _is_end(self, token: int) -> bool:
        return token in self.stop_ids  # the format's stop tokens, not the GGUF's own EOG list

    def _on_token(self, row: _Row, token: int) -> None:
        row.next = token  # fed at the next pass

    def _released(self, row: _Row) -> None:
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
        self._require_loaded().forget(row.seq)
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
