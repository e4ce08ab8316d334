"""The bodies of the teacher's mends (a sentence corrected or translated again); their routes are
in :mod:`~hunyuan_webui.web.classroom.routes` (the teacher's key, as for sentences). The work is
:mod:`hunyuan_webui.service.rooms.edits`; what phones see is its ``correction`` events."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Correction(BaseModel):
    text: str = Field(..., max_length=100_000)
    lang: str | None = Field(None, max_length=20)  # None: the sentence itself


class Again(BaseModel):
    lang: str | None = Field(None, max_length=20)  # None: every language it was read in
