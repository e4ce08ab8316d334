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
import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence

import torch

from hunyuan_webui.core.config import PROMPT_OVERHEAD_TOKENS
from hunyuan_webui.core.spec import ModelSpec
from hunyuan_webui.engine.base import (
    DecodingOptions,
    Engine,
    EngineState,
    EngineStatus,
    Stream,
    options_per_prompt,
)
from hunyuan_webui.engine.batch import Batch, Prefill, Row, admit
from hunyuan_webui.engine.loader import LoadedModel, load, pick_device
from hunyuan_webui.engine.sampling import choose, seen_mask
from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter, keeping_tags
from hunyuan_webui.engine.threads import engine_threads, idle_threads_sleep, usable_cores
from hunyuan_webui.errors import (
    BusyError,
    InputTooLongError,
    ModelLoadError,
    NotReadyError,
    TranslatorError,
)

log = logging.getLogger(__name__)

WARMUP_PROMPT = "Translate the following segment into Chinese, without additional explanation.\n\nHello"


class LocalEngine(Engine):
    """Loads ``spec`` in a background thread, warms it, then serves batched streams."""

    def __init__(self, spec: ModelSpec, *, dtype: str = "auto", device: str = "auto",
                 max_batch_size: int = 16, max_queued: int = 256, max_new_tokens: int = 2048,
                 max_input_tokens: int = 4096, warmup: bool = True, cpu_threads: int = 0,
                 prefill_chunk_tokens: int = 512) -> None:
        self.spec = spec
        self.model_id = spec.id
        self.max_batch_size = max_batch_size
        self.max_queued = max_queued
        self.max_new_tokens = max_new_tokens
        self.max_prompt_tokens = max_input_tokens + PROMPT_OVERHEAD_TOKENS
        self.prefill_chunk_tokens = max(1, prefill_chunk_tokens)
        self._requested = (dtype, device)
        self._warmup = warmup
        self._cpu_threads = cpu_threads
        self._state = EngineState.LOADING
        self._reason = ""
        self._loaded: LoadedModel | None = None
        self._decode: Callable[[Sequence[int]], str] = lambda ids: ""  # set once loaded
        self._cond = threading.Condition()
        self._pending: collections.deque[Row] = collections.deque()
        self._batch = Batch()  # its membership changes under _cond; its tensors are the scheduler's
        self._prefilling: Prefill | None = None  # a long prompt being read, a chunk per pass
        self._closing = False
        self.tokens_generated = 0
        self.steps = 0
        self._pass_started: float | None = None  # when the pass under way began (None: idle)
        # Called on the scheduler thread after a prefill and after each pass; the child side of
        # :mod:`hunyuan_webui.engine.process` forwards the new text from it.
        self.after_step: Callable[[], None] | None = None
        self._limit_cpu_threads()
        self._thread = threading.Thread(target=self._main, name="hymt-engine", daemon=True)
        self._thread.start()
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
        loaded = self._loaded
        with self._cond:
            prefilling = self._prefilling
            active = len(self._batch) + (len(prefilling.rows) if prefilling else 0)
            queued = len(self._pending)
        # How long the scheduler has been inside the pass under way: a watchdog's input.
        started = self._pass_started
        stalled = time.monotonic() - started if started is not None else 0.0
        return EngineStatus(
            state=self._state, model=self.model_id, reason=self._reason,
            device=str(loaded.device) if loaded else self._requested[1],
            dtype=loaded.dtype if loaded else self._requested[0],
            active=active, queued=queued, max_batch_size=self.max_batch_size,
            tokens_generated=self.tokens_generated,
            extra={"steps": self.steps, "stalled_s": round(stalled, 3)},
        )

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
        atexit.unregister(self.close)

    # -- admission --------------------------------------------------------------------------------
    def _enqueue(self, prompts: Sequence[str],
                 options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        loaded = self._require_loaded()
        per_prompt = options_per_prompt(prompts, options)
        rendered = [self.render(p) for p in prompts]
        for ids in rendered:
            if len(ids) > self.max_prompt_tokens:
                raise InputTooLongError(
                    f"The prompt is {len(ids)} tokens long; at most {self.max_prompt_tokens} fit.")
        rows = [self._new_row(p, ids, o, loaded) for p, ids, o in zip(prompts, rendered, per_prompt)]
        with self._cond:
            if len(self._pending) + len(rows) > self.max_queued:
                raise BusyError(f"The translator is busy ({len(self._batch)} running, "
                                f"{len(self._pending)} waiting); please try again in a moment.")
            self._pending.extend(rows)
            self._cond.notify_all()
        return [r.stream for r in rows]

    def _new_row(self, prompt: str, ids: list[int], options: DecodingOptions,
                 loaded: LoadedModel) -> Row:
        stream = Stream(prompt, options)
        stream.usage.prompt_tokens = len(ids)
        cap = options.max_new_tokens or 32 + 3 * len(ids)
        generator = None
        if not options.deterministic and options.seed is not None:
            generator = torch.Generator(device=loaded.device).manual_seed(options.seed)
        text: IncrementalText | ReasoningFilter = IncrementalText(self._decode)
        if self.spec.reasoning_tags:
            text = ReasoningFilter(text, self.spec.reasoning_tags)
        return Row(stream=stream, prompt_ids=ids, max_new_tokens=min(cap, self.max_new_tokens),
                   text=text, generator=generator)

    # -- the scheduler thread ---------------------------------------------------------------------
    def _main(self) -> None:
        try:
            self._loaded = load(self.spec, *self._requested)
            tokenizer = self._loaded.tokenizer
            self._decode = keeping_tags(
                lambda t: tokenizer.decode(t, skip_special_tokens=True,
                                           clean_up_tokenization_spaces=False),
                tokenizer, self.spec.reasoning_tags or ())
            self._state = EngineState.WARMING
            if self._warmup:
                self._run_warmup()
            self._state = EngineState.READY
            log.info("engine ready: %s on %s (%s)", self.model_id, self._loaded.device,
                     self._loaded.dtype)
        except ModelLoadError as exc:
            self._fail(exc.user_message)
            return
        except Exception as exc:  # a load failure must reach /ready, not kill the process silently
            log.exception("loading %s failed", self.model_id)
            self._fail(f"Loading {self.model_id} failed: {exc}")
            return
        with torch.inference_mode():
            while self._loop_once(block=True):
                pass
        self._finish_all("cancelled", None)
        if self.after_step is not None:
            self.after_step()

    def _fail(self, reason: str) -> None:
        self._reason = reason
        self._state = EngineState.FAILED
        log.error("engine failed: %s", reason)

    def _run_warmup(self) -> None:
        started = time.perf_counter()
        [stream] = self._enqueue([WARMUP_PROMPT], DecodingOptions(deterministic=True,
                                                                 max_new_tokens=8))
        with torch.inference_mode():
            while not stream.done:
                self._loop_once(block=False)
        log.info("warm-up took %.2fs", time.perf_counter() - started)

    def _loop_once(self, block: bool) -> bool:
        """Prefill what fits in one chunk's token budget, then decode one step. False when closing.

        Prompts that fit the budget are read whole, together, in this pass. A longer one is read
        a chunk per pass between decoding steps (only one such at a time), so neither it nor a
        long queue holds up the rows already running or the short prompts that arrive meanwhile.

        Locking: ``_cond`` guards the queue and the batch's membership. Streams are finished (which
        runs their observers: the service's bookkeeping, cache writes) only after it is released.
        """
        with self._cond:
            while (block and not self._closing and not self._pending and not self._batch
                   and self._prefilling is None):
                self._cond.wait()
            if self._closing:
                return False
            short, long, dropped = self._admit()
            self._pass_started = time.monotonic()
        for seq in dropped:
            seq.stream.finish("cancelled")
        try:
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
        except Exception as exc:  # out of memory or a bug: fail these requests, keep serving
            log.exception("decoding failed")
            for seq in [*short, *([long] if long else [])]:  # admitted, maybe never grouped
                if not seq.stream.done:
                    seq.stream.finish("error", _as_user_error(exc))
            self._finish_all("error", _as_user_error(exc))
        self._stepped()
        self._pass_started = None
        return True

    def _admit(self) -> tuple[list[Row], Row | None, list[Row]]:
        """Called with ``_cond`` held: see :func:`~hunyuan_webui.engine.batch.admit`."""
        reading = len(self._prefilling.rows) if self._prefilling else 0
        return admit(self._pending, self.max_batch_size - len(self._batch) - reading,
                     self.prefill_chunk_tokens, long_allowed=self._prefilling is None)

    def _stepped(self) -> None:
        if self.after_step is not None:
            self.after_step()

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
        batch = self._batch
        out = self._require_loaded().model(**batch.step_inputs())
        logits = out.logits[:, -1, :].float()
        self.steps += 1
        assert batch.seen is not None and batch.mask is not None
        tokens = self._choose(batch.rows, logits, batch.seen)
        batch.next = torch.tensor(tokens, dtype=torch.long, device=batch.mask.device)

    def _choose(self, seqs: list[Row], logits: torch.Tensor, seen: torch.Tensor) -> list[int]:
        """Pick every row's next token at once, mark it seen, and hand each to its stream."""
        tokens = choose(logits, seen, [s.stream.options for s in seqs],
                        [s.generator for s in seqs])
        rows = torch.arange(len(seqs), device=seen.device)
        seen[rows, torch.tensor(tokens, device=seen.device)] = True
        for seq, token in zip(seqs, tokens):
            self._accept(seq, token)
        return tokens

    def _accept(self, seq: Row, token: int) -> None:
        """Stream the text of ``token`` for ``seq`` and note whether the sequence has ended."""
        stream = seq.stream
        if stream.done or stream.cancelled:
            return
        if stream.usage.first_token_at is None:
            stream.usage.first_token_at = time.perf_counter()
        loaded = self._require_loaded()
        if token in loaded.eos_token_ids:
            self._end(seq, "stop")
            return
        seq.generated.append(token)
        stream.usage.completion_tokens += 1
        self.tokens_generated += 1
        stream.push(seq.text.add(token))
        if len(seq.generated) >= seq.max_new_tokens:
            self._end(seq, "length")

    def _end(self, seq: Row, reason: str) -> None:
        seq.stream.push(seq.text.finish())
        seq.stream.finish(reason)

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

    # -- helpers ----------------------------------------------------------------------------------
    def _require_loaded(self) -> LoadedModel:
        if self._loaded is None:
            raise NotReadyError(self._not_ready_message())
        return self._loaded

    def _not_ready_message(self) -> str:
        if self._state is EngineState.FAILED:
            return f"The model could not be loaded: {self._reason}"
        if self._state is EngineState.STOPPED:
            return "The translator is shutting down."
        return f"The model is still {self._state.value}; please wait a moment."


def _as_user_error(exc: BaseException) -> TranslatorError:
    if isinstance(exc, TranslatorError):
        return exc
    if isinstance(exc, torch.OutOfMemoryError) or "out of memory" in str(exc).lower():
        return TranslatorError("The GPU ran out of memory for this batch; please try again "
                               "(or lower --max-batch-size).")
    return TranslatorError(f"Generation failed: {exc}")
