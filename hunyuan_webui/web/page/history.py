"""The history of translations the page keeps in the visitor's browser (``gr.BrowserState``).

One row per text and pair, newest first: ``[text, translation, "en → zh", source, target]``.
The browser sends the whole history with every Translate (it is one of the listener's inputs), so
it is bounded in bytes as well as in rows: ten translations of 50,000 characters made a history
of a megabyte, past the server's request limit, and from then on every Translate was refused.
"""

from __future__ import annotations

import json
from typing import Any

HISTORY_LIMIT = 50  # rows
# The share of the server's request limit (--max-body-bytes) the history may take: the rest is
# for the text being translated (the page's longest, in any script) and the other inputs.
HISTORY_SHARE = 4


def _key(item: Any) -> tuple[Any, Any, Any]:
    """A history row's text, source and target (a row the browser kept malformed: Nones)."""
    values = (list(item) + [""] * 5)[:5] if isinstance(item, list | tuple) else [None] * 5
    return values[0], values[3], values[4]


def _drafts(earlier: Any, text: str) -> bool:
    """Whether ``earlier`` (a history row's text) is a draft of ``text``: one the other's start
    (typed on, or deleted back)."""
    return isinstance(earlier, str) and bool(earlier.strip()) and (
        text.startswith(earlier.rstrip()) or earlier.startswith(text.rstrip()))


def previous_translation(history: list[Any] | None, text: str, target: str) -> str:
    """The newest row's translation when that row was a draft of ``text`` into ``target``: the
    engine drafts from it (speculative decoding), so the text typed on is translated faster."""
    if not history:
        return ""
    drafted, _, drafted_target = _key(history[0])
    translation = (list(history[0]) + [""])[1] if isinstance(history[0], list | tuple) else ""
    if drafted_target == target and _drafts(drafted, text) and isinstance(translation, str):
        return translation
    return ""


def newest_first(history: list[Any], row: list[str], live: bool = False) -> list[Any]:
    """``row`` at the top of the history, and no other row with its text and pair (the history
    kept every repeat of a translation). A translation made as the visitor types (``live``)
    takes the place of the newest row when that one was a draft of it: into the same language,
    one text the other's start (typed on, or deleted back). A sentence typed with pauses left a
    row for each pause."""
    if live and history:
        text, _, target = _key(row)
        drafted, _, drafted_target = _key(history[0])
        if drafted_target == target and _drafts(drafted, text):
            history = history[1:]
    return [row, *(item for item in history if _key(item) != _key(row))]


def within_budget(rows: list[Any], max_body_bytes: int, limit: int = HISTORY_LIMIT) -> list[Any]:
    """The newest rows that fit: at most ``limit`` of them, and at most a quarter of the request
    limit in bytes, as the browser sends them (JSON, UTF-8). The newest row is always kept (it is
    the translation on screen); older rows go first. The phrasebook is bounded the same way."""
    budget, used, kept = max_body_bytes // HISTORY_SHARE, 0, []
    for row in rows[:limit]:
        used += len(json.dumps(row, ensure_ascii=False).encode("utf-8", "surrogatepass")) + 1
        if kept and used > budget:
            break
        kept.append(row)
    return kept
