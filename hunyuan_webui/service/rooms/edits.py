"""The teacher mends what the class reads: a sentence corrected, a translation made again or
written by hand.

Every mend is a ``correction`` event in the room's log, the shape the answer guards use too:
``{"type": "correction", "sid", "lang", "text", "warnings"}`` replaces the translation of
sentence ``sid`` into ``lang`` on every phone (and in the transcript); with ``"source": true`` it
replaces the sentence itself. Being logged, a phone that slept, or a student who joins later,
reads the mended text. A corrected sentence is translated again into every language the room
has translated it into (or that is present), in the background as sentences are; "translate
again" asks the translator for a fresh answer (not the cached one).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from hunyuan_webui import languages, romanize
from hunyuan_webui.errors import InputError, InputTooLongError, TranslatorError
from hunyuan_webui.service.rooms.errors import RoomNotFoundError
from hunyuan_webui.service.rooms.rooms import Rooms
from hunyuan_webui.service.rooms.store.bus import Event
from hunyuan_webui.service.translate.request import TranslationRequest

log = logging.getLogger(__name__)


def sentence(rooms: Rooms, code: str, sid: int) -> Event:
    """Sentence ``sid`` of the room (the teacher's, or a question shown), as last corrected."""
    found = rooms.bus.since(code, max(0, int(sid) - 1))[:1]
    if not found or found[0][1]["type"] != "sentence":
        raise RoomNotFoundError("No such sentence in this class.")
    event = dict(found[0][1])
    for _, later in rooms.bus.since(code, int(sid)):
        if later["type"] == "correction" and later.get("sid") == sid and later.get("source"):
            event["text"] = later["text"]
    return event


def translated_into(rooms: Rooms, code: str, sid: int) -> set[str]:
    """The languages sentence ``sid`` has been translated into (or tried)."""
    return {e["lang"] for _, e in rooms.bus.since(code, int(sid))
            if e["type"] in ("translation", "correction") and e.get("sid") == sid
            and not e.get("source")}


def _text(rooms: Rooms, text: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InputError("Write the corrected text first.")
    if len(text) > rooms.limits.text_chars:
        raise InputTooLongError(f"Send at most {rooms.limits.text_chars:,} characters at once "
                                f"(this is {len(text):,}).")
    return text.strip()


def correct(rooms: Rooms, code: str, key: str | None, sid: int, text: str,
            lang: str | None = None, address: str | None = None) -> list[str]:
    """The teacher's correction: of the sentence itself (``lang`` None or the sentence's own
    language: every language is translated again), or the teacher's own translation into
    ``lang``. Returns the languages that will change."""
    meta = rooms.teacher(code, key, address)
    rooms._writable(meta)  # not in an ended class, nor while sending is paused
    code = meta["code"]
    original = sentence(rooms, code, sid)
    text = _text(rooms, text)
    target = languages.normalize(lang) if lang else original["lang"]
    if target != original["lang"]:
        log_correction(rooms, code, sid, target, text, by="teacher")
        return [target]
    rooms.bus.append(code, {"type": "correction", "sid": sid, "lang": target, "text": text,
                            "source": True, "by": "teacher", "t": round(time.time(), 3)})
    langs = sorted((translated_into(rooms, code, sid) | rooms.languages(code)) - {target})
    _in_background(rooms, code, sid, text, target, langs, fresh=False)
    return langs


def resend(rooms: Rooms, code: str, key: str | None, sid: int,
           lang: str | None = None, address: str | None = None) -> list[str]:
    """Translate sentence ``sid`` again, afresh (not from the cache), into ``lang`` or every
    language it was translated into; the new translations arrive as corrections."""
    meta = rooms.teacher(code, key, address)
    rooms._writable(meta)
    code = meta["code"]
    original = sentence(rooms, code, sid)
    langs = [languages.normalize(lang)] if lang else \
        sorted(translated_into(rooms, code, sid) | rooms.languages(code))
    langs = [c for c in langs if c != original["lang"]]
    if not langs:
        raise InputError("Nobody reads this sentence in another language yet.")
    _in_background(rooms, code, sid, original["text"], original["lang"], langs, fresh=True)
    return langs


def _in_background(rooms: Rooms, code: str, sid: int, text: str, source: str,
                   langs: list[str], fresh: bool) -> None:
    if langs:
        threading.Thread(target=_translate, args=(rooms, code, sid, text, source, langs, fresh),
                         name="hymt-class-correct", daemon=True).start()


def _translate(rooms: Rooms, code: str, sid: int, text: str, source: str, langs: list[str],
               fresh: bool) -> None:
    for lang in langs:
        try:
            result = rooms.translator.translate(
                TranslationRequest(text, lang, source_lang=source, cache=not fresh))
        except TranslatorError as exc:
            rooms.bus.append(code, {"type": "correction", "sid": sid, "lang": lang,
                                    "error": exc.user_message, "by": "teacher"})
            continue
        except Exception:  # one language's failure never loses the others
            log.exception("class %s: translating the correction of %s into %s failed",
                          code, sid, lang)
            continue
        log_correction(rooms, code, sid, lang, result.text, by="teacher",
                        warnings=[dict(w) for w in result.warnings])


def log_correction(rooms: Rooms, code: str, sid: int, lang: str, text: str, by: str,
                    warnings: list[dict[str, Any]] | None = None) -> None:
    event: Event = {"type": "correction", "sid": sid, "lang": lang, "text": text,
                    "warnings": warnings or [], "by": by, "t": round(time.time(), 3)}
    if romanize.supports(lang):
        event["roman"] = romanize.romanize(text, lang) or ""
    rooms.bus.append(code, event)

