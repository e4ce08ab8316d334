"""The teacher's mends, as routes (the teacher's key, as for sentences): a sentence corrected
or translated again. The work is
:mod:`hunyuan_webui.service.rooms.edits`; what phones see is its ``correction`` events."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from hunyuan_webui.service.rooms import Rooms, edits

API = "/class/api"


class Correction(BaseModel):
    text: str = Field(..., max_length=100_000)
    lang: str | None = Field(None, max_length=20)  # None: the sentence itself


class Again(BaseModel):
    lang: str | None = Field(None, max_length=20)  # None: every language it was read in


def add_routes(router: APIRouter, rooms: Rooms, key_of: Any, address_of: Any) -> None:
    """``key_of(request)``: the teacher's key the request carries; ``address_of(request)``: the
    caller's address (wrong codes count against it)."""

    @router.post(f"{API}/rooms/{{code}}/sentences/{{sid}}/correct")
    def correct(code: str, sid: int, body: Correction, request: Request) -> dict[str, Any]:
        return {"languages": edits.correct(rooms, code, key_of(request), sid, body.text,
                                           body.lang, address_of(request))}

    @router.post(f"{API}/rooms/{{code}}/sentences/{{sid}}/resend")
    def resend(code: str, sid: int, body: Again, request: Request) -> dict[str, Any]:
        return {"languages": edits.resend(rooms, code, key_of(request), sid, body.lang,
                                          address_of(request))}

