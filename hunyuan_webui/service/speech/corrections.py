"""The teacher fixes a sentence (a word the recogniser heard wrong): it is sent again, marked.

The fix is a ``correction`` event in the room's log, in the shape the class pages and the answer
guards share: ``{"type": "correction", "sid", "lang", "text", "source": true, "by": "teacher"}``
replaces sentence ``sid`` itself on every phone and in the transcript; then the sentence is
translated again into every language that read it (or is present), each new translation a
``{"type": "correction", "sid", "lang", "text", "warnings", "by": "teacher"}`` that replaces the
old one. Being logged, a phone that slept reads the fixed text when it is back.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from hunyuan_webui import romanize
from hunyuan_webui.errors import InputError, InputTooLongError, TranslatorError
from hunyuan_webui.service.rooms import RoomNotFoundError
from hunyuan_webui.service.translate.request import TranslationRequest

log = logging.getLogger(__name__)


def sentence(rooms: Any, code: str, sid: int) -> dict[str, Any]:
    found = rooms.bus.since(code, max(0, int(sid) - 1))[:1]
    if not found or found[0][0] != sid or found[0][1].get("type") != "sentence":
        raise RoomNotFoundError("No such sentence in this class.")
    return found[0][1]


def correct(rooms: Any, code: str, key: str | None, sid: int, text: str) -> list[str]:
    """Replace sentence ``sid`` by ``text`` and translate it again; answers the languages that
    will get a new translation."""
    meta = rooms.teacher(code, key)
    code = meta["code"]
    original = sentence(rooms, code, sid)
    text = text.strip() if isinstance(text, str) else ""
    if not text:
        raise InputError("Write the corrected sentence first.")
    if len(text) > rooms.limits.text_chars:
        raise InputTooLongError(f"Send at most {rooms.limits.text_chars:,} characters at once "
                                f"(this is {len(text):,}).")
    source = original["lang"]
    rooms.bus.append(code, {"type": "correction", "sid": sid, "lang": source, "text": text,
                            "source": True, "by": "teacher", "t": round(time.time(), 3)})
    read = {e.get("lang") for _, e in rooms.bus.since(code, sid)
            if e.get("type") in ("translation", "correction") and e.get("sid") == sid
            and not e.get("source")}
    langs = sorted((read | rooms.languages(code)) - {source, None})
    if langs:
        threading.Thread(target=_translate, args=(rooms, code, sid, text, source, langs),
                         name="hymt-class-correct", daemon=True).start()
    return langs


def _translate(rooms: Any, code: str, sid: int, text: str, source: str,
               langs: list[str]) -> None:
    jobs = {}
    for lang in langs:
        try:
            jobs[lang] = rooms.translator.start(TranslationRequest(text, lang, source_lang=source))
        except TranslatorError as exc:
            rooms.bus.append(code, {"type": "correction", "sid": sid, "lang": lang,
                                    "error": exc.user_message, "by": "teacher"})
    for job in jobs.values():
        job.prime()  # every language in one batch
    for lang, job in jobs.items():
        try:
            result = job.result()
        except TranslatorError as exc:
            rooms.bus.append(code, {"type": "correction", "sid": sid, "lang": lang,
                                    "error": exc.user_message, "by": "teacher"})
            continue
        except Exception:  # one language's failure never loses the others
            log.exception("class %s: translating the correction of %s into %s", code, sid, lang)
            continue
        event = {"type": "correction", "sid": sid, "lang": lang, "text": result.text,
                 "warnings": [dict(w) for w in result.warnings], "by": "teacher",
                 "t": round(time.time(), 3)}
        if romanize.supports(lang):
            event["roman"] = romanize.romanize(result.text, lang) or ""
        rooms.bus.append(code, event)
