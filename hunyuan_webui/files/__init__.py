"""Translate uploaded files and give back the same kind of file with the same structure.

:func:`translate_file` takes a file's name and bytes and a ``translate`` function (a batch of
plain-text segments in, the same number of translations out) and returns a :class:`FileResult`.
Every format is parsed with a maintained library, its human text is cut into sentences with
:func:`hunyuan_webui.segment.split_document`, and **all** segments of the file go to ``translate``
in one call, each distinct sentence once (repeated sentences are common in policy documents,
subtitles and spreadsheets), before the file is rebuilt. Nothing is returned unless every segment
was translated: an exception from ``translate`` propagates and no partial file exists.

Formats:

- ``.txt``: the text through ``split_document`` (layout kept byte for byte).
- ``.md``: markdown-it-py finds the inline text; a parser hook records the source range of every
  piece of text the ``text`` rule (and the one-character fallback) consumes, so code blocks,
  inline code, link and image URLs, autolinks, HTML, link definitions, front matter and all markup
  characters are never touched: the output is the input with only those text ranges replaced.
  Image alt text is translated. Emphasis markers split a sentence into pieces (``This is
  **very** good`` is sent as ``This is``, ``very``, ``good``), the price of never sending markup.
- ``.srt``: parsed and validated with the ``srt`` library; indices, timings and positions are
  copied from the input untouched. The lines of one cue are translated together (a sentence often
  runs over two subtitle lines) and the translation is re-wrapped into at most the same number of
  lines; dialogue cues (every line starts with ``-``) keep one line per speaker. Leading and
  trailing ``<i>``/``{\\an8}`` tags of each line are kept in place.
- ``.docx``: python-docx. Every paragraph of the body, tables (nested too), text boxes, headers,
  footers, footnotes and endnotes. Trade-off chosen: text is translated per *formatting span* (a
  run of consecutive ``w:r`` with identical run properties, not interrupted by a tab, break,
  image or field), and the translation goes into the span's first text node. A paragraph in one
  style (the usual case) is therefore translated whole, sentence by sentence, while a bold or
  italic word keeps exactly its formatting (at the cost of being translated on its own). Images,
  tabs, breaks, fields, bookmarks and comments anchors stay where they are. Comments and
  SmartArt/chart text are not translated. Spans that touch in a script written without spaces
  (Chinese sentences in runs of different formatting, as Word splits runs at a change of
  language or font) are joined with a space in a spaced target language
  (:func:`~hunyuan_webui.files.common.space_spans`): "…help. The weather…", not "…help.The…";
  into Chinese or Japanese, the space between two spans' sentences goes after a full stop
  (:func:`~hunyuan_webui.files.common.close_up_spans`): "**谢谢。**请坐。", as in one span.
- ``.html``: the standard library's HTML parser finds the text between tags; only those ranges
  are replaced (unescaped, translated, escaped again), so every tag, attribute and comment is kept
  byte for byte; ``<script>``, ``<style>`` and ``translate="no"`` elements are not translated
  (:mod:`hunyuan_webui.files.html`).
- ``.odt``, ``.odp``, ``.ods``: OpenDocument's paragraphs, per formatting span as for ``.docx``
  (:mod:`hunyuan_webui.files.odf`); ``.epub``: each chapter through the HTML path, the title and
  table of contents too (:mod:`hunyuan_webui.files.epub`).
- ``.pptx`` and ``.xlsx``: the slides' and notes' text, the cells' strings, per formatting span
  as for ``.docx``; every other member of the package copied byte for byte
  (:mod:`hunyuan_webui.files.office`).
- ``.pdf``: the same pages, each text block translated in its box (:mod:`hunyuan_webui.files.pdf`);
  or, ``output_format="docx"``, a Word file of its blocks in reading order.
- ``.csv``: ``csv`` with a sniffed dialect; the header row is kept; only the chosen columns (by
  default every column with prose in it) are translated. Rows and fields that are not translated
  are copied byte for byte, and a translated field keeps its original quoting.

:mod:`hunyuan_webui.files.bilingual` writes a text beside its translation (two columns, a CSV
or a .docx table) for the page's bilingual export.

Errors the user can fix raise :class:`InputError` (or ``InputTooLongError``) with a message that
says what is wrong: unsupported extension, too large, content that does not match the extension,
text that is not UTF-8, malformed SRT or CSV.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError, InputTooLongError
from hunyuan_webui.files.bilingual import BILINGUAL, COLUMNS, OUTPUTS, SIDE_BY_SIDE
from hunyuan_webui.files.bilingual import mode as bilingual_mode
from hunyuan_webui.files.common import (
    SUPPORTED,
    Batch,
    Finish,
    TranslateFn,
    decode,
    extension,
    output_name,
    size,
    txt_file,
)
from hunyuan_webui.files.epub import epub_file
from hunyuan_webui.files.html import html_file
from hunyuan_webui.files.markdown import markdown_file
from hunyuan_webui.files.odf import KINDS as ODF_KINDS
from hunyuan_webui.files.odf import odf_file
from hunyuan_webui.files.office import pptx_file, xlsx_file
from hunyuan_webui.files.pdf import pdf_file
from hunyuan_webui.files.subtitles import srt_file
from hunyuan_webui.files.tables import csv_file, read_table
from hunyuan_webui.files.word import docx_file

__all__ = ["BILINGUAL", "COLUMNS", "OUTPUTS", "SUPPORTED", "FileResult", "ReadFile", "TranslateFn", "csv_columns",
           "read_file", "translate_file"]

DEFAULT_MAX_BYTES = 5_000_000


@dataclass(frozen=True)
class FileResult:
    filename: str  # e.g. "report.en.docx"
    data: bytes
    segments: int  # number of (distinct) segments sent to translate
    target_lang: str = ""  # the language translated into (the one asked, or the one chosen)
    source_lang: str = ""  # the file's language, where the translator knows it (detected)
    unchanged: int = 0  # segments given back as they were: already in the target language
    switched_from: str = ""  # the target asked for, when the file was already in it
    notes: tuple[str, ...] = ()  # what the user should know (a PDF's scanned or reflowed pages)


# --------------------------------------------------------------------------------------------
# Entry points


def translate_file(
    filename: str,
    data: bytes,
    translate: TranslateFn,
    *,
    lang: str | None = None,
    target_lang: str = "en",
    csv_columns: Sequence[str] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    target_for: Callable[[list[str]], str] | None = None,
    bilingual: bool | str = False,
    output_format: str = "",
) -> FileResult:
    """Translate one uploaded file, keeping its format and structure.

    ``lang`` is the source language (None or "auto" when unknown; it only tunes sentence
    splitting), ``target_lang`` names the output file (``report.docx`` -> ``report.en.docx``).
    ``target_for``, when given, sees the file's distinct segments once it is read (its content:
    neither a CSV's kept header row nor a spreadsheet's first row is among them) and answers the
    target to translate into, before ``translate`` is called (a file already in the target
    language may go into another).
    """
    read = read_file(filename, data, lang=lang, target_lang=target_lang,
                     csv_columns=csv_columns, max_bytes=max_bytes, bilingual=bilingual,
                     output_format=output_format)
    try:
        return read.translate(translate, target_for)
    finally:
        read.close()


@dataclass
class ReadFile:
    """A file read (parsed within its limits) and ready to translate: :meth:`segments` are the
    texts :meth:`translate` will send, each once."""

    filename: str
    batch: Batch
    finish: Finish

    def segments(self) -> list[str]:
        return self.batch.unique()

    def translate(self, translate: TranslateFn,
                  target_for: Callable[[list[str]], str] | None = None) -> FileResult:
        """Send the segments to ``translate`` in one call and rebuild the file (once)."""
        if target_for is not None:
            self.batch.target = languages.normalize(target_for(self.batch.content()))
        target = self.batch.target or "en"
        rendered = self.batch.run(translate)
        data = self.finish(rendered)
        return FileResult(output_name(self.filename, target), data, self.batch.sent, target,
                          notes=tuple(self.batch.notes))

    def close(self) -> None:
        """Let the parsed file go now (a library's own reference cycles would hold a
        document's trees until the next full garbage collection, and an error's traceback
        this object)."""
        for close in self.batch.closers:
            close()
        self.batch.closers.clear()
        self.batch.docs.clear()
        self.finish = _closed


def _closed(rendered: list[str]) -> bytes:
    raise RuntimeError("This file was closed.")


def read_file(filename: str, data: bytes, *, lang: str | None = None, target_lang: str = "en",
              csv_columns: Sequence[str] | None = None,
              max_bytes: int = DEFAULT_MAX_BYTES, bilingual: bool | str = False,
              output_format: str = "") -> ReadFile:
    """Read one uploaded file, refusing (with words) an unsupported type, a file over
    ``max_bytes``, a package that unpacks too far (:mod:`~hunyuan_webui.files.package`) and
    content that is not what its name says; nothing is translated yet. ``bilingual``: the file
    comes back with each paragraph followed by its translation (True or "paragraphs",
    :data:`BILINGUAL` formats) or beside it in a two-column table ("columns", a PDF's or a
    Word file's).
    ``output_format``: what the file comes back as ("docx" for a PDF; its own by default)."""
    ext = extension(filename)
    bilingual = bilingual_mode(bilingual)
    output = _output(ext, output_format)
    if bilingual and ext not in BILINGUAL:
        raise InputError(f"A bilingual copy is made of {', '.join(sorted(BILINGUAL))} files, "
                         f"not of {ext} files.")
    if bilingual == SIDE_BY_SIDE and ext not in COLUMNS:
        raise InputError(f"A side-by-side (two-column) copy is made of "
                         f"{', '.join(sorted(COLUMNS))} files; a {ext} file's bilingual copy has "
                         "each paragraph followed by its translation (bilingual=true).")
    target = languages.normalize(target_lang)
    if lang is not None and lang.strip().lower() not in ("", languages.AUTO):
        lang = languages.normalize(lang)
    else:
        lang = None
    if len(data) > max_bytes:
        raise InputTooLongError(f"The file is {size(len(data))}; the limit is {size(max_bytes)}.")
    batch = Batch(lang, target=target)
    batch.bilingual = bool(bilingual)
    batch.side_by_side = bilingual == SIDE_BY_SIDE
    if ext == ".docx":
        finish = docx_file(data, batch, max_bytes)
    elif ext == ".pptx":
        finish = pptx_file(data, batch, max_bytes)
    elif ext == ".xlsx":
        finish = xlsx_file(data, batch, max_bytes)
    elif ext == ".pdf":
        finish = pdf_file(data, batch, max_bytes, output=output.lstrip("."), bilingual=bilingual)
    elif ext == ".csv":
        finish = csv_file(decode(data, ext), batch, csv_columns)
    elif ext == ".srt":
        finish = srt_file(decode(data, ext), batch)
    elif ext == ".md":
        finish = markdown_file(decode(data, ext), batch)
    elif ext in (".html", ".htm"):
        finish = html_file(decode(data, ext), batch)
    elif ext in ODF_KINDS:
        finish = odf_file(data, batch, max_bytes, ext)
    elif ext == ".epub":
        finish = epub_file(data, batch, max_bytes)
    else:
        finish = txt_file(decode(data, ext), batch)
    stem, suffix = filename[: len(filename) - len(ext)], filename[len(filename) - len(ext):]
    if bilingual:  # lesson.docx -> lesson.bilingual.en.docx
        stem += ".bilingual"
    return ReadFile(stem + (suffix if output == ext else output), batch, finish)  # lesson.pdf as a Word file: lesson.en.docx


def _output(ext: str, output_format: str) -> str:
    """The extension a file of type ``ext`` comes back with, ``output_format`` asked."""
    wanted = output_format.strip().lower().lstrip(".")
    if not wanted or "." + wanted == ext:
        return ext
    if "." + wanted in OUTPUTS.get(ext, ()):
        return "." + wanted
    others = [f"{kind} as {', '.join(sorted(outs))}" for kind, outs in sorted(OUTPUTS.items())]
    raise InputError(f"A {ext} file cannot come back as {wanted!r}: a file comes back in its "
                     f"own format, and {'; '.join(others)}.")


def csv_columns(data: bytes) -> list[str]:
    """The header names of a CSV file (for the UI's column picker); [] for an empty file."""
    text = decode(data, ".csv")
    table = read_table(text.text)
    return list(table.header) if table.header is not None else []
