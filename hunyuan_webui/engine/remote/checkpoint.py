"""What this side knows of the served checkpoint without asking the server: tokens and stop ids.

The server tokenizes, but the app counts tokens before it sends (input limits, the default
``max_tokens``) and the ``transformers`` dialect needs the stop ids. ``tokenizer.json`` and
``generation_config.json`` are looked for beside the checkpoint: in a path given, in the model's
local directory, or in the Hugging Face hub cache, never on the network. Without a tokenizer
:func:`approximate_tokens` estimates; without a ``generation_config.json``
:data:`KNOWN_STOP_TOKEN_IDS` covers the known models.
"""

from __future__ import annotations

import json
import logging
import math
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# Stop ids worth sending when no tokenizer is at hand (REFERENCE: the 7B chat format's <|eos|>).
KNOWN_STOP_TOKEN_IDS: dict[str, tuple[int, ...]] = {
    "tencent/Hunyuan-MT-7B": (127960,),
    "tencent/Hunyuan-MT-7B-fp8": (127960,),
    "tencent/Hunyuan-MT-Chimera-7B": (127960,),
    "tencent/Hunyuan-MT-Chimera-7B-fp8": (127960,),
}


def approximate_tokens(text: str) -> int:
    """A tokenizer-free estimate for a ~128k-vocabulary BPE: ASCII about 4 characters a token,
    other alphabets (Latin-extended, Cyrillic, Arabic, Indic...) about 2, CJK, kana and Hangul 1."""
    ascii_chars = wide = other = 0
    for ch in text:
        code = ord(ch)
        if code < 0x80:
            ascii_chars += 1
        elif code >= 0x2E80:
            wide += 1
        else:
            other += 1
    return wide + math.ceil(other / 2) + math.ceil(ascii_chars / 4)


def local_file(path: str | Path | None, model_id: str, name: str) -> Path | None:
    """``name`` beside the checkpoint: in ``path`` (a directory, or a file for tokenizer.json), in
    the ``model_id`` directory, or in the hub cache. Never the network."""
    if path is not None:
        path = Path(path)
        found = path / name if path.is_dir() else path if path.name == name else None
        return found if found is not None and found.is_file() else None
    if Path(model_id).is_dir():
        found = Path(model_id) / name
        return found if found.is_file() else None
    if model_id.count("/") != 1:
        return None
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model_id, name)
    except Exception:  # no hub client, a malformed id: nothing cached
        return None
    return Path(cached) if isinstance(cached, str) else None


def load_tokenizer(path: str | Path | None, model_id: str) -> Any | None:
    """A ``tokenizers.Tokenizer`` for exact counts, or None."""
    found = local_file(path, model_id, "tokenizer.json")
    if found is None:
        return None
    try:
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(found))
    except Exception as exc:  # not installed, corrupt or foreign: count approximately
        log.warning("could not read %s (%s); token counts are approximate", found, exc)
        return None


def checkpoint_stop_ids(path: str | Path | None, model_id: str) -> tuple[int, ...]:
    """The checkpoint's ``eos_token_id`` from its generation_config.json, when it is at hand."""
    if path is not None and Path(path).is_file():
        path = Path(path).parent
    found = local_file(path, model_id, "generation_config.json")
    if found is None:
        return ()
    try:
        eos = json.loads(found.read_text(encoding="utf-8")).get("eos_token_id")
    except (OSError, ValueError, AttributeError):
        return ()
    if isinstance(eos, int):
        return (eos,)
    if isinstance(eos, list) and all(isinstance(i, int) for i in eos):
        return tuple(eos)
    return ()
