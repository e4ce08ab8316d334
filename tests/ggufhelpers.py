"""A GGUF of the demo model as a careless converter writes one, for the tests that show the engines
never trust a GGUF's own chat template or end-of-generation metadata."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hunyuan_webui.demo.model import SIDECAR, ensure_demo_model
from hunyuan_webui.engine.gguf_files import write_gguf

# A template that drops the turn markers and writes text of its own, as the broken templates users
# meet in GGUF runtimes do.
WRONG_TEMPLATE = ("{{ 'You are a helpful assistant.' }}{% for m in messages %}"
                  "{{ m['content'][::-1] }}{% endfor %}")
PAD = 770  # the demo's <|pad|>, which the wrong file names as its end of generation


def write_wrong_gguf(folder: Path, fmt: str = "7b") -> Path:
    """The demo model of chat format ``fmt`` as ``folder/hunyuan-mt-demo-wrong-F32.gguf`` (its
    ``hymt.json`` beside it), with :data:`WRONG_TEMPLATE` as its chat template and its pad token
    (``<|pad|>``, :data:`PAD`, for the 7B format) as its EOS and EOT."""
    source = folder / "checkpoint"
    shutil.copytree(ensure_demo_model(fmt), source)
    settings = json.loads((source / "tokenizer_config.json").read_text())
    (source / "tokenizer_config.json").write_text(
        json.dumps({**settings, "chat_template": WRONG_TEMPLATE}))
    config = json.loads((source / "config.json").read_text())
    pad = config["pad_token_id"]
    (source / "config.json").write_text(json.dumps({**config, "eos_token_id": pad,
                                                    "eod_token_id": pad}))
    out = write_gguf(source, folder / "hunyuan-mt-demo-wrong-F32.gguf")
    shutil.copyfile(source / SIDECAR, folder / SIDECAR)
    return out
