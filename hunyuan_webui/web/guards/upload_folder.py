"""The app's own folder for uploads and translated files: claimed (a marker, locked) at the start,
emptied of what a previous run left, and removed when the app stops; a folder of someone else's
is never emptied. :mod:`hunyuan_webui.web.guards.visitor_files` keeps the files in it to their
owners.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hunyuan_webui.errors import TranslatorError

log = logging.getLogger("hunyuan_webui.files")

MARKER = ".hunyuan-webui-uploads"  # in a folder this app owns (and may empty)


_claimed: tuple[Path, Any] | None = None  # the folder, and its marker held open under a lock


def claim_upload_folder(folder: str | None, port: int) -> Path:
    """Make ``folder`` (default: ``<temp>/hunyuan-webui-<uid>-<port>``) Gradio's upload and cache
    folder for this process (``GRADIO_TEMP_DIR``), emptied of whatever a previous run left (a
    crash, ``kill -9``). The app owns it: it carries a marker file, locked while the app runs, so
    that a folder of someone else's is never emptied (an explicit ``--upload-dir`` must be empty or
    the app's) and two running apps never share one. Once per process: a second app in the same
    process (the tests) shares the first one's folder."""
    global _claimed
    if _claimed is not None:
        return _claimed[0]
    explicit = bool(folder)
    uid = os.getuid() if hasattr(os, "getuid") else os.getpid()
    path = Path(folder or Path(tempfile.gettempdir()) / f"hunyuan-webui-{uid}-{port}")
    path = Path(os.path.realpath(path.expanduser()))
    held = _lock_folder(path, explicit)
    if held is None:  # the default folder is in use by another running app: one of our own
        path = Path(os.path.realpath(tempfile.mkdtemp(prefix=f"hunyuan-webui-{uid}-{port}-")))
        log.warning("the upload folder for port %d is in use; using %s", port, path)
        held = _lock_folder(path, True)
        assert held is not None
    removed = empty_folder(path)
    if removed:
        log.info("removed %d file(s) a previous run left in %s", removed, path)
    os.environ["GRADIO_TEMP_DIR"] = str(path)
    _claimed = (path, held)
    atexit.register(release_upload_folder)  # also when the app is not stopped by app.main
    return path


def release_upload_folder() -> None:
    """Empty and remove the claimed folder (the app is stopping; nobody can come back for it)."""
    global _claimed
    if _claimed is None:
        return
    path, held = _claimed
    _claimed = None
    empty_folder(path)
    with contextlib.suppress(OSError):
        (path / MARKER).unlink()
        path.rmdir()
    held.close()


def empty_folder(path: Path) -> int:
    """Delete everything in ``path`` but the marker; returns how many files went."""
    count = 0
    for entry in list(path.iterdir()):
        if entry.name == MARKER:
            continue
        if entry.is_dir() and not entry.is_symlink():
            count += sum(1 for f in entry.rglob("*") if not f.is_dir())
            shutil.rmtree(entry, ignore_errors=True)
        else:
            count += 1
            with contextlib.suppress(FileNotFoundError):
                entry.unlink()
    return count


def _lock_folder(path: Path, explicit: bool) -> Any:
    """The folder's marker, open and locked; None if another running app holds it."""
    if path.exists() and not (path / MARKER).exists() and any(path.iterdir()):
        raise TranslatorError(
            f"The upload folder {path} is not empty and was not made by this app: choose an "
            f"empty or new folder (--upload-dir); the app empties it at every start and stop.")
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    marker = open(path / MARKER, "a+")  # noqa: SIM115 - held open for the process's life
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the marker still guards foreign folders
        return marker
    try:
        fcntl.flock(marker.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        marker.close()
        if explicit:
            raise TranslatorError(f"Another running translator uses the upload folder {path}: "
                                  f"choose another --upload-dir.") from None
        return None
    return marker


# -- Gradio's empty cache files ----------------------------------------------------------------------
class _Unused:
    """Stands in for the temporary file ``gradio.components.File.preprocess`` makes for every
    event with a ``type="filepath"`` file (its ``name`` is set, the file is never used)."""

    name = ""


def skip_empty_cache_files() -> None:
    """Gradio 6's ``File.preprocess`` (``type="filepath"``) creates an empty temporary file in
    its cache (this app's upload folder) for every event that takes a file, names it after the
    upload, returns the upload's own path, and leaves the empty file there: one per Document tab
    event, forever. Its ``tempfile`` is given a stand-in that creates nothing. Idempotent."""
    import types

    import gradio.components.file as file_component

    if getattr(file_component.tempfile, "hymt_skipped", False):
        return
    file_component.tempfile = types.SimpleNamespace(  # type: ignore[assignment]
        NamedTemporaryFile=lambda *args, **kwargs: _Unused(), hymt_skipped=True)
