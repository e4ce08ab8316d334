"""PDF documents over HTTP (issue 37), against the demo app.

A worksheet made with reportlab (a heading, two paragraphs of demo phrases, a table, an image)
goes through ``POST /v1/documents`` and through the real ``deepl`` client's
``translate_document``, and comes back a PDF of the same pages with the demo model's exact
translations in the text read from it, the image still there and every line of text within its
original block (±5% of the page). Bad PDFs (encrypted, damaged, a Flate bomb, a billion objects,
deep nesting, only scanned images) go to a server process of its own: each is refused with a 4xx
and words within 10 s, the server's memory rises by less than 200 MB, and the upload folder and
the server's temporary folder are left empty.
"""

from __future__ import annotations

import io
import time

import httpx
import pdfs
import pypdf
import pytest
from apphelpers import app_process

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

KEY = "pdf-key"
APP_KEYS_FILE = f"{KEY}\n"
DEEPL_KEY = KEY
DEADLINE_S = 120


def assert_translated(source: bytes, result: bytes) -> None:
    out = pypdf.PdfReader(io.BytesIO(result))
    assert len(out.pages) == len(pypdf.PdfReader(io.BytesIO(source)).pages)
    text = " ".join(" ".join(page.extract_text() for page in out.pages).split())
    for answer in pdfs.SHOWN - {"Well done! 👍"}:  # the demo's exact words
        assert answer in text, (answer, text)
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in text), text
    assert pdfs.images(result) == pdfs.images(source) == len(out.pages)
    pdfs.assert_in_boxes(source, result)


def test_a_pdf_through_v1_documents_comes_back_a_pdf_with_its_layout(app):
    source = pdfs.lesson_pdf()
    with httpx.Client(base_url=app.url, headers={"Authorization": f"Bearer {KEY}"},
                      timeout=60, trust_env=False) as http:
        sent = http.post("/v1/documents", data={"source_lang": "zh", "target_lang": "en"},
                         files={"file": ("lesson.pdf", source, "application/pdf")})
        assert sent.status_code == 202, sent.text
        doc = sent.json()["id"]
        deadline = time.monotonic() + DEADLINE_S
        while (status := http.get(f"/v1/documents/{doc}").json())["status"] not in ("done",
                                                                                      "error"):
            assert time.monotonic() < deadline, status
            time.sleep(0.2)
        assert status["status"] == "done", status
        assert status["result_filename"] == "lesson.en.pdf" and status["notes"] == []
        result = http.get(f"/v1/documents/{doc}/result")
    assert result.status_code == 200
    assert_translated(source, result.content)


def test_a_pdf_through_the_deepl_client_comes_back_a_pdf_with_its_layout(deepl_client):
    source = pdfs.lesson_pdf()
    # The bytes with their name, and a file object (which the client sends without a name).
    for document in (source, io.BytesIO(source)):
        out = io.BytesIO()
        status = deepl_client.translate_document(document, out, target_lang="EN-US",
                                                 source_lang="ZH", filename="lesson.pdf",
                                                 timeout_s=DEADLINE_S)
        assert status.done
        assert_translated(source, out.getvalue())


# -- bad PDFs, to a server of its own -------------------------------------------------------------
BAD = {
    "encrypted": (pdfs.encrypted, "encrypted"),
    "damaged": (pdfs.damaged, "damaged"),
    "flate bomb": (lambda: pdfs.flate_bomb(2000), "unpacks to too much data"),
    "a billion objects": (pdfs.many_objects, "1,000,000,000 objects"),
    "nested": (pdfs.nested, "nest too deeply"),
    "scanned images": (lambda: pdfs.scanned(pages=4), "no OCR"),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    uploads, temp = tmp_path_factory.mktemp("uploads"), tmp_path_factory.mktemp("tmp")
    with app_process("--upload-dir", str(uploads), env={"TMPDIR": str(temp)}) as running:
        with httpx.Client(base_url=running.url, trust_env=False, timeout=60) as c:
            warm = c.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh"},
                          files={"file": ("lesson.pdf", pdfs.lesson_pdf())})
            assert warm.status_code == 202, warm.text
            doc = warm.json()["id"]
            deadline = time.monotonic() + DEADLINE_S
            while c.get(f"/v1/documents/{doc}").json()["status"] != "done":
                assert time.monotonic() < deadline
                time.sleep(0.2)
        yield running, uploads, temp


@pytest.mark.parametrize("kind", list(BAD))
def test_a_bad_pdf_is_refused_with_words_in_bounded_time_and_memory(server, kind):
    app, uploads, temp = server
    make, words = BAD[kind]
    data = make()
    assert len(data) < 5_000_000
    base = app.rss_kib()
    with httpx.Client(base_url=app.url, trust_env=False, timeout=30) as c:
        for route, target in (("/v1/documents", "en"), ("/v2/document", "EN-US")):
            started = time.monotonic()
            answer = c.post(route, data={"target_lang": target},
                            files={"file": ("worksheet.pdf", data, "application/pdf")})
            assert time.monotonic() - started < 10
            assert answer.status_code in (400, 413), (answer.status_code, answer.text[:300])
            assert words in answer.text, answer.text[:300]
            assert (app.rss_kib() - base) / 1024 < 200
    assert [p for p in uploads.rglob("*") if p.is_file() and not p.name.startswith(".")] == []
    assert list(temp.iterdir()) == []
