"""Which files each visitor may hand to the page, and download from it.

Gradio takes a file as a ``FileData`` whose ``path`` the client names. Mounted in FastAPI rather
than launched, it checks nothing, so a client could name any file the server can read and get it
back "translated". Here the rule does not depend on how Gradio runs: a file reaches a listener
only if this visitor uploaded it through this app, and a translated file is served only to the
visitor who made it. Every other path is refused.

A visitor is a browser session: the ``hymt_session`` cookie, which
:class:`hunyuan_webui.web.guards.gatekeeper.Gatekeeper` issues on the first page request (gradio_client keeps
the cookie it gets with ``/config``, so it is a visitor too). Files are deleted ``ttl`` seconds
after they were last handed to a visitor (:meth:`VisitorFiles.sweep` runs as requests arrive),
and all of them when the server stops.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hunyuan_webui.errors import InputError

log = logging.getLogger("hunyuan_webui.files")

SESSION_COOKIE = "hymt_session"
SESSION_RE = re.compile(r"[A-Za-z0-9_-]{22,64}")
OUTPUT_DIR = "hymt-out"
NOT_UPLOADED = ("That file was not uploaded from this browser session (or it has expired): "
                "upload it again.")


def new_session() -> str:
    return secrets.token_urlsafe(24)


def session_of(request: Any) -> str | None:
    """The session a ``gr.Request`` (or Starlette request) belongs to, set by the Gatekeeper."""
    state = getattr(request, "state", None)
    session = getattr(state, SESSION_COOKIE, None) if state is not None else None
    return session if isinstance(session, str) else None


class VisitorFiles:
    """Paths registered per session (uploads and outputs), each with an expiry."""

    def __init__(self, root: str | Path, ttl: float,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.root = Path(os.path.realpath(root))  # Gradio's upload and cache folder
        self.ttl = ttl
        self.clock = clock
        self._lock = threading.Lock()
        self._owners: dict[str, dict[str, float]] = {}  # real path -> {session: expiry}
        self._next_sweep = 0.0

    def add(self, session: str, path: str | Path) -> str:
        """``session`` may use ``path`` for the next ``ttl`` seconds; returns the real path."""
        real = os.path.realpath(path)
        with self._lock:
            self._owners.setdefault(real, {})[session] = self.clock() + self.ttl
        return real

    def owns(self, session: str | None, path: object) -> bool:
        if not session or not isinstance(path, str) or not path or "\x00" in path:
            return False
        real = os.path.realpath(path)
        with self._lock:
            expiry = self._owners.get(real, {}).get(session)
        return expiry is not None and expiry > self.clock()

    def check(self, session: str | None, path: str) -> Path:
        """``path`` if ``session`` uploaded or made it, else a readable refusal."""
        if not self.owns(session, path):
            raise InputError(NOT_UPLOADED)
        return Path(os.path.realpath(path))

    def new_output(self, session: str, filename: str, data: bytes) -> str:
        """Write a translated file where Gradio serves it from without copying it (its own
        cache folder), in a directory of its own, and hand it to ``session`` alone."""
        folder = self.root / OUTPUT_DIR / secrets.token_hex(16)
        folder.mkdir(parents=True, mode=0o700)
        out = folder / Path(filename).name
        out.write_bytes(data)
        return self.add(session, out)

    def sweep_due(self) -> bool:
        return self.clock() >= self._next_sweep

    def sweep(self, force: bool = False) -> int:
        """Forget and delete the files whose every owner has expired; returns how many."""
        now = self.clock()
        with self._lock:
            if not force and now < self._next_sweep:
                return 0
            self._next_sweep = now + min(60.0, self.ttl / 4)
            expired = []
            for path, owners in list(self._owners.items()):
                for session in [s for s, expiry in owners.items() if expiry <= now]:
                    del owners[session]
                if not owners:
                    del self._owners[path]
                    expired.append(path)
        for path in expired:  # file system work outside the lock
            self._delete(Path(path))
        return len(expired)

    def clear(self) -> int:
        """Forget and delete every file (at shutdown: no visitor can come back for them)."""
        with self._lock:
            paths = list(self._owners)
            self._owners.clear()
        for path in paths:
            self._delete(Path(path))
        return len(paths)

    def _delete(self, path: Path) -> None:
        if self.root not in path.parents:  # only what Gradio's folder holds, never elsewhere
            return
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        folder = path.parent
        # Uploads live in <root>/<hash>/, outputs in <root>/hymt-out/<token>/: drop that folder
        # once empty, never the root or hymt-out itself.
        if folder not in (self.root, self.root / OUTPUT_DIR):
            with contextlib.suppress(OSError):
                folder.rmdir()
        log.debug("deleted an expired visitor file")
