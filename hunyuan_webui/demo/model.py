"""Tiny demo models of the real Hunyuan-MT architecture, for tests, CI and the ``--demo`` flag.

Nothing may be downloaded from a model hub on the machines this project is built on, yet every
layer above the engine (streaming, batching, caching, the UI) wants a real checkpoint to talk to.
This module builds one: a 2-layer ``HunYuanDenseV1ForCausalLM`` (``model_type``
``hunyuan_v1_dense``, native in transformers, no remote code) with a small byte-level BPE
tokenizer that carries the Hunyuan-MT-7B special tokens and chat format
(``<|startoftext|>{user}<|extra_0|>`` then ``{answer}<|eos|>``). It has memorised the phrase table
``assets/demo_phrases.tsv``: given the *official* translation prompt for one of those phrases
(:func:`hunyuan_webui.prompts.translation_prompt`) it answers the listed translation exactly under
greedy decoding, also with ``repetition_penalty=1.05`` and also when loaded in bitsandbytes int8 or
NF4, and with the model card's sampling defaults. Anything else gets the nearest memorised answer
or byte-level gibberish (which may decode to U+FFFD), usually closed by ``<|eos|>`` within a few
tokens: enough for a demo, and a realistic test of streaming partial UTF-8.

The checkpoint is shipped in ``assets/demo-model`` (about 3 MB). ``python -m
hunyuan_webui.demo_model`` regenerates it from the phrase table; training runs on one thread, is
deterministic (a rebuild on the same machine is byte-identical) and takes 15-30 s.
:func:`ensure_demo_model` returns the shipped directory, or builds it (into
``~/.cache/hunyuan_webui/demo-model`` when the assets directory is not writable).

A second one, ``assets/demo-model-1.8b``, is built the same way in the 1.8B models' chat format
(``<｜hy_User｜>``, ``<｜hy_Assistant｜>``, stop ``<｜hy_place▁holder▁no▁2｜>``) and knows the same
phrases prompted in Hy-MT2's wording: ``ensure_demo_model("1.8b")``, ``python -m
hunyuan_webui.demo_model --format 1.8b``. The formats are rows of :mod:`hunyuan_webui.demo.formats`;
the phrase table is read by :mod:`hunyuan_webui.demo.phrases`, and the tokenizer and model are
trained by :mod:`hunyuan_webui.demo.training`, imported only to build one.

How the answers are made robust: the loss covers only the answer tokens and the ``<|eos|>``; every
other step runs the forward pass through fake-quantized (NF4, block size 64, straight-through)
copies of the linear layers that bitsandbytes would quantize, and training continues until every
answer token wins by a comfortable logit margin in both full precision and fake NF4.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from hunyuan_webui.demo.formats import DEFAULT_FORMAT, FORMATS, ChatFormat, chat_format
from hunyuan_webui.demo.phrases import ASSETS, PHRASES_PATH, Phrase, load_phrases, phrases_digest

# Also reached through this module by its users (tests, benchmarks, the launch choice). The
# trainer (:mod:`hunyuan_webui.demo.training`) is imported only by build_demo_model.
__all__ = ["DEMO_DIR", "PHRASES_PATH", "SIDECAR", "Phrase", "build_demo_model", "cache_dir",
           "demo_dir", "ensure_demo_model", "is_complete", "load_phrases", "phrases_digest"]

DEMO_DIR: Path = ASSETS / "demo-model"
SIDECAR = "hymt.json"  # the same name models.SIDECAR reads


# Checkpoint files; the sidecar is written last, so its presence marks a finished build.
REQUIRED_FILES = ("config.json", "generation_config.json", "model.safetensors",
                  "tokenizer.json", "tokenizer_config.json", SIDECAR)

def demo_dir(fmt: ChatFormat | str = DEFAULT_FORMAT) -> Path:
    """Where a format's checkpoint is shipped (``DEMO_DIR`` for the default one)."""
    fmt = chat_format(fmt)
    return DEMO_DIR if fmt.name == DEFAULT_FORMAT else ASSETS / fmt.directory


def is_complete(directory: Path | str) -> bool:
    """Whether ``directory`` holds a finished demo checkpoint."""
    directory = Path(directory)
    return all((directory / name).is_file() for name in REQUIRED_FILES)


def cache_dir(fmt: ChatFormat | str = DEFAULT_FORMAT) -> Path:
    """Where the model is built when the assets directory cannot be written."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "hunyuan_webui" / chat_format(fmt).directory


def ensure_demo_model(fmt: ChatFormat | str = DEFAULT_FORMAT) -> Path:
    """A directory holding a demo checkpoint: the shipped one, else a freshly built one."""
    shipped = demo_dir(fmt)
    if is_complete(shipped):
        return shipped
    try:
        return build_demo_model(shipped, fmt=fmt)
    except PermissionError:
        fallback = cache_dir(fmt)
        if is_complete(fallback):
            return fallback
        return build_demo_model(fallback, fmt=fmt)


# --------------------------------------------------------------------------------------------
# Building


def build_demo_model(out_dir: Path | str, phrases_path: Path | str = PHRASES_PATH,
                     seed: int = 0, *, fmt: ChatFormat | str = DEFAULT_FORMAT,
                     verbose: bool = False) -> Path:
    """Train the tokenizer and the model on the phrase table and save a checkpoint in ``out_dir``.

    Files are written to a temporary directory beside ``out_dir`` and moved in one by one, the
    sidecar last, so a crash never leaves something :func:`is_complete` accepts. Other files in
    ``out_dir`` are left alone. Returns ``out_dir``.
    """
    import torch

    from hunyuan_webui.demo.training import build_tokenizer, train_model

    out_dir = Path(out_dir)
    fmt = chat_format(fmt)
    phrases = load_phrases(phrases_path)
    started = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".demo-model-", dir=out_dir.parent))
    threads = torch.get_num_threads()
    try:
        # One thread: results must not depend on the core count, and a model this small trains
        # several times faster on one thread than on two once anything else wants the CPU.
        torch.set_num_threads(1)
        tokenizer = build_tokenizer(phrases, fmt)
        model, stats = train_model(tokenizer, phrases, seed=seed, verbose=verbose,
                                   family=fmt.family)
        tokenizer.save_pretrained(staging, save_jinja_files=False)
        model.save_pretrained(staging, safe_serialization=True)
        n_params = sum(p.numel() for p in model.parameters())
        sidecar = {
            "family": fmt.family,
            "modes": list(fmt.modes),
            "params_b": round(n_params / 1e9, 6),
            "description": (f"Tiny demo model ({n_params / 1e6:.2f}M parameters) of the "
                            f"{fmt.stands_for} architecture; it only knows the {len(phrases)} "
                            "phrases it was trained on."),
            "chat_format": fmt.registry_format,
            "demo": True,
            "phrases": len(phrases),
            "phrases_sha256": phrases_digest(phrases_path),
            "seed": seed,
            "training": stats,
        }
        (staging / SIDECAR).write_text(json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n",
                                       encoding="utf-8")
        (out_dir / SIDECAR).unlink(missing_ok=True)
        names = sorted(p.name for p in staging.iterdir() if p.name != SIDECAR) + [SIDECAR]
        for name in names:
            (staging / name).chmod(0o644)  # some writers create 0600 files
            os.replace(staging / name, out_dir / name)
    finally:
        torch.set_num_threads(threads)
        shutil.rmtree(staging, ignore_errors=True)
    if verbose:
        print(f"saved {out_dir} in {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return out_dir


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m hunyuan_webui.demo_model",
                                     description="Rebuild a demo checkpoint from the phrase table.")
    parser.add_argument("--format", choices=list(FORMATS), default=DEFAULT_FORMAT)
    parser.add_argument("out", nargs="?", help="directory (default: the shipped one)")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else demo_dir(args.format)
    build_demo_model(out, fmt=args.format, verbose=True)
    meta = json.loads((out / SIDECAR).read_text(encoding="utf-8"))
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"{out}: {size / 1e6:.2f} MB, {meta['description']}, training {meta['training']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
