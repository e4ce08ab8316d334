"""Documents that say what happened, without a browser.

A Chinese CSV with English headers, on "Detect" into 简体中文 (a Chinese page's default pair),
came back byte-identical with "Done: 4 distinct segments translated". Now the file job switches
the target as the text path does (where the front end offers another language), and where it
does not, the result and the page say the file came back unchanged. A .docx whose sentences sit
in runs of different formatting came back as "…help.The weather…": the spans of a paragraph are
joined with the space their Chinese source never wrote.
"""

from __future__ import annotations

import csv
import io

import docx
import pytest

from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.files import FileResult, translate_file
from hunyuan_webui.files.common import close_up_spans, space_spans
from hunyuan_webui.service import FileJob, TranslationRequest

# A class's homework as a spreadsheet: English headers, Chinese answers (demo phrases).
HOMEWORK = ("Student,Homework answer,Teacher's note\r\n"
            "1,谢谢你的帮助。,今天天气很好。\r\n"
            "2,欢迎来到北京。,我们明天见。\r\n").encode()
TRANSLATED = [["Student", "Homework answer", "Teacher's note"],
              ["1", "Thank you for your help.", "The weather is nice today."],
              ["2", "Welcome to Beijing.", "See you tomorrow."]]


def _request(source: str, target: str) -> TranslationRequest:
    return TranslationRequest(text="", source_lang=source, target_lang=target,
                              options=DecodingOptions(deterministic=True))


def _rows(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def test_a_chinese_csv_on_detect_into_chinese_is_translated_into_the_pages_language(translator):
    """The page's pair auto → 简体中文 on a Chinese CSV: as for text, the target switches to
    the page's other language (English), the file is named for it, and the page says so."""
    from hunyuan_webui.web.page.files import document_done

    job = FileJob(translator, "homework.csv", HOMEWORK, _request("auto", "zh"),
                  switch=("zh", "en", "zh"))
    result = job.run()
    assert result.filename == "homework.en.csv"
    assert _rows(result.data) == TRANSLATED
    assert result.data.startswith(b"Student,Homework answer,Teacher's note\r\n")  # kept as it was
    assert (result.source_lang, result.target_lang) == ("zh", "en")
    assert (result.switched_from, result.unchanged, result.segments) == ("zh", 0, 4)
    assert document_done("zh", result) == (
        "文件已经是中文，已改为译成英语。 完成：已翻译 4 个不同的片段 → homework.en.csv")
    assert document_done("en", result) == (
        "The file is already in Chinese: translated into English instead. "
        "Done: 4 distinct segments translated → homework.en.csv")


def test_a_file_already_in_the_target_language_is_never_reported_as_translated(translator):
    """Without another language to go to (the document APIs), the file comes back as it was,
    and what the page would say is that: no 'Done: 4 distinct segments translated'."""
    from hunyuan_webui.web.page.files import document_done

    calls = translator.model_calls
    result = FileJob(translator, "homework.csv", HOMEWORK, _request("auto", "zh")).run()
    assert result.data == HOMEWORK
    assert (result.target_lang, result.unchanged, result.switched_from) == ("zh", 4, "")
    assert translator.model_calls == calls  # nothing was sent to the model
    said = document_done("en", result)
    assert said == ("The file is already in Chinese: nothing was translated; it is given back "
                    "unchanged → homework.zh.csv")
    assert "Done" not in said and "translated →" not in said
    assert "完成" not in document_done("zh", result)
    # Chosen, not detected: the same honesty.
    chosen = FileJob(translator, "homework.csv", HOMEWORK, _request("zh", "zh")).run()
    assert chosen.data == HOMEWORK and chosen.unchanged == 4


def test_detection_reads_the_content_cells_not_the_header_row(translator):
    """The header row of a CSV is kept, not translated: it is not what the file is written in.
    English headers over Chinese cells are translated from Chinese."""
    job = FileJob(translator, "homework.csv", HOMEWORK, _request("auto", "en"))
    result = job.run()
    assert result.source_lang == "zh"
    assert _rows(result.data) == TRANSLATED
    assert result.switched_from == "" and result.unchanged == 0


def test_the_page_says_what_happened_to_a_file_in_both_languages():
    from hunyuan_webui.web.page.files import document_done

    done = FileResult("a.en.md", b"", 3, target_lang="en", source_lang="zh")
    assert document_done("en", done) == "Done: 3 distinct segments translated → a.en.md"
    assert document_done("zh", done) == "完成：已翻译 3 个不同的片段 → a.en.md"
    same = FileResult("a.zh.md", b"", 3, target_lang="zh", source_lang="zh", unchanged=3)
    assert document_done("zh", same) == "文件已经是中文：没有翻译任何内容，原样返回 → a.zh.md"


# -- a .docx's runs keep their spaces ------------------------------------------------------------

def _homework_docx() -> bytes:
    """Paragraphs whose sentences sit in runs of different formatting (as Word splits runs at a
    change of language, font or bold), and one whose runs share it."""
    import docx

    document = docx.Document()
    first = document.add_paragraph()
    first.add_run("谢谢你的帮助。").bold = True
    first.add_run("今天天气很好。")
    first.add_run("欢迎来到北京。").italic = True
    second = document.add_paragraph()
    second.add_run("我们明天见。")
    second.add_run("这本书很有意思。")
    third = document.add_paragraph()
    third.add_run("早上好。")
    third.add_run().add_tab()  # a tab between two runs: its own separator, no space added
    third.add_run("谢谢。").underline = True
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_docx_keeps_a_space_between_sentences_in_runs_of_different_formatting(translator):
    import docx

    result = FileJob(translator, "homework.docx", _homework_docx(), _request("zh", "en")).run()
    paragraphs = docx.Document(io.BytesIO(result.data)).paragraphs
    assert [p.text for p in paragraphs] == [
        "Thank you for your help. The weather is nice today. Welcome to Beijing.",
        "See you tomorrow. This book is very interesting.",
        "Good morning.\tThank you."]
    runs = paragraphs[0].runs
    assert (runs[0].text, runs[0].bold) == ("Thank you for your help.", True)
    assert (runs[2].text, runs[2].italic) == (" Welcome to Beijing.", True)


def test_a_pptx_keeps_a_space_between_runs_of_different_formatting():
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    paragraph = slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(2)) \
        .text_frame.paragraphs[0]
    for text, bold in (("谢谢你的帮助。", True), ("今天天气很好。", False)):
        run = paragraph.add_run()
        run.text, run.font.bold = text, bold
    out = io.BytesIO()
    deck.save(out)
    table = {"谢谢你的帮助。": "Thank you for your help.", "今天天气很好。": "The weather is nice today."}
    result = translate_file("slides.pptx", out.getvalue(), lambda s: [table[x] for x in s],
                            lang="zh", target_lang="en")
    shape = Presentation(io.BytesIO(result.data)).slides[0].shapes[0]
    assert shape.text_frame.text == "Thank you for your help. The weather is nice today."


@pytest.mark.parametrize(("spans", "gap", "expected"), [
    # Chinese sentences in two runs, into English: a space.
    ([("谢谢。", "Thank you.", False), ("你好", "Hello", True)], " ", ["Thank you.", " Hello"]),
    # Into Chinese (no spaces between sentences): none.
    ([("Thanks.", "谢谢。", False), ("Hello", "你好", True)], "", ["谢谢。", "你好"]),
    # A word split by formatting in a spaced script stays one word.
    ([("Hel", "Bon", False), ("lo", "jour", True)], " ", ["Bon", "jour"]),
    # No space before a closing mark, after an opening one, or where the source had one.
    ([("请访问", "Please visit", False), ("网站", "the website", True), ("。", ".", True)], " ",
     ["Please visit", " the website", "."]),
    ([("谢谢。 ", "Thank you. ", False), ("你好", "Hello", True)], " ", ["Thank you. ", "Hello"]),
    # A tab or a break between the spans: they do not touch.
    ([("谢谢。", "Thank you.", False), ("你好", "Hello", False)], " ", ["Thank you.", "Hello"]),
])
def test_space_spans(spans, gap, expected):
    assert space_spans(spans, gap) == expected


# Per span: (touches the one before, was translated).
FIRST, T, U = (False, True), (True, True), (True, False)


@pytest.mark.parametrize(("texts", "kinds", "target", "expected"), [
    # The space after a Chinese full stop, wherever the runs put it, goes.
    (["谢谢。 ", "请坐。"], [FIRST, T], "zh", ["谢谢。", "请坐。"]),
    (["谢谢。", " 请坐。"], [FIRST, T], "zh", ["谢谢。", "请坐。"]),
    (["谢谢。", " ", "请坐。"], [FIRST, U, T], "zh", ["谢谢。", "", "请坐。"]),
    (["ありがとう。", " ", "座って。"], [FIRST, U, T], "ja", ["ありがとう。", "", "座って。"]),
    # It stays into a spaced language, after no full stop, between spans that do not touch (a
    # tab or a break between them), and before what was not translated.
    (["Merci.", " Asseyez-vous."], [FIRST, T], "fr", ["Merci.", " Asseyez-vous."]),
    (["谢谢", " 请坐。"], [FIRST, T], "zh", ["谢谢", " 请坐。"]),
    (["谢谢。", " 请坐。"], [FIRST, (False, True)], "zh", ["谢谢。", " 请坐。"]),
    (["谢谢。", " 3"], [FIRST, U], "zh", ["谢谢。", " 3"]),
])
def test_close_up_spans(texts, kinds, target, expected):
    assert close_up_spans(texts, kinds, target) == expected


def test_a_word_document_into_chinese_has_no_space_after_a_bold_sentence():
    """"**Thank you.** Please sit down." came back "**谢谢。** 请坐。": the space between the
    runs, kept as layout, is a typo after a Chinese full stop."""
    document = docx.Document()
    paragraph = document.add_paragraph()
    paragraph.add_run("Thank you.").bold = True
    paragraph.add_run(" Please sit down.")
    out = io.BytesIO()
    document.save(out)
    table = {"Thank you.": "谢谢。", "Please sit down.": "请坐。"}
    result = translate_file("a.docx", out.getvalue(), lambda s: [table[x] for x in s], lang="en",
                            target_lang="zh")
    runs = docx.Document(io.BytesIO(result.data)).paragraphs[0].runs
    assert [(r.text, bool(r.bold)) for r in runs] == [("谢谢。", True), ("请坐。", False)]


def test_the_documents_api_says_a_file_came_back_unchanged(translator):
    """/v1/documents (no language to switch to): the status says how many segments came back as
    they were, and why, beside its other counts."""
    from hunyuan_webui.service.operations.documents import DONE, DocumentJobs
    from hunyuan_webui.web.protocols.documents import _status

    jobs = DocumentJobs(translator, ttl=60)
    doc = jobs.submit("someone", "homework.csv", HOMEWORK, _request("auto", "zh"))
    assert doc.wait(60)
    status = _status(doc, jobs)
    assert status["status"] == DONE
    assert status["segments_unchanged"] == 4
    assert status["notice"] == "The file is already in Chinese; it was returned unchanged."
    assert jobs.result(doc).data == HOMEWORK
    translated = jobs.submit("someone", "homework.csv", HOMEWORK, _request("auto", "en"))
    assert translated.wait(60)
    status = _status(translated, jobs)
    assert (status["segments_unchanged"], status["notice"]) == (0, None)


_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _workbook_with_shared_strings(strings: list[str], rows: list[list[int]]) -> bytes:
    """A minimal .xlsx as Excel writes one: cells that point into xl/sharedStrings.xml."""
    import zipfile
    from xml.sax.saxutils import escape

    items = "".join(f"<si><t>{escape(s)}</t></si>" for s in strings)
    cells = "".join(
        f'<row r="{r}">' + "".join(f'<c r="{chr(65 + j)}{r}" t="s"><v>{i}</v></c>'
                                   for j, i in enumerate(row)) + "</row>"
        for r, row in enumerate(rows, start=1))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as package:
        package.writestr("xl/workbook.xml", f'<workbook xmlns="{_S}"><sheets>'
                         '<sheet name="A" sheetId="1"/></sheets></workbook>')
        package.writestr("xl/sharedStrings.xml", f'<sst xmlns="{_S}">{items}</sst>')
        package.writestr("xl/worksheets/sheet1.xml",
                         f'<worksheet xmlns="{_S}"><sheetData>{cells}</sheetData></worksheet>')
    return out.getvalue()


def test_a_spreadsheets_english_headings_do_not_make_its_chinese_cells_english(translator):
    """English column names over short Chinese answers read as English over the whole file (the
    detector said en, 0.67): on an English page's pair auto → English, the workbook came back
    unchanged. The first row is left out of the detection; the cells are translated."""
    import zipfile

    import openpyxl

    inline = openpyxl.Workbook()
    inline.active.append(["Homework comment", "Teacher feedback"])
    inline.active.append(["谢谢。", "早上好。"])
    buffer = io.BytesIO()
    inline.save(buffer)
    shared = _workbook_with_shared_strings(
        ["Homework comment", "Teacher feedback", "谢谢。", "早上好。"], [[0, 1], [2, 3]])
    for data in (buffer.getvalue(), shared):
        result = FileJob(translator, "answers.xlsx", data, _request("auto", "en")).run()
        assert (result.source_lang, result.unchanged) == ("zh", 0)
        with zipfile.ZipFile(io.BytesIO(result.data)) as package:
            names = package.namelist()
            xml = package.read("xl/sharedStrings.xml" if "xl/sharedStrings.xml" in names
                               else "xl/worksheets/sheet1.xml").decode()
        assert ">Thank you.</t>" in xml and ">Good morning.</t>" in xml, xml
