"""The demo phrase table's two kinds of rows: the ordinary phrases every demo model knows (the
translation models and the recogniser), and the copy-heavy rows (names, numbers, URLs, code) that
only the translation models know, for speculative decoding's tests and benchmark."""

from __future__ import annotations

import json

from hunyuan_webui.demo.asr import DEMO_ASR_DIR, SIDECAR
from hunyuan_webui.demo.asr_data import spoken_phrases
from hunyuan_webui.demo.phrases import load_phrases


def test_the_copy_heavy_rows_are_the_last_twelve() -> None:
    phrases = load_phrases()
    assert [p.copies for p in phrases] == [False] * (len(phrases) - 12) + [True] * 12


def test_the_recogniser_is_asked_only_for_the_phrases_it_was_trained_on() -> None:
    """The shipped demo recogniser knows the ordinary phrases as espeak-ng speaks them; a
    copy-heavy row added to the table must not become a phrase it is expected to write."""
    spoken = spoken_phrases(load_phrases())
    shipped = json.loads((DEMO_ASR_DIR / SIDECAR).read_text(encoding="utf-8"))
    assert len(spoken) == shipped["phrases"] == 29
    assert ("en", "Call Anna at 555-0199.") not in spoken
    assert ("en", "Good morning.") in spoken and ("zh", "早上好。") in spoken
