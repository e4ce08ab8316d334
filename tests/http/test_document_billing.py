"""A document is billed by the text it sends to the model, and the allowance is checked before
any of it is translated (issue 32, finding 1: a 95 MB .docx "was billed as 13 characters", so
character allowances did not slow it down; its unpacking is bounded now, tests/test_package*.py).

The document is read when it is uploaded: its distinct segments are what the job will send, and
their characters are counted against the key then. A document over the key's daily allowance is
refused at upload (429 on ``/v1/documents``, DeepL's 456 on ``/v2/document``) and the engine
sees nothing of it; one within it is billed exactly its distinct text, however often the text
repeats in the file.
"""

from __future__ import annotations

import io
import time

import docx
import httpx
import pytest
from apphelpers import RecordingEngine, assert_json_error, running_app

pytestmark = pytest.mark.slow  # a model, a server: not the fast lane

KEY = "thirty-a-day"
PHRASE, GOOD_MORNING = "谢谢你的帮助。", "早上好。"


def make_docx(*paragraphs: str) -> bytes:
    document = docx.Document()
    for text in paragraphs:
        document.add_paragraph(text)
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def test_a_document_is_billed_its_distinct_text_and_refused_past_the_allowance(engine, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{KEY} 0 30\n", encoding="utf-8")
    recording = RecordingEngine(engine)
    with running_app(recording, api_keys_file=str(keys)) as app, \
            httpx.Client(base_url=app.url, headers={"Authorization": f"Bearer {KEY}"},
                         timeout=60, trust_env=False) as http:
        # 200 paragraphs, two distinct sentences: 11 characters sent, 11 billed.
        repeated = make_docx(*([PHRASE, GOOD_MORNING] * 100))
        sent = http.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh"},
                         files={"file": ("lesson.docx", repeated)})
        assert sent.status_code == 202, sent.text
        deadline = time.monotonic() + 60
        while (status := http.get(f"/v1/documents/{sent.json()['id']}").json())["status"] \
                != "done" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert status["status"] == "done" and status["billed_characters"] == 11
        usage = httpx.get(f"{app.url}/v2/usage", trust_env=False,
                          headers={"Authorization": f"DeepL-Auth-Key {KEY}"}).json()
        assert usage["character_count"] == 11  # counted once, when it was accepted
        prompts = len(recording.prompts)
        # 26 more distinct characters pass the 30 of the day: refused at upload, not translated.
        over = make_docx("我们明天见。", "今天天气很好。", "请坐。", "再见。", "你叫什么名字？")
        refused = http.post("/v1/documents", data={"target_lang": "en", "source_lang": "zh"},
                            files={"file": ("more.docx", over)})
        message = assert_json_error(refused, 429, "rate_limited")
        assert "Daily limit: 30 characters" in message and "11 used" in message, message
        deepl = httpx.post(f"{app.url}/v2/document", trust_env=False, timeout=60,
                           headers={"Authorization": f"DeepL-Auth-Key {KEY}"},
                           data={"target_lang": "EN-US", "source_lang": "ZH"},
                           files={"file": ("more.docx", over)})
        assert deepl.status_code == 456 and "Daily limit" in deepl.json()["message"], deepl.text
        time.sleep(0.5)
        assert len(recording.prompts) == prompts  # the engine saw nothing of either
        assert httpx.get(f"{app.url}/v2/usage", trust_env=False, headers={
            "Authorization": f"DeepL-Auth-Key {KEY}"}).json()["character_count"] == 11
