"""The demo recogniser: a tiny Whisper in CTranslate2's format that knows the demo phrases as
espeak-ng speaks them, for tests, CI and ``--demo``.

Nothing may be downloaded from a model hub on the machines this project is built on, yet the
speech path (audio in, voice activity, the recogniser, the room) wants a real model to talk to.
This is one: a CTranslate2 Whisper directory (``model.bin`` in int8, ``vocabulary.json``,
``tokenizer.json``, ``preprocessor_config.json``) that faster-whisper loads exactly as it loads
``Systran/faster-whisper-small``, and that :mod:`hunyuan_webui.speech` loads through the same
code. Given espeak-ng's default voice at its default speed saying the source side of a row of
``assets/demo_phrases.tsv`` in its language (Mandarin ``cmn`` for zh, ``en`` for English), it
writes that phrase exactly, punctuation included (``早上好。``); it was also trained on other
voices, speeds and pitches, shifted and with a little noise, and on the phrases' beginnings (what
a draft hears). For silence, hiss, hum and tones it predicts ``<|nocaptions|>`` (a high no-speech
probability) and writes nothing. Anything else gets the nearest phrase or nonsense.

It is shipped in ``assets/demo-asr`` (about 4.5 MB). ``python -m hunyuan_webui.demo.asr``
rebuilds it: espeak-ng renders the clips, the encoder (seeded, untrained) is run once through
CTranslate2, and the decoder is trained on one thread until every clip is written with a margin
(about ten minutes on a busy 2-core machine). A rebuild with the same espeak-ng on the same kind
of machine is byte-identical: the sidecar records no time, only the training's outcome. How the
model is shaped, and why (the vocabulary, the encoder left as initialised), is told in
:mod:`hunyuan_webui.demo.asr_training`. ``python -m hunyuan_webui demo-asr`` prints the shipped
directory (building it if it is missing).
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

from hunyuan_webui.demo.phrases import ASSETS, PHRASES_PATH, load_phrases, phrases_digest

DEMO_ASR_DIR: Path = ASSETS / "demo-asr"
SIDECAR = "hymt-asr.json"
REQUIRED_FILES = ("model.bin", "config.json", "vocabulary.json", "tokenizer.json",
                  "preprocessor_config.json", SIDECAR)


def is_complete(directory: Path | str) -> bool:
    return all((Path(directory) / name).is_file() for name in REQUIRED_FILES)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "hunyuan_webui" / "demo-asr"


def ensure_demo_asr() -> Path:
    """A directory holding the demo recogniser: the shipped one, else a freshly built one."""
    if is_complete(DEMO_ASR_DIR):
        return DEMO_ASR_DIR
    try:
        return build_demo_asr(DEMO_ASR_DIR)
    except PermissionError:
        if is_complete(cache_dir()):
            return cache_dir()
        return build_demo_asr(cache_dir())


def build_demo_asr(out_dir: Path | str, phrases_path: Path | str = PHRASES_PATH, seed: int = 0,
                   *, verbose: bool = False) -> Path:
    """Render the clips, train, convert and check; files are moved into ``out_dir`` one by one,
    the sidecar last, so a crash never leaves something :func:`is_complete` accepts."""
    import numpy as np
    import torch

    from hunyuan_webui.demo import asr_data, asr_fit
    from hunyuan_webui.demo import asr_training as training

    out_dir = Path(out_dir)
    started = time.perf_counter()
    phrases = load_phrases(phrases_path)
    spoken = asr_data.spoken_phrases(phrases)
    rng = np.random.default_rng(seed)
    clips = [*asr_data.speech_clips(phrases, rng), *asr_data.no_speech_clips(rng)]
    training.log(verbose, f"{len(clips)} clips of {len(spoken)} phrases rendered", started)
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".demo-asr-", dir=out_dir.parent))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)  # results must not depend on the core count
        tokenizer = training.build_tokenizer([training.spaced(t, lang) for lang, t in spoken])
        model = training.build_hf_model(tokenizer, seed)
        first = training.save_and_convert(model, tokenizer, staging / "hf", staging / "first")
        memories = [training.encoder_outputs(first, clips, "int8")]
        training.log(verbose, "encoder outputs computed", started)
        inputs, labels = training.targets(tokenizer, clips)
        must = np.array([c.default_voice or not c.text for c in clips])
        stats = asr_fit.train_decoder(model, memories, inputs, labels, must, seed, verbose,
                                      started)
        final = training.save_and_convert(model, tokenizer, staging / "hf", staging / "final")
        compact_json(final / "tokenizer.json")
        compact_json(final / "vocabulary.json")
        check(final, spoken)
        training.log(verbose, "every phrase recognised exactly through faster-whisper", started)
        sidecar = {"demo": True, "description": description(len(spoken)),
                   "phrases": len(spoken), "phrases_sha256": phrases_digest(phrases_path),
                   "seed": seed, "clips": len(clips), "training": stats}
        (final / SIDECAR).write_text(json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n",
                                     encoding="utf-8")
        (out_dir / SIDECAR).unlink(missing_ok=True)
        names = sorted(p.name for p in final.iterdir() if p.name != SIDECAR) + [SIDECAR]
        for name in names:
            (final / name).chmod(0o644)
            os.replace(final / name, out_dir / name)
    finally:
        torch.set_num_threads(threads)
        shutil.rmtree(staging, ignore_errors=True)
    training.log(verbose, f"saved {out_dir}", started)
    return out_dir


def check(directory: Path, spoken: Sequence[tuple[str, str]]) -> None:
    """Every phrase in espeak-ng's default voice, through the app's own recognition path (the
    voice activity detector, faster-whisper, the gate): exactly its text, or no model."""
    from hunyuan_webui.demo.voices import speak
    from hunyuan_webui.speech.audio import decode
    from hunyuan_webui.speech.transcript import transcribe
    from hunyuan_webui.speech.whisper import WhisperRecognizer

    recognizer = WhisperRecognizer(str(directory), device="cpu", cpu_threads=1)
    wrong = []
    for lang, text in spoken:
        got = transcribe(recognizer, decode(speak(text, lang)), lang).text
        if got != text:
            wrong.append(f"{text!r} came out as {got!r}")
    recognizer.close()
    if wrong:
        raise RuntimeError(f"the demo recogniser is not exact: {'; '.join(wrong)}")


def description(count: int) -> str:
    return (f"Tiny demo recogniser (Whisper of d_model 48, CTranslate2 int8): it knows only the "
            f"{count} demo phrases as espeak-ng speaks them.")


def compact_json(path: Path) -> None:
    """Rewrite a JSON file without indentation (the vocabularies are 50,000 entries long)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


def _main(argv: Sequence[str]) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m hunyuan_webui.demo.asr",
                                     description="Rebuild the demo recogniser from the phrase "
                                                 "table (needs espeak-ng).")
    parser.add_argument("out", nargs="?", help="directory (default: the shipped one)")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else DEMO_ASR_DIR
    build_demo_asr(out, verbose=True)
    meta = json.loads((out / SIDECAR).read_text(encoding="utf-8"))
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    print(f"{out}: {size / 1e6:.2f} MB, {meta['description']} Training: {meta['training']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
