"""How long an answer may be: a per-segment budget from its source's length and language pair.

Real models that loop or never emit their end token run to the token cap (2048 by default) on a
three-word sentence. Translations are not that elastic: an answer's length is its source's times a
ratio that depends on the two writing systems (Chinese says in 10 characters what English says in
about 30), so each segment gets a budget of characters with generous headroom, and the loop guard
(:mod:`hunyuan_webui.service.checks.answers`) stops an answer that outgrows it. The engine's own token cap
(``--max-new-tokens``) still applies on top.
"""

from __future__ import annotations

# Characters per unit of meaning, English = 1. Scripts whose characters are syllables or words
# write less; abugidas with many combining marks write more.
DENSITY: dict[str, float] = {
    "zh": 0.35, "zh-Hant": 0.35, "yue": 0.4, "ja": 0.45, "ko": 0.5,
    "my": 1.3, "km": 1.3, "bo": 1.3, "ta": 1.3, "te": 1.2, "gu": 1.1, "bn": 1.1, "th": 1.0,
}
HEADROOM = 2.5  # times the expected length
SLACK_CHARS = 40  # plus this, so short segments ("OK", "你好") keep room for a polite answer


def density(code: str) -> float:
    return DENSITY.get(code, 1.0)


def ratio(source: str, target: str) -> float:
    """Expected characters of answer per character of source, for this pair."""
    return density(target) / density(source)


def answer_budget(segment: str, source: str, target: str) -> int:
    """The most characters an answer to ``segment`` may have before it counts as runaway."""
    return int(len(segment.strip()) * ratio(source, target) * HEADROOM) + SLACK_CHARS
