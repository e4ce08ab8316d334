"""An e-book into a language written right to left turns its pages the other way
(``page-progression-direction="rtl"`` on the spine, ``dir="rtl"`` on each chapter), and out of one
back again; an image's ``alt`` text is translated with the chapter (no model: a function
translates, so that what is sent and where it comes back is plain)."""

from __future__ import annotations

import opendocs as od

from hunyuan_webui.files import translate_file


def marked(segments: list[str]) -> list[str]:
    return [f"«{s}»" for s in segments]


def spine(data: bytes):
    return od.chapter(data, "content.opf").find(".//opf:spine", od.NS)


def test_into_arabic_the_pages_turn_right_to_left_and_the_chapters_say_so():
    result = translate_file("book.epub", od.make_epub(), marked, lang="zh", target_lang="ar")
    assert spine(result.data).get("page-progression-direction") == "rtl"
    for name in ("ch1.xhtml", "ch2.xhtml", "nav.xhtml"):
        root = od.chapter(result.data, name)
        lang = root.get("lang") or root.get("{http://www.w3.org/XML/1998/namespace}lang")
        assert (lang, root.get("dir")) == ("ar", "rtl"), name
    back = translate_file("book.epub", result.data, marked, lang="ar", target_lang="en")
    assert spine(back.data).get("page-progression-direction") == "ltr"
    assert od.chapter(back.data, "ch1.xhtml").get("dir") == "ltr"
    into_english = translate_file("book.epub", od.make_epub(), marked, lang="zh",
                                  target_lang="en")
    assert spine(into_english.data).get("page-progression-direction") is None  # as it was
    assert od.chapter(into_english.data, "ch1.xhtml").get("dir") is None


def test_an_images_alt_text_is_translated_and_its_quotes_escaped():
    result = translate_file("book.epub", od.make_epub(),
                            lambda segments: [f'"{s}"' for s in segments], lang="zh",
                            target_lang="en")
    image = od.chapter(result.data, "ch1.xhtml").find(".//x:img", od.NS)
    assert (image.get("src"), image.get("alt")) == ("images/dot.png", '"你好"')
