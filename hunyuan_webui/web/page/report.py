"""What the page writes about a translation once it is done, in the visitor's UI language.

The detected language and its confidence, the last run's timings, the glossary report, the
alternatives and Chimera's candidates (the romanizations: :mod:`aligned`).
Pure functions of a :class:`TranslationResult`, so they are tested without a browser.
"""

from __future__ import annotations

import html

from hunyuan_webui import languages, modes
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service import TranslationResult
from hunyuan_webui.web.page.text import headers, language_name, say
from hunyuan_webui.web.page.wording import in_page_language

LOW_CONFIDENCE = 0.5


def detection_markdown(result: TranslationResult | None, source: str, lang: str = "en") -> str:
    if result is None or result.detection is None or source != languages.AUTO:
        return ""
    det = result.detection
    if det.code is None:
        return say(lang, "not_recognised")
    text = say(lang, "detected", name=language_name(lang, det.code), confidence=det.confidence)
    if not det.reliable or det.confidence < LOW_CONFIDENCE:
        text += say(lang, "low_confidence")
    return text


def last_run_markdown(result: TranslationResult, lang: str = "en", parts: int = 1) -> str:
    """This visitor's last translation: latency, first-token time, tokens per second."""
    usage = result.usage
    latency = usage.get("latency_s") or 0
    out = [say(lang, "last_run", latency=latency)]
    if usage.get("first_token_s") is not None:
        out.append(say(lang, "first_token", ms=usage["first_token_s"] * 1000))
    tokens = usage.get("completion_tokens") or 0
    if tokens and latency:
        out.append(say(lang, "speed", rate=tokens / latency))
    if result.segments > 1:
        out.append(say(lang, "segments", n=result.segments, cached=result.cached_segments))
    elif result.cached:
        out.insert(0, say(lang, "from_cache"))
    if parts > 1:
        out.append(say(lang, "parts", n=parts))
    if result.source_lang == result.target_lang:
        out.append(say(lang, "already", name=language_name(lang, result.source_lang)))
    elif result.notice:  # the mode's or the glossary's notice, in the page's language
        out.append(in_page_language(lang, result.notice))
    if result.warnings:  # a guard marked some of the answer (service.checks.answers)
        out.insert(0, guard_notice(result, lang))
    return " · ".join(out)


def guard_notice(result: TranslationResult, lang: str = "en") -> str:
    """The short notice beside an answer a guard marked: what looks wrong, and in which parts."""
    kinds = list(dict.fromkeys(w["guard"] for w in result.warnings))

    def first(kind: str, field: str, default: str) -> str:
        return next((w[field] for w in result.warnings if w["guard"] == kind and w.get(field)),
                    default)

    what = ", ".join(say(lang, f"guard_{kind}", missing=first(kind, "missing", ""),
                         name=language_name(lang, first(kind, "detected", result.source_lang)))
                     for kind in kinds)
    return say(lang, "guard_marked", what=what, n=len(result.warnings))


def extras_markdown(result: TranslationResult, show_candidates: bool = True,
                    lang: str = "en", source: str | None = None,
                    glossary: tuple[tuple[str, str], ...] = ()) -> str:
    """Glossary report, alternatives and ensemble candidates, when the mode produced them.
    ``source`` and ``glossary``: the text and its term pairs, for a report of only the terms
    that occur in the text (:func:`glossary_markdown`)."""
    out = []
    if source is not None and glossary:
        out.append(glossary_markdown(source, result.text, glossary, lang))
    elif result.glossary_found or result.glossary_missing:
        found = ", ".join(html.escape(t) for t in result.glossary_found) or "—"
        missing = ", ".join(html.escape(t) for t in result.glossary_missing) or "—"
        out.append(say(lang, "glossary_report", found=found, missing=missing))
    # Identical variants collapse (the service keeps distinct ones): three identical answers
    # came back as one, and the page, which listed only two or more, showed nothing.
    alternatives = list(dict.fromkeys(result.alternatives))
    if len(alternatives) == 1:
        out.append(say(lang, "alternatives_one", text=html.escape(alternatives[0])))
    elif alternatives:
        out.append(say(lang, "alternatives") + "\n" + "\n".join(
            f"{i}. {html.escape(a)}" for i, a in enumerate(alternatives, 1)))
    if result.candidates and show_candidates:
        out.append(say(lang, "candidates") + "\n" + "\n".join(
            f"{i}. {html.escape(c)}" for i, c in enumerate(result.candidates, 1)))
    return "\n\n".join(out)


def glossary_markdown(source: str, translation: str, glossary: tuple[tuple[str, str], ...],
                      lang: str = "en") -> str:
    """The glossary's report on one translation: only the terms whose source side occurs in the
    text (case-insensitively), each said to be kept in the translation or not. It listed every
    term, those absent from the text among them, as "missing"."""
    folded = source.casefold()
    used = tuple((s, t) for s, t in glossary if s.casefold() in folded)
    if not used:
        return say(lang, "glossary_not_in_text", total=len(glossary))
    found, _missing = modes.glossary_report(translation, used)

    def pairs(kept: bool) -> str:
        return ", ".join(f"{html.escape(s)} → {html.escape(t)}" for s, t in used
                         if (t in found) == kept) or "—"

    return say(lang, "glossary_in_text", n=len(used), total=len(glossary), found=pairs(True),
               missing=pairs(False))


def pair_name(lang: str, source: str, target: str) -> str:
    """A language pair by its names in the page's language ("English → Chinese", "英语 → 中文");
    a code the table does not know stays as it is."""
    def name(code: str) -> str:
        try:
            language = languages.get(code)
        except TranslatorError:  # an old or foreign row in the browser's storage
            return code
        return language.chinese if lang == "zh" else language.english

    return f"{name(source)} → {name(target)}"


def history_rows(history: list[list[str]] | None, lang: str = "en") -> dict[str, list]:
    """What the history table shows of the stored rows (text, translation, pair, codes), under
    headers in the visitor's UI language (Gradio does not translate a table's headers)."""
    return {"headers": headers(lang, "history_source", "history_translation", "history_pair"),
            "data": [_shown(row, lang)[:3] for row in history or []]}


def phrasebook_rows(entries: list[list[str]] | None, lang: str = "en") -> dict[str, list]:
    """The phrasebook table: source, translation, pair and when it was saved."""
    return {"headers": headers(lang, "history_source", "history_translation", "history_pair",
                               "phrasebook_time"),
            "data": [_shown(row, lang) for row in entries or []]}


def _shown(row: list[str], lang: str) -> list[str]:
    """A stored row (text, translation, "en → zh", source code, target code[, time]) as the
    tables show it: the pair by its names, not its codes."""
    text, translation, pair, source, target, when = (list(row) + [""] * 6)[:6]
    return [text, translation, pair_name(lang, source, target) if source and target else pair,
            when]


def glossary_table(rows: list[list[str]] | None, lang: str = "en") -> dict[str, list]:
    """The glossary table's rows (one empty row to type in when none) under translated headers."""
    return {"headers": headers(lang, "glossary_source", "glossary_target"),
            "data": rows or [["", ""]]}
