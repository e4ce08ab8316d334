"""Bilingual copies for learners (issue 37): ``bilingual=true`` on ``POST /v1/documents`` and the
Document tab's switch give back the file with each source paragraph followed by its translation,
word for word the demo model's: a .docx (the must-show), an .odt, an HTML page; a format that
cannot hold one is refused with words."""

from __future__ import annotations

import io
import time
from pathlib import Path

import docx
import httpx
import opendocs as od
import pytest
from apphelpers import EMPTY_GLOSSARY, completed, file_data, run_event, upload, visitor

pytestmark = pytest.mark.slow  # a server and the demo model

DEADLINE_S = 60
APP = {"max_file_bytes": 1_000_000}


def lesson_docx() -> bytes:
    document = docx.Document()
    document.add_heading("欢迎来到北京。", level=1)
    paragraph = document.add_paragraph("谢谢你的帮助。")
    paragraph.add_run("今天天气很好。").bold = True
    document.add_paragraph("我们明天见。")
    table = document.add_table(rows=1, cols=1)
    table.cell(0, 0).text = "这本书很有意思。"
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def http(app):
    with httpx.Client(base_url=app.url, timeout=60, trust_env=False) as session:
        yield session


def translated(http: httpx.Client, name: str, data: bytes, **fields: str) -> tuple[dict, bytes]:
    sent = http.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh", **fields},
                     files={"file": (name, data)})
    assert sent.status_code == 202, sent.text
    deadline = time.monotonic() + DEADLINE_S
    while (status := http.get(f"/v1/documents/{sent.json()['id']}").json())["status"] not in (
            "done", "error"):
        assert time.monotonic() < deadline, "the document did not finish in time"
        time.sleep(0.1)
    assert status["status"] == "done", status
    return status, http.get(f"/v1/documents/{sent.json()['id']}/result").content


def test_a_bilingual_docx_has_each_paragraph_followed_by_its_translation(http):
    status, result = translated(http, "lesson.docx", lesson_docx(), bilingual="true")
    assert status["bilingual"] is True and status["result_filename"] == "lesson.bilingual.en.docx"
    document = docx.Document(io.BytesIO(result))
    assert [(p.style.name, p.text) for p in document.paragraphs] == [
        ("Heading 1", "欢迎来到北京。"), ("Heading 1", "Welcome to Beijing."),
        ("Normal", "谢谢你的帮助。今天天气很好。"),
        ("Normal", "Thank you for your help. The weather is nice today."),
        ("Normal", "我们明天见。"), ("Normal", "See you tomorrow.")]
    bold = document.paragraphs[3].runs[1]  # the bold sentence stays bold in both
    assert bold.bold and bold.text == " The weather is nice today."
    assert document.paragraphs[2].runs[1].bold
    assert [p.text for p in document.tables[0].cell(0, 0).paragraphs] == [
        "这本书很有意思。", "This book is very interesting."]
    # Without the flag, the same file is translated as before.
    status, plain = translated(http, "lesson.docx", lesson_docx())
    assert status["bilingual"] is False
    assert [p.text for p in docx.Document(io.BytesIO(plain)).paragraphs][:2] == [
        "Welcome to Beijing.", "Thank you for your help. The weather is nice today."]


def test_a_bilingual_odt_and_html_page(http):
    _, odt = translated(http, "lesson.odt", od.make_odf(".odt"), bilingual="true")
    paragraphs = od.paragraphs(od.xml(odt, "content.xml"))
    assert paragraphs[:6] == [
        "欢迎来到北京。", "Welcome to Beijing.",
        "谢谢你的帮助。今天天气很好。", "Thank you for your help. The weather is nice today.",
        "早上好。谢谢。", "Good morning. Thank you."]
    content = od.xml(odt, "content.xml")
    assert len(content.findall(".//draw:image", od.NS)) == 1  # a picture is not doubled
    assert len(content.findall(".//text:note", od.NS)) == 1  # nor a footnote
    page = ('<html><body><h1 id="top">欢迎来到北京。</h1><p>谢谢你的帮助。</p>'
            '<p><a href="#top">我们明天见。</a></p></body></html>')
    _, html = translated(http, "page.html", page.encode(), bilingual="true")
    assert html.decode() == (
        '<html><body><h1 id="top">欢迎来到北京。</h1><h1 lang="en">Welcome to Beijing.</h1>'
        '<p>谢谢你的帮助。</p><p lang="en">Thank you for your help.</p>'
        '<p><a href="#top">我们明天见。</a></p><p lang="en"><a href="#top">See you tomorrow.</a>'
        '</p></body></html>')


def test_a_format_without_paragraphs_to_follow_is_refused_with_words(http):
    refused = http.post("/v1/documents", data={"target_lang": "en", "bilingual": "true"},
                        files={"file": ("cues.srt", b"1\n00:00:01,000 --> 00:00:02,000\n\xe4\xbd\xa0\xe5\xa5\xbd\n")})
    assert refused.status_code == 400
    assert "bilingual copy is made of" in refused.json()["error"]["message"]
    wrong = http.post("/v1/documents", data={"target_lang": "en", "bilingual": "maybe"},
                      files={"file": ("lesson.docx", lesson_docx())})
    assert wrong.status_code == 400 and "bilingual" in wrong.json()["error"]["message"]


def test_the_document_tabs_switch_makes_a_bilingual_copy(app):
    with visitor(app) as c:
        config = c.get("/config").json()
        assert any(comp.get("props", {}).get("elem_id") == "doc-bilingual"
                   for comp in config["components"])
        path = upload(c, "lesson.docx", lesson_docx())
        status, stream = run_event(c, "translate_document", {"data": [
            file_data(path), "zh", "en", [], True, EMPTY_GLOSSARY, True]})
        assert status == 200
        out, said = completed(stream)
        assert Path(out["path"]).name == "lesson.bilingual.en.docx"
        paragraphs = [p.text for p in docx.Document(out["path"]).paragraphs]
        assert paragraphs[:2] == ["欢迎来到北京。", "Welcome to Beijing."]
