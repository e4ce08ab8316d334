"""What a translation is asked for and what it gives back: the service's data types.

:class:`TranslationRequest` is what every front end builds (the page, the HTTP routes, the command
line, the library); :class:`Update` is one step of a streamed translation, and the last one
carries the :class:`TranslationResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.detect import Detection
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.models import TRANSLATE


@dataclass(frozen=True)
class TranslationRequest:
    text: str
    target_lang: str
    source_lang: str = languages.AUTO
    options: DecodingOptions | None = None  # None: the loaded model's defaults (its card's)
    mode: str = TRANSLATE
    glossary: tuple[tuple[str, str], ...] = ()
    context: str = ""
    variants: int = 3  # alternatives mode: how many
    cache: bool = True  # False: a fresh answer (Retranslate), not the cached or shared one
    style: str = ""  # style mode: free text
    instructions: tuple[str, ...] = ()  # instructions mode: one per numbered line
    data_format: str = ""  # structured mode: json, xml, yaml, csv...; "" = detect


@dataclass
class TranslationResult:
    text: str
    source_lang: str
    target_lang: str
    model: str
    cached: bool
    detection: Detection | None = None
    notice: str = ""
    segments: int = 0
    cached_segments: int = 0
    usage: dict[str, Any] = field(default_factory=dict)
    glossary_found: tuple[str, ...] = ()
    glossary_missing: tuple[str, ...] = ()
    alternatives: tuple[str, ...] = ()  # alternatives mode: every variant, the first is ``text``
    candidates: tuple[str, ...] = ()  # ensemble mode: what Chimera fused
    # Segments a guard marked (service.checks.answers): {"segment", "code", "guard", "detected", ...}
    warnings: tuple[dict[str, Any], ...] = ()
    # Which part of ``text`` translates which source segment (service.translate.job), when every segment's
    # is known: (source start, source end, text start, text end) per segment, in characters.
    # Empty when not known (a long text's parts, a text returned unchanged).
    alignment: tuple[tuple[int, int, int, int], ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out = {
            "translation": self.text, "source_lang": self.source_lang,
            "target_lang": self.target_lang, "model": self.model, "cached": self.cached,
            "usage": {**self.usage, "segments": self.segments,
                      "cached_segments": self.cached_segments},
        }
        if self.detection is not None:
            out["detected"] = {"language": self.detection.code,
                               "confidence": round(self.detection.confidence, 4),
                               "reliable": self.detection.reliable}
        if self.notice:
            out["notice"] = self.notice
        if self.glossary_found or self.glossary_missing:
            out["glossary"] = {"found": list(self.glossary_found),
                               "missing": list(self.glossary_missing)}
        if self.alternatives:
            out["alternatives"] = list(self.alternatives)
        if self.candidates:
            out["candidates"] = list(self.candidates)
        if self.warnings:
            out["warnings"] = [dict(w) for w in self.warnings]
        return out


@dataclass(frozen=True)
class Update:
    delta: str
    text: str  # everything so far
    done_segments: int
    total_segments: int
    result: TranslationResult | None = None  # set on the last update only
    # The answers' checks took back text already given: ``text`` replaces everything so far
    # (``delta`` is empty), and ``warnings`` are the marked segments' so far.
    replaced: bool = False
    warnings: tuple[dict[str, Any], ...] = ()
