"""Several remote servers behind one engine: ``--endpoint URL1,URL2,...``.

Each replica is an :class:`~hunyuan_webui.engine.remote.OpenAIEngine` with its own health probe.
A submission goes to the ready replica with the fewest sequences in flight, so replicas share the
load and one that stops answering is skipped (its own probe brings it back when it recovers).
A request that already started on a replica that then dies ends with an error; the UI and API
report it and the next request goes elsewhere.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from hunyuan_webui.engine.base import DecodingOptions, Engine, EngineState, EngineStatus, Stream
from hunyuan_webui.errors import NotReadyError


class ReplicaEngine(Engine):
    def __init__(self, replicas: Sequence[Engine]) -> None:
        if not replicas:
            raise ValueError("at least one replica")
        self.replicas = list(replicas)
        self.model_id = self.replicas[0].model_id
        self._lock = threading.Lock()
        self._in_flight = [0] * len(self.replicas)

    def submit(self, prompts: Sequence[str],
               options: DecodingOptions | Sequence[DecodingOptions]) -> list[Stream]:
        with self._lock:
            ready = [i for i, r in enumerate(self.replicas)
                     if r.status().state == EngineState.READY]
            if not ready:
                raise NotReadyError("None of the remote servers is answering: "
                                    + "; ".join(r.status().reason or str(r.status().state)
                                                for r in self.replicas))
            index = min(ready, key=lambda i: self._in_flight[i])
            self._in_flight[index] += len(prompts)
        try:
            streams = self.replicas[index].submit(prompts, options)
        except Exception:
            with self._lock:
                self._in_flight[index] -= len(prompts)
            raise
        for stream in streams:
            stream.add_done_callback(lambda _s, i=index: self._done(i))
        return streams

    def _done(self, index: int) -> None:
        with self._lock:
            self._in_flight[index] -= 1

    def status(self) -> EngineStatus:
        statuses = [r.status() for r in self.replicas]
        ready = [s for s in statuses if s.state == EngineState.READY]
        first = (ready or statuses)[0]
        state = EngineState.READY if ready else first.state
        reason = "" if ready else "; ".join(s.reason for s in statuses if s.reason)
        return EngineStatus(
            state=state, model=self.model_id, device=f"{len(ready)}/{len(statuses)} replicas",
            dtype=first.dtype, reason=reason, active=sum(s.active for s in statuses),
            queued=sum(s.queued for s in statuses),
            max_batch_size=sum(s.max_batch_size for s in statuses),
            tokens_generated=sum(s.tokens_generated for s in statuses),
            extra={"replicas": [s.to_dict() for s in statuses]})

    def count_tokens(self, text: str) -> int:
        return self.replicas[0].count_tokens(text)

    def close(self) -> None:
        for replica in self.replicas:
            replica.close()
