"""A class: the teacher writes once, every student reads it in their own language.

``rooms.py`` holds the rooms (join codes, secrets, students, the translations made once per
language present), ``bus.py`` where they live (this process's memory, or Redis shared by several
processes), and ``transcript.py`` a lesson as text, CSV or Markdown. The web layer's class pages
(:mod:`hunyuan_webui.web.classroom`) sit on top.
"""

from hunyuan_webui.service.rooms.rooms import RoomLimits, RoomNotFoundError, Rooms, normalize_code

__all__ = ["RoomLimits", "RoomNotFoundError", "Rooms", "normalize_code"]
