"""Documents over HTTP, against the demo app: DeepL's document API through the real ``deepl``
client (``translate_document`` and ``translate_document_from_filepath``, unchanged), and the JSON
API's ``/v1/documents`` through httpx. A .docx comes back as a .docx with the demo's exact
translation inside; a document is given only to the holder of its key and its owner; sizes,
types, the number running per key and the deadline are bounded; a cancelled document is gone.
"""

from __future__ import annotations

import io
import threading
import time
from contextlib import closing

import deepl
import docx
import httpx
import pytest

from hunyuan_webui.errors import RateLimitError
from hunyuan_webui.service import TranslationRequest
from hunyuan_webui.service.operations.documents import (
    DONE,
    ERROR,
    DocumentJobs,
    DocumentNotFoundError,
)

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

KEY, OTHER = "doc-key-1", "doc-key-2"
PHRASE, ANSWER = "谢谢你的帮助。", "Thank you for your help."
DEADLINE_S = 30


def make_docx(*paragraphs: str) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def docx_text(data: bytes) -> list[str]:
    return [p.text for p in docx.Document(io.BytesIO(data)).paragraphs]


# The app (tests/http/conftest.py serves it): two keys, small files; deepl_client sends KEY.
APP = {"max_file_bytes": 200_000}
APP_KEYS_FILE = f"{KEY}\n{OTHER}\n"
DEEPL_KEY = KEY


@pytest.fixture(scope="module")
def http(app):
    with httpx.Client(base_url=app.url, headers={"Authorization": f"Bearer {KEY}"},
                      timeout=60, trust_env=False) as session:
        yield session


def wait_done(http: httpx.Client, doc_id: str) -> dict:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        status = http.get(f"/v1/documents/{doc_id}")
        assert status.status_code == 200, status.text
        if status.json()["status"] in (DONE, ERROR):
            return status.json()
        time.sleep(0.1)
    raise AssertionError("the document did not finish in time")


# -- DeepL, through the deepl client ------------------------------------------------------------------
def test_deepl_translate_document_gives_back_a_docx_with_the_translation(deepl_client):
    out = io.BytesIO()
    status = deepl_client.translate_document(io.BytesIO(make_docx(PHRASE, "早上好。")), out,
                                       target_lang="EN-US", source_lang="ZH",
                                       filename="lesson.docx", timeout_s=DEADLINE_S)
    assert status.done and status.billed_characters == len(PHRASE) + len("早上好。")
    assert docx_text(out.getvalue()) == [ANSWER, "Good morning."]


def test_deepl_translate_document_from_filepath(deepl_client, tmp_path):
    source, target = tmp_path / "note.docx", tmp_path / "note.en.docx"
    source.write_bytes(make_docx("谢谢。"))
    status = deepl_client.translate_document_from_filepath(source, target, target_lang="EN-GB")
    assert status.done
    assert docx_text(target.read_bytes()) == ["Thank you."]


def test_deepl_html_document_keeps_its_nested_tags(deepl_client, tmp_path):
    source, target = tmp_path / "notice.html", tmp_path / "notice.en.html"
    source.write_text('<html><body><div class="a"><p><b>谢谢。</b></p><ul><li><i>早上好。</i>'
                      '</li></ul></div><p translate="no">谢谢。</p></body></html>',
                      encoding="utf-8")
    assert deepl_client.translate_document_from_filepath(source, target, target_lang="EN-US").done
    assert target.read_text(encoding="utf-8") == (
        '<html><body><div class="a"><p><b>Thank you.</b></p><ul><li><i>Good morning.</i>'
        '</li></ul></div><p translate="no">谢谢。</p></body></html>')


def test_deepl_document_needs_its_key_and_its_owner(deepl_client, app):
    handle = deepl_client.translate_document_upload(make_docx(PHRASE), target_lang="EN-US",
                                              filename="a.docx")
    assert deepl_client.translate_document_wait_until_done(handle).done
    wrong = deepl.DocumentHandle(handle.document_id, "not-the-key")
    with pytest.raises(deepl.DeepLException, match="Not found"):
        deepl_client.translate_document_get_status(wrong)
    with closing(deepl.Translator(OTHER, server_url=app.url)) as other, \
            pytest.raises(deepl.DeepLException, match="Not found"):
        other.translate_document_download(handle, io.BytesIO())
    with closing(deepl.Translator("no-such-key", server_url=app.url)) as stranger, \
            pytest.raises(deepl.AuthorizationException):
        stranger.translate_document_get_status(handle)
    out = io.BytesIO()
    deepl_client.translate_document_download(handle, out)
    assert docx_text(out.getvalue()) == [ANSWER]


def test_deepl_document_refusals_read_as_deepl_errors(deepl_client, app):
    with pytest.raises(deepl.DeepLException, match="not supported"):
        deepl_client.translate_document_upload(b"MZ\x90\x00", target_lang="EN-US", filename="x.exe")
    with pytest.raises(deepl.DeepLException, match="target_lang"):
        deepl_client.translate_document_upload(make_docx(PHRASE), target_lang="XX", filename="a.docx")
    too_big = httpx.post(f"{app.url}/v2/document", headers={
        "Authorization": f"DeepL-Auth-Key {KEY}"}, data={"target_lang": "EN-US"},
        files={"file": ("big.txt", b"a" * 300_000)}, timeout=30, trust_env=False)
    assert too_big.status_code == 413
    # A file that is not what its name says is read before it is accepted: refused at once.
    with pytest.raises(deepl.DeepLException, match="Word"):
        deepl_client.translate_document_upload(b"not a zip", target_lang="EN-US",
                                               filename="broken.docx")


# -- the JSON API, through httpx ---------------------------------------------------------------
def test_v1_documents_upload_status_result(http):
    sent = http.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh"},
                     files={"file": ("lesson.docx", make_docx(PHRASE))})
    assert sent.status_code == 202, sent.text
    doc_id = sent.json()["id"]
    status = wait_done(http, doc_id)
    assert status["status"] == DONE and status["progress"] == 1.0
    assert status["result_filename"] == "lesson.en.docx"
    result = http.get(f"/v1/documents/{doc_id}/result")
    assert result.status_code == 200
    assert "lesson.en.docx" in result.headers["content-disposition"]
    assert docx_text(result.content) == [ANSWER]
    text = http.post("/v1/documents", data={"target_lang": "en"},
                     files={"file": ("a.txt", "谢谢。\n早上好。".encode())})
    done = wait_done(http, text.json()["id"])
    assert done["status"] == DONE
    assert http.get(f"/v1/documents/{text.json()['id']}/result").text == \
        "Thank you.\nGood morning."


def test_a_document_into_chinese_has_no_space_after_a_full_stop(http):
    """"Thank you. Please sit down." came back "谢谢。 请坐。" in a file, as it no longer did in
    the text box: the file is spaced as the streamed text is, in a .txt and in a .docx."""
    text = "Thank you. Please sit down.\nThank you."
    sent = http.post("/v1/documents", data={"target_lang": "zh", "source_lang": "en"},
                     files={"file": ("a.txt", text.encode())})
    assert wait_done(http, sent.json()["id"])["status"] == DONE
    assert http.get(f"/v1/documents/{sent.json()['id']}/result").text == "谢谢。请坐。\n谢谢。"
    sent = http.post("/v1/documents", data={"target_lang": "zh", "source_lang": "en"},
                     files={"file": ("a.docx", make_docx(*text.splitlines()))})
    assert wait_done(http, sent.json()["id"])["status"] == DONE
    result = http.get(f"/v1/documents/{sent.json()['id']}/result").content
    assert docx_text(result) == ["谢谢。请坐。", "谢谢。"]


def test_v1_documents_pptx_and_xlsx_come_back_translated(http):
    import openpyxl
    import pptx

    deck = pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = PHRASE
    book = openpyxl.Workbook()
    book.active["A1"], book.active["B1"] = "早上好。", 7
    for name, thing in (("slides.pptx", deck), ("marks.xlsx", book)):
        buffer = io.BytesIO()
        thing.save(buffer)
        sent = http.post("/v1/documents", data={"target_lang": "en"},
                         files={"file": (name, buffer.getvalue())})
        assert wait_done(http, sent.json()["id"])["status"] == DONE
        result = http.get(f"/v1/documents/{sent.json()['id']}/result").content
        if name.endswith(".pptx"):
            title = pptx.Presentation(io.BytesIO(result)).slides[0].shapes.title.text
            assert title == ANSWER
        else:
            sheet = openpyxl.load_workbook(io.BytesIO(result)).active
            assert (sheet["A1"].value, sheet["B1"].value) == ("Good morning.", 7)


def test_v1_documents_belong_to_their_key_and_cancel_forgets_them(http, app):
    sent = http.post("/v1/documents", data={"target_lang": "en"},
                     files={"file": ("a.docx", make_docx(PHRASE))})
    doc_id = sent.json()["id"]
    other = httpx.get(f"{app.url}/v1/documents/{doc_id}", trust_env=False,
                      headers={"Authorization": f"Bearer {OTHER}"})
    assert other.status_code == 404
    assert httpx.get(f"{app.url}/v1/documents/{doc_id}", trust_env=False).status_code == 401
    assert http.delete(f"/v1/documents/{doc_id}").json() == {"id": doc_id,
                                                             "status": "cancelled"}
    gone = http.get(f"/v1/documents/{doc_id}")
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "document_not_found"
    missing = http.post("/v1/documents", data={"target_lang": "en"})
    assert missing.status_code == 400


# -- the store's bounds, on the demo model -------------------------------------------------------
def test_documents_per_owner_deadline_and_expiry(make_translator):
    translator = make_translator()
    now = [0.0]
    jobs = DocumentJobs(translator, ttl=60, per_owner=1, deadline=DEADLINE_S,
                        clock=lambda: now[0])
    template = TranslationRequest(text="", source_lang="zh", target_lang="en")
    gate, delay = threading.Event(), [0.0]
    translate_segments = translator.translate_segments

    def held(*args, **kwargs):  # the work waits (the count is taken before it: at submit)
        gate.wait(10)
        time.sleep(delay[0])
        return translate_segments(*args, **kwargs)

    translator.translate_segments = held
    first = jobs.submit("k", "a.txt", "谢谢。".encode(), template)
    with pytest.raises(RateLimitError):
        jobs.submit("k", "b.txt", "谢谢。".encode(), template)
    gate.set()
    assert first.wait(DEADLINE_S) and first.status == DONE
    assert jobs.result(first).data == b"Thank you."
    with pytest.raises(DocumentNotFoundError):
        jobs.get(first.id, "wrong")
    now[0] = 61.0
    with pytest.raises(DocumentNotFoundError):  # expired: forgotten, result and all
        jobs.get(first.id, first.key)
    short = DocumentJobs(translator, ttl=60, deadline=0.2)
    delay[0] = 0.5
    slow = short.submit(None, "c.txt", "谢谢。".encode(), template)
    assert slow.wait(DEADLINE_S) and slow.status == ERROR
    assert "longer than 0.2 seconds" in slow.error
