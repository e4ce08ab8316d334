"""The teacher's controls over a room: each needs the teacher's secret, changes the room's record
and logs an event, so that every stream (in any process) hears of it, and a phone that comes back
reads it in order.

=================  ========================  =====================================================
control            logged event ``type``      what follows
=================  ========================  =====================================================
end                ``ended``                 every stream sends it and ends; no join, send or
                                             question any more (410 ``room_ended``); the
                                             transcript stays the teacher's to download
lock / unlock      ``locked`` / ``unlocked``  a new student's join is refused (403 ``room_locked``);
                                             students already in may come back
pause / resume     ``paused`` / ``resumed``   sends are refused (409 ``room_paused``)
clear              ``clear``                 students' pages empty their screen; a late language
                                             catches up only on what came after it
remove a student   ``removed`` (``student``)  that student's stream ends; the id cannot join,
                                             stream or ask again (403 ``student_removed``)
=================  ========================  =====================================================

Students' streams get every one of them except ``locked``/``unlocked`` and another student's
``removed``; the teacher's stream gets them all.
"""

from __future__ import annotations

import time
from typing import Any

from hunyuan_webui.service.rooms.errors import RoomEndedError, StudentNotFoundError

ROOM_EVENTS = ("ended", "locked", "unlocked", "paused", "resumed", "clear", "removed")


class Controls:
    """The teacher's controls, for :class:`~hunyuan_webui.service.rooms.Rooms`."""

    bus: Any

    def teacher(self, code: str, key: str | None, address: str | None = None
                ) -> dict[str, Any]:
        raise NotImplementedError

    def present(self, code: str, students: dict[str, dict[str, Any]] | None = None
                ) -> dict[str, dict[str, Any]]:
        raise NotImplementedError

    def _control(self, code: str, key: str | None, fields: dict[str, Any], event: str,
                 address: str | None) -> dict[str, Any]:
        meta = self.teacher(code, key, address)
        if meta.get("ended") and event != "ended":
            raise RoomEndedError("This class has ended.")
        code = meta["code"]
        if fields and all(bool(meta.get(k)) == bool(v) for k, v in fields.items()):
            return self.state(meta)  # already so: nothing to tell anyone again
        if fields:
            meta = self.bus.update(code, fields) or meta
        self.bus.append(code, {"type": event, "t": round(time.time(), 3)})
        return self.state(meta)

    @staticmethod
    def state(meta: dict[str, Any]) -> dict[str, Any]:
        return {"code": meta["code"],
                **{flag: bool(meta.get(flag)) for flag in ("locked", "paused", "ended")}}

    def end(self, code: str, key: str | None, address: str | None = None) -> dict[str, Any]:
        """End the class: students see that it ended; the transcript stays."""
        return self._control(code, key, {"ended": True, "ended_at": round(time.time(), 3)},
                             "ended", address)

    def lock(self, code: str, key: str | None, locked: bool = True,
             address: str | None = None) -> dict[str, Any]:
        return self._control(code, key, {"locked": locked}, "locked" if locked else "unlocked",
                             address)

    def pause(self, code: str, key: str | None, paused: bool = True,
              address: str | None = None) -> dict[str, Any]:
        return self._control(code, key, {"paused": paused}, "paused" if paused else "resumed",
                             address)

    def clear(self, code: str, key: str | None, address: str | None = None) -> dict[str, Any]:
        return self._control(code, key, {}, "clear", address)

    def remove(self, code: str, key: str | None, student: str,
               address: str | None = None) -> dict[str, Any]:
        """Remove a student: its stream ends, and its id cannot come back."""
        meta = self.teacher(code, key, address)
        known = self.bus.students(meta["code"])
        if student not in known:
            raise StudentNotFoundError("This class has no such student.")
        if not known[student].get("removed"):
            self.bus.see(meta["code"], student, {"removed": True})
            self.bus.append(meta["code"], {"type": "removed", "student": student,
                                           "t": round(time.time(), 3)})
        return {**self.state(meta), "student": student, "removed": True}

    def roster(self, code: str, key: str | None, address: str | None = None
               ) -> list[dict[str, Any]]:
        """The room's students for the teacher (to remove one): connected ones first."""
        meta = self.teacher(code, key, address)
        students = self.bus.students(meta["code"])
        present = self.present(meta["code"], students)
        out = [{"student": sid, "name": s.get("name", ""), "lang": s.get("lang", ""),
                "present": sid in present, "joining": not s.get("seen") and not s.get("removed"),
                "removed": bool(s.get("removed"))}
               for sid, s in students.items()]
        return sorted(out, key=lambda s: (not s["present"], s["removed"], s["name"]))
