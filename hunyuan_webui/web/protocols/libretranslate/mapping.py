"""LibreTranslate's protocol onto the service's front door: ``q`` (one text or a list) as
translation requests with the page's defaults, the results as ``translatedText`` (and
``detectedLanguage`` for ``auto``), a detection as its candidates."""

from __future__ import annotations

from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.detect import Detection
from hunyuan_webui.service import TranslationRequest, TranslationResult
from hunyuan_webui.web.protocols.protocol import MAX_LIST_ITEMS


def texts_of(q: Any) -> list[str] | str:
    """``q``'s texts, or the reason they are refused (LibreTranslate's words)."""
    if q is None or not isinstance(q, str | list) or (
            isinstance(q, list) and not all(isinstance(x, str) for x in q)):
        return "Invalid request: missing q parameter"
    texts = q if isinstance(q, list) else [q]
    if not texts or len(texts) > MAX_LIST_ITEMS:
        return f"Invalid request: send between 1 and {MAX_LIST_ITEMS} texts"
    return texts


def requests_for(texts: list[str], source: str, target: str) -> list[TranslationRequest]:
    # The same defaults as the page and /v1/translate.
    return [TranslationRequest(text=t, source_lang=source, target_lang=target) for t in texts]


def answer(q: str | list[str], source: str, results: list[TranslationResult]) -> dict[str, Any]:
    translated: Any = [r.text for r in results]
    body: dict[str, Any] = {"translatedText": translated if isinstance(q, list) else translated[0]}
    if source == languages.AUTO:
        detected = [{"confidence": round(100 * (r.detection.confidence if r.detection else 0), 1),
                     "language": r.source_lang} for r in results]
        body["detectedLanguage"] = detected if isinstance(q, list) else detected[0]
    return body


def language_list() -> list[dict[str, Any]]:
    """Every language can be translated to every other."""
    codes = list(languages.CODES)
    return [{"code": lang.code, "name": lang.english,
             "targets": [c for c in codes if c != lang.code]} for lang in languages.LANGUAGES]


def detections(det: Detection) -> list[dict[str, Any]]:
    """[{confidence (0-100), language}]."""
    candidates = det.candidates or ((det.code, det.confidence),) if det.code else ()
    return [{"confidence": round(100 * p, 1), "language": c} for c, p in candidates if c]
