"""Step 3 for Latin, Cyrillic, Arabic and Devanagari: a statistical model picks the language.

Latin (en fr pt es tr it de vi ms id tl pl cs nl), Cyrillic (ru uk kk mn), Arabic (ar fa ur) and
Devanagari (hi mr) go to **py3langid** (the maintained fork of langid.py, a naive Bayes model over
byte n-grams that ships inside the wheel), restricted once to those 23 languages and then to the
candidates of the text's script, so it never answers a language outside our table.

Why py3langid: ``scripts/compare_detectors.py`` ran lingua-language-detector (high and low
accuracy), py3langid, pycld2, cld3-py and langdetect on the hand-written short sentences of
``tests/data/detect_samples.tsv`` (results and the decision in ``docs/LANGUAGE_DETECTION.md``).
Inside this pipeline py3langid made the fewest mistakes on the languages that share a script
(ms/id, ru/uk/kk/mn, ar/fa/ur, hi/mr), for about 60 MB of memory (numpy aside) and well under
a millisecond a sentence; lingua's high-accuracy mode was a little less accurate here and needs
about 550 MB, its low-accuracy mode (about 50 MB) clearly less accurate.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hunyuan_webui.detect.scripts import langid_codes


class RestrictedLangid:
    """py3langid restricted to :func:`~hunyuan_webui.detect.scripts.langid_codes` (the table's
    languages of shared scripts, when it is built)."""

    def __init__(self) -> None:
        from py3langid.langid import MODEL_FILE, LanguageIdentifier

        full = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        full.set_languages(langid_codes())
        # A fresh identifier over the restricted arrays lets the full model (~40 MB) go.
        self._langid: Any = LanguageIdentifier(
            full.nb_ptc, full.nb_pc, full.nb_classes, full.tk_nextmove, full.tk_output,
            norm_probs=True, tk_row=full.tk_row)

    def rank(self, text: str, group: Iterable[str]) -> list[tuple[str, float]]:
        """The languages of ``group``, most probable first, with probabilities summing to 1."""
        allowed = set(group)
        values = {code: p for code, p in self._langid.rank(text) if code in allowed}
        norm = sum(values.values())
        if norm <= 0:
            return []
        return sorted(((c, v / norm) for c, v in values.items()), key=lambda i: i[1], reverse=True)
