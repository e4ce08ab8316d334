"""A class: the teacher writes once, every student reads it in their own language.

``rooms.py`` holds the rooms (join codes, secrets, students, seats), ``translating.py`` the
translations made once per language present (and never lost), ``controls.py`` the teacher's
controls (end, lock, pause, clear, remove), ``gate.py`` the limits per address and per teacher,
``errors.py`` the refusals and their stable codes, ``bus.py`` the store in this process's memory
and ``redis_bus.py`` (with ``copies.py``) the store in Redis shared by several processes, and
``transcript.py`` a lesson as text, CSV, Markdown or a Word document. The web layer's class pages
(:mod:`hunyuan_webui.web.classroom`) sit on top.
"""

from hunyuan_webui.service.rooms.errors import RoomNotFoundError, StoreUnavailableError
from hunyuan_webui.service.rooms.rooms import PRESENT_S, RoomLimits, Rooms, normalize_code

__all__ = ["PRESENT_S", "RoomLimits", "RoomNotFoundError", "Rooms", "StoreUnavailableError",
           "normalize_code"]
