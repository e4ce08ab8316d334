"""Training the demo recogniser: a Whisper of toy width in Whisper's own vocabulary layout,
converted to CTranslate2 int8, whose decoder learns the demo phrases from what the encoder makes of
espeak-ng's voice.

Why it is shaped so (see :mod:`hunyuan_webui.demo.asr` for what it is for):

- **The vocabulary is Whisper's size, 51,865, with every special token at Whisper's id.**
  CTranslate2 decides that a Whisper model is multilingual (takes a language token, can detect
  the language) by its vocabulary size alone (``vocabulary.size() >= 51865`` in
  ``src/models/whisper.cc``), and counts its languages from the same number; faster-whisper reads
  the special tokens by name from ``tokenizer.json``. So the ids 0..50,256 hold a byte-level BPE
  of about 500 tokens trained on the phrases, padded with never-used placeholder tokens (the
  ``tokenizers`` library numbers tokens densely, so the specials can only sit at 50,257.. after
  as many entries), then ``<|endoftext|>``, ``<|startoftranscript|>``, the 99 language tokens in
  Whisper's order, the task tokens, ``<|nocaptions|>`` and ``<|notimestamps|>``; the converter adds
  the 1,501 timestamp tokens. The byte-level alphabet gives every symbol a token (faster-whisper
  encodes symbols it suppresses), and the BPE merges ``" -"`` and ``" '"`` into one token each, as
  Whisper's does: faster-whisper suppresses the first token of each.
- **The width is tiny** (d_model 48, one encoder layer, two decoder layers): the embedding of
  51,865 x 48 (2.5 MB in int8) is most of the 3.2 MB ``model.bin``; only the ~520 rows the phrases
  use are trained, the others are zero. The decoder keeps Whisper's 448 positions.
- **The encoder stays as initialised** (seeded random weights; He-initialised convolutions and the
  positions at a tenth, so that the sound dominates its output). Only the decoder is trained, on
  what the converted model's own encoder (CTranslate2, int8) outputs for each clip: the features
  training sees are exactly the ones inference computes, and a whole build takes minutes on one
  core instead of hours.
- **No speech is a word too**: after ``<|startoftranscript|>`` the model predicts the language
  token for speech and ``<|nocaptions|>`` for silence, hiss and tones, so the no-speech
  probability that faster-whisper reports (and the app gates on) means what it means in Whisper.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

D_MODEL = 48
HEADS = 4
ENCODER_LAYERS = 1
DECODER_LAYERS = 2
FFN = 192
N_MELS = 80
TEXT_VOCAB = 50257  # Whisper's text tokens: ids 0..50256
BPE_VOCAB = 520
VOCAB = 51865  # with the specials and the timestamps: a multilingual Whisper (v1/v2 layout)
MAX_TARGET = 448
POSITION_SCALE = 0.1
PREPROCESSOR = {"feature_size": N_MELS, "sampling_rate": 16000, "hop_length": 160,
                "chunk_length": 30, "n_fft": 400}
TASK_TOKENS = ("<|translate|>", "<|transcribe|>", "<|startoflm|>", "<|startofprev|>",
               "<|nocaptions|>", "<|notimestamps|>")
PROMPT = 4  # <|startoftranscript|> <|lang|> <|transcribe|> <|notimestamps|>


def whisper_languages(yue: bool = False) -> list[str]:
    """The language codes of Whisper v1/v2 (99), or of large-v3 (100: Cantonese last), in token
    order."""
    from transformers.models.whisper.tokenization_whisper import LANGUAGES

    return [code for code in LANGUAGES if yue or code != "yue"][: 100 if yue else 99]


def special_tokens(yue: bool = False) -> list[str]:
    langs = [f"<|{code}|>" for code in whisper_languages(yue)]
    return ["<|endoftext|>", "<|startoftranscript|>", *langs, *TASK_TOKENS]


def build_tokenizer(texts: Sequence[str], *, yue: bool = False) -> Any:
    """The byte-level BPE described above, as a ``tokenizers.Tokenizer`` (``yue``: large-v3's
    layout, with a 100th language; the speed benchmark builds those shapes too)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=BPE_VOCAB, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator([*texts, *[" -", " '"] * 50], trainer)
    data = json.loads(bpe.to_str())
    vocab = data["model"]["vocab"]
    for n in range(len(vocab), TEXT_VOCAB - 1):  # placeholders no merge ever produces
        vocab[f"<{n}>"] = n
    vocab[""] = TEXT_VOCAB - 1  # what makes CTranslate2 take the model for multilingual
    data["added_tokens"] = [
        {"id": TEXT_VOCAB + i, "content": token, "single_word": False, "lstrip": False,
         "rstrip": False, "normalized": False, "special": True}
        for i, token in enumerate(special_tokens(yue))]
    tokenizer = Tokenizer.from_str(json.dumps(data, ensure_ascii=False))
    for token in (" -", " '"):
        if len(tokenizer.encode(token).ids) != 1:
            raise RuntimeError(f"the demo tokenizer splits {token!r}")
    return tokenizer


def token_id(tokenizer: Any, token: str) -> int:
    found = tokenizer.token_to_id(token)
    if found is None:
        raise KeyError(token)
    return int(found)


def build_hf_model(tokenizer: Any, seed: int) -> Any:
    """A seeded, untrained ``WhisperForConditionalGeneration`` of the shape above."""
    import torch
    from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration

    eot, sot = token_id(tokenizer, "<|endoftext|>"), token_id(tokenizer, "<|startoftranscript|>")
    space = tokenizer.encode(" ").ids[0]
    config = WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=N_MELS, d_model=D_MODEL,
        encoder_layers=ENCODER_LAYERS, decoder_layers=DECODER_LAYERS,
        encoder_attention_heads=HEADS, decoder_attention_heads=HEADS,
        encoder_ffn_dim=FFN, decoder_ffn_dim=FFN, max_source_positions=1500,
        max_target_positions=MAX_TARGET, pad_token_id=eot, bos_token_id=eot, eos_token_id=eot,
        decoder_start_token_id=sot, suppress_tokens=[], begin_suppress_tokens=[space],
        tie_word_embeddings=True)
    torch.manual_seed(seed)
    model = WhisperForConditionalGeneration(config).eval()
    with torch.no_grad():
        # The encoder is never trained: let the sound, not the position, dominate its output
        # (He-initialised convolutions; the sinusoidal positions at a tenth of their size).
        encoder = model.model.encoder
        for conv in (encoder.conv1, encoder.conv2):
            conv.weight.normal_(0.0, (2.0 / (conv.in_channels * conv.kernel_size[0])) ** 0.5)
            conv.bias.zero_()
        encoder.embed_positions.weight.mul_(POSITION_SCALE)
    langs = {f"<|{c}|>": token_id(tokenizer, f"<|{c}|>") for c in whisper_languages()}
    model.generation_config = GenerationConfig(
        decoder_start_token_id=sot, eos_token_id=eot, pad_token_id=eot, suppress_tokens=[],
        begin_suppress_tokens=[space], lang_to_id=langs, is_multilingual=True,
        no_timestamps_token_id=token_id(tokenizer, "<|notimestamps|>"),
        task_to_id={"transcribe": token_id(tokenizer, "<|transcribe|>"),
                    "translate": token_id(tokenizer, "<|translate|>")},
        max_length=MAX_TARGET)
    return model


def save_and_convert(model: Any, tokenizer: Any, hf_dir: Path, out_dir: Path,
                     quantization: str = "int8") -> Path:
    """Save the transformers checkpoint in ``hf_dir`` and convert it to CTranslate2 (int8) in
    ``out_dir``, with ``tokenizer.json`` and ``preprocessor_config.json`` beside it."""
    import ctranslate2
    from transformers import PreTrainedTokenizerFast

    hf_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(hf_dir, safe_serialization=True)
    PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>",
                            bos_token="<|endoftext|>", unk_token="<|endoftext|>"
                            ).save_pretrained(hf_dir)
    preprocessor = {**PREPROCESSOR, "feature_size": model.config.num_mel_bins}
    (hf_dir / "preprocessor_config.json").write_text(json.dumps(preprocessor, indent=2) + "\n")
    converter = ctranslate2.converters.TransformersConverter(
        str(hf_dir), copy_files=["tokenizer.json", "preprocessor_config.json"])
    converter.convert(str(out_dir), quantization=quantization, force=True)
    return out_dir


def encoder_outputs(ct2_dir: Path, clips: Sequence[Any], compute_type: str) -> np.ndarray:
    """What the converted model's encoder makes of each clip, computed as faster-whisper does
    (its feature extractor, the window padded to 30 s): float16 ``[clips, 1500, d_model]``."""
    import ctranslate2
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.feature_extractor import FeatureExtractor

    extractor = FeatureExtractor(**PREPROCESSOR)
    model = ctranslate2.models.Whisper(str(ct2_dir), device="cpu", compute_type=compute_type,
                                       intra_threads=1, inter_threads=1)
    out = np.zeros((len(clips), 1500, D_MODEL), dtype=np.float16)
    for i, clip in enumerate(clips):
        features = extractor(clip.samples)
        features = pad_or_trim(features[:, : features.shape[-1] - 1])
        view = ctranslate2.StorageView.from_array(np.ascontiguousarray(features[None]))
        out[i] = np.array(model.encode(view))[0]
    return out


def targets(tokenizer: Any, clips: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Per clip: the decoder's input ids (the prompt and the text) and the labels (-100 where
    nothing is learnt: the prompt's fixed tokens and the padding)."""
    ids = {t: token_id(tokenizer, t) for t in special_tokens()}
    rows = []
    for clip in clips:
        text = tokenizer.encode(spaced(clip.text, clip.lang)).ids if clip.text else []
        lang = ids[f"<|{clip.lang or 'en'}|>"]
        tokens = [ids["<|startoftranscript|>"], lang, ids["<|transcribe|>"],
                  ids["<|notimestamps|>"], *text, ids["<|endoftext|>"]]
        first = ids["<|nocaptions|>"] if not clip.text else lang
        labels = [first, -100, -100, *text, ids["<|endoftext|>"]]
        rows.append((tokens[:-1], labels))
    width = max(len(r[0]) for r in rows)
    inputs = np.full((len(rows), width), ids["<|endoftext|>"], dtype=np.int64)
    labels = np.full((len(rows), width), -100, dtype=np.int64)
    for i, (tokens, label) in enumerate(rows):
        inputs[i, : len(tokens)] = tokens
        labels[i, : len(label)] = label
    return inputs, labels


def spaced(text: str, lang: str) -> str:
    """Whisper writes a space before words in languages that separate them."""
    return text if lang in ("zh", "ja", "yue") else f" {text}"


def log(verbose: bool, message: str, started: float) -> None:
    if verbose:
        print(f"[{time.perf_counter() - started:6.1f}s] {message}", file=sys.stderr, flush=True)
