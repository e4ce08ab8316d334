"""FastAPI dependencies shared by the routers: who is calling."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from hunyuan_webui.web.guards.access import AccessControl, Caller


def _caller(request: Request) -> Caller:
    """The key the Gatekeeper accepted (and counted) for this request; OPEN without keys."""
    caller = getattr(request.state, "caller", None)
    if isinstance(caller, Caller):
        return caller
    access: AccessControl = request.app.state.access
    return access.identify(None)  # 401 if keys are configured (the Gatekeeper said so first)


CallerDep = Annotated[Caller, Depends(_caller)]
