"""The rules behind the upload and body limits, without a server (the fast lane): how a media
type is read, how the disk quotas count, and which folders the app may empty.
The same rules over real HTTP: test_gatekeeper_parsing.py and test_upload_limits.py."""

from __future__ import annotations

import pytest
from starlette.datastructures import Headers

from hunyuan_webui.errors import RateLimitError, TranslatorError
from hunyuan_webui.web.guards.gatekeeper import _has_body, media_type
from hunyuan_webui.web.guards.visitor_files import (
    MARKER,
    QuotaError,
    VisitorFiles,
    _lock_folder,
    empty_folder,
)


@pytest.mark.parametrize("given,read", [
    ("application/x-www-form-urlencoded+json", "application/x-www-form-urlencoded+json"),
    ("Application/JSON; charset=UTF-16", "application/json"),
    ("MULTIPART/Form-Data; boundary=x", "multipart/form-data"),
    ("", "text/plain"),  # none at all
    ("garbage", "text/plain"),  # malformed: what FastAPI reads too
])
def test_media_types_are_read_as_fastapi_reads_them(given, read):
    assert media_type(Headers({"content-type": given} if given else {})) == read


def test_a_body_is_what_the_headers_declare():
    assert _has_body(Headers({"content-length": "12"}))
    assert _has_body(Headers({"transfer-encoding": "chunked"}))
    assert not _has_body(Headers({"content-length": "0"}))
    assert not _has_body(Headers({}))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _file(tmp_path, name: str, size: int) -> str:
    path = tmp_path / name
    path.write_bytes(b"x" * size)
    return str(path)


def test_quotas_count_each_session_s_files_and_uploads_in_progress(tmp_path):
    clock = Clock()
    files = VisitorFiles(tmp_path, ttl=10, clock=clock, session_quota=1000, total_quota=1500)
    files.add("alice", _file(tmp_path, "a", 600))
    release = files.reserve("alice", 300)  # in progress: counted too
    assert files.usage("alice") == 900 and files.usage() == 900
    with pytest.raises(QuotaError, match="quota of 0.001 MB"):
        files.reserve("alice", 200)
    release()
    assert files.usage("alice") == 600
    # A file two sessions hold counts for each of them, and once in the total.
    shared = _file(tmp_path, "shared", 500)
    files.add("alice", shared)
    files.add("bob", shared)
    assert (files.usage("alice"), files.usage("bob"), files.usage()) == (1100, 500, 1100)
    with pytest.raises(RateLimitError, match="space for uploads"):
        files.reserve("carol", 401)
    files.reserve("carol", 400)()
    # Expired files free both quotas.
    clock.now = 11
    assert files.sweep(force=True) == 2
    assert (files.usage("alice"), files.usage("bob"), files.usage()) == (0, 0, 0)


def test_unfinished_uploads_are_deleted_but_never_a_recorded_file(tmp_path):
    files = VisitorFiles(tmp_path, ttl=10)
    partial, kept = _file(tmp_path, "tmp123", 10), _file(tmp_path, "kept", 10)
    files.add("alice", kept)
    files.discard([partial, kept, str(tmp_path.parent / "elsewhere")])
    assert not (tmp_path / "tmp123").exists() and (tmp_path / "kept").exists()


def test_only_an_empty_folder_or_the_app_s_own_is_claimed_and_emptied(tmp_path):
    foreign = tmp_path / "thesis"
    foreign.mkdir()
    (foreign / "chapter1.tex").write_text("years of work")
    with pytest.raises(TranslatorError, match="not empty and was not made by this app"):
        _lock_folder(foreign, explicit=True)
    assert (foreign / "chapter1.tex").exists()

    own = tmp_path / "uploads"
    held = _lock_folder(own, explicit=True)
    try:
        assert (own / MARKER).exists()
        (own / "abc").mkdir()
        (own / "abc" / "left.txt").write_text("a crash left this")
        (own / "tmpxyz").write_text("partial")
        # A second claim while the first is held: refused for an explicit folder, None (use
        # another) for the default one.
        with pytest.raises(TranslatorError, match="Another running translator"):
            _lock_folder(own, explicit=True)
        assert _lock_folder(own, explicit=False) is None
        assert empty_folder(own) == 2
        assert [p.name for p in own.iterdir()] == [MARKER]
    finally:
        held.close()
