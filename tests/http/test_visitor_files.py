"""Files reach the translator only if this visitor uploaded them, and go back only to their maker.

Found in a security review: the Document endpoint took a ``FileData`` whose ``path`` was never uploaded
and answered with a URL serving that server file byte for byte (without ``--auth`` to anyone;
with it, to any logged-in user). Gradio's own check is skipped when it is mounted rather than
launched. These tests probe the running app over real HTTP and through gradio_client.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path

import pytest
from apphelpers import (
    EMPTY_GLOSSARY,
    assert_json_error,
    completed,
    document_call,
    file_data,
    run_event,
    running_app,
    upload,
    visitor,
    wait_until,
)
from gradio.processing_utils import hash_file
from gradio.utils import get_upload_folder
from gradio_client import Client, handle_file

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane


@pytest.fixture(scope="module")
def open_app(engine):
    with running_app(engine) as running:
        yield running


@pytest.fixture(scope="module")
def login_app(engine):
    with running_app(engine, auth="teacher:pw-s3cret") as running:
        yield running


@pytest.fixture
def secret_file(tmp_path) -> Path:
    """A server file no visitor uploaded, with contents of its own (Gradio's cache is keyed by
    content: a file from an earlier run must not stand in for this one)."""
    path = tmp_path / "secret.txt"
    path.write_text(f"TOP SECRET: the server's own file {uuid.uuid4().hex}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("fixture", ["open_app", "login_app"])
def test_a_server_file_named_by_path_is_refused(request, fixture, secret_file):
    """The reported probe: a FileData naming a file that was never uploaded came back as a
    download of that file, byte for byte (without --auth to anyone; with it, to any user)."""
    app = request.getfixturevalue(fixture)
    with app.client() as c:
        if fixture == "login_app":
            r = c.post("/login", data={"username": "teacher", "password": "pw-s3cret"})
            assert r.status_code == 200
        status, text = run_event(c, "translate_document", document_call(str(secret_file)))
        secret = secret_file.read_text(encoding="utf-8").strip()
        assert status == 403 and secret not in text, text[-600:]
        # Gradio never even copied it into its cache (where /gradio_api/file= could serve it).
        cached = Path(get_upload_folder()) / hash_file(secret_file) / secret_file.name
        assert not cached.exists()
        # Every way to name it: other endpoints, a URL, a path walking out of an upload folder.
        own = upload(c, "mine.txt", b"Good morning.\n")
        for payload, route in [
            (document_call(str(secret_file)), "/gradio_api/call/translate_document"),
            (document_call(str(secret_file)), "/gradio_api/call/v2/translate_document"),
            ({"data": [file_data(str(secret_file))], "fn_index": 0, "session_hash": "abc"},
             "/gradio_api/queue/join"),
            (document_call({"path": str(secret_file)}), "/gradio_api/call/translate_document"),
            (document_call("http://127.0.0.1:1/secret.txt"),
             "/gradio_api/call/translate_document"),
            (document_call(f"{Path(own).parent}{'/..' * 12}{secret_file}"),
             "/gradio_api/call/translate_document"),
        ]:
            if route.endswith("/v2/translate_document"):
                payload = {"file": payload["data"][0], "source": "en", "target": "en"}
            r = c.post(route, json=payload)
            assert "not uploaded" in assert_json_error(r, 403, "file_not_uploaded")
        # Downloads too: only files this session uploaded or made.
        r = c.get(f"/gradio_api/file={secret_file}")
        assert r.status_code == 404 and secret not in r.text


def test_files_belong_to_the_session_that_uploaded_or_made_them(open_app):
    with visitor(open_app) as alice, visitor(open_app) as mallory, open_app.client() as anonymous:
        path = upload(alice, "notes.md", "# 你好\n\n谢谢你的帮助。\n".encode())
        status, stream = run_event(alice, "translate_document", document_call(path, "zh", "en"))
        assert status == 200
        out, message = completed(stream)
        assert "notes.en.md" in message and out["orig_name"] == "notes.en.md"
        r = alice.get(out["url"])
        assert r.status_code == 200 and r.text == "# Hello\n\nThank you for your help.\n"
        # Another visitor can neither use Alice's upload nor fetch her translation.
        status, text = run_event(mallory, "translate_document", document_call(path))
        assert status == 403 and "Thank you" not in text
        for who in (mallory, anonymous):
            r = who.get(out["url"])
            assert_json_error(r, 404, "not_found")
            assert "Thank you" not in r.text
            assert who.get(f"/gradio_api/file={path}").status_code == 404
        assert alice.get(f"/gradio_api/file={path}").status_code == 200  # her upload's preview


def test_gradio_client_keeps_its_session_for_uploads_and_downloads(open_app, tmp_path):
    source = tmp_path / "greeting.txt"
    source.write_text("谢谢你的帮助。\n", encoding="utf-8")
    client = Client(open_app.url, verbose=False)
    try:
        path, status = client.predict(handle_file(str(source)), "zh", "en", [], True,
                                      EMPTY_GLOSSARY, api_name="/translate_document")
    finally:
        client.close()
    assert Path(path).read_text(encoding="utf-8") == "Thank you for your help.\n"


def test_files_are_deleted_when_the_server_stops(engine):
    with running_app(engine) as app, visitor(app) as c:
        path = upload(c, "notes.txt", "谢谢。\n".encode())
        out, _ = completed(run_event(c, "translate_document", document_call(path))[1])
        assert Path(path).exists() and Path(out["path"]).exists()
    assert not Path(path).exists() and not Path(out["path"]).exists()


def test_files_are_deleted_after_their_time(engine):
    with running_app(engine, files_ttl=1) as app, visitor(app) as c:
        path = upload(c, "notes.txt", "谢谢。\n".encode())
        status, stream = run_event(c, "translate_document", document_call(path))
        out, _ = completed(stream)
        assert Path(path).exists() and Path(out["path"]).exists()
        time.sleep(1.5)
        assert c.get("/health").status_code == 200  # any request sweeps what has expired
        assert wait_until(lambda: not Path(out["path"]).exists() and not Path(path).exists(), 5)
        assert c.get(out["url"]).status_code == 404
