"""A file translated as one operation, with progress, cancel and a result.

:func:`hunyuan_webui.files.translate_file` parses a file, sends all its segments to one
``translate`` call and rebuilds the same kind of file; :class:`FileJob` gives it the front door
(:meth:`Translator.translate_texts
<hunyuan_webui.service.door.translator.Translator.translate_texts>`: one source language detected
over the whole file, segments batched a window ahead) and makes it an operation any front end can
run, the service's second door: :meth:`FileJob.run` blocks (the command line, a worker), :meth:`FileJob.events` is an async
iterator of :class:`FileProgress` events for the event loop (the page; a documents API), the last
one carrying the translated file. Leaving the iteration early, or :meth:`FileJob.cancel`, stops
the work at the next segment. The file types and the size limit are the service's
(:data:`hunyuan_webui.files.SUPPORTED`, ``--max-file-bytes``), whoever sends the file.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from hunyuan_webui import files, languages
from hunyuan_webui.errors import CancelledError, InputError, InputTooLongError
from hunyuan_webui.files import FileResult
from hunyuan_webui.files.package import give_memory_back
from hunyuan_webui.service.translate.request import TranslationRequest

if TYPE_CHECKING:
    from hunyuan_webui.service.door.translator import Translator

FILE_TYPES = frozenset(files.SUPPORTED)  # what every front end accepts: one list


@dataclass(frozen=True)
class FileProgress:
    done: int  # segments translated so far
    total: int  # 0 until the file is read
    result: FileResult | None = None  # the translated file, on the last event only


class FileJob:
    """One uploaded file to translate like ``template`` (its languages, decoding, glossary)."""

    def __init__(self, translator: Translator, filename: str, data: bytes,
                 template: TranslationRequest, columns: Sequence[str] | None = None,
                 admit: Callable[[list[str]], None] | None = None,
                 switch: Sequence[str] = (), bilingual: bool | str = False,
                 output_format: str = "") -> None:
        """``admit`` sees the file's segments once it is read, before any is translated (the
        front end counts their characters against the caller); it may refuse by raising.
        ``switch``: where the source is detected and the file is already in the target
        language, the first of these languages that is not the file's is the target instead (the
        page's, as DeepL's own page does); without one, the file comes back as it was and its
        result says so (:attr:`FileResult.unchanged`), never that it was translated.
        ``bilingual``: the file comes back with each paragraph followed by its translation
        (:data:`hunyuan_webui.files.BILINGUAL` formats; others are refused), or beside it
        ("columns"); ``output_format``: what the file comes back as ("docx" for a PDF)."""
        files.extension(filename)  # an unsupported type is refused before anything runs
        limit = translator.settings.max_file_bytes
        if len(data) > limit:
            raise InputTooLongError(f"The file is {files.size(len(data))}; the limit is "
                                    f"{files.size(limit)}.")
        self.translator = translator
        self.filename, self.data = filename, data
        self.template = replace(template, text="")
        self.columns = list(columns or []) or None
        self.admit = admit
        self.switch = tuple(switch)
        self.bilingual = bilingual
        self.output_format = output_format
        self._stop = threading.Event()
        self._read: files.ReadFile | None = None  # the file once read, until it is run
        self._charged = False  # whether admit has seen the read file's segments
        self.unreadable = False  # whether reading the file refused it (damaged, hostile)

    def cancel(self) -> None:
        self._stop.set()

    @property
    def cancelled(self) -> bool:
        return self._stop.is_set()

    def read(self) -> list[str]:
        """Read the file now, if not yet (a package within its unpacking limits, its XML
        bounded): its distinct segments, the texts :meth:`run` will send. A front end that reads
        before it accepts the job refuses a hostile or damaged file at once, with words."""
        if self._read is None:
            try:
                self._read = files.read_file(
                    self.filename, self.data, lang=self.template.source_lang,
                    target_lang=self.template.target_lang, csv_columns=self.columns,
                    max_bytes=self.translator.settings.max_file_bytes, bilingual=self.bilingual,
                    output_format=self.output_format)
            except InputError:
                self.unreadable = True  # the file itself was refused, not its translation
                raise
            self._charged = False
        return self._read.segments()

    def charge(self) -> None:
        """Count the file's segments against the caller (``admit``) now, before the work: once
        per reading; :meth:`run` then does not count them again."""
        segments = self.read()
        if self.admit is not None and not self._charged:
            self.admit(segments)
        self._charged = True

    def run(self, progress: Callable[[int, int], None] | None = None) -> FileResult:
        """Translate the file here (blocking); ``progress(done, total)`` after each segment."""
        try:
            if self._stop.is_set():
                raise CancelledError("The translation was stopped.")
            return self._run_read(progress)  # its frame, and the parsed file with it, gone...
        finally:
            self.release()  # ...the memory goes back to the system

    def _run_read(self, progress: Callable[[int, int], None] | None) -> FileResult:
        self.read()
        read, charged = self._read, self._charged
        self._read, self._charged = None, False  # a second run reads (and counts) again
        assert read is not None
        try:
            return self._translate(read, charged, progress)
        finally:
            read.close()

    def release(self) -> None:
        """Let the file read ahead go, if any (a job refused or cancelled before it ran), and
        give the memory it took back to the system."""
        read, self._read = self._read, None
        if read is not None:
            read.close()
        give_memory_back()

    def _translate(self, read: files.ReadFile, charged: bool,
                   progress: Callable[[int, int], None] | None) -> FileResult:
        plan = {"request": self.template, "unchanged": 0}

        def choose(segments: list[str]) -> str:
            plan["request"] = self.plan(segments)
            return plan["request"].target_lang

        def translate(segments: list[str]) -> list[str]:
            if self.admit is not None and not charged:
                self.admit(segments)
            if progress is not None:
                progress(0, len(segments))
            request = plan["request"]
            if request.source_lang == request.target_lang:  # already in it: nothing to translate
                plan["unchanged"] = len(segments)
                if progress is not None:
                    progress(len(segments), len(segments))
                return list(segments)
            return self._segments(segments, request, progress)

        result = read.translate(translate, target_for=choose)
        request = plan["request"]
        asked = languages.normalize(self.template.target_lang)
        source = request.source_lang if request.source_lang != languages.AUTO else ""
        if plan["unchanged"]:  # byte for byte: not even a space between sentences added
            result = replace(result, data=self.data)
        return replace(result, source_lang=source, unchanged=plan["unchanged"],
                       switched_from=asked if asked != result.target_lang else "")

    def _segments(self, segments: list[str], request: TranslationRequest,
                  progress: Callable[[int, int], None] | None) -> list[str]:
        """The segments' translations in order, through the front door: a window of segments
        submitted ahead of the one being read, so that they batch without overflowing the
        engine's queue; :meth:`cancel` stops it at the next update."""
        operation = self.translator.translate_texts(
            [replace(request, text=s) for s in segments],
            ahead=self.translator.settings.segments_in_flight())
        out: list[str] = []
        try:
            for update in operation:
                if self._stop.is_set():
                    raise CancelledError("The translation was stopped.")
                if update.result is not None:
                    out.append(update.result.text)
                    if progress is not None:
                        progress(len(out), len(segments))
        finally:
            operation.cancel()
        if len(out) < len(segments):
            raise CancelledError("The translation was stopped.")
        return out

    def plan(self, segments: list[str]) -> TranslationRequest:
        """The request the file's segments are translated with: the source detected once over
        them all (the longest first, so a row of short headings does not sway it), and the
        target switched where the file is already in it and ``switch`` offers another."""
        source = languages.normalize_source(self.template.source_lang)
        target = languages.normalize(self.template.target_lang)
        if source == languages.AUTO and segments:
            found = self.translator.detect("\n".join(sorted(segments, key=len, reverse=True)))
            if found.code is None:
                raise InputError("Could not detect the source language; please choose it.")
            source = found.code
            if source == target:
                target = next((code for code in self.switch if code != source), target)
        return replace(self.template, source_lang=source, target_lang=target)

    async def events(self, every: float = 0.25) -> AsyncIterator[FileProgress]:
        """Progress at most every ``every`` seconds (the latest count), then the result. The
        work runs on one thread of its own; it stops if the reader goes away."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()

        def hand_over(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop is gone: nobody is reading any more
                self.cancel()

        def work() -> None:
            try:
                result = self.run(lambda done, total: hand_over(FileProgress(done, total)))
                hand_over(FileProgress(result.segments, result.segments, result))
            except BaseException as exc:  # raised by the reader, in its own context
                hand_over(exc)

        threading.Thread(target=work, name="hymt-file", daemon=True).start()
        finished = False
        try:
            while True:
                items = [await queue.get()]
                while not queue.empty():
                    items.append(queue.get_nowait())
                for item in items:
                    if isinstance(item, BaseException):
                        raise item
                latest: FileProgress = items[-1]
                finished = latest.result is not None
                yield latest
                if finished:
                    return
                await asyncio.sleep(every)
        finally:
            if not finished:  # a closed tab or the Stop button ended the reader: stop the work
                self.cancel()
