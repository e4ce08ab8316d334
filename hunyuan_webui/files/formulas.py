"""No spreadsheet formula in a CSV file the app writes (OWASP's "CSV Injection").

A spreadsheet (Excel, LibreOffice Calc, Google Sheets, WPS) opens a CSV cell that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return as a formula: a student
named ``=HYPERLINK("http://…","Click")`` became a link in the teacher's transcript. As OWASP
recommends, such a cell is written with a single quote in front (``'=HYPERLINK(…)``), which the
spreadsheet takes as "this is text" and does not show; the ``csv`` module quotes the cell and
doubles its own quotes. The full-width forms (``＝``, ``＋``, ``－``, ``＠``), which a CJK
spreadsheet may read as their ASCII twins, and a leading line feed or NUL are treated the same.

Every CSV the app writes of its own (the class transcript, the page's history and phrasebook
export, the bilingual export) goes through :func:`writer`. A CSV *being translated* keeps its
cells' meaning: a source cell that is a formula stays as it was, but a translation never makes
text into one (:func:`translated`).
"""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\x00", "\uff1d", "\uff0b", "\uff0d",
                  "\uff20")


def is_formula(cell: object) -> bool:
    """Whether a spreadsheet could read ``cell`` as a formula."""
    return isinstance(cell, str) and cell.startswith(FORMULA_STARTS)


def neutral(cell: Any) -> Any:
    """``cell`` as text a spreadsheet will not evaluate (non-strings are left as they are)."""
    return "'" + cell if is_formula(cell) else cell


def translated(source: str, translation: str) -> str:
    """A translated cell: neutralised where the translation would begin a formula and its
    source did not (a source formula is the file's own, and is kept)."""
    return neutral(translation) if not is_formula(source) else translation


class SafeWriter:
    """``csv.writer`` whose every cell passes :func:`neutral`."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._inner.writerow([neutral(cell) for cell in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(buffer: Any, *args: Any, **kwargs: Any) -> SafeWriter:
    """``csv.writer(buffer, ...)`` for a CSV file of the app's own: no cell is a formula."""
    return SafeWriter(csv.writer(buffer, *args, **kwargs))
