"""A fake of the launch choice's probe, for the tests of the launch choice and of the laptop launch.

``FakeProbe`` has the real probe's interface (:mod:`hunyuan_webui.choice`) and notes every hub
question, so a test can also say what was *not* asked (a 7B download on a machine without a GPU).
"""

from __future__ import annotations

from dataclasses import dataclass, field

SEVEN, SMALL = "tencent/Hy-MT2-7B", "tencent/Hy-MT2-1.8B"


@dataclass
class FakeProbe:
    gpus: list[float] = field(default_factory=list)
    ram: float = 16.0
    in_cache: set[str] = field(default_factory=set)
    online: set[str] = field(default_factory=set)
    asked: list[str] = field(default_factory=list)
    llama_cpp: bool = False  # llama-cpp-python importable

    def gpu_free_gib(self) -> list[float]:
        return list(self.gpus)

    def ram_free_gib(self) -> float:
        return self.ram

    def cached(self, model_id: str, quant: str | None = None) -> bool:
        """``in_cache`` holds ids (every file of a GGUF repository) or ``id@QUANT`` (one)."""
        self.asked.append(model_id)
        return model_id in self.in_cache or f"{model_id}@{quant}" in self.in_cache

    def downloadable(self, model_id: str) -> bool:
        self.asked.append(model_id)
        return model_id in self.online

    def runs_gguf(self) -> bool:
        return self.llama_cpp
