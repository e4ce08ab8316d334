"""What the page keeps in the visitor's browser besides the history: the phrasebook and the glossary.

Both live where the history lives, in Gradio's ``BrowserState`` (the browser's localStorage): the
server keeps nothing of them. The phrasebook holds the translations a visitor saved with the star
button by the output, one row each (text, translation, "en → zh", source code, target code, the
time by the visitor's own clock), newest first, without duplicates. The glossary's rows are
written to the browser on every change and put back in the table when the page loads: it was
lost on every reload. :func:`export_csv` writes the phrasebook and the history as one CSV file.
"""

from __future__ import annotations

import io
from typing import Any

import gradio as gr

from hunyuan_webui import languages
from hunyuan_webui.files import formulas
from hunyuan_webui.web.page.history import within_budget
from hunyuan_webui.web.page.report import phrasebook_rows
from hunyuan_webui.web.page.text import say, ui_lang

PHRASEBOOK_KEY = "hymt-phrasebook"
GLOSSARY_KEY = "hymt-glossary"
PHRASEBOOK_LIMIT = 500  # rows; a few hundred short phrases are well within localStorage's 5 MB
GLOSSARY_LIMIT = 200  # the glossary's own limit (modes.parse_glossary)
# The star's script: the time of the visitor's clock, in the last input (the server knows neither
# the visitor's time zone nor how the visitor writes a date).
STAR_JS = "(...args) => [...args.slice(0, -1), window.hymt.localTime()]"
EXPORT_COLUMNS = ["list", "source_lang", "target_lang", "source", "translation", "saved"]


def _row(row: Any) -> list[str]:
    """A stored row, six strings long (older or foreign rows may be shorter)."""
    values = list(row) if isinstance(row, list | tuple) else []
    return [str(v) if v is not None else "" for v in (values + [""] * 6)[:6]]


def _same(a: Any, b: Any) -> bool:
    """The same text and translation in the same pair."""
    a, b = _row(a), _row(b)
    return (a[0], a[1], a[3], a[4]) == (b[0], b[1], b[3], b[4])


def _pair_of(history: Any, text: str, output: str, source: str, target: str,
             detected: str) -> tuple[str, str]:
    """The pair the translation on screen was made in: its history row's (the detected source
    language included), else the pickers' (with the detected language for "auto")."""
    for row in history or []:
        row = _row(row)
        if row[0] == text and row[1] == output and row[3] and row[4]:
            return row[3], row[4]
    if source == languages.AUTO and detected:
        source = detected
    return source or languages.AUTO, target or ""


def star(phrasebook: Any, history: Any, text: str, output: str, source: str, target: str,
         detected: str, when: str, visitor: gr.Request | None = None, *,
         max_body_bytes: int) -> tuple[Any, Any]:
    """The star by the output: the translation on screen into the phrasebook, at its top (once:
    saving it again moves it there). The browser sends the phrasebook with every star and page
    load, so it is bounded as the history is: its oldest entries go first."""
    lang = ui_lang(visitor)
    text, output = text or "", output or ""
    if not output.strip():
        raise gr.Error(say(lang, "star_nothing"), print_exception=False)
    sl, tl = _pair_of(history, text, output, source, target, detected or "")
    entry = [text, output, f"{sl} → {tl}", sl, tl, (when or "")[:40]]
    kept = [_row(row) for row in phrasebook or [] if not _same(row, entry)]
    entries = within_budget([entry, *kept], max_body_bytes, PHRASEBOOK_LIMIT)
    gr.Info(say(lang, "starred"))
    return entries, phrasebook_rows(entries, lang)


def pick(phrasebook: Any, evt: gr.SelectData) -> Any:
    """The phrasebook row clicked last: the one Remove removes."""
    rows = phrasebook or []
    index = evt.index[0] if isinstance(evt.index, list | tuple) else evt.index
    if not isinstance(index, int) or not 0 <= index < len(rows):
        return None
    return _row(rows[index])


def remove(phrasebook: Any, picked: Any, visitor: gr.Request | None = None
           ) -> tuple[Any, Any, Any]:
    lang = ui_lang(visitor)
    if not picked:
        raise gr.Error(say(lang, "star_pick"), print_exception=False)
    entries = [_row(row) for row in phrasebook or [] if not _same(row, picked)]
    return entries, phrasebook_rows(entries, lang), None


def glossary_rows(table: Any) -> list[list[str]]:
    """The glossary table's filled rows, as the browser keeps them (nothing is refused here:
    a wrong row is the translation's to refuse, with a message)."""
    rows = table.values.tolist() if hasattr(table, "values") else table
    out = []
    for row in rows if isinstance(rows, list | tuple) else []:
        pair = list(row)[:2] if isinstance(row, list | tuple) else []
        pair = [str(v) if v is not None else "" for v in pair + [""] * (2 - len(pair))]
        if any(v.strip() for v in pair):
            out.append(pair)
    return out[:GLOSSARY_LIMIT]


def remember_glossary(table: Any) -> list[list[str]]:
    """Every change of the glossary table, into the browser's storage."""
    return glossary_rows(table)


def export_csv(history: Any, phrasebook: Any) -> bytes:
    """The phrasebook and the history in one CSV file, a column saying which list each row is
    from. CSV in UTF-8 with a byte-order mark: a spreadsheet (Excel, WPS, Numbers) opens it with
    a double click and reads its Chinese, which a JSON file would not give a teacher."""
    buffer = io.StringIO()
    writer = formulas.writer(buffer)  # a text or its translation is never a formula
    writer.writerow(EXPORT_COLUMNS)
    for name, rows in (("phrasebook", phrasebook), ("history", history)):
        for row in rows or []:
            text, translation, _pair, sl, tl, when = _row(row)
            writer.writerow([name, sl, tl, text, translation, when])
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")
