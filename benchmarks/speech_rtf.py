"""How fast each Whisper size recognises on this machine: ``python -m benchmarks.speech_rtf``.

No real weights can be downloaded here, and speed does not depend on what the weights are, only
on their shapes: each size (tiny, base, small, medium, large-v3-turbo, large-v3) is built with
seeded random weights by transformers at its real configuration, converted to CTranslate2 (int8
on a CPU, float16 on a GPU) exactly as faster-whisper's hub models are, and timed in one run, side
by side, through CTranslate2's Whisper (what faster-whisper calls):

- the encoder over one 30 s window (Whisper always encodes 30 s, whatever the utterance's length:
  the fixed cost of every recognition, a draft's included);
- the decoder writing a fixed number of tokens (random weights could stop at once or never, so the
  end-of-text token is suppressed and the length capped): :data:`TOKENS_PER_S` tokens per second
  of speech, about what English or Chinese speech takes.

It reports, per size and utterance length (3 s, 10 s), the seconds per recognition and the
real-time factor (seconds of computing per second of speech: under 1 keeps up). The conversions
are cached in ``--work`` (default: a temporary folder).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.report import publish

DOC_START, DOC_END = "<!-- speech-rtf:start -->", "<!-- speech-rtf:end -->"

# name: (d_model, encoder layers, decoder layers, heads, mels, vocabulary)
SIZES = {
    "tiny": (384, 4, 4, 6, 80, 51865),
    "base": (512, 6, 6, 8, 80, 51865),
    "small": (768, 12, 12, 12, 80, 51865),
    "medium": (1024, 24, 24, 16, 80, 51865),
    "large-v3-turbo": (1280, 32, 4, 20, 128, 51866),
    "large-v3": (1280, 32, 32, 20, 128, 51866),
}
TOKENS_PER_S = 3.5
LENGTHS = (3.0, 10.0)


def build(name: str, work: Path, compute_type: str) -> Path:
    """A CTranslate2 Whisper directory of ``name``'s shape with random weights."""
    out = work / f"{name}-{compute_type}"
    if (out / "model.bin").is_file():
        return out
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    from hunyuan_webui.demo import asr_training

    d, enc, dec, heads, mels, vocab = SIZES[name]
    tokenizer = asr_training.build_tokenizer(["hello world"], yue=vocab == 51866)
    config = WhisperConfig(vocab_size=vocab, num_mel_bins=mels, d_model=d, encoder_layers=enc,
                           decoder_layers=dec, encoder_attention_heads=heads,
                           decoder_attention_heads=heads, encoder_ffn_dim=4 * d,
                           decoder_ffn_dim=4 * d, max_source_positions=1500,
                           max_target_positions=448)
    torch.manual_seed(0)
    with torch.no_grad():
        model = WhisperForConditionalGeneration(config).eval()
    asr_training.save_and_convert(model, tokenizer, work / f"{name}-hf", out,
                                  quantization=compute_type)
    return out


def time_size(directory: Path, device: str, compute_type: str, threads: int,
              repeats: int) -> dict[float, list[float]]:
    import ctranslate2

    model = ctranslate2.models.Whisper(str(directory), device=device, compute_type=compute_type,
                                       intra_threads=threads)
    import numpy as np

    features = np.random.default_rng(0).standard_normal((1, model.n_mels, 3000))
    view = ctranslate2.StorageView.from_array(features.astype(np.float32))
    prompt = [[50258, 50259, 50360 if model.num_languages == 100 else 50359,
               50364 if model.num_languages == 100 else 50363]]
    eot = 50257
    out: dict[float, list[float]] = {length: [] for length in LENGTHS}
    model.generate(view, prompt, max_length=8, suppress_tokens=[eot])  # warm
    for _ in range(repeats):
        for length in LENGTHS:
            tokens = int(length * TOKENS_PER_S)
            started = time.perf_counter()
            model.generate(view, prompt, beam_size=1, max_length=len(prompt[0]) + tokens,
                           suppress_tokens=[eot], suppress_blank=False)
            out[length].append(time.perf_counter() - started)
    return out


def render(result: dict[str, Any]) -> str:
    """The table from the run's JSON (benchmarks/results/speech-rtf.json)."""
    lines = [f"`{result['command']}` on {result['machine']}, {result['when']}: "
             f"{result['device']}, {result['compute_type']}, {result['threads']} threads; median "
             f"of {result['repeats']}; the decoder writes {result['tokens_per_s']:g} tokens per "
             "second of speech.", "",
             "| size | " + " | ".join(f"{length:g} s utterance: s / RTF" for length in LENGTHS)
             + " |", "|---|" + "---|" * len(LENGTHS)]
    for name, by in result["seconds"].items():
        cells = " | ".join(f"{by[f'{length:g}']:.2f} / {by[f'{length:g}'] / length:.2f}"
                           for length in LENGTHS)
        lines.append(f"| {name} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speech_rtf",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="tiny,base,small,large-v3-turbo",
                        help=f"comma-separated, of: {', '.join(SIZES)}")
    parser.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--work", help="folder for the converted models (kept)")
    parser.add_argument("--out", help="the run's JSON (benchmarks/results/speech-rtf.json)")
    parser.add_argument("--doc", help="write the table between this document's markers")
    args = parser.parse_args(argv)
    compute_type = "float16" if args.device == "cuda" else "int8"
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="speech-rtf-"))
    work.mkdir(parents=True, exist_ok=True)
    result = {"command": "python -m benchmarks.speech_rtf " + " ".join(
                  sys.argv[1:] if argv is None else argv),
              "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.machine()}, {os.cpu_count()} cores",
              "load_average": [round(x, 2) for x in os.getloadavg()],
              "device": args.device, "compute_type": compute_type, "threads": args.threads,
              "repeats": args.repeats, "tokens_per_s": TOKENS_PER_S, "seconds": {}}
    for name in args.sizes.split(","):
        directory = build(name.strip(), work, compute_type)
        timings = time_size(directory, args.device, compute_type, args.threads, args.repeats)
        result["seconds"][name.strip()] = {f"{length:g}": round(statistics.median(t), 3)
                                           for length, t in timings.items()}
        print(f"{name}: done", file=sys.stderr, flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    publish(render(result), args.doc, DOC_START, DOC_END)
    return 0


if __name__ == "__main__":
    sys.exit(main())
