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

Disk is bounded too. Each session may hold ``--upload-quota-mb`` of files (its uploads and its
translations), the sessions of one address together ``--upload-address-mb`` (fresh sessions do not
let one client fill everyone's space), and all sessions together ``--upload-total-mb``; an upload
is checked against all three by its declared size before a byte is stored
(:meth:`VisitorFiles.reserve`). The address is the client the server sees: the socket's peer, or
the one a trusted proxy names (``--forwarded-allow-ips``), never a header alone. An upload that does
not finish (the client hangs up, sends less than it declared, is too slow or too large) leaves
nothing: Gradio's temporary files for it are recorded as it creates them
(:func:`track_upload_temps`) and deleted at once. The folder itself belongs to the app
(:func:`~hunyuan_webui.web.guards.upload_folder.claim_upload_folder`): a folder per port, emptied when the app starts (what a crashed
run left) and when it stops.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from hunyuan_webui.errors import InputError, RateLimitError
from hunyuan_webui.web.guards.upload_folder import (  # noqa: F401 - where the tests find them
    MARKER,
    _lock_folder,
    claim_upload_folder,
    empty_folder,
    release_upload_folder,
)

log = logging.getLogger("hunyuan_webui.files")

SESSION_COOKIE = "hymt_session"
SESSION_RE = re.compile(r"[A-Za-z0-9_-]{22,64}")
OUTPUT_DIR = "hymt-out"
NOT_UPLOADED = ("That file was not uploaded from this browser session (or it has expired): "
                "upload it again.")
MB = 1_000_000


class QuotaError(InputError):
    """This session's files would pass its disk quota."""

    code = "upload_quota"
    http_status = 413


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
                 clock: Callable[[], float] = time.monotonic, *,
                 session_quota: int = 0, total_quota: int = 0, address_quota: int = 0) -> None:
        self.root = Path(os.path.realpath(root))  # Gradio's upload and cache folder
        self.ttl = ttl
        self.clock = clock
        self.session_quota, self.total_quota = session_quota, total_quota  # bytes; 0 = none
        self.address_quota = address_quota  # bytes all sessions of one address hold; 0 = none
        self._lock = threading.Lock()
        self._owners: dict[str, dict[str, float]] = {}  # real path -> {session: expiry}
        self._sizes: dict[str, int] = {}  # real path -> bytes
        self._held: dict[str, int] = {}  # session -> bytes of the files it owns
        self._total = 0  # bytes of all files
        self._reserved: dict[str, int] = {}  # session -> bytes of its uploads in progress
        self._address: dict[str, str] = {}  # session -> the address it first stored from
        self._by_address: dict[str, int] = {}  # address -> bytes its sessions hold and reserve
        self._next_sweep = 0.0

    def add(self, session: str, path: str | Path, address: str | None = None) -> str:
        """``session`` (from ``address``, where known) may use ``path`` for the next ``ttl``
        seconds; returns the real path."""
        real = os.path.realpath(path)
        try:
            size = os.stat(real).st_size
        except OSError:
            size = 0
        with self._lock:
            if address is not None:
                self._address.setdefault(session, address)
            owners = self._owners.setdefault(real, {})
            if real not in self._sizes:
                self._sizes[real] = size
                self._total += size
            if session not in owners:
                self._held[session] = self._held.get(session, 0) + self._sizes[real]
                self._count_address(session, self._sizes[real])
            owners[session] = self.clock() + self.ttl
        return real

    def _count_address(self, session: str, size: int) -> None:
        """(Under the lock.) ``size`` more (or fewer) bytes for the address of ``session``."""
        address = self._address.get(session)
        if address is None:
            return
        held = self._by_address.get(address, 0) + size
        if held > 0:
            self._by_address[address] = held
        else:
            self._by_address.pop(address, None)
        if not self._held.get(session) and not self._reserved.get(session):
            self._address.pop(session, None)  # nothing left: the session is forgotten

    def usage(self, session: str | None = None) -> int:
        """Bytes held by ``session`` (its files and uploads in progress), or by everyone."""
        with self._lock:
            if session is None:
                return self._total + sum(self._reserved.values())
            return self._held.get(session, 0) + self._reserved.get(session, 0)

    def reserve(self, session: str, size: int, address: str | None = None) -> Callable[[], None]:
        """Room for an upload of ``size`` bytes from ``session`` at ``address`` while it arrives
        (call what it returns when the upload ends), or a readable refusal: :class:`QuotaError`
        (413) past this session's quota, 429 past its address's share or the server's space."""
        with self._lock:
            mine = self._held.get(session, 0) + self._reserved.get(session, 0)
            if self.session_quota and mine + size > self.session_quota:
                raise QuotaError(
                    f"Your files on this server would pass your quota of "
                    f"{self.session_quota / MB:g} MB ({mine / MB:.1f} MB used). They are "
                    f"deleted {self.ttl / 60:g} minutes after their last use; try again then.")
            if address is not None:
                address = self._address.setdefault(session, address)
            theirs = self._by_address.get(address, 0) if address is not None else 0
            if self.address_quota and address is not None and \
                    theirs + size > self.address_quota:
                raise RateLimitError(
                    f"Uploads from your address hold {theirs / MB:.1f} MB of the server's space; "
                    f"one address may hold {self.address_quota / MB:g} MB. Files are deleted "
                    f"{self.ttl / 60:g} minutes after their last use; try again then.",
                    retry_after=self._first_expiry(address))
            everyone = self._total + sum(self._reserved.values())
            if self.total_quota and everyone + size > self.total_quota:
                raise RateLimitError(
                    f"The server's space for uploads ({self.total_quota / MB:g} MB) is full; "
                    f"try again in a few minutes.", retry_after=60)
            self._reserved[session] = self._reserved.get(session, 0) + size
            self._count_address(session, size)

        def release() -> None:
            with self._lock:
                left = self._reserved.get(session, 0) - size
                if left > 0:
                    self._reserved[session] = left
                else:
                    self._reserved.pop(session, None)
                self._count_address(session, -size)

        return release

    def _first_expiry(self, address: str) -> float:
        """(Under the lock.) Seconds until the first file an address's sessions hold expires."""
        now = self.clock()
        expiries = [expiry for owners in self._owners.values()
                    for session, expiry in owners.items() if self._address.get(session) == address]
        return max(1.0, min(expiries, default=now + 60) - now)

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
                    self._release(session, path)
                if not owners:
                    del self._owners[path]
                    self._total -= self._sizes.pop(path, 0)
                    expired.append(path)
        for path in expired:  # file system work outside the lock
            self._delete(Path(path))
        return len(expired)

    def forget(self, session: str | None, path: str | Path) -> None:
        """``session`` gives ``path`` up now (a file the app refused to read: nothing is left of
        it on disk once no other session holds it)."""
        real = os.path.realpath(path)
        with self._lock:
            owners = self._owners.get(real, {})
            if session is None or owners.pop(session, None) is None:
                return
            self._release(session, real)
            if owners:
                return
            del self._owners[real]
            self._total -= self._sizes.pop(real, 0)
        self._delete(Path(real))

    def clear(self) -> int:
        """Forget and delete every file (at shutdown: no visitor can come back for them)."""
        with self._lock:
            paths = list(self._owners)
            self._owners.clear()
            self._sizes.clear()
            self._held.clear()
            self._address.clear()
            self._by_address.clear()
            self._total = 0
        for path in paths:
            self._delete(Path(path))
        return len(paths)

    def _release(self, session: str, path: str) -> None:
        """(Under the lock.) ``session`` no longer holds ``path``."""
        held = self._held.get(session, 0) - self._sizes.get(path, 0)
        if held > 0:
            self._held[session] = held
        else:
            self._held.pop(session, None)
        self._count_address(session, -self._sizes.get(path, 0))

    def discard(self, paths: list[str]) -> None:
        """Delete what an unfinished upload left (Gradio's temporary files; never a recorded
        file, which some session may still hold)."""
        with self._lock:
            kept = set(self._owners)
        for path in paths:
            real = os.path.realpath(path)
            if real not in kept:
                self._delete(Path(real))

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


# -- unfinished uploads ------------------------------------------------------------------------------
_UPLOAD_TEMPS: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "hymt_upload_temps", default=None)


def track_upload_temps() -> None:
    """Record each temporary file Gradio's upload parser creates in the list that
    :func:`upload_temps` gives the request it belongs to (a context variable: the parser runs in
    the request's own task). Gradio deletes them itself only when the multipart is malformed, not
    when the client hangs up or the body limit cuts it off. Idempotent."""
    import gradio.route_utils as route_utils

    original = route_utils.NamedTemporaryFile
    if getattr(original, "hymt_tracked", False):
        return

    def tracked(*args: Any, **kwargs: Any) -> IO[bytes]:
        file = original(*args, **kwargs)
        temps = _UPLOAD_TEMPS.get()
        if temps is not None:
            temps.append(file.name)
        return file

    tracked.hymt_tracked = True  # type: ignore[attr-defined]
    route_utils.NamedTemporaryFile = tracked  # type: ignore[assignment]


@contextlib.contextmanager
def upload_temps() -> Iterator[list[str]]:
    """The temporary files Gradio creates while this block runs (see :func:`track_upload_temps`)."""
    temps: list[str] = []
    token = _UPLOAD_TEMPS.set(temps)
    try:
        yield temps
    finally:
        _UPLOAD_TEMPS.reset(token)
