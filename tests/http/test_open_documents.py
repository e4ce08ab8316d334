"""Issue 37's must-show for OpenDocument and EPUB, over HTTP against the demo app: an .odt, .odp,
.ods and .epub (tests/opendocs.py) each come back through ``POST /v1/documents``, through the
real ``deepl`` client's ``translate_document`` and through the page's Document tab with the demo
model's exact translations and their structure kept (the details of each format:
tests/service/test_open_document_formats.py)."""

from __future__ import annotations

import io
import time
from pathlib import Path

import httpx
import opendocs as od
import pytest
from apphelpers import completed, document_call, run_event, upload, visitor

pytestmark = pytest.mark.slow  # a server and the demo model

DEADLINE_S = 60
APP = {"max_file_bytes": 1_000_000}
# What each file's text reads once translated (tests/opendocs.py; Chinese demo phrases).
EXPECTED = {
    ".odt": ("content.xml", [
        "Welcome to Beijing.", "Thank you for your help. The weather is nice today.",
        "Good morning. Thank you.", "This book is very interesting.", "See you tomorrow.",
        "What is your name?", "Hello\tThank you.", "Good morning.", "Well done! 👍", "你好", ""]),
    ".odp": ("content.xml", [
        "Welcome to Beijing.", "The weather is nice today.", "This book is very interesting.",
        "Thank you.", "42", "See you tomorrow."]),
    ".ods": ("content.xml", [
        "Good morning.", "Hello", "7", "14", "你好", "Thank you for your help.",
        "The weather is nice today."]),
}


def make(ext: str) -> bytes:
    return od.make_epub() if ext == ".epub" else od.make_odf(ext)


def check(ext: str, source: bytes, result: bytes) -> None:
    """The demo's translations in the file's text, and every member kept but those with text."""
    if ext == ".epub":
        chapter = od.chapter(result, "ch1.xhtml")
        assert od.texts(chapter, "h1") == ["Welcome to Beijing."]
        assert od.texts(chapter, "p")[:2] == [
            "Thank you for your help. The weather is nice today.", "See you tomorrow."]
        assert chapter.find(".//x:a", od.NS).get("href") == "ch2.xhtml#s1"
        assert chapter.find(".//x:img", od.NS).get("src") == "images/dot.png"
        assert od.texts(od.chapter(result, "ch2.xhtml"), "h2") == ["This book is very interesting."]
        changed = {"OEBPS/ch1.xhtml", "OEBPS/ch2.xhtml", "OEBPS/nav.xhtml", "OEBPS/toc.ncx",
                   "OEBPS/content.opf"}
    else:
        part, paragraphs = EXPECTED[ext]
        assert od.paragraphs(od.xml(result, part)) == paragraphs
        changed = {"content.xml", "styles.xml"} if ext == ".odt" else {"content.xml"}
    before, after = od.members(source), od.members(result)
    assert list(after) == list(before)
    assert {k for k in before if before[k] != after[k]} == changed
    assert after.get("Pictures/dot.png", after.get("OEBPS/images/dot.png")) == od.PNG


@pytest.fixture(scope="module")
def http(app):
    with httpx.Client(base_url=app.url, timeout=60, trust_env=False) as session:
        yield session


def wait_done(http: httpx.Client, doc_id: str) -> dict:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        status = http.get(f"/v1/documents/{doc_id}").json()
        if status["status"] in ("done", "error"):
            return status
        time.sleep(0.1)
    raise AssertionError("the document did not finish in time")


@pytest.mark.parametrize("ext", [".odt", ".odp", ".ods", ".epub"])
def test_v1_documents_round_trip(http, ext):
    source = make(ext)
    sent = http.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh"},
                     files={"file": ("lesson" + ext, source)})
    assert sent.status_code == 202, sent.text
    status = wait_done(http, sent.json()["id"])
    assert status["status"] == "done", status
    assert status["result_filename"] == f"lesson.en{ext}"
    result = http.get(f"/v1/documents/{sent.json()['id']}/result")
    assert result.status_code == 200
    check(ext, source, result.content)


@pytest.mark.parametrize("ext", [".odt", ".odp", ".ods", ".epub"])
def test_deepl_translate_document_round_trip(deepl_client, ext, tmp_path):
    """From a file on disk (its name goes with it), and from memory: ``io.BytesIO`` has no
    name, and the package is known by its content."""
    source = make(ext)
    path, out = tmp_path / ("lesson" + ext), tmp_path / ("lesson.en" + ext)
    path.write_bytes(source)
    deepl_client.translate_document_from_filepath(path, out, target_lang="EN-US",
                                                  source_lang="ZH")
    check(ext, source, out.read_bytes())
    memory = io.BytesIO()
    deepl_client.translate_document(io.BytesIO(source), memory, target_lang="EN-US",
                                    source_lang="ZH")
    check(ext, source, memory.getvalue())


@pytest.mark.parametrize("ext", [".odt", ".epub"])
def test_the_document_tab_translates_them_too(app, ext):
    """The page's Document tab: the same file job, the same result."""
    source = make(ext)
    with visitor(app) as c:
        path = upload(c, "lesson" + ext, source)
        status, stream = run_event(c, "translate_document", document_call(path, "zh", "en"))
        assert status == 200
        out, said = completed(stream)
    assert Path(out["path"]).name == f"lesson.en{ext}"
    check(ext, source, Path(out["path"]).read_bytes())
    assert "Done" in said or "完成" in said
