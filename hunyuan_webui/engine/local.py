"""The in-process engine: one model, one thread, continuous batching.

Gradio cannot batch a streaming function, so batching lives here. One scheduler thread owns the
model. Requests wait in a bounded queue; between two decoding steps, waiting sequences are
prefilled together (left-padded) and merged into the running batch, so a new request never waits
for a whole batch to finish. Each step decodes one token for every running sequence; a sequence
that ends, is cancelled (Stop button, closed tab, disconnected client) or fails leaves the batch
before the next step, and columns that have become pure padding are trimmed.

The key/value cache is transformers' ``DynamicCache`` with layers that append in place
(:mod:`hunyuan_webui.engine.kvcache`); merging and removing rows only slices its per-layer tensors, and the 2-D attention mask plus explicit position ids keep every row's
attention exactly what it would be alone. On a CPU this padded dynamic batch measured faster than
transformers' paged continuous batching (see docs/PERFORMANCE.md).
"""

from __future__ import annotations

import atexit
import logging
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import torch

from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import DecodingOptions, EngineStatus
from hunyuan_webui.engine.batch import Batch, Prefill, Row, admit
from hunyuan_webui.engine.drafts import NOTHING, Drafter, Proposal
from hunyuan_webui.engine.loader import LoadedModel, load, pick_device
from hunyuan_webui.engine.sampling import choose, seen_mask
from hunyuan_webui.engine.scheduler import WARMUP_PROMPT, BatchingEngine
from hunyuan_webui.engine.speculative import Planner, RowDrafts, speculation_status, verify
from hunyuan_webui.engine.textstream import keeping_tags
from hunyuan_webui.engine.threads import engine_threads, idle_threads_sleep, usable_cores
from hunyuan_webui.errors import TranslatorError

log = logging.getLogger(__name__)

__all__ = ["WARMUP_PROMPT", "LocalEngine"]


class LocalEngine(BatchingEngine):
    """Loads ``spec`` in a background thread, warms it, then serves batched streams (the
    scheduler: :class:`~hunyuan_webui.engine.scheduler.BatchingEngine`)."""

    def __init__(self, spec: ModelSpec, *, dtype: str = "auto", device: str = "auto",
                 max_batch_size: int = 16, max_queued: int = 256, max_new_tokens: int = 2048,
                 max_input_tokens: int = 4096, warmup: bool = True, cpu_threads: int = 0,
                 prefill_chunk_tokens: int = 512, speculative: bool = True) -> None:
        super().__init__(spec, device=device, max_batch_size=max_batch_size,
                         max_queued=max_queued, max_new_tokens=max_new_tokens,
                         max_input_tokens=max_input_tokens, warmup=warmup,
                         prefill_chunk_tokens=prefill_chunk_tokens)
        self._requested = (dtype, device)
        # Speculative decoding (engine/speculative.py): drafts verified in the batch's own step.
        self._planner: Planner | None = Planner() if speculative else None
        self._banned: frozenset[int] = frozenset()  # special tokens: never drafted
        self._cpu_threads = cpu_threads
        self._model: LoadedModel | None = None
        self._decode: Callable[[Sequence[int]], str] = lambda ids: ""  # set once loaded
        self._batch = Batch()  # its membership changes under _cond; its tensors are the scheduler's
        self._prefilling: Prefill | None = None  # a long prompt being read, a chunk per pass
        self._limit_cpu_threads()
        self._start()
        # A daemon thread killed inside a torch call at interpreter exit aborts the process
        # ("terminate called without an active exception"): stop it cleanly first.
        atexit.register(self.close)

    def _limit_cpu_threads(self) -> None:
        """Size torch's thread pool by :func:`~hunyuan_webui.engine.threads.engine_threads` (why:
        that module). Set here, on the constructing thread: torch's thread pool must not be
        resized from the engine's."""
        try:
            on_cpu = pick_device(self._requested[1]).type == "cpu"
        except TranslatorError:
            return  # the loader reports the bad device
        if on_cpu:
            threads = engine_threads(self._cpu_threads)
            torch.set_num_threads(threads)
            log.info("CPU threads: %d of %d cores (idle threads %s)", threads, usable_cores(),
                     "sleep" if idle_threads_sleep() else "spin first")

    # -- public interface -------------------------------------------------------------------------
    def status(self) -> EngineStatus:
        loaded = self._model
        exact = loaded.decode.multi_rows if loaded is not None and loaded.decode else None
        extra: dict[str, Any] = {"speculative": speculation_status(self._planner, exact)}
        if loaded is not None and loaded.dtype_note:
            extra["dtype_reason"] = loaded.dtype_note
        return self._status(device=str(loaded.device) if loaded else self._requested[1],
                            dtype=loaded.dtype if loaded else self._requested[0], extra=extra)

    def count_tokens(self, text: str) -> int:
        loaded = self._require_loaded()
        return len(loaded.tokenizer.encode(text, add_special_tokens=False))

    def render(self, prompt: str) -> list[int]:
        """Token ids of one user message in the checkpoint's own chat format."""
        tokenizer = self._require_loaded().tokenizer
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                            add_generation_prompt=True, tokenize=True,
                                            return_dict=False,
                                            **dict(self.spec.chat_template_kwargs))
        if isinstance(ids, dict) or hasattr(ids, "input_ids"):
            ids = ids["input_ids"]
        return [int(i) for i in ids]

    def close(self) -> None:
        super().close()
        atexit.unregister(self.close)

    # -- admission --------------------------------------------------------------------------------
    def _new_row(self, prompt: str, ids: list[int], options: DecodingOptions) -> Row:
        stream, max_new_tokens, text = self._row_parts(prompt, ids, options, self._decode)
        loaded = self._require_loaded()
        generator = None
        if not options.deterministic and options.seed is not None:
            generator = torch.Generator(device=loaded.device).manual_seed(options.seed)
        drafter = None
        if self._planner is not None:
            hint = (loaded.tokenizer.encode(options.draft, add_special_tokens=False)
                    if options.draft else [])
            drafter = Drafter(ids, hint, banned=self._banned)
        return Row(stream=stream, prompt_ids=ids, max_new_tokens=max_new_tokens, text=text,
                   generator=generator, drafter=drafter)

    def _admit(self) -> tuple[tuple[list[Row], Row | None], list[Row]]:
        """Called with ``_cond`` held: see :func:`~hunyuan_webui.engine.batch.admit`."""
        reading = len(self._prefilling.rows) if self._prefilling else 0
        short, long, dropped = admit(self._pending,
                                     self.max_batch_size - len(self._batch) - reading,
                                     self.prefill_chunk_tokens,
                                     long_allowed=self._prefilling is None)
        return (short, long), dropped

    def _running(self) -> int:
        return len(self._batch) + (len(self._prefilling.rows) if self._prefilling else 0)

    # -- the scheduler thread ---------------------------------------------------------------------
    def _load(self) -> None:
        loaded = load(self.spec, *self._requested)
        tokenizer = loaded.tokenizer
        self._decode = keeping_tags(
            lambda t: tokenizer.decode(t, skip_special_tokens=True,
                                       clean_up_tokenization_spaces=False),
            tokenizer, self.spec.reasoning_tags or ())
        self._banned = frozenset(tokenizer.all_special_ids) | loaded.eos_token_ids
        if self._planner is not None and loaded.decode is not None:  # what its direct step serves
            self._planner.max_step_tokens = loaded.decode.rows.stop - 1
        self._model = loaded

    def _loaded(self) -> LoadedModel | None:
        return self._model

    def _ready_message(self) -> str:
        loaded = self._require_loaded()
        return f"engine ready: {self.model_id} on {loaded.device} ({loaded.dtype})"

    def _inference(self) -> AbstractContextManager[Any]:
        return torch.inference_mode()

    def _step(self, admitted: tuple[list[Row], Row | None]) -> None:
        """Prefill what fits in one chunk's token budget, then decode one step.

        Prompts that fit the budget are read whole, together, in this pass. A longer one is read
        a chunk per pass between decoding steps (only one such at a time), so neither it nor a
        long queue holds up the rows already running or the short prompts that arrive meanwhile.
        """
        short, long = admitted
        merged = False
        if long is not None:
            group = self._start_prefill([long])
            with self._cond:
                self._prefilling = group
        if short:
            merged = self._prefill_chunk(self._start_prefill(short))
        if self._prefilling is not None:
            merged = self._prefill_chunk(self._prefilling) or merged
        self._drop_finished()
        if merged:
            self._stepped()  # first tokens go out now, not after the next step too
        if self._batch:
            self._decode_step()
            self._drop_finished()

    def _step_failed(self, admitted: tuple[list[Row], Row | None],
                     error: TranslatorError) -> None:
        short, long = admitted
        for seq in [*short, *([long] if long else [])]:  # admitted, maybe never grouped
            if not seq.stream.done:
                seq.stream.finish("error", error)
        self._finish_all("error", error)

    def _user_error(self, exc: BaseException) -> TranslatorError:
        if not isinstance(exc, TranslatorError) and (
                isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower()):
            return TranslatorError("The GPU ran out of memory for this batch; please try again "
                                   "(or lower --max-batch-size).")
        return super()._user_error(exc)

    def _start_prefill(self, rows: list[Row]) -> Prefill:
        from hunyuan_webui.engine.kvcache import growing_cache

        loaded = self._require_loaded()
        pad = loaded.tokenizer.pad_token_id
        pad = pad if pad is not None else next(iter(loaded.eos_token_ids))
        return Prefill.start(rows, pad, loaded.device, growing_cache(loaded.model.config))

    def _prefill_chunk(self, group: Prefill) -> bool:
        """Read the next chunk of ``group``'s prompts; after the last one, choose each row's first
        token and merge the group into the running batch (True)."""
        logits = group.read(self._require_loaded().model, self.prefill_chunk_tokens)
        if logits is None:
            return False
        seen = seen_mask(group.input_ids, group.mask, logits.shape[-1])
        tokens = self._choose(group.rows, logits, seen)
        with self._cond:
            if self._prefilling is group:
                self._prefilling = None
            self._batch.merge(group, torch.tensor(tokens, dtype=torch.long,
                                                  device=group.mask.device), seen)
        return True

    def _decode_step(self) -> None:
        """One step: every row's next token, with its drafts where the planner sends some
        (speculative decoding, engine/speculative.py: the drafts the model agrees with are
        accepted, the rest rolled back out of the cache)."""
        batch, planner = self._batch, self._planner
        assert batch.seen is not None and batch.mask is not None
        proposals = self._plan()
        drafts = [p.tokens for p in proposals]
        started = time.perf_counter()
        if any(drafts):
            inputs = batch.verify_inputs(drafts)
            logits = self._require_loaded().logits(inputs).float()
        else:
            logits = self._require_loaded().next_logits(batch.step_inputs()).float()[:, None]
        produced = verify(logits, drafts, batch.seen, [r.stream.options for r in batch.rows],
                          [r.generator for r in batch.rows])
        self.steps += 1
        if any(drafts):
            assert planner is not None
            planner.steps += 1
            batch.settle(logits.shape[1], [len(tokens) for tokens in produced])
            if batch.holey():
                batch.compact()
            for row, proposal, tokens in zip(batch.rows, proposals, produced):
                if row.drafter is not None:
                    planner.settle(row.drafter, proposal, len(tokens) - 1)
        chosen = time.perf_counter()
        for row, tokens in zip(batch.rows, produced):
            for token in tokens:
                self._accept(row, token)
        if planner is not None:  # fillers are read too
            planner.cost.observe(logits.shape[0] * logits.shape[1], chosen - started,
                                 rows=logits.shape[0])
            planner.cost.per_token(sum(map(len, produced)), time.perf_counter() - chosen)
        batch.next = torch.tensor([tokens[-1] for tokens in produced], dtype=torch.long,
                                  device=batch.mask.device)

    def _plan(self) -> list[Proposal]:
        """Each row's drafts for this step (none at all: a plain step)."""
        rows = self._batch.rows
        if self._planner is None:
            return [NOTHING for _ in rows]
        return self._planner.plan([
            RowDrafts(row.drafter, row.generated, row.max_new_tokens - len(row.generated))
            if row.drafter is not None and row.generated else None for row in rows])

    def _choose(self, seqs: list[Row], logits: torch.Tensor, seen: torch.Tensor) -> list[int]:
        """Pick every row's next token at once, mark it seen, and hand each to its stream."""
        tokens = choose(logits, seen, [s.stream.options for s in seqs],
                        [s.generator for s in seqs])
        rows = torch.arange(len(seqs), device=seen.device)
        seen[rows, torch.tensor(tokens, device=seen.device)] = True
        for seq, token in zip(seqs, tokens):
            self._accept(seq, token)
        return tokens

    def _is_end(self, token: int) -> bool:
        return token in self._require_loaded().eos_token_ids

    # -- batch bookkeeping ------------------------------------------------------------------------
    def _drop_finished(self) -> None:
        """Remove ended and cancelled rows (finished outside the lock) from the batch."""
        for row in self._batch.rows:
            if row.stream.cancelled and not row.stream.done:
                row.stream.finish("cancelled")
        keep = [i for i, row in enumerate(self._batch.rows) if not row.stream.done]
        if len(keep) < len(self._batch):
            with self._cond:
                self._batch.keep(keep)

    def _finish_all(self, reason: str, error: BaseException | None) -> None:
        with self._cond:
            ending = [*self._batch.clear(), *(self._prefilling.rows if self._prefilling else [])]
            if reason != "error":  # after a failed step the queue is served on
                ending += self._pending
                self._pending.clear()
            self._prefilling = None
        for seq in ending:  # outside the lock: finishing runs the streams' observers
            if not seq.stream.done:
                seq.stream.finish(reason, error)
