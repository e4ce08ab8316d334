"""The documents APIs onto the service's second door: an upload becomes a
:class:`~hunyuan_webui.service.operations.filejob.FileJob` held by
:class:`~hunyuan_webui.service.operations.documents.DocumentJobs` (translated in the background,
its characters counted against the caller once it is read), and a document's state becomes each
API's status answer."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
from fastapi import Request

from hunyuan_webui import languages
from hunyuan_webui.errors import InputError
from hunyuan_webui.files import FileResult, bilingual
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.service.operations.documents import (
    DONE,
    ERROR,
    TRANSLATING,
    Document,
    DocumentJobs,
)
from hunyuan_webui.web.guards.access import Caller

STATUS_WAIT_S = 1.0  # a status request waits this long for a document about to finish


def owner_of(request: Request, who: Caller) -> str:
    """Whom a document belongs to (and counts against): the key, else the address."""
    if who.key_id is not None:
        return who.key_id
    client = request.client
    return "addr:" + (client.host if client is not None else "unknown")


async def submit(documents: DocumentJobs, *args: Any, **kwargs: Any) -> Document:
    """:meth:`DocumentJobs.submit` on a worker thread: it reads the file (a package unpacked
    within its limits) before it accepts it, which must not hold up the event loop."""
    return await anyio.to_thread.run_sync(lambda: documents.submit(*args, **kwargs))


def template(translator: Translator, source: str, target: str) -> TranslationRequest:
    return TranslationRequest(text="", source_lang=source, target_lang=target,
                              options=translator.decoding(deterministic=True))


def admit(charge: Callable[[Caller, int], None], who: Caller) -> Callable[[list[str]], None]:
    """What the file job calls once the file is read: its characters against the caller."""
    def counted(segments: list[str]) -> None:
        charge(who, sum(len(s) for s in segments))

    return counted


async def settled(doc: Document) -> None:
    """Give a document about to finish a moment, so that a client polling every few seconds
    (DeepL's waits five) need not wait a whole round for a short file."""
    waited = 0.0
    while doc.running and waited < STATUS_WAIT_S:
        await anyio.sleep(0.05)
        waited += 0.05


def deepl_status(doc: Document, documents: DocumentJobs) -> dict[str, Any]:
    """DeepL's document status: queued, translating, done or error."""
    answer: dict[str, Any] = {"document_id": doc.id,
                              "status": doc.status if doc.status != "cancelled" else ERROR}
    if doc.status == TRANSLATING:
        remaining = doc.seconds_remaining(documents.clock())
        if remaining is not None:
            answer["seconds_remaining"] = remaining
    if doc.status == DONE:
        answer["billed_characters"] = doc.billed_characters
    if doc.status == ERROR:
        answer["error_message"] = doc.error
    return answer


def status(doc: Document, documents: DocumentJobs) -> dict[str, Any]:
    """The JSON API's document status and progress."""
    return {"id": doc.id, "filename": doc.filename, "status": doc.status,
            "progress": round(doc.done / doc.total, 4) if doc.total else
            (1.0 if doc.status == DONE else 0.0),
            "segments_done": doc.done, "segments_total": doc.total,
            "seconds_remaining": doc.seconds_remaining(documents.clock()),
            "billed_characters": doc.billed_characters,
            "result_filename": doc.result.filename if doc.result is not None else None,
            # Segments given back as they were: the file was already in the target language.
            "segments_unchanged": doc.result.unchanged if doc.result is not None else 0,
            # false, true (each paragraph followed by its translation) or "columns"
            "bilingual": _bilingual_shown(doc.job.bilingual),
            "notice": _unchanged_notice(doc.result),
            # What the reader of the result should know (a PDF's scanned or reflowed pages).
            "notes": list(doc.result.notes) if doc.result is not None else [],
            "error": doc.error or None}


def _unchanged_notice(result: FileResult | None) -> str | None:
    if result is None or not result.unchanged:
        return None
    name = languages.get(result.target_lang).english
    return f"The file is already in {name}; it was returned unchanged."


def v1_bilingual(fields: dict[str, str]) -> str:
    """The JSON API's ``bilingual`` field: "" (none), "paragraphs" (true: each paragraph followed
    by its translation) or "columns" (side by side, in a two-column table)."""
    return bilingual.mode(fields.get("bilingual"))


def _bilingual_shown(value: bool | str) -> bool | str:
    shown = bilingual.mode(value)
    return shown == bilingual.PARAGRAPHS or shown or False


def v1_languages(fields: dict[str, str]) -> tuple[str, str]:
    """The JSON API's ``source_lang`` and ``target_lang`` fields as our codes."""
    target = fields.get("target_lang")
    if not target:
        raise InputError("Field 'target_lang' is required.")
    target = languages.normalize(target)
    source = fields.get("source_lang") or languages.AUTO
    if source != languages.AUTO:
        source = languages.normalize(source)
    return source, target
