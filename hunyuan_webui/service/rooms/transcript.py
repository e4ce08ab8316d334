"""A class's lesson as a transcript: every sentence with its translations, and the questions.

Built from a room's log (:mod:`hunyuan_webui.service.rooms`) as plain text (each sentence, then
one line per language), CSV (a column per language, for a spreadsheet: UTF-8 with a byte order
mark, which is what makes Excel read Chinese and Arabic as such), Markdown (a table) or a Word
document (``docx``: the sentence, then each language's translation, in a table made by the
project's own Word writer, :func:`hunyuan_webui.files.bilingual.docx_bytes`).
"""

from __future__ import annotations

import io
import time
from collections.abc import Sequence
from typing import Any

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError
from hunyuan_webui.files import bilingual, formulas

FORMATS = {"txt": "text/plain; charset=utf-8", "csv": "text/csv; charset=utf-8",
           "md": "text/markdown; charset=utf-8",
           "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
BOM = "\ufeff"


def lesson(events: Sequence[tuple[int, dict[str, Any]]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The sentences in order, each with ``translations`` by language, and every language seen."""
    rows: dict[int, dict[str, Any]] = {}
    langs: list[str] = []
    for seq, event in events:
        if event["type"] == "sentence":
            rows[seq] = {**event, "seq": seq, "translations": {event["lang"]: event["text"]}}
            langs.append(event["lang"])
        elif event["type"] == "translation" and event["sid"] in rows and "text" in event:
            rows[event["sid"]]["translations"][event["lang"]] = event["text"]
            langs.append(event["lang"])
        elif event["type"] == "correction" and event.get("sid") in rows and "text" in event:
            row = rows[event["sid"]]  # the teacher's mend, or a guard's: the last one stands
            row["translations"][event["lang"]] = event["text"]
            if event.get("source"):
                row["text"] = event["text"]
        elif event["type"] == "question":  # its own words too, in the student's language
            rows[seq] = {**event, "seq": seq,
                         "translations": {event["lang"]: event["text"]}}
            langs.append(event["lang"])
    return list(rows.values()), list(dict.fromkeys(langs))


def render(events: Sequence[tuple[int, dict[str, Any]]], fmt: str, teacher_lang: str,
           title: str = "") -> str | bytes:
    if fmt not in FORMATS:
        raise InputError(f"Transcript formats: {', '.join(FORMATS)}.")
    rows, langs = lesson(events)
    langs = [teacher_lang] + sorted(code for code in langs if code != teacher_lang)
    for row in rows:  # a question reaches the teacher translated: that is its teacher column
        if row["type"] == "question" and row.get("translation"):
            row["translations"].setdefault(teacher_lang, row["translation"])
    return {"txt": _text, "csv": _csv, "md": _markdown, "docx": _docx}[fmt](rows, langs, title)


def _label(row: dict[str, Any]) -> str:
    if row["type"] == "question":
        return f"Q ({row.get('name') or '?'})"
    if row.get("kind") == "question":
        return f"shown Q ({row.get('who') or '?'})"
    return ""


def _when(row: dict[str, Any]) -> str:
    return time.strftime("%H:%M:%S", time.localtime(row.get("t", 0)))


def _name(code: str) -> str:
    try:
        return languages.get(code).english
    except InputError:
        return code


def _text(rows: list[dict[str, Any]], langs: list[str], title: str) -> str:
    out = [title or "Class transcript", ""]
    for row in rows:
        label = _label(row)
        out.append(f"[{_when(row)}]{' ' + label if label else ''}")
        for code in [row["lang"]] + [c for c in langs if c != row["lang"]]:
            if code in row["translations"]:
                out.append(f"  {code}: {row['translations'][code]}")
        out.append("")
    return "\n".join(out)


def _csv(rows: list[dict[str, Any]], langs: list[str], title: str) -> str:
    buffer = io.StringIO()
    writer = formulas.writer(buffer)  # a student's name or question is never a formula
    writer.writerow(["time", "kind", "from", "source_lang", *langs])
    for row in rows:
        writer.writerow([_when(row), row["type"] if row["type"] == "question"
                         else row.get("kind", "teacher"), row.get("name") or row.get("who") or "",
                         row["lang"], *(row["translations"].get(c, "") for c in langs)])
    return BOM + buffer.getvalue()


def _markdown(rows: list[dict[str, Any]], langs: list[str], title: str) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    out = [f"# {cell(title or 'Class transcript')}", "",
           "| time | | " + " | ".join(_name(c) for c in langs) + " |",
           "|---|---|" + "---|" * len(langs)]
    for row in rows:
        out.append(f"| {_when(row)} | {cell(_label(row))} | "
                   + " | ".join(cell(row["translations"].get(c, "")) for c in langs) + " |")
    return "\n".join(out) + "\n"


def _docx(rows: list[dict[str, Any]], langs: list[str], title: str) -> bytes:
    header = ["Time", "", *(f"{_name(c)} ({c})" for c in langs)]
    rtl = [False, False, *(_rtl(c) for c in langs)]
    table = [[_when(row), _label(row), *(row["translations"].get(c, "") for c in langs)]
             for row in rows]
    return bilingual.docx_bytes(table, header, title=title or "Class transcript", rtl=rtl)


def _rtl(code: str) -> bool:
    try:
        return languages.get(code).rtl
    except InputError:
        return False
