"""The continuous-batching scheduler both of our own engines run: one thread owns the model.

Requests wait in a bounded queue (``--max-queued``; beyond it, "busy"); between two passes the
scheduler admits waiting sequences into the running batch, so a new request never waits for a
whole batch to finish, and a sequence that ends, is cancelled (Stop button, closed tab,
disconnected client) or fails leaves before the next pass. The engine loads its model on the
scheduler thread, warms it with one short greedy request, and only then answers requests.

:class:`BatchingEngine` is that scaffolding: submission, admission's bounds, warm-up, the
not-ready and busy messages, token acceptance and finishing. An engine specialises it with what
differs: how it loads (:meth:`~BatchingEngine._load`), renders a prompt, builds a row, admits
(:meth:`~BatchingEngine._admit`) and runs one pass (:meth:`~BatchingEngine._step`):
:class:`~hunyuan_webui.engine.local.LocalEngine` (transformers, a padded dynamic batch) and
:class:`~hunyuan_webui.engine.llamacpp.LlamaCppEngine` (llama.cpp, one ``llama_batch`` a pass).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
import time
from abc import abstractmethod
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

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
from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter
from hunyuan_webui.errors import (
    BusyError,
    InputTooLongError,
    ModelLoadError,
    NotReadyError,
    TranslatorError,
)

log = logging.getLogger(__name__)

WARMUP_PROMPT = "Translate the following segment into Chinese, without additional explanation.\n\nHello"


class Row(Protocol):
    """What the scheduler needs of a sequence; each engine's row has more."""

    stream: Stream
    max_new_tokens: int
    text: IncrementalText | ReasoningFilter
    generated: list[int]


class BatchingEngine(Engine):
    """Loads a model on its scheduler thread, warms it, then serves batched streams.

    Locking: ``_cond`` guards the queue, the admitted rows and ``_closing``. Streams are finished
    (which runs their observers: the service's bookkeeping, cache writes) only outside it.
    """

    thread_name = "hymt-engine"

    def __init__(self, spec: ModelSpec, *, device: str, max_batch_size: int, max_queued: int,
                 max_new_tokens: int, max_input_tokens: int, warmup: bool,
                 prefill_chunk_tokens: int) -> None:
        self.spec = spec
        self.model_id = spec.id
        self.max_batch_size = max_batch_size
        self.max_queued = max_queued
        self.max_new_tokens = max_new_tokens
        self.max_prompt_tokens = max_input_tokens + PROMPT_OVERHEAD_TOKENS
        self.prefill_chunk_tokens = max(1, prefill_chunk_tokens)
        self._device, self._warmup = device, warmup
        self._state = EngineState.LOADING
        self._reason = ""
        self._cond = threading.Condition()
        self._pending: collections.deque[Any] = collections.deque()
        self._closing = False
        self.tokens_generated = 0
        self.steps = 0
        self._pass_started: float | None = None  # when the pass under way began (None: idle)
        # Called on the scheduler thread after a prefill and after each pass; the child side of
        # :mod:`hunyuan_webui.engine.process` forwards the new text from it.
        self.after_step: Callable[[], None] | None = None

    def _start(self) -> None:
        """Start the scheduler thread: the last step of a subclass's ``__init__``."""
        self._thread = threading.Thread(target=self._main, name=self.thread_name, daemon=True)
        self._thread.start()

    # -- what an engine specialises ---------------------------------------------------------------
    @abstractmethod
    def _load(self) -> None:
        """Load the model (on the scheduler thread); raise ModelLoadError with advice."""

    @abstractmethod
    def _loaded(self) -> Any:
        """The loaded model, or None before it is."""

    @abstractmethod
    def _new_row(self, prompt: str, ids: list[int], options: DecodingOptions) -> Any:
        """A queued sequence for ``ids``, the rendered ``prompt`` (see :meth:`_row_parts`)."""

    @abstractmethod
    def _admit(self) -> tuple[Any, list[Any]]:
        """Called with ``_cond`` held: move queued rows in; (what this pass reads and decodes,
        the cancelled rows dropped from the queue)."""

    @abstractmethod
    def _step(self, admitted: Any) -> None:
        """One pass: read prompt chunks, decode a token of every running row, accept them."""

    @abstractmethod
    def _step_failed(self, admitted: Any, error: TranslatorError) -> None:
        """After a pass raised: end the rows it touched (the queue is served on)."""

    @abstractmethod
    def _running(self) -> int:
        """Called with ``_cond`` held: the rows admitted (being read or decoded)."""

    @abstractmethod
    def _is_end(self, token: int) -> bool:
        """Whether ``token`` ends a sequence (the checkpoint's end-of-turn tokens)."""

    @abstractmethod
    def _finish_all(self, reason: str, error: BaseException | None) -> None:
        """End every admitted row and, unless ``reason`` is "error", every queued one."""

    def _on_token(self, row: Any, token: int) -> None:
        """After ``token`` joined ``row``'s answer (llama.cpp feeds it at the next pass)."""

    def _released(self, row: Any) -> None:
        """After ``row`` ended (llama.cpp frees its sequence)."""

    def _unload(self) -> None:
        """After the scheduler's last pass."""

    def _inference(self) -> AbstractContextManager[Any]:
        """Around the passes (transformers: ``torch.inference_mode``)."""
        return contextlib.nullcontext()

    def _ready_message(self) -> str:
        return f"engine ready: {self.model_id}"

    def _user_error(self, exc: BaseException) -> TranslatorError:
        if isinstance(exc, TranslatorError):
            return exc
        return TranslatorError(f"Generation failed: {exc}")

    # -- public interface -------------------------------------------------------------------------
    def _status(self, *, device: str, dtype: str, extra: dict[str, Any]) -> EngineStatus:
        with self._cond:
            active, queued = self._running(), len(self._pending)
        # How long the scheduler has been inside the pass under way: a watchdog's input.
        started = self._pass_started
        stalled = time.monotonic() - started if started is not None else 0.0
        return EngineStatus(
            state=self._state, model=self.model_id, reason=self._reason, device=device,
            dtype=dtype, active=active, queued=queued, max_batch_size=self.max_batch_size,
            tokens_generated=self.tokens_generated,
            extra={"steps": self.steps, "stalled_s": round(stalled, 3), **extra})

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
        self._require_loaded()
        rows = []
        for prompt, opts in zip(prompts, options_per_prompt(prompts, options)):
            ids = self.render(prompt)
            if len(ids) > self.max_prompt_tokens:
                raise InputTooLongError(
                    f"The prompt is {len(ids)} tokens long; at most {self.max_prompt_tokens} fit.")
            rows.append(self._new_row(prompt, ids, opts))
        with self._cond:
            if len(self._pending) + len(rows) > self.max_queued:
                raise BusyError(f"The translator is busy ({self._running()} running, "
                                f"{len(self._pending)} waiting); please try again in a moment.")
            self._pending.extend(rows)
            self._cond.notify_all()
        return [r.stream for r in rows]

    def _row_parts(self, prompt: str, ids: list[int], options: DecodingOptions,
                   detokenize: Callable[[Sequence[int]], str]
                   ) -> tuple[Stream, int, IncrementalText | ReasoningFilter]:
        """What every row starts with: its stream, its ``max_new_tokens`` (the request's, else
        three times the prompt and a little; at most the engine's) and its text."""
        stream = Stream(prompt, options)
        stream.usage.prompt_tokens = len(ids)
        max_new_tokens = min(options.max_new_tokens or 32 + 3 * len(ids), self.max_new_tokens)
        text: IncrementalText | ReasoningFilter = IncrementalText(detokenize)
        if self.spec.reasoning_tags:  # Hy-MT2-30B-A3B: its <think> block never reaches the user
            text = ReasoningFilter(text, self.spec.reasoning_tags)
        return stream, max_new_tokens, text

    # -- the scheduler thread ---------------------------------------------------------------------
    def _main(self) -> None:
        try:
            self._load()
            self._state = EngineState.WARMING
            if self._warmup:
                self._run_warmup()
            self._state = EngineState.READY
            log.info(self._ready_message())
        except ModelLoadError as exc:
            self._fail(exc.user_message)
            return
        except Exception as exc:  # a load failure must reach /ready, not kill the process silently
            log.exception("loading %s failed", self.model_id)
            self._fail(f"Loading {self.model_id} failed: {exc}")
            return
        with self._inference():
            while self._loop_once(block=True):
                pass
        self._finish_all("cancelled", None)
        self._stepped()
        self._unload()

    def _fail(self, reason: str) -> None:
        self._reason = reason
        self._state = EngineState.FAILED
        log.error("engine failed: %s", reason)

    def _run_warmup(self) -> None:
        started = time.perf_counter()
        [stream] = self._enqueue([WARMUP_PROMPT], DecodingOptions(deterministic=True,
                                                                 max_new_tokens=8))
        with self._inference():
            while not stream.done:
                self._loop_once(block=False)
        log.info("warm-up took %.2fs", time.perf_counter() - started)

    def _loop_once(self, block: bool) -> bool:
        """Admit, then run one pass. False when closing."""
        with self._cond:
            while block and not self._closing and not self._pending and not self._busy():
                self._cond.wait()
            if self._closing:
                return False
            admitted, dropped = self._admit()
            self._pass_started = time.monotonic()
        for row in dropped:
            row.stream.finish("cancelled")
        try:
            self._step(admitted)
        except Exception as exc:  # out of memory or a bug: fail these requests, keep serving
            log.exception("decoding failed")
            self._step_failed(admitted, self._user_error(exc))
        self._stepped()
        self._pass_started = None
        return True

    def _busy(self) -> bool:
        """Called with ``_cond`` held: whether admitted rows want another pass."""
        return self._running() > 0

    def _stepped(self) -> None:
        if self.after_step is not None:
            self.after_step()

    def _accept(self, row: Row, token: int) -> None:
        """Stream the text of ``token`` for ``row`` and note whether the sequence has ended."""
        stream = row.stream
        if stream.done or stream.cancelled:
            return
        if stream.usage.first_token_at is None:
            stream.usage.first_token_at = time.perf_counter()
        if self._is_end(token):
            self._end(row, "stop")
            return
        row.generated.append(token)
        self._on_token(row, token)
        stream.usage.completion_tokens += 1
        self.tokens_generated += 1
        stream.push(row.text.add(token))
        if len(row.generated) >= row.max_new_tokens:
            self._end(row, "length")

    def _end(self, row: Row, reason: str) -> None:
        row.stream.push(row.text.finish())
        row.stream.finish(reason)
        self._released(row)

    # -- helpers ----------------------------------------------------------------------------------
    def _require_loaded(self) -> Any:
        loaded = self._loaded()
        if loaded is None:
            raise NotReadyError(self._not_ready_message())
        return loaded

    def _not_ready_message(self) -> str:
        if self._state is EngineState.FAILED:
            return f"The model could not be loaded: {self._reason}"
        if self._state is EngineState.STOPPED:
            return "The translator is shutting down."
        return f"The model is still {self._state.value}; please wait a moment."
