"""The server's guards, and what it says about itself.

- :class:`Redactor` replaces a local model path with the model's name in what users read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hunyuan_webui.models import ModelSpec


class Redactor:
    """Replaces local checkpoint paths with the models' names in text users read."""

    def __init__(self, specs: list[ModelSpec], extra: dict[str, str] | None = None) -> None:
        names = dict(extra or {})
        for spec in specs:
            if spec.local_path:
                names[spec.local_path] = spec.public_id
        # Longest first, so that a path is never half-replaced by a shorter one inside it.
        self.names = sorted(((p, n) for p, n in names.items() if p), key=lambda pn: -len(pn[0]))

    @classmethod
    def for_translator(cls, translator: Any) -> Redactor:
        settings = translator.settings
        extra = {}
        for given in (settings.model, settings.chimera_model):
            if given and Path(given).expanduser().is_dir():
                extra[given] = Path(given).expanduser().resolve().name
        return cls([translator.spec], extra)

    def text(self, value: str) -> str:
        for path, name in self.names:
            value = value.replace(path, name)
        return value

    def answer(self, payload: dict[str, Any]) -> dict[str, Any]:
        """A result or status dict with its ``model`` and ``reason`` fields named, not located."""
        for field in ("model", "reason", "notice"):
            if isinstance(payload.get(field), str):
                payload[field] = self.text(payload[field])
        return payload
