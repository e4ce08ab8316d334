"""Engines for tests that need no model: each subclasses the real ``Engine`` base class, so it
cannot drift from the interface the service and the web layer use."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Sequence
from typing import Any

from hunyuan_webui.engine import Engine, EngineState, EngineStatus, Stream
from hunyuan_webui.engine.base import options_per_prompt
from hunyuan_webui.errors import EngineError, NotReadyError

LOADING = "The model is still loading; please wait a moment."


class LoadingEngine(Engine):
    """An engine that never finishes loading: what the app serves before the model is warm."""

    def __init__(self, model_id: str = "tencent/Hunyuan-MT-7B", spec: Any = None) -> None:
        self.model_id = model_id
        if spec is not None:
            self.spec = spec

    def submit(self, prompts: Sequence[str], options: Any) -> list[Stream]:
        raise NotReadyError(LOADING)

    def status(self) -> EngineStatus:
        return EngineStatus(state=EngineState.LOADING, model=self.model_id)

    def count_tokens(self, text: str) -> int:
        raise NotReadyError(LOADING)


class FakeEngine(Engine):
    """Answers each prompt with its last line upper-cased (a stand-in translation)."""

    model_id = "tencent/Hunyuan-MT-7B"

    def status(self) -> EngineStatus:
        return EngineStatus(EngineState.READY, self.model_id)

    def count_tokens(self, text: str) -> int:
        return len(text)

    @staticmethod
    def answer(stream: Stream) -> None:
        stream.push(stream.prompt.splitlines()[-1].upper())
        stream.finish("stop")


class InstantEngine(FakeEngine):
    """Every answer has ended before ``submit`` returns, as a one-token answer from a fast engine
    (or a pipe message processed first) can."""

    def submit(self, prompts_: Sequence[str], options: Any) -> list[Stream]:
        streams = [Stream(p, o) for p, o in zip(prompts_, options_per_prompt(prompts_, options))]
        for stream in streams:
            self.answer(stream)
        return streams


class PipeEngine(FakeEngine):
    """Like the child-process engine: ``submit`` waits for a reply that one receiver thread
    delivers, and that same thread also ends earlier streams (running their observers), in the
    order its messages arrive."""

    def __init__(self) -> None:
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.open: list[Stream] = []
        threading.Thread(target=self._receive, daemon=True).start()

    def submit(self, prompts_: Sequence[str], options: Any) -> list[Stream]:
        streams = [Stream(p, o) for p, o in zip(prompts_, options_per_prompt(prompts_, options))]
        replied = threading.Event()
        self.inbox.put(self._end_open)  # earlier answers arrive before this reply
        self.inbox.put(lambda: self.open.extend(streams))
        self.inbox.put(replied.set)
        if not replied.wait(5):
            raise EngineError("The engine process did not answer within 5s.")
        return streams

    def _end_open(self) -> None:
        ending, self.open = self.open, []
        for stream in ending:
            self.answer(stream)

    def _receive(self) -> None:
        while True:
            try:
                self.inbox.get(timeout=0.3)()
            except queue.Empty:
                self._end_open()


class TypingEngine(FakeEngine):
    """Types each answer a character every ``delay`` seconds, on its own thread: a model decoding
    at a steady pace, for what a reader sees while the text grows."""

    def __init__(self, delay: float = 0.01) -> None:
        self.delay = delay

    def submit(self, prompts_: Sequence[str], options: Any) -> list[Stream]:
        streams = [Stream(p, o) for p, o in zip(prompts_, options_per_prompt(prompts_, options))]
        for stream in streams:
            threading.Thread(target=self._type, args=(stream,), daemon=True).start()
        return streams

    def _type(self, stream: Stream) -> None:
        for char in stream.prompt.splitlines()[-1].upper():
            if stream.cancelled:
                break
            stream.push(char)
            time.sleep(self.delay)
        stream.finish("stop")


class ScriptedEngine(FakeEngine):
    """Answers as ``script(prompt, options)`` says, a character at a time on its own thread
    (``delay`` apart), and stops when the stream is cancelled: a model that misbehaves exactly as
    a test wants (a loop that only a stronger repetition penalty ends, the wrong language in one
    prompt wording). Records every prompt and options it was given."""

    def __init__(self, script: Any, delay: float = 0.0) -> None:
        self.script = script
        self.delay = delay
        self.calls: list[tuple[str, Any]] = []
        self.cancelled: list[Stream] = []

    def submit(self, prompts_: Sequence[str], options: Any) -> list[Stream]:
        streams = [Stream(p, o) for p, o in zip(prompts_, options_per_prompt(prompts_, options))]
        for stream in streams:
            self.calls.append((stream.prompt, stream.options))
            threading.Thread(target=self._type, args=(stream,), daemon=True).start()
        return streams

    def _type(self, stream: Stream) -> None:
        for char in self.script(stream.prompt, stream.options):
            if stream.cancelled:
                self.cancelled.append(stream)
                stream.finish("cancelled")
                return
            stream.usage.completion_tokens += 1
            stream.push(char)
            if self.delay:
                time.sleep(self.delay)
        stream.finish("stop")


KILLED = "The engine process was killed by signal 9; it is being restarted."


class CrashingEngine(FakeEngine):
    """Types each answer (the last line upper-cased) on a thread of its own; ``crash()`` ends every
    stream in flight with the error the child-process engine gives a killed process and refuses
    new work as restarting (or as ``then``) until ``recover()``."""

    def __init__(self, delay: float = 0.005) -> None:
        self.delay = delay
        self.state = EngineState.READY
        self.calls = 0
        self._lock = threading.Lock()
        self._open: list[Stream] = []

    def status(self) -> EngineStatus:
        return EngineStatus(self.state, self.model_id, reason="" if self.state is
                            EngineState.READY else "restarting")

    def submit(self, prompts_: Sequence[str], options: Any) -> list[Stream]:
        if self.state is not EngineState.READY:
            raise NotReadyError("The translation engine is restarting after a failure; please "
                                "try again in a few seconds.")
        streams = [Stream(p, o) for p, o in zip(prompts_, options_per_prompt(prompts_, options))]
        with self._lock:
            self.calls += len(streams)
            self._open.extend(streams)
        for stream in streams:
            threading.Thread(target=self._type, args=(stream,), daemon=True).start()
        return streams

    def _type(self, stream: Stream) -> None:
        for char in stream.prompt.splitlines()[-1].upper():
            if stream.done or stream.cancelled:
                return
            stream.push(char)
            time.sleep(self.delay)
        if not stream.done:
            stream.finish("stop")

    def crash(self, then: EngineState = EngineState.RESTARTING) -> None:
        self.state = then
        with self._lock:
            open_, self._open = self._open, []
        for stream in open_:
            if not stream.done:
                stream.finish("error", EngineError(KILLED))

    def recover(self) -> None:
        self.state = EngineState.READY

    def finished(self) -> int:
        """How many of its streams have ended (their text typed, cut or failed)."""
        with self._lock:
            return sum(stream.done for stream in self._open)
