"""The sentence view and the readings under the boxes, as HTML the page shows.

Once a translation is done, :func:`sentence_view` shows the text and its translation sentence by
sentence: each source segment and the part of the translation that is its own (the service's
alignment, :attr:`TranslationResult.alignment`) carry the same ``data-seg``, and
``scripts/22-highlight.js`` marks a sentence's counterpart when the visitor hovers or taps it.
Nothing is shown unless every segment's translation is known: a sentence is never marked beside
words that are not its own. The boxes stay plain text (copying the output copies the text).

:func:`reading` is the romanization (pinyin...) of a text, under the box it reads. Each block
names, by :func:`text_key`, the texts it was made for; the script hides it once the visitor's
boxes hold something else (an edit, Swap, Clear, a history row), so it never reads out a text
that is no longer there.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from hunyuan_webui import languages, romanize
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.web.page.text import say

MIN_SENTENCES = 2  # one sentence beside its whole translation marks nothing new


def text_key(text: str) -> str:
    """FNV-1a (32 bits) over the text's UTF-16 code units, as the page's script computes it
    from a text box's value."""
    key = 0x811C9DC5
    data = text.encode("utf-16-le", errors="surrogatepass")
    for low, high in zip(data[::2], data[1::2]):
        key = ((key ^ (low | high << 8)) * 0x01000193) & 0xFFFFFFFF
    return f"{key:08x}"


def sentence_view(source: str, translation: str, alignment: Sequence[Sequence[int]],
                  source_lang: str, target_lang: str, lang: str = "en") -> str:
    """Both texts, each segment a span that its counterpart shares a ``data-seg`` with; "" when
    the alignment is unknown, does not fit the texts, or has fewer than two sentences."""
    if len(alignment) < MIN_SENTENCES or not _fits(alignment, len(source), len(translation)):
        return ""
    rtl = ' dir="rtl"' if _rtl(target_lang) else ""
    src = _spans(source, [(s0, s1) for s0, s1, _t0, _t1 in alignment])
    out = _spans(translation, [(t0, t1) for _s0, _s1, t0, t1 in alignment])
    return (f'<div class="hymt-sentences" data-hymt-src="{text_key(source)}" '
            f'data-hymt-out="{text_key(translation)}">'
            f'<p class="hymt-sentences-title">{html.escape(say(lang, "sentences_title"))}</p>'
            f'<div class="hymt-pair">'
            f'<div id="align-source" class="hymt-side" lang="{_attr(source_lang)}">{src}</div>'
            f'<div id="align-target" class="hymt-side" lang="{_attr(target_lang)}"{rtl}>{out}'
            f'</div></div></div>')


def reading(text: str, code: str | None, wanted: bool, side: str = "src") -> str:
    """The romanization of ``text`` (in language ``code``) when asked for and there is one that
    differs from the text; ``side``: which box it reads ("src" or "out")."""
    if not wanted or not code or not (text or "").strip():
        return ""
    read = romanize.romanize(text, code) if romanize.supports(code) else None
    if not read or read.strip() == text.strip():  # nothing was read (e.g. not that language)
        return ""
    return (f'<div class="hymt-reading" data-hymt-{side}="{text_key(text)}" '
            f'lang="{_attr(code)}-Latn">{html.escape(read)}</div>')


def _fits(alignment: Sequence[Sequence[int]], source: int, translation: int) -> bool:
    ends = (0, 0)
    for s0, s1, t0, t1 in alignment:
        if not (ends[0] <= s0 < s1 <= source and ends[1] <= t0 < t1 <= translation):
            return False
        ends = (s1, t1)
    return True


def _spans(text: str, spans: list[tuple[int, int]]) -> str:
    out, at = [], 0
    for i, (start, end) in enumerate(spans):
        out.append(html.escape(text[at:start]))
        # Reached with Tab too (scripts/22-highlight.js: focus marks, Enter or Space pins).
        out.append(f'<span class="hymt-seg" data-seg="{i}" tabindex="0">'
                   f'{html.escape(text[start:end])}</span>')
        at = end
    out.append(html.escape(text[at:]))
    return "".join(out)


def _rtl(code: str) -> bool:
    try:
        return languages.is_rtl(code)
    except TranslatorError:
        return False


def _attr(code: str) -> str:
    return html.escape(code or "", quote=True)
