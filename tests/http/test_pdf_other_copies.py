"""A PDF's other copies over HTTP (issue 37), against the demo app: ``output_format=docx`` on
``POST /v1/documents`` and on DeepL's ``/v2/document`` (through the real ``deepl`` client's
``translate_document(..., output_format="docx")``) gives back a Word file of the worksheet's blocks
with the demo model's exact translations; ``bilingual=true`` and ``bilingual=columns`` give a
learner's copy (a Word file's side by side too); an output a file cannot have is refused with a 400 and words."""

from __future__ import annotations

import io
import time

import deepl
import docx
import httpx
import pdfs
import pytest

pytestmark = pytest.mark.slow  # a server and the demo model

DEADLINE_S = 120
APP = {"max_file_bytes": 2_000_000}


@pytest.fixture(scope="module")
def http(app):
    with httpx.Client(base_url=app.url, timeout=60, trust_env=False) as session:
        yield session


def translated(http: httpx.Client, name: str, data: bytes, **fields: str) -> tuple[dict, bytes]:
    sent = http.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh", **fields},
                     files={"file": (name, data, "application/pdf")})
    assert sent.status_code == 202, sent.text
    deadline = time.monotonic() + DEADLINE_S
    while (status := http.get(f"/v1/documents/{sent.json()['id']}").json())["status"] not in (
            "done", "error"):
        assert time.monotonic() < deadline, "the document did not finish in time"
        time.sleep(0.1)
    assert status["status"] == "done", status
    result = http.get(f"/v1/documents/{sent.json()['id']}/result")
    assert result.status_code == 200
    return status, result


def lesson_paragraphs(data: bytes) -> list[tuple[str, str]]:
    document = docx.Document(io.BytesIO(data))
    assert len(document.inline_shapes) == 1  # the worksheet's image
    return [(p.style.name, p.text) for p in document.paragraphs if p.text.strip()]


ENGLISH = [("Heading 1", pdfs.LESSON_ENGLISH[0])] + \
    [("Normal", text) for text in pdfs.LESSON_ENGLISH[1:]]


def test_a_pdf_comes_back_as_a_word_file_through_v1_documents(http):
    status, result = translated(http, "lesson.pdf", pdfs.lesson_pdf(), output_format="docx")
    assert status["result_filename"] == "lesson.en.docx" and status["notes"] == []
    assert "lesson.en.docx" in result.headers["content-disposition"]
    assert result.headers["content-type"].startswith(
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
    assert lesson_paragraphs(result.content) == ENGLISH


def test_a_pdf_comes_back_as_a_word_file_through_the_deepl_client(deepl_client):
    source = pdfs.lesson_pdf()
    for document in (source, io.BytesIO(source)):  # named, and a nameless file object
        out = io.BytesIO()
        status = deepl_client.translate_document(document, out, target_lang="EN-US",
                                                 source_lang="ZH", filename="lesson.pdf",
                                                 output_format="docx", timeout_s=DEADLINE_S)
        assert status.done
        assert lesson_paragraphs(out.getvalue()) == ENGLISH


def test_an_output_a_file_cannot_have_is_refused_with_words(http, deepl_client):
    for name, data, wanted in (("lesson.pdf", pdfs.lesson_pdf(), "xlsx"),
                               ("cues.srt", b"1\n00:00:01,000 --> 00:00:02,000\nHi\n", "docx")):
        refused = http.post("/v1/documents", data={"target_lang": "en", "output_format": wanted},
                            files={"file": (name, data)})
        assert refused.status_code == 400, refused.text
        assert "cannot come back as" in refused.json()["error"]["message"]
        with pytest.raises(deepl.DeepLException, match="output_format"):
            deepl_client.translate_document(data, io.BytesIO(), target_lang="EN-US",
                                            filename=name, output_format=wanted)


def test_bilingual_pdfs_and_side_by_side_word_copies(http):
    source = pdfs.lesson_pdf()
    status, result = translated(http, "lesson.pdf", source, bilingual="true")
    assert status["bilingual"] is True
    assert status["result_filename"] == "lesson.bilingual.en.pdf"
    assert result.content.startswith(b"%PDF-") and pdfs.images(result.content) == 1
    status, result = translated(http, "lesson.pdf", source, bilingual="columns",
                                output_format="docx")
    assert status["bilingual"] == "columns"
    assert status["result_filename"] == "lesson.bilingual.en.docx"
    [table] = docx.Document(io.BytesIO(result.content)).tables
    assert [tuple(c.text for c in row.cells) for row in table.rows] == [
        ("Chinese", "English"), *zip(pdfs.LESSON_BLOCKS, pdfs.LESSON_ENGLISH, strict=True)]
    document = docx.Document()
    document.add_heading("欢迎来到北京。", level=1)
    document.add_paragraph("我们明天见。")
    buffer = io.BytesIO()
    document.save(buffer)
    status, result = translated(http, "lesson.docx", buffer.getvalue(), bilingual="columns")
    assert (status["bilingual"], status["result_filename"]) == ("columns",
                                                                "lesson.bilingual.en.docx")
    [table] = docx.Document(io.BytesIO(result.content)).tables
    assert [tuple(c.text for c in row.cells) for row in table.rows] == [
        ("Chinese", "English"), ("欢迎来到北京。", "Welcome to Beijing."),
        ("我们明天见。", "See you tomorrow.")]
    refused = http.post("/v1/documents", data={"target_lang": "en", "bilingual": "columns"},
                        files={"file": ("page.html", b"<p>\xe4\xbd\xa0\xe5\xa5\xbd</p>")})
    assert refused.status_code == 400 and "two-column" in refused.json()["error"]["message"]
