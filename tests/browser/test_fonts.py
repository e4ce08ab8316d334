"""The fonts the page lends to browsers without them (Tibetan, Uyghur and Mongolian
examples showed as boxes in a fresh browser, and the page shipped no font).

The first tests need no model: which files are lent, the CSS, and that the route serves the
allow-list and nothing else. Then the app on Debian's fonts-noto-core (``bash launch.sh test``
installs it): the files are served to anyone, also where API keys close the API, and a page in
Chromium loads each font face from the URL its CSS names.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from apphelpers import running_app
from fastapi import FastAPI
from fastapi.testclient import TestClient

from hunyuan_webui.web import fonts

NOTO = Path("/usr/share/fonts/truetype/noto")


def font_dir(tmp_path: Path, *names: str) -> Path:
    folder = tmp_path / "fonts" / "truetype" / "noto"
    folder.mkdir(parents=True)
    for name in names:
        (folder / name).write_bytes(b"\x00\x01\x00\x00" + name.encode())
    return tmp_path / "fonts"


def test_the_first_file_of_each_font_that_exists_is_lent(tmp_path):
    root = font_dir(tmp_path, "NotoSansTibetan-Regular.ttf", "NotoSerifTibetan-Regular.ttf",
                    "NotoSansArabic-Regular.ttf", "Unrelated-Regular.ttf")
    found = fonts.installed((root, tmp_path / "missing"))
    assert {name: path.name for name, path in found.items()} == {
        "tibetan": "NotoSerifTibetan-Regular.ttf",  # preferred over the Sans one
        "arabic": "NotoSansArabic-Regular.ttf"}  # the Naskh one is absent; no Mongolian at all


def test_the_css_names_only_the_fonts_lent_with_relative_urls():
    css = fonts.face_css({"tibetan"})
    assert css == ('@font-face { font-family: "HYMT Tibetan"; src: local("Noto Serif Tibetan"), '
                   'local("Noto Sans Tibetan"), url("fonts/tibetan.ttf") format("truetype"); '
                   "unicode-range: U+0F00-0FFF; font-display: swap; }")
    assert fonts.face_css(set()) == ""


def test_the_route_serves_the_allow_list_and_nothing_else(tmp_path):
    root = font_dir(tmp_path, "NotoSansMongolian-Regular.ttf")
    (tmp_path / "secret.ttf").write_bytes(b"not for visitors")
    app = FastAPI()
    app.include_router(fonts.create_router(fonts.installed((root,))))
    with TestClient(app) as client:
        served = client.get("/fonts/mongolian.ttf")
        assert served.status_code == 200
        assert served.content == b"\x00\x01\x00\x00NotoSansMongolian-Regular.ttf"
        assert served.headers["content-type"] == "font/ttf"
        assert "max-age=604800" in served.headers["cache-control"]
        for path in ("/fonts/tibetan.ttf", "/fonts/secret.ttf", "/fonts/..%2Fsecret.ttf",
                     "/fonts/%2E%2E%2F%2E%2E%2Fsecret.ttf", "/fonts/mongolian.otf"):
            assert client.get(path).status_code == 404, path


# -- the app, on the server's own fonts ------------------------------------------------------------
@pytest.fixture(scope="module")
def keyed_app(engine):
    with running_app(engine, api_keys="k-fonts", open_page=True) as running:
        yield running


@pytest.mark.slow
@pytest.mark.parametrize("name, file", [("tibetan", "NotoSerifTibetan-Regular.ttf"),
                                        ("mongolian", "NotoSansMongolian-Regular.ttf"),
                                        ("arabic", "NotoNaskhArabic-Regular.ttf")])
def test_the_app_lends_debians_fonts_to_anyone(keyed_app, name, file):
    assert (NOTO / file).is_file(), "bash launch.sh test installs fonts-noto-core"
    with keyed_app.client() as client:
        served = client.get(f"/fonts/{name}.ttf")  # no key: the page's visitors have none
        assert served.status_code == 200 and served.content == (NOTO / file).read_bytes()
        assert client.post("/v1/translate", json={"text": "hi"}).status_code == 401  # still shut
        page = client.get("/").text
        assert f'url(\\"fonts/{name}.ttf\\")' in page or f'url("fonts/{name}.ttf")' in page


@pytest.mark.slow
@pytest.mark.browser
def test_a_browser_loads_each_face_from_the_page(engine):
    """Every face the CSS declares loads in Chromium (from the browser's own font or the
    server's copy), and the server's copy is where the CSS says, relative to the page."""
    from browserhelpers import ARGS, CHROMIUM
    from playwright.sync_api import sync_playwright

    with running_app(engine) as app, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(app.url)
            page.wait_for_selector("#translate-btn")
            for family, sample in (("HYMT Tibetan", "བཀྲ་ཤིས།"), ("HYMT Mongolian", "ᠮᠣᠩᠭᠣᠯ"),
                                   ("HYMT Arabic", "رەھمەت")):
                loaded = page.evaluate(
                    "async ([f, s]) => (await document.fonts.load(`24px \"${f}\"`, s)).length",
                    [family, sample])
                assert loaded == 1, family
            for name in ("tibetan", "mongolian", "arabic"):
                status = page.evaluate(
                    "async (n) => (await fetch(new URL(`fonts/${n}.ttf`, document.baseURI))).status",
                    name)
                assert status == 200, name
        finally:
            browser.close()


def test_no_font_route_without_the_files(tmp_path):
    app = FastAPI()
    app.include_router(fonts.create_router(fonts.installed((tmp_path,))))
    with TestClient(app) as client:
        assert client.get("/fonts/tibetan.ttf").status_code == 404
