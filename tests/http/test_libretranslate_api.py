"""LibreTranslate's own API tests (``libretranslate/tests/test_api`` in its repository: 14 cases
in six files), reproduced here over HTTP against this server instead of its Flask test client:
the same requests, the same assertions, one test each, named as theirs. Then what its clients and
front end do with files: ``POST /translate_file`` (multipart ``file``, ``source``, ``target``)
answers a ``translatedFileUrl`` that downloads the translated file, ``/frontend/settings`` names
the formats, and ``alternatives`` is accepted on ``/translate``.

Our own routes keep our own wording (``/v1/translate`` on an unknown language)."""

from __future__ import annotations

import io
import json

import docx
import httpx
import opendocs as od
import pytest

pytestmark = pytest.mark.slow  # a server and the demo model

APP = {"max_file_bytes": 1_000_000}


@pytest.fixture(scope="module")
def lt(app):
    """What LibreTranslate's tests call ``client``: here, this server over HTTP."""
    with httpx.Client(base_url=app.url, timeout=60, trust_env=False) as session:
        yield session


def _json(response: httpx.Response):
    return json.loads(response.content)  # as their tests read ``response.data``


# -- test_api_detect_language.py ----------------------------------------------------------------------
def test_api_detect_language(lt):
    response = lt.post("/detect", data={"q": "Hello"})
    response_json = _json(response)
    assert "confidence" in response_json[0] and "language" in response_json[0]
    assert len(response_json) >= 1
    assert response.status_code == 200


def test_api_detect_language_must_fail_without_parameters(lt):
    response = lt.post("/detect")
    response_json = _json(response)
    assert "error" in response_json
    assert response.status_code == 400


def test_api_detect_language_must_fail_bad_request_type(lt):
    assert lt.get("/detect").status_code == 405


# -- test_api_frontend_settings.py ----------------------------------------------------------------------
def test_api_get_frontend_settings(lt):
    assert lt.get("/frontend/settings").status_code == 200


# -- test_api_get_languages.py ---------------------------------------------------------------------------
def test_api_get_languages(lt):
    response = lt.get("/languages")
    response_json = _json(response)
    assert "code" in response_json[0] and "name" in response_json[0]
    assert len(response_json) >= 1
    assert response.status_code == 200


def test_api_get_languages_must_fail_bad_request_type(lt):
    assert lt.post("/languages").status_code == 405


# -- test_api_health.py ----------------------------------------------------------------------------------
def test_api_get_health(lt):
    response = lt.get("/health")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_api_health_must_fail_bad_request_type(lt):
    assert lt.post("/health").status_code == 405


# -- test_api_spec.py ------------------------------------------------------------------------------------
def test_api_get_spec(lt):
    assert lt.get("/spec").status_code == 200


def test_api_get_spec_must_fail_bad_request_type(lt):
    assert lt.post("/spec").status_code == 405


# -- test_api_translate.py -------------------------------------------------------------------------------
def test_api_translate(lt):
    response = lt.post("/translate", data={"q": "Hello", "source": "en", "target": "es",
                                           "format": "text"})
    response_json = _json(response)
    assert "translatedText" in response_json
    assert response.status_code == 200


def test_api_translate_batch(lt):
    response = lt.post("/translate", json={"q": ["Hello", "World"], "source": "en",
                                           "target": "es", "format": "text"})
    response_json = _json(response)
    assert "translatedText" in response_json
    assert isinstance(response_json["translatedText"], list)
    assert len(response_json["translatedText"]) == 2
    assert response.status_code == 200


def test_api_translate_unsupported_language(lt):
    response = lt.post("/translate", data={"q": "Hello", "source": "en", "target": "zz",
                                           "format": "text"})
    response_json = _json(response)
    assert "error" in response_json
    assert response_json["error"] == "zz is not supported"
    assert response.status_code == 400


def test_api_translate_missing_parameter(lt):
    response = lt.post("/translate", data={"source": "en", "target": "es", "format": "text"})
    response_json = _json(response)
    assert "error" in response_json
    assert response_json["error"] == "Invalid request: missing q parameter"
    assert response.status_code == 400


# -- beyond their tests: what their clients and front end do ---------------------------------------------
def test_our_own_routes_keep_our_own_wording(lt):
    ours = lt.post("/v1/translate", json={"text": "Hello", "source_lang": "en",
                                          "target_lang": "zz"})
    assert ours.status_code == 400
    assert ours.json()["error"]["code"] and "zz is not supported" not in ours.text
    source = lt.post("/translate", json={"q": "Hello", "source": "xx", "target": "en"})
    assert (source.status_code, source.json()) == (400, {"error": "xx is not supported"})


def test_the_spec_describes_libretranslates_routes(lt):
    spec = lt.get("/spec").json()
    assert {"/translate", "/detect", "/languages", "/translate_file",
            "/frontend/settings"} <= set(spec["paths"])
    assert "/v1/translate" not in spec["paths"]


def test_frontend_settings_name_the_file_formats(lt):
    settings = lt.get("/frontend/settings").json()
    assert {".odt", ".odp", ".ods", ".epub", ".docx", ".pptx", ".xlsx", ".html", ".txt"} <= \
        set(settings["supportedFilesFormat"])
    assert settings["filesTranslation"] is True and settings["charLimit"] > 0
    assert settings["language"]["source"]["code"] == "auto"


def test_alternatives_are_accepted_on_translate(lt):
    plain = lt.post("/translate", json={"q": "Thank you.", "source": "en", "target": "zh"})
    assert plain.json() == {"translatedText": "谢谢。"}
    asked = lt.post("/translate", json={"q": "Thank you.", "source": "en", "target": "zh",
                                        "alternatives": 2})
    body = asked.json()
    assert asked.status_code == 200, body
    assert isinstance(body["translatedText"], str) and body["translatedText"]
    assert isinstance(body["alternatives"], list) and len(body["alternatives"]) <= 2
    assert body["translatedText"] not in body["alternatives"]
    many = lt.post("/translate", data={"q": ["你好", "谢谢。"], "source": "zh", "target": "en",
                                       "alternatives": "1"}).json()
    assert len(many["translatedText"]) == len(many["alternatives"]) == 2
    bad = lt.post("/translate", json={"q": "Hi", "target": "zh", "alternatives": "some"})
    assert (bad.status_code, bad.json()) == (
        400, {"error": "Invalid request: alternatives parameter is not a number"})


def test_a_plain_multipart_translate_file_gives_a_url_that_downloads_the_file(lt):
    source = docx.Document()
    source.add_paragraph("谢谢你的帮助。")
    buffer = io.BytesIO()
    source.save(buffer)
    answer = lt.post("/translate_file", data={"source": "zh", "target": "en"},
                     files={"file": ("lesson.docx", buffer.getvalue())})
    assert answer.status_code == 200, answer.text
    url = answer.json()["translatedFileUrl"]
    assert url.startswith(str(lt.base_url).rstrip("/") + "/download_file/")
    assert url.endswith("lesson.en.docx")
    download = httpx.get(url, trust_env=False)  # a bare GET, as a browser's link
    assert download.status_code == 200
    assert "lesson.en.docx" in download.headers["content-disposition"]
    assert [p.text for p in docx.Document(io.BytesIO(download.content)).paragraphs] == [
        "Thank you for your help."]
    assert httpx.get(url.replace("-", "-x", 1), trust_env=False).status_code == 404


@pytest.mark.parametrize("ext", [".odt", ".epub"])
def test_translate_file_takes_opendocument_and_e_books(lt, ext):
    source = od.make_epub() if ext == ".epub" else od.make_odf(ext)
    answer = lt.post("/translate_file", data={"source": "zh", "target": "en"},
                     files={"file": ("lesson" + ext, source)})
    assert answer.status_code == 200, answer.text
    result = httpx.get(answer.json()["translatedFileUrl"], trust_env=False).content
    if ext == ".epub":
        assert od.texts(od.chapter(result, "ch1.xhtml"), "h1") == ["Welcome to Beijing."]
    else:
        assert od.paragraphs(od.xml(result, "content.xml"))[0] == "Welcome to Beijing."


def test_translate_file_refusals_are_libretranslates_shape(lt):
    def send(data, files=None):
        return lt.post("/translate_file", data=data, files=files or {
            "file": ("a.txt", "谢谢。".encode())})

    cases = [
        (send({"source": "zh", "target": "zz"}), "zz is not supported"),
        (send({"source": "zh"}), "Invalid request: missing target parameter"),
        (send({"source": "zh", "target": "en"}, {"file": ("a.txt", b"")}),
         "Invalid request: empty file"),
        (send({"source": "zh", "target": "en"}, {"file": ("a.exe", b"MZ")}), "not supported"),
        (send({"source": "zh", "target": "en"}, {"file": ("a.epub", od.HOSTILE[
            "an e-book with a script"][1]())}), "has scripts"),
    ]
    for answer, words in cases:
        assert answer.status_code == 400, answer.text
        assert set(answer.json()) == {"error"} and words in answer.json()["error"]


def test_a_file_already_in_the_target_language_says_so(lt):
    answer = lt.post("/translate_file", data={"source": "auto", "target": "en"},
                     files={"file": ("a.txt", b"Thank you for your help.")})
    body = answer.json()
    assert "already in English" in body["notice"]
    assert httpx.get(body["translatedFileUrl"], trust_env=False).content == \
        b"Thank you for your help."
