"""PDF in, PDF out (issue 37): the same pages with each text block translated in its box, fonts
for the target's script embedded, scans said to be scans, pages that cannot keep their layout
named, and bad PDFs refused with words in bounded time and memory (no model: a dictionary
translates)."""

from __future__ import annotations

import io
import subprocess
import time
import tracemalloc

import pdfs
import pypdf
import pytest

from hunyuan_webui.errors import InputError
from hunyuan_webui.files import read_file, translate_file
from hunyuan_webui.files.pdf import fonts

INTO = {"zh": {"Thank you.": "谢谢。", "Good morning.": "早上好。"},
        "ar": {"Thank you.": "شكرا لك.", "Good morning.": "صباح الخير."},
        "hi": {"Thank you.": "धन्यवाद।", "Good morning.": "सुप्रभात।"}}


def dictionary(table: dict[str, str]):
    def translate(segments: list[str]) -> list[str]:
        return [table[s] for s in segments]  # a KeyError: a segment the test did not expect
    return translate


def poppler_text(data: bytes) -> str:
    """The text poppler's ``pdftotext`` reads from ``data`` (pdfminer.six and pypdf do not read
    the embedded CMap fpdf2 writes for a CFF font such as Noto Sans CJK; poppler, as viewers do)."""
    out = subprocess.run(["pdftotext", "-layout", "-", "-"], input=data, capture_output=True,
                         timeout=60, check=True)
    return out.stdout.decode()


def test_a_worksheet_comes_back_with_its_pages_image_table_and_translations_in_place():
    source = pdfs.lesson_pdf(pages=2)
    result = translate_file("lesson.pdf", source, dictionary(pdfs.ANSWERS), lang="zh",
                            target_lang="en")
    assert result.filename == "lesson.en.pdf" and result.notes == ()
    out = pypdf.PdfReader(io.BytesIO(result.data))
    assert len(out.pages) == 2
    text = " ".join(" ".join(page.extract_text() for page in out.pages).split())
    for answer in pdfs.SHOWN - {"Well done! 👍"}:
        assert answer in text
    assert not any("\u4e00" <= ch <= "\u9fff" for ch in text), text  # no source text left
    assert pdfs.images(result.data) == pdfs.images(source) == 2
    pdfs.assert_in_boxes(source, result.data)
    assert fonts_embedded(result.data) == {"NotoSans"}


def fonts_embedded(data: bytes) -> set[str]:
    """The fonts the translations are drawn in, each checked to be an embedded subset."""
    names, drawn = pdfs.fonts_of(data), set()
    for page in pypdf.PdfReader(io.BytesIO(data)).pages:
        for font in page["/Resources"]["/Font"].values():
            font = font.get_object()
            if "+" not in str(font["/BaseFont"]):
                continue  # the source's own fonts, still named by the page (no text uses them)
            descriptor = (font.get("/DescendantFonts") or [font])[0].get_object()
            descriptor = descriptor.get("/FontDescriptor").get_object()
            assert any(k in descriptor for k in ("/FontFile", "/FontFile2", "/FontFile3"))
            name = str(font["/BaseFont"]).lstrip("/")
            assert name.index("+") == 6  # a subset
            drawn.add(name.split("+")[-1])
    return {name for name in names if name in drawn}


@pytest.mark.parametrize(("target", "font"), [("zh", "NotoSansCJKSC"),
                                               ("ar", "NotoSansArabic"),
                                               ("hi", "NotoSansDevanagari")])
def test_the_target_script_is_drawn_shaped_in_a_font_that_holds_it(target, font):
    source = pdfs.english()
    result = translate_file("note.pdf", source, dictionary(INTO[target]), lang="en",
                            target_lang=target)
    assert font in fonts_embedded(result.data)
    text = poppler_text(result.data)
    if target == "zh":
        assert "早上好。" in text and "谢谢。" in text
    if target != "zh":  # pdfminer.six reads the boxes (not a CFF font's text: poppler_text)
        pdfs.assert_in_boxes(source, result.data)


def test_a_scanned_page_is_kept_and_named_and_a_scan_alone_is_refused():
    source = pdfs.english(scan_page=True)
    result = translate_file("note.pdf", source, dictionary(INTO["zh"]), lang="en",
                            target_lang="zh")
    assert result.notes == ("Page 2 is scanned images (no OCR): kept as they are.",)
    assert pdfs.images(result.data) == 1
    with pytest.raises(InputError, match="scanned images.*no OCR"):
        read_file("scan.pdf", pdfs.scanned())


def test_rotated_text_turns_its_page_into_flowing_text_and_the_result_says_so():
    result = translate_file("note.pdf", pdfs.english(rotated=True), dictionary(INTO["zh"]),
                            lang="en", target_lang="zh")
    assert result.notes == ("Page 1 is laid out as flowing text: the translation did not fit "
                            "the original layout.",)
    text = poppler_text(result.data)
    assert text.count("谢谢。") == 5 and "Thank" not in text


def test_a_server_without_the_target_font_says_which_package_to_install(monkeypatch, tmp_path):
    monkeypatch.setattr(fonts, "NOTO", str(tmp_path))
    with pytest.raises(InputError, match="install the Debian package fonts-noto-cjk"):
        read_file("note.pdf", pdfs.english(), target_lang="zh")


@pytest.mark.parametrize(("make", "words"), [
    (pdfs.encrypted, "encrypted"),
    (pdfs.damaged, "damaged"),
    (lambda: pdfs.flate_bomb(200), "unpacks to too much data"),
    (pdfs.many_objects, "1,000,000,000 objects"),
    (pdfs.nested, "nest too deeply"),
    (lambda: b"%PDF-1.7\n" + b"\x00" * 1000, "damaged"),
    (lambda: b"GIF89a not a pdf", "not a PDF"),
])
def test_bad_pdfs_are_refused_with_words_in_bounded_time_and_memory(make, words):
    data = make()
    assert len(data) < 1_000_000
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(InputError, match=words):
            read_file("bad.pdf", data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.monotonic() - started < 5
    assert peak < 40_000_000, peak
