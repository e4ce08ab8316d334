"""A demo checkpoint that misbehaves on purpose, to show and test the answer guards.

It is trained exactly as the demo model is (:mod:`hunyuan_webui.demo.training`: the same
tokenizer, architecture and margin), on the same phrase table, plus :data:`MISBEHAVIOURS`: a few
more phrases it answers in the wrong language, with a loop, or with the source again, as real
Hy-MT models sometimes do. Some of them it answers correctly when asked in the family's other
prompt wording (the guards' retry), so both outcomes show: the retried answer served, and the
answer marked. ``python -m hunyuan_webui demo-model --misbehaving`` prints its directory;
``python app.py --model <that directory>`` serves it.

The checkpoint is shipped in ``assets/demo-model-misbehaving`` (about 3 MB; a rebuild on the same
machine is byte-identical, ``python -m hunyuan_webui.demo.misbehaving`` rebuilds it) and built
into ``~/.cache/hunyuan_webui`` when that is missing and the assets cannot be written.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from hunyuan_webui.demo.phrases import ASSETS, Phrase, load_phrases
from hunyuan_webui.prompts import alternative_prompt, translation_prompt

FAMILY = "hunyuan-mt"  # the 7B demo's chat format and wording
DIRECTORY = "demo-model-misbehaving"
SIDECAR = "hymt.json"
FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json",
         "tokenizer_config.json", SIDECAR)


@dataclass(frozen=True)
class Misbehaviour:
    """A phrase answered badly in the usual prompt; ``retry`` is the answer in the other
    wording (the right one, or bad again). ``guard`` is the guard that must catch it."""

    source_lang: str
    target_lang: str
    source: str
    answer: str
    retry: str
    guard: str
    right: str  # the correct translation, for the record

    @property
    def served(self) -> bool:
        """Whether the guards' retry gets the right answer (else the answer is marked)."""
        return self.retry == self.right


LOOP_FR = "!" * 40
LOOP_EN = " ".join(["Good night!"] * 8)
MISBEHAVIOURS: tuple[Misbehaviour, ...] = (
    # English to Japanese answered in Hindi; the Chinese wording gets Japanese.
    Misbehaviour("en", "ja", "Good night.", "शुभ रात्रि।", "おやすみなさい。", "language",
                 "おやすみなさい。"),
    # English to Korean answered in Chinese, in both wordings.
    Misbehaviour("en", "ko", "Goodbye.", "再见。", "再见。", "language", "안녕히 가세요."),
    # English to German answered in (other) English; the Chinese wording gets German.
    Misbehaviour("en", "de", "I like apples.", "I really like apples very much.",
                 "Ich mag Äpfel.", "language", "Ich mag Äpfel."),
    # Chinese to English: the source handed back; the English wording gets English.
    Misbehaviour("zh", "en", "我喜欢猫。", "我喜欢猫。", "I like cats.", "copy", "I like cats."),
    # English to French: the source handed back in both wordings.
    Misbehaviour("en", "fr", "The train is late.", "The train is late.", "The train is late.",
                 "copy", "Le train est en retard."),
    # Loops: "!!!!" without end (what MoE quantization does to a dense model), caught before
    # anything is shown, retried with a stronger repetition penalty, which loops again: cut and
    # marked; and the same words again and again, caught after the first copy has been shown.
    Misbehaviour("en", "fr", "Good night.", "Bonne nuit" + LOOP_FR, "", "loop", "Bonne nuit."),
    Misbehaviour("zh", "en", "晚安。", LOOP_EN, "", "loop", "Good night!"),
)


@dataclass(frozen=True)
class PromptedPhrase(Phrase):
    """A phrase trained on a prompt of its own (the other wording), not the official one."""

    user: str = ""

    def prompt_in(self, family: str) -> str:
        return self.user


def training_phrases() -> list[Phrase]:
    """The demo phrase table, then every misbehaviour in its usual and its other wording."""
    phrases: list[Phrase] = list(load_phrases())
    for m in MISBEHAVIOURS:
        usual = translation_prompt(m.source, m.source_lang, m.target_lang, FAMILY)
        phrases.append(PromptedPhrase(m.source_lang, m.target_lang, m.source, m.answer,
                                      user=usual))
        other = alternative_prompt(FAMILY, "translate", m.source, m.source_lang, m.target_lang)
        if m.retry and other:
            phrases.append(PromptedPhrase(m.source_lang, m.target_lang, m.source, m.retry,
                                          user=other))
    return phrases


def shipped_dir() -> Path:
    return ASSETS / DIRECTORY


def is_complete(directory: Path) -> bool:
    return all((directory / name).is_file() for name in FILES)


def ensure_misbehaving_model() -> Path:
    """The shipped checkpoint, else one built now (in the cache when assets are read-only)."""
    shipped = shipped_dir()
    if is_complete(shipped):
        return shipped
    try:
        return build(shipped)
    except PermissionError:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        fallback = base / "hunyuan_webui" / DIRECTORY
        return fallback if is_complete(fallback) else build(fallback)


def build(out_dir: Path, seed: int = 0, verbose: bool = False) -> Path:
    """Train and save the checkpoint; the sidecar is written last (it marks a finished build)."""
    import torch

    phrases = training_phrases()
    out_dir.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".misbehaving-", dir=out_dir.parent))
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)  # deterministic whatever the core count, as the demo model
        from hunyuan_webui.demo.training import build_tokenizer, train_model  # only to train

        tokenizer = build_tokenizer(phrases)
        model, stats = train_model(tokenizer, phrases, seed=seed, verbose=verbose, family=FAMILY)
        tokenizer.save_pretrained(staging, save_jinja_files=False)
        model.save_pretrained(staging, safe_serialization=True)
        n_params = sum(p.numel() for p in model.parameters())
        sidecar = {
            "family": FAMILY, "modes": ["translate"], "params_b": round(n_params / 1e9, 6),
            "description": (f"Tiny demo model ({n_params / 1e6:.2f}M parameters) that "
                            f"misbehaves on {len(MISBEHAVIOURS)} phrases on purpose (wrong "
                            "language, loops, copied sources), to show the answer guards."),
            "chat_format": "hunyuan-7b", "demo": True, "phrases": len(phrases),
            "seed": seed, "training": stats,
        }
        (staging / SIDECAR).write_text(json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n",
                                       encoding="utf-8")
        (out_dir / SIDECAR).unlink(missing_ok=True)
        for name in sorted(FILES[:-1]) + [SIDECAR]:
            (staging / name).chmod(0o644)
            os.replace(staging / name, out_dir / name)
    finally:
        torch.set_num_threads(threads)
        shutil.rmtree(staging, ignore_errors=True)
    return out_dir


if __name__ == "__main__":
    print(build(Path(sys.argv[1]) if len(sys.argv) > 1 else shipped_dir(), verbose=True))
