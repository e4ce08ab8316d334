"""LibreTranslate's protocol onto the service's front door: ``q`` (one text or a list) as
translation requests with the page's defaults (``alternatives``: the alternatives mode), the
results as ``translatedText`` (and ``detectedLanguage`` for ``auto``, ``alternatives`` when asked),
a detection as its candidates, a translated file as the ``translatedFileUrl`` that downloads it,
and the front end's settings. Its refusals are in its words ("zz is not supported")."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from hunyuan_webui import languages
from hunyuan_webui.detect import Detection
from hunyuan_webui.errors import UnknownLanguageError
from hunyuan_webui.files import FileResult
from hunyuan_webui.models import Mode
from hunyuan_webui.modes import MAX_ALTERNATIVES
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


def unsupported(source: str, target: str) -> str | None:
    """LibreTranslate's words for a language it does not know: "zz is not supported"."""
    for code, may_be_auto in ((source, True), (target, False)):
        if may_be_auto and code.strip().lower() == languages.AUTO:
            continue
        try:
            languages.normalize(code)
        except UnknownLanguageError:
            return f"{code} is not supported"
    return None


def alternatives_of(value: Any) -> int | str:
    """How many alternatives were asked for (0: none), or LibreTranslate's words refusing it."""
    if value is None or value == "":
        return 0
    try:
        count = int(value)
    except (TypeError, ValueError):
        return "Invalid request: alternatives parameter is not a number"
    if isinstance(value, bool) or count < 0:
        return "Invalid request: alternatives parameter is not a number"
    if count > MAX_ALTERNATIVES - 1:
        return f"Invalid request: alternatives parameter must be <= {MAX_ALTERNATIVES - 1}"
    return count


def requests_for(texts: list[str], source: str, target: str,
                 alternatives: int = 0) -> list[TranslationRequest]:
    """The same defaults as the page and /v1/translate; ``alternatives`` asks the
    alternatives mode for that many variants beside the best."""
    if alternatives:
        return [TranslationRequest(text=t, source_lang=source, target_lang=target,
                                   mode=Mode.ALTERNATIVES, variants=alternatives + 1)
                for t in texts]
    return [TranslationRequest(text=t, source_lang=source, target_lang=target) for t in texts]


def _others(result: TranslationResult, count: int) -> list[str]:
    """The distinct variants beside the translation, at most ``count`` (as LibreTranslate)."""
    return [v for v in dict.fromkeys(result.alternatives) if v != result.text][:count]


def answer(q: str | list[str], source: str, results: list[TranslationResult],
           alternatives: int = 0) -> dict[str, Any]:
    translated: Any = [r.text for r in results]
    body: dict[str, Any] = {"translatedText": translated if isinstance(q, list) else translated[0]}
    if alternatives:
        others = [_others(r, alternatives) for r in results]
        body["alternatives"] = others if isinstance(q, list) else others[0]
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


def frontend_settings(char_limit: int, formats: list[str], keys: bool,
                      page_source: str = "auto", page_target: str = "en") -> dict[str, Any]:
    """LibreTranslate's ``/frontend/settings``: what its front end needs before it starts,
    among them the file formats ``/translate_file`` takes."""
    def named(code: str) -> dict[str, str]:
        name = "Auto Detect" if code == languages.AUTO else languages.get(code).english
        return {"code": code, "name": name}

    return {"charLimit": char_limit, "frontendTimeout": 500, "apiKeys": keys,
            "keyRequired": keys, "suggestions": False, "filesTranslation": True,
            "supportedFilesFormat": formats,
            "language": {"source": named(page_source), "target": named(page_target)}}


def file_answer(url: str, result: FileResult) -> dict[str, Any]:
    """``/translate_file``'s answer: the URL that downloads the translated file (and, beyond
    LibreTranslate's shape, a notice when the file was already in the target language)."""
    body: dict[str, Any] = {"translatedFileUrl": url}
    if result.unchanged:
        name = languages.get(result.target_lang).english
        body["notice"] = f"The file is already in {name}; it was returned unchanged."
    return body


def download_token(doc_id: str, key: str, filename: str) -> str:
    """The last segment of the download URL: the document and its key (the URL is all a
    LibreTranslate client has to download with), then the file's name, as LibreTranslate's
    ``<uuid>.<name>``."""
    return f"{doc_id}-{key}.{quote(filename)}"


def parse_token(token: str) -> tuple[str, str]:
    """The document and key of a download URL's last segment."""
    head = token.split(".", 1)[0]
    doc_id, _, key = head.partition("-")
    return doc_id, key
