"""OpenDocument (.odt, .odp, .ods) and EPUB files come back translated by the demo model, word for
word its translations, with their structure kept: headings, lists, tables, links, pictures,
footnotes, page headers, speaker notes, numbers and formulas, chapters and the table of contents.
The files are written by hand as LibreOffice and e-book tools write them (tests/opendocs.py)."""

from __future__ import annotations

import opendocs as od
import pytest

from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.service import FileJob, TranslationRequest

pytestmark = pytest.mark.slow  # the demo model


def _run(translator, name: str, data: bytes):
    request = TranslationRequest(text="", source_lang="zh", target_lang="en",
                                 options=DecodingOptions(deterministic=True))
    return FileJob(translator, name, data, request).run()


def _same_members_but(before: bytes, after: bytes, changed: set[str]) -> None:
    """Every member but ``changed`` byte for byte, in the same order, ``mimetype`` first and
    stored (as the formats require)."""
    old, new = od.members(before), od.members(after)
    assert list(new) == list(old)
    assert {k for k in old if old[k] != new[k]} == changed
    first = od.first_member(after)
    assert (first.filename, first.compress_type) == ("mimetype", 0)


def test_an_odt_comes_back_translated_with_its_structure(translator):
    source = od.make_odf(".odt")
    result = _run(translator, "lesson.odt", source)
    assert result.filename == "lesson.en.odt"
    content = od.xml(result.data, "content.xml")
    assert od.paragraphs(content) == [
        "Welcome to Beijing.",  # the heading
        "Thank you for your help. The weather is nice today.",
        "Good morning. Thank you.",  # the bold word in its own span
        "This book is very interesting.",  # the link's text
        "See you tomorrow.",  # a list item
        "What is your name?",  # a table cell
        "Hello\tThank you.",  # a tab kept between
        "Good morning.",  # the footnote
        "Well done! 👍",  # beside a comment...
        "你好",  # ...which is not translated
        "",  # the picture's paragraph
    ]
    ns = od.NS
    assert content.find(".//text:h", ns).get(f"{{{ns['text']}}}outline-level") == "1"
    bold = content.find(".//text:span", ns)
    assert (bold.get(f"{{{ns['text']}}}style-name"), bold.text) == ("Bold", " Thank you.")  # spaced as in Word
    link = content.find(".//text:a", ns)
    assert link.get(f"{{{ns['xlink']}}}href") == "https://example.org/book"
    assert content.find(".//text:list/text:list-item/text:p", ns) is not None
    assert content.find(".//table:table-cell/text:p", ns).text == "What is your name?"
    assert content.find(".//text:note/text:note-citation", ns).text == "1"
    assert content.find(".//draw:image", ns).get(f"{{{ns['xlink']}}}href") == "Pictures/dot.png"
    assert od.paragraphs(od.xml(result.data, "styles.xml")) == ["The weather is nice today."]
    _same_members_but(source, result.data, {"content.xml", "styles.xml"})


def test_an_odp_comes_back_translated_with_its_slides_table_and_notes(translator):
    source = od.make_odf(".odp")
    result = _run(translator, "slides.odp", source)
    content = od.xml(result.data, "content.xml")
    assert od.paragraphs(content) == [
        "Welcome to Beijing.", "The weather is nice today.", "This book is very interesting.",
        "Thank you.", "42", "See you tomorrow."]
    ns = od.NS
    notes = content.find(".//presentation:notes//text:p", ns)
    assert notes.text == "See you tomorrow."
    assert content.find(".//draw:frame[@presentation:class='title']//text:p", ns).text == \
        "Welcome to Beijing."
    assert content.find(".//draw:image", ns) is not None
    _same_members_but(source, result.data, {"content.xml"})


def test_an_ods_comes_back_translated_with_numbers_and_formulas_kept(translator):
    source = od.make_odf(".ods")
    result = _run(translator, "marks.ods", source)
    content = od.xml(result.data, "content.xml")
    ns = od.NS
    table = f"{{{ns['table']}}}"
    sheets = content.findall(".//table:table", ns)
    assert [s.get(table + "name") for s in sheets] == ["成绩", "Sheet2"]  # sheet names kept
    cells = [[("".join(c.itertext()), c.get(table + "formula")) for c in row]
             for row in sheets[0].findall("table:table-row", ns)]
    assert cells == [
        [("Good morning.", None), ("Hello", None)],  # the headings, translated
        [("7", None), ("14", "of:=[.A2]*2"),
         ("你好", 'of:="你好"'),  # a formula's shown result is its own: not translated
         ("Thank you for your help.", None)]]
    assert "".join(sheets[1].itertext()).strip() == "The weather is nice today."
    _same_members_but(source, result.data, {"content.xml"})


def test_an_epub_comes_back_translated_with_chapters_links_images_and_contents(translator):
    source = od.make_epub()
    result = _run(translator, "book.epub", source)
    assert result.filename == "book.en.epub"
    one, two = od.chapter(result.data, "ch1.xhtml"), od.chapter(result.data, "ch2.xhtml")
    assert od.texts(one, "title") == ["Welcome to Beijing."]
    assert od.texts(one, "h1") == ["Welcome to Beijing."]
    assert od.texts(one, "p")[:2] == ["Thank you for your help. The weather is nice today.",
                                      "See you tomorrow."]
    link = one.find(".//x:a", od.NS)
    assert (link.get("href"), link.text) == ("ch2.xhtml#s1", "See you tomorrow.")
    assert one.find(".//x:img", od.NS).get("src") == "images/dot.png"
    assert one.find(".//x:img", od.NS).get("alt") == "Hello"  # what a screen reader says
    assert one.get("lang") == "en"
    assert od.texts(two, "h2") == ["This book is very interesting."]
    assert two.find(".//x:h2", od.NS).get("id") == "s1"
    assert od.texts(two, "p") == ["Good morning.\xa0Thank you."]  # &nbsp; and <em> kept
    assert two.find(".//x:em", od.NS).text == "Thank you."
    nav = od.chapter(result.data, "nav.xhtml")
    assert od.texts(nav, "a") == ["Welcome to Beijing.", "This book is very interesting."]
    ncx = od.chapter(result.data, "toc.ncx")
    assert [t.text for t in ncx.iter(f"{{{od.NS['ncx']}}}text")] == [
        "Hello", "Welcome to Beijing.", "This book is very interesting."]
    opf = od.chapter(result.data, "content.opf")
    assert opf.find(".//dc:title", od.NS).text == "Hello"
    assert opf.find(".//dc:language", od.NS).text == "en"
    spine = [i.get("idref") for i in opf.iter(f"{{{od.NS['opf']}}}itemref")]
    assert spine == ["ch1", "ch2"]  # the chapters, in their order
    _same_members_but(source, result.data, {
        "OEBPS/ch1.xhtml", "OEBPS/ch2.xhtml", "OEBPS/nav.xhtml", "OEBPS/toc.ncx",
        "OEBPS/content.opf"})
    markup = od.members(result.data)["OEBPS/ch2.xhtml"].decode()
    assert markup.startswith('<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html PUBLIC')


def test_a_file_already_in_english_into_english_comes_back_as_it_was(translator):
    """The honesty of every other format: nothing is sent, the result says it is unchanged."""
    body = "<text:p>Thank you for your help.</text:p>"
    source = od.make_odf(".odt", body, header=None)
    request = TranslationRequest(text="", source_lang="auto", target_lang="en",
                                 options=DecodingOptions(deterministic=True))
    result = FileJob(translator, "a.odt", source, request).run()
    assert result.unchanged == 1
    assert od.paragraphs(od.xml(result.data, "content.xml")) == ["Thank you for your help."]
