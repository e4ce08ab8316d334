"""How far each language of a class is behind the teacher: the ``lag`` of the room's numbers.

A sentence is owed to every language present in the room but its own, until the log holds its
translation (or a correction of it, or the error it was given up with). For each language that
is owed something, :func:`lag` answers how many sentences and how long the oldest has waited, so
that the teacher's screen can say "French: 6 s behind (3 sentences)" instead of the lag growing
silently when the machine cannot keep pace. Only the recent log is read (the last
:data:`WINDOW` events, since the last ``clear``, at most the room's catch-up length of
sentences): what a late language is never given is not counted as owed for ever.

The speech drafts' translations read it too (:mod:`hunyuan_webui.service.speech.drafts`): a
language that is owed a finished sentence gets no draft translated, so finished sentences go
first under load.
"""

from __future__ import annotations

import time
from typing import Any, Protocol

WINDOW = 600  # recent events read


class _Rooms(Protocol):  # what is read of a Rooms (kept small: the rooms change around it)
    bus: Any
    limits: Any

    def languages(self, code: str) -> set[str]: ...


def owed(rooms: _Rooms, code: str) -> dict[str, list[float]]:
    """For each language present, the times (``t``) of the sentences it is still owed."""
    langs = rooms.languages(code)
    if not langs:
        return {}
    length = rooms.bus.length(code)
    sentences: dict[int, dict[str, Any]] = {}
    done: set[tuple[int, str]] = set()
    for seq, event in rooms.bus.since(code, max(0, length - WINDOW)):
        kind = event.get("type")
        if kind == "sentence":
            sentences[seq] = event
        elif kind in ("translation", "correction") and "sid" in event and \
                not event.get("source"):
            done.add((event["sid"], event.get("lang", "")))
        elif kind in ("clear", "cleared"):
            sentences.clear()
    recent = sorted(sentences.items())[-int(getattr(rooms.limits, "catch_up", 200)):]
    out: dict[str, list[float]] = {}
    for lang in langs:
        times = [float(s.get("t") or 0.0) for sid, s in recent
                 if s.get("lang") != lang and (sid, lang) not in done]
        if times:
            out[lang] = times
    return out


def lag(rooms: _Rooms, code: str, now: float | None = None) -> dict[str, dict[str, float]]:
    """``{lang: {"seconds": age of the oldest sentence it is owed, "sentences": how many}}``,
    for the languages that are owed something (an empty dict: every language keeps pace)."""
    now = time.time() if now is None else now
    return {lang: {"seconds": round(max(0.0, now - min(times)), 1), "sentences": len(times)}
            for lang, times in sorted(owed(rooms, code).items())}
