"""Documents translated in the background: uploaded, polled, fetched, for any protocol.

A protocol (DeepL's ``/v2/document``, the JSON API's ``/v1/documents``) hands a file to
:meth:`DocumentJobs.submit` and answers at once with the document's id and key; the file is
translated by a :class:`~hunyuan_webui.service.operations.filejob.FileJob` on a thread of its own, and the
caller polls :meth:`DocumentJobs.get` until the document is ``done`` (or ``error``), then fetches
the result. The store is bounded on every side:

- a document runs at most ``deadline`` seconds (then it is stopped at its next segment and ends
  in ``error``);
- one owner (an API key, else a visitor's address) runs at most ``per_owner`` documents at once
  and holds at most a quarter of the store (its oldest fetched document makes room, else 429),
  and the store holds at most ``max_held`` documents in all (429 beyond);
- a finished document is kept ``ttl`` seconds, then forgotten, result and all;
- files are never written to disk: the upload and the result are held in memory only, within
  ``--max-file-bytes`` each, so nothing lands outside the app's own folders.

A document is given only to whoever holds its key (compared in constant time), and, where the
store knows the owner, only to that owner: an unknown id, a wrong key and another owner's
document are the same 404.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from hunyuan_webui.errors import CancelledError, InputError, RateLimitError, TranslatorError
from hunyuan_webui.files import FileResult
from hunyuan_webui.service.operations.filejob import FileJob
from hunyuan_webui.service.translate.request import TranslationRequest

if TYPE_CHECKING:
    from hunyuan_webui.service.door.translator import Translator

QUEUED, TRANSLATING, DONE, ERROR, CANCELLED = "queued", "translating", "done", "error", "cancelled"
DEADLINE_S = 900.0  # one document's longest run
PER_OWNER = 3  # documents one owner may have running at once
MAX_HELD = 64  # documents held in all, running or finished (results are kept in memory)
NOT_FOUND = "Document not found (or it has expired)."

log = logging.getLogger("hunyuan_webui.files")


class DocumentNotFoundError(InputError):
    code = "document_not_found"
    http_status = 404


class DocumentNotReadyError(TranslatorError):
    """The result was asked for before the document was done (DeepL answers 503 then)."""

    code = "document_not_ready"
    http_status = 503


@dataclass
class Document:
    id: str
    key: str
    owner: str | None
    filename: str
    job: FileJob
    created: float
    status: str = QUEUED
    done: int = 0
    total: int = 0
    billed_characters: int = 0
    result: FileResult | None = None
    error: str = ""
    started: float | None = None
    finished: float | None = None
    fetched: bool = False
    _ended: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def running(self) -> bool:
        return self.status in (QUEUED, TRANSLATING)

    def seconds_remaining(self, now: float) -> int | None:
        """A rough estimate from the pace so far (None until a segment is done)."""
        if not self.running:
            return 0
        if not self.done or self.started is None:
            return None
        pace = (now - self.started) / self.done
        return max(1, round(pace * (self.total - self.done)))

    def wait(self, timeout: float) -> bool:
        """Block until the document is finished or ``timeout`` seconds pass."""
        return self._ended.wait(timeout)


class DocumentJobs:
    def __init__(self, translator: Translator, *, ttl: float, deadline: float = DEADLINE_S,
                 per_owner: int = PER_OWNER, max_held: int = MAX_HELD,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.translator = translator
        self.ttl, self.deadline = ttl, deadline
        self.per_owner, self.max_held = per_owner, max_held
        self.clock = clock
        self._lock = threading.Lock()
        self._docs: dict[str, Document] = {}

    # -- submitting ----------------------------------------------------------------------------
    def submit(self, owner: str | None, filename: str, data: bytes,
               template: TranslationRequest,
               admit: Callable[[list[str]], None] | None = None,
               bilingual: bool | str = False, output_format: str = "") -> Document:
        """Start translating ``filename``. Blocking (a front end calls it off its event loop):
        the file is read first, so that a type the translators do not take, a file over
        ``--max-file-bytes``, a package that unpacks too far and a damaged file are refused
        here, before anything runs; then an owner with ``per_owner`` documents running or
        ``max_held // 4`` held, and a full store, are refused (429); then ``admit`` sees the
        segments the job will send (it counts their characters; it may refuse by raising).
        ``bilingual``: each paragraph followed by its translation (a learner's copy), or
        "columns", side by side; ``output_format``: what the file comes back as ("docx" for a
        PDF; its own format by default)."""
        billed = [0]

        def count(segments: list[str]) -> None:
            billed[0] = sum(len(s) for s in segments)
            if admit is not None:
                admit(segments)

        job = FileJob(self.translator, filename, data, template, admit=count,
                      bilingual=bilingual, output_format=output_format)
        job.read()
        try:
            self.sweep()
            with self._lock:
                self._check_room(owner)
                doc = Document(secrets.token_hex(16), secrets.token_urlsafe(32), owner, filename,
                               job, self.clock())
                self._docs[doc.id] = doc
            try:
                job.charge()
            except BaseException:
                with self._lock:
                    self._docs.pop(doc.id, None)
                raise
        except BaseException:
            job.release()
            raise
        threading.Thread(target=self._run, args=(doc, billed), name="hymt-document",
                         daemon=True).start()
        return doc

    def _check_room(self, owner: str | None) -> None:
        """(Under the lock.) 429 for an owner at its share, or a full store."""
        mine = [d for d in self._docs.values() if owner is not None and d.owner == owner]
        if sum(1 for d in mine if d.running) >= self.per_owner:
            raise RateLimitError(f"At most {self.per_owner} documents may be translated at "
                                 f"once; wait for one to finish.", retry_after=5)
        share = max(self.max_held // 4, self.per_owner)
        if len(mine) >= share:  # one owner may not fill the store: its oldest fetched (or
            # failed) document goes
            fetched = [d for d in mine if not d.running and (d.fetched or d.status != DONE)]
            if not fetched:
                raise RateLimitError(
                    f"You have {len(mine)} documents on the server (at most {share}): fetch "
                    f"them first, or wait {self.ttl / 60:g} minutes for them to expire.",
                    retry_after=60)
            del self._docs[min(fetched, key=lambda d: d.finished or 0.0).id]
        if len(self._docs) >= self.max_held:
            raise RateLimitError("The server holds too many documents now; try again "
                                 "later.", retry_after=30)

    def _run(self, doc: Document, billed: list[int]) -> None:
        timer = threading.Timer(self.deadline, doc.job.cancel)
        timer.daemon = True
        timer.start()
        doc.started = self.clock()

        def progress(done: int, total: int) -> None:
            if doc.status == CANCELLED:
                return
            doc.status, doc.done, doc.total = TRANSLATING, done, total
            doc.billed_characters = billed[0]

        try:
            result = doc.job.run(progress)
            doc.result, doc.done = result, doc.total
            doc.billed_characters = billed[0]
            doc.status = DONE
        except CancelledError:
            if doc.status == CANCELLED:
                pass
            else:
                doc.status = ERROR
                doc.error = (f"The document took longer than {self.deadline:g} seconds to "
                             f"translate.")
        except TranslatorError as exc:
            doc.status, doc.error = ERROR, exc.user_message
        except Exception:  # never a trace to the client: the log has it
            log.exception("document %s failed", doc.id[:8])
            doc.status, doc.error = ERROR, "The document could not be translated."
        finally:
            timer.cancel()
            doc.finished = self.clock()
            doc.job.data = b""  # the upload is no longer needed
            doc._ended.set()

    # -- reading -------------------------------------------------------------------------------
    def get(self, doc_id: object, key: object = None, owner: str | None = None, *,
            check_key: bool = True) -> Document:
        """The document, to the holder of its key (and, where given, its owner); else 404."""
        self.sweep()
        doc = self._docs.get(doc_id) if isinstance(doc_id, str) else None
        if doc is None:
            raise DocumentNotFoundError(NOT_FOUND)
        if check_key and not (isinstance(key, str) and
                              secrets.compare_digest(key.encode(), doc.key.encode())):
            raise DocumentNotFoundError(NOT_FOUND)
        if owner is not None and doc.owner is not None and owner != doc.owner:
            raise DocumentNotFoundError(NOT_FOUND)
        return doc

    def result(self, doc: Document) -> FileResult:
        if doc.status == DONE and doc.result is not None:
            doc.fetched = True  # the first to go when its owner is at its share
            return doc.result
        if doc.running:
            raise DocumentNotReadyError("The document is still being translated.")
        raise InputError(doc.error or "The document was cancelled.")

    def cancel(self, doc: Document) -> None:
        """Stop a running document (at its next segment) and forget it."""
        if doc.running:
            doc.status = CANCELLED
            doc.job.cancel()
        with self._lock:
            self._docs.pop(doc.id, None)

    def sweep(self) -> None:
        """Forget documents finished more than ``ttl`` seconds ago."""
        now = self.clock()
        with self._lock:
            for doc_id in [d.id for d in self._docs.values()
                           if d.finished is not None and now - d.finished > self.ttl]:
                del self._docs[doc_id]

    def __len__(self) -> int:
        return len(self._docs)
