"""The demo models' phrase table (``assets/demo_phrases.tsv``): what they know by heart.

Each row is a source and a target phrase with their languages; :class:`Phrase` gives the official
prompt for it in any family's wording, which is what the demo models are trained on.
"""

from __future__ import annotations

import csv
import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from hunyuan_webui import languages
from hunyuan_webui.prompts import translation_prompt


def assets_dir() -> Path:
    """The shipped demo assets: ``assets/`` beside the package in a checkout, or
    ``<prefix>/share/hunyuan-webui`` after ``pip install .``."""
    checkout = Path(__file__).resolve().parents[2] / "assets"
    for candidate in (checkout, Path(sys.prefix) / "share" / "hunyuan-webui"):
        if (candidate / "demo_phrases.tsv").is_file():
            return candidate
    return checkout


ASSETS: Path = assets_dir()
PHRASES_PATH: Path = ASSETS / "demo_phrases.tsv"


@dataclass(frozen=True)
class Phrase:
    source_lang: str
    target_lang: str
    source: str
    target: str

    @property
    def prompt(self) -> str:
        """The official Hunyuan-MT prompt (user message) for this phrase."""
        return translation_prompt(self.source, self.source_lang, self.target_lang)

    def prompt_in(self, family: str) -> str:
        """The official prompt for this phrase in a prompt family's wording."""
        return translation_prompt(self.source, self.source_lang, self.target_lang, family)

    @property
    def copies(self) -> bool:
        """A copy-heavy row (the table's last twelve): its answer copies digits, a URL or file
        name, an e-mail address or code from its source. The translation demo models know them
        (speculative decoding's tests and benchmark draft from them); the demo recogniser does not
        (:func:`hunyuan_webui.demo.asr_data.spoken_phrases`)."""
        text = self.source
        return any(ch.isdigit() for ch in text) or "." in text.strip(".") or \
            any(mark in text for mark in ("_", "@"))


def load_phrases(path: Path | str = PHRASES_PATH) -> list[Phrase]:
    """The phrase table: a UTF-8 TSV with ``source_lang target_lang source target`` columns."""
    path = Path(path)
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        phrases = [Phrase(languages.normalize(row["source_lang"]),
                          languages.normalize(row["target_lang"]), row["source"], row["target"])
                   for row in reader]
    if not phrases:
        raise ValueError(f"{path} holds no phrases")
    seen: dict[tuple[str, str, str], str] = {}
    for p in phrases:
        key = (p.source_lang, p.target_lang, p.source)
        if not p.source or not p.target:
            raise ValueError(f"{path}: empty source or target in {p}")
        if seen.setdefault(key, p.target) != p.target:
            raise ValueError(f"{path}: {key} has two targets")
    return phrases


def phrases_digest(path: Path | str = PHRASES_PATH) -> str:
    """SHA-256 of the phrase table, recorded in the sidecar to tell a stale checkpoint."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
