"""The phrase cache's keys: one per translation, the same in every process and on every machine.

:func:`cache_key` is a SHA-256 of a canonical JSON of everything that determines the output,
with a schema version inside, so it is stable across processes, machines and Python versions.
Bump ``KEY_SCHEMA`` whenever the meaning of a cached value changes (e.g. prompts are reworded).
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

KEY_SCHEMA = 1
"""Part of every key: bump it to invalidate every entry written by an older release."""


def _canonical(value: Any) -> Any:
    """``json.dumps`` fallback for option values that are not plain JSON."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=lambda item: json.dumps(item, sort_keys=True, default=_canonical))
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, PurePath):
        return str(value)
    raise TypeError(f"cache_key: option value {value!r} of type {type(value).__name__} has no "
                    "stable form; pass str, number, bool, None, list, tuple, set or dict.")


def cache_key(*, model: str, source_lang: str, target_lang: str, mode: str,
              options: Mapping[str, Any], text: str) -> str:
    """The key of one translation: 64 hex digits, the same in every process and on every machine.

    Everything that changes the output must be passed in: the model (id or path), both languages,
    the mode and every generation or prompt option (temperature, glossary, context...). The text
    is used exactly as given (no stripping, no Unicode normalization). Mapping order is irrelevant;
    list order is not. Values that have no stable JSON form raise :class:`TypeError`.
    """
    payload = {
        "schema": KEY_SCHEMA,
        "model": model,
        "source_lang": source_lang,
        "target_lang": target_lang,
        "mode": mode,
        "options": dict(options),
        "text": text,
    }
    blob = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False, default=_canonical)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()
