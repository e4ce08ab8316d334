"""translate_file: every format keeps its structure, sends each distinct sentence once, and
rejects what it cannot read with an InputError."""

from __future__ import annotations

import codecs
import io
import zipfile

import docx
import pytest
from docx.enum.text import WD_BREAK

from hunyuan_webui.errors import EngineError, InputError, InputTooLongError
from hunyuan_webui.files import SUPPORTED, FileResult, csv_columns, translate_file


class Fake:
    """A translate function that wraps each segment in [[...]] and records its calls."""

    def __init__(self, fn=lambda s: f"[[{s}]]") -> None:
        self.calls: list[list[str]] = []
        self.fn = fn

    def __call__(self, segments: list[str]) -> list[str]:
        self.calls.append(list(segments))
        return [self.fn(s) for s in segments]

    @property
    def sent(self) -> list[str]:
        return [s for call in self.calls for s in call]


def upper(segments: list[str]) -> list[str]:
    return [s.upper() for s in segments]


def identity(segments: list[str]) -> list[str]:
    return list(segments)


def run(name: str, data: bytes, fn=None, **kw) -> tuple[FileResult, Fake]:
    fake = fn or Fake()
    return translate_file(name, data, fake, **kw), fake


# --- common behaviour ----------------------------------------------------------------------------


def test_supported_set() -> None:
    assert {".txt", ".md", ".srt", ".docx", ".csv", ".html", ".htm", ".pptx",
            ".xlsx"} == SUPPORTED


@pytest.mark.parametrize(
    ("name", "target", "expected"),
    [
        ("report.txt", "en", "report.en.txt"),
        ("C:\\Users\\me\\notes.v2.MD", "zh-CN", "notes.v2.zh.MD"),
        ("/tmp/gradio/abc/subs.srt", "zh-Hant", "subs.zh-Hant.srt"),
    ],
)
def test_output_filename(name: str, target: str, expected: str) -> None:
    res, _ = (
        run(name, b"Hello.", target_lang=target)
        if not name.endswith("srt")
        else run(name, b"1\n00:00:01,000 --> 00:00:02,000\nHello.\n", target_lang=target)
    )
    assert res.filename == expected


def test_unknown_extension_and_target() -> None:
    for name in ["photo.png", "README", "archive.tar.gz", ".txt"]:
        with pytest.raises(InputError, match="not supported"):
            translate_file(name, b"Hello.", identity)
    with pytest.raises(InputError):
        translate_file("a.txt", b"Hello.", identity, target_lang="../../etc")


def test_max_bytes_enforced_for_every_format() -> None:
    for ext in SUPPORTED:
        with pytest.raises(InputTooLongError):
            translate_file(f"a{ext}", b"x" * 101, identity, max_bytes=100)


def test_translate_errors_propagate_and_nothing_is_returned() -> None:
    def boom(segments: list[str]) -> list[str]:
        raise RuntimeError("engine died")

    with pytest.raises(RuntimeError, match="engine died"):
        translate_file("a.txt", b"Hello. World.", boom)


def test_wrong_number_of_translations_is_an_engine_error() -> None:
    with pytest.raises(EngineError):
        translate_file("a.txt", b"Hello. World.", lambda s: s[:1])
    with pytest.raises(EngineError):
        translate_file("a.txt", b"Hello.", lambda s: "Bonjour.")  # a str, not a list


def test_each_distinct_sentence_sent_once_in_one_call() -> None:
    text = b"Yes. No. Yes.\n\n- Yes.\n- Maybe!\nNo.\n"
    res, fake = run("a.txt", text)
    assert fake.calls == [["Yes.", "No.", "Maybe!"]]
    assert res.segments == 3
    assert res.data.decode() == "[[Yes.]] [[No.]] [[Yes.]]\n\n- [[Yes.]]\n- [[Maybe!]]\n[[No.]]\n"


def test_no_segments_means_no_call() -> None:
    res, fake = run("a.txt", b"42\n\n---\n")
    assert fake.calls == []
    assert res.segments == 0
    assert res.data == b"42\n\n---\n"


def test_translations_with_line_breaks_are_flattened() -> None:
    res, _ = run("a.txt", b"One.\n", Fake(lambda s: f"  line1\n\nline2 {s} "))
    assert res.data == b"line1 line2 One.\n"


# --- .txt --------------------------------------------------------------------------------------


def test_txt_layout_byte_for_byte() -> None:
    text = "Title\r\n\r\n  1. First point. Second!\r\n\t• 中文句子。另一句？\r\n\r\n"
    res, fake = run("a.txt", text.encode())
    assert res.data.decode() == (
        "[[Title]]\r\n\r\n  1. [[First point.]] [[Second!]]\r\n\t• [[中文句子。]] [[另一句？]]\r\n\r\n"
    )
    # Into a language written without spaces, touching sentences stay touching.
    same, _ = run("a.txt", text.encode(), identity, target_lang="zh")
    assert same.data == text.encode()


def test_txt_bom_and_utf16_kept() -> None:
    res, _ = run("a.txt", codecs.BOM_UTF8 + b"Hi.")
    assert res.data == codecs.BOM_UTF8 + b"[[Hi.]]"
    data = codecs.BOM_UTF16_LE + "Hi.\n".encode("utf-16-le")
    res, _ = run("a.txt", data)
    assert res.data == codecs.BOM_UTF16_LE + "[[Hi.]]\n".encode("utf-16-le")


def test_txt_bad_content() -> None:
    with pytest.raises(InputError, match="not valid UTF-8"):
        translate_file("a.txt", "café".encode("latin-1"), identity)
    with pytest.raises(InputError, match="PNG image"):
        translate_file("a.txt", b"\x89PNG\r\n\x1a\n\x00\x00", identity)
    with pytest.raises(InputError, match="binary"):
        translate_file("a.txt", b"abc\x00def", identity)


def test_txt_lang_is_used_for_splitting() -> None:
    res, fake = run("a.txt", "วันนี้อากาศดี ฉันจะไปตลาด".encode(), lang="th")
    assert fake.calls == [["วันนี้อากาศดี", "ฉันจะไปตลาด"]]
    with pytest.raises(InputError):
        translate_file("a.txt", b"x", identity, lang="klingon")


# --- .md ---------------------------------------------------------------------------------------

MD = """---
title: Keep me
---
# Heading *one* #

Some **bold** text and `code here` and a [link text](http://example.com/a.b "Title").
Second line. ![alt text](img.png) end!

    indented code block

```python
print("fenced")
```

| Col a | Col b |
|-------|-------|
| x y   | x     |

> quoted text

- item one
- item <span class="x">html inner</span>

<div>
html block
</div>

[ref]: http://example.com  "ref title"
Auto <http://auto.link> and [a ref][ref].
Setext
======
"""

MD_OUT = """---
title: Keep me
---
# [[Heading]] *[[one]]* #

[[Some]] **[[bold]]** [[text and]] `code here` [[and a]] [[[link text]]](http://example.com/a.b "Title").
[[Second line.]] ![[[alt text]]](img.png) [[end!]]

    indented code block

```python
print("fenced")
```

| [[Col a]] | [[Col b]] |
|-------|-------|
| [[x y]]   | [[x]]     |

> [[quoted text]]

- [[item one]]
- [[item]] <span class="x">[[html inner]]</span>

<div>
html block
</div>

[ref]: http://example.com  "ref title"
[[Auto]] <http://auto.link> [[and]] [[[a ref]]][ref].
[[Setext]]
======
"""


def test_markdown_only_human_text_is_translated() -> None:
    res, fake = run("doc.md", MD.encode())
    assert res.data.decode() == MD_OUT
    sent = fake.sent
    for untouched in [
        "code here",
        "http://example.com/a.b",
        "img.png",
        "fenced",
        "html block",
        "Keep me",
        "ref title",
        "http://auto.link",
        "Title",
    ]:
        assert not any(untouched in s for s in sent), untouched


def test_markdown_identity_round_trip_and_crlf() -> None:
    same, _ = run("doc.md", MD.encode(), identity)
    assert same.data == MD.encode()
    crlf = MD.replace("\n", "\r\n").encode()
    res, _ = run("doc.md", crlf)
    assert res.data == MD_OUT.replace("\n", "\r\n").encode()


def test_markdown_table_cells_with_repeated_text() -> None:
    text = "| x | xy x |\n|---|---|\n| a | a |\n"
    res, _ = run("t.md", text.encode())
    assert res.data.decode() == "| [[x]] | [[xy x]] |\n|---|---|\n| [[a]] | [[a]] |\n"


def test_markdown_bad_content() -> None:
    with pytest.raises(InputError):
        translate_file("a.md", b"\xff\xfe\xfa bad", identity)


# --- .srt --------------------------------------------------------------------------------------

SRT = """1
00:00:01,000 --> 00:00:03,500
Hello there.
How are you?

2
00:00:04,000 --> 00:00:06,000 X1:10 X2:20 Y1:1 Y2:2
<i>I think we should
go home now.</i>

3
00:00:07,000 --> 00:00:09,000
- Yes.
- No!

4
00:00:10,000 --> 00:00:11,000
♪♪

"""


def test_srt_keeps_indices_timings_and_lines() -> None:
    res, fake = run("a.srt", SRT.encode(), upper)
    assert (
        res.data.decode()
        == """1
00:00:01,000 --> 00:00:03,500
HELLO THERE.
HOW ARE YOU?

2
00:00:04,000 --> 00:00:06,000 X1:10 X2:20 Y1:1 Y2:2
<i>I THINK WE SHOULD
GO HOME NOW.</i>

3
00:00:07,000 --> 00:00:09,000
- YES.
- NO!

4
00:00:10,000 --> 00:00:11,000
♪♪

"""
    )


def test_srt_cue_lines_translated_together_and_rewrapped() -> None:
    res, fake = run("a.srt", SRT.encode())
    assert fake.calls == [
        ["Hello there.", "How are you?", "I think we should go home now.", "Yes.", "No!"]
    ]
    out = res.data.decode()
    assert "\n[[Hello there.]]\n[[How are you?]]\n" in out
    assert "\n<i>[[I think we should\ngo home now.]]</i>\n" in out


def test_srt_identity_and_bom_crlf_round_trip() -> None:
    data = codecs.BOM_UTF8 + SRT.replace("\n", "\r\n").encode()
    res, _ = run("a.srt", data, identity)
    assert res.data == data


def test_srt_short_translation_keeps_closing_tag() -> None:
    text = "1\r\n00:00:01,000 --> 00:00:02,000\r\n<i>Two lines\r\nof text.</i>\r\n"
    res, _ = run("a.srt", text.encode(), Fake(lambda s: "Ok"))
    assert res.data.decode() == "1\r\n00:00:01,000 --> 00:00:02,000\r\n<i>Ok</i>\r\n"


def test_srt_cjk_rewrap() -> None:
    text = "1\n00:00:01,000 --> 00:00:02,000\nTwo\nlines.\n"
    res, _ = run("a.srt", text.encode(), Fake(lambda s: "我们现在应该回家了。"))
    assert res.data.decode() == "1\n00:00:01,000 --> 00:00:02,000\n我们现在应\n该回家了。\n"


def test_srt_malformed() -> None:
    with pytest.raises(InputError, match="malformed"):
        translate_file("a.srt", b"garbage\n1\n00:00:01,000 --> 00:00:02,000\nHi\n", identity)
    with pytest.raises(InputError, match="malformed"):
        bad_timing = b"1\n00:00:01,000 --> 00:00:02,000\nHi\n\n2\n00:00:03,000 -> 00:00:04\nHo\n"
        translate_file("a.srt", bad_timing, identity)
    with pytest.raises(InputError, match="malformed at line 1: 'just some text'"):
        translate_file("a.srt", b"just some text\n", identity)
    with pytest.raises(InputError, match="no subtitles"):
        translate_file("a.srt", b"\n\n", identity)
    with pytest.raises(InputError):
        translate_file("a.srt", b"\x89PNG\r\n\x1a\n", identity)


@pytest.mark.parametrize("timing, line, why", [
    ("00:00:03,000 --> 00:00:0x,500", 6, "not a valid timing"),
    ("00:00:0x,500 --> 00:00:04,000", 6, "not a valid timing"),
    ("00:00:03,000 --> 00:00:02,000", 6, "ends before it starts"),
    ("00:00:03,000 --> 00:61:00,000", 6, "not a valid timing"),
])
def test_srt_invalid_timings_are_refused_with_the_line(timing, line, why) -> None:
    """``00:00:0x,500`` used to pass as ``00:00:0`` plus position text: the cue ended before it
    started, and players dropped it and the cues after it."""
    text = (f"1\n00:00:01,000 --> 00:00:02,000\nHello.\n\n2\n{timing}\nSwallowed.\n\n"
            "3\n00:00:05,000 --> 00:00:06,000\nAlso.\n")
    with pytest.raises(InputError, match=f"malformed at line {line}: .*{why}"):
        translate_file("a.srt", text.encode(), identity)
    # The same file with a valid timing (a dot for the comma, position fields after it) passes.
    good = text.replace(timing, "00:00:03.000 --> 00:00:04,000 X1:10 X2:20")
    assert translate_file("a.srt", good.encode(), identity).data == good.encode()


# --- .csv --------------------------------------------------------------------------------------

CSV = (
    "id,name,description,price,url\r\n"
    '1,Widget,"A small widget, blue.",3.50,https://x.org/w\r\n'
    'A-2,"Gadget","Says ""hi"". Twice!",10,https://x.org/g\r\n'
    '3,Widget,"Multi\r\nline text.",7,\r\n'
)


def test_csv_text_columns_only_and_quoting_kept() -> None:
    res, fake = run("a.csv", CSV.encode())
    assert res.data.decode() == (
        "id,name,description,price,url\r\n"
        '1,[[Widget]],"[[A small widget, blue.]]",3.50,https://x.org/w\r\n'
        'A-2,"[[Gadget]]","[[Says ""hi"".]] [[Twice!]]",10,https://x.org/g\r\n'
        '3,[[Widget]],"[[Multi]]\r\n[[line text.]]",7,\r\n'
    )
    assert fake.calls == [
        ["Widget", "A small widget, blue.", "Gadget", 'Says "hi".', "Twice!", "Multi", "line text."]
    ]
    assert res.segments == 7


def test_csv_chosen_columns_and_quotes_added_when_needed() -> None:
    res, fake = run("a.csv", CSV.encode(), Fake(lambda s: s + ", ok"), csv_columns=["name"])
    assert fake.calls == [["Widget", "Gadget"]]
    lines = res.data.decode().split("\r\n")
    assert lines[1] == '1,"Widget, ok","A small widget, blue.",3.50,https://x.org/w'
    assert lines[2] == 'A-2,"Gadget, ok","Says ""hi"". Twice!",10,https://x.org/g'


def test_csv_semicolon_dialect_and_columns() -> None:
    data = b"nom;texte\nun;Bonjour le monde.\ndeux;Au revoir.\n"
    assert csv_columns(data) == ["nom", "texte"]
    res, _ = run("a.csv", data, csv_columns=["texte"])
    assert res.data.decode() == "nom;texte\nun;[[Bonjour le monde.]]\ndeux;[[Au revoir.]]\n"


def test_csv_columns_helper() -> None:
    assert csv_columns(CSV.encode()) == ["id", "name", "description", "price", "url"]
    assert csv_columns(b"") == []
    with pytest.raises(InputError):
        csv_columns(b"\xff\xfe\xfd")


def test_csv_identity_round_trip() -> None:
    res, _ = run("a.csv", CSV.encode(), identity)
    assert res.data == CSV.encode()


def test_csv_errors() -> None:
    with pytest.raises(InputError, match="Unknown column"):
        translate_file("a.csv", CSV.encode(), identity, csv_columns=["nope"])
    with pytest.raises(InputError, match="malformed"):
        translate_file("a.csv", b'a,b\n1,"unterminated\n', identity)
    with pytest.raises(InputError, match="malformed"):
        translate_file("a.csv", b"a,b\n1,2,3\n", identity)
    with pytest.raises(InputError, match="empty"):
        translate_file("a.csv", b"", identity)
    with pytest.raises(InputError, match="not valid UTF-8"):
        translate_file("a.csv", "a,b\nç,d\n".encode("cp1252"), identity)


# --- .docx -------------------------------------------------------------------------------------


def make_docx() -> bytes:
    d = docx.Document()
    p = d.add_paragraph("Hello ")
    r = p.add_run("bold world")
    r.bold = True
    p.add_run(". Normal text.")
    r = p.add_run(" Italic end.")
    r.italic = True
    split = d.add_paragraph("Spell")
    split.add_run("checked words.")  # same formatting, two runs: one span
    brk = d.add_paragraph("Before break.")
    brk.runs[0].add_break(WD_BREAK.LINE)
    brk.add_run("After break.")
    table = d.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Cell one."
    table.cell(0, 1).text = "42"
    table.cell(1, 0).text = "Hello "  # repeated text: sent once
    inner = table.cell(1, 1).add_table(rows=1, cols=1)
    inner.cell(0, 0).text = "Nested cell."
    d.sections[0].header.paragraphs[0].text = "Header text"
    d.sections[0].footer.paragraphs[0].text = "Footer text"
    buf = io.BytesIO()
    d.save(buf)
    return buf.getvalue()


def test_docx_text_and_formatting_kept() -> None:
    res, fake = run("report.docx", make_docx(), Fake(str.upper))
    assert res.filename == "report.en.docx"
    assert fake.calls == [
        [
            "Hello",
            "bold world",
            "Normal text.",
            "Italic end.",
            "Spellchecked words.",
            "Before break.",
            "After break.",
            "Cell one.",
            "Nested cell.",
            "Header text",
            "Footer text",
        ]
    ]
    out = docx.Document(io.BytesIO(res.data))
    runs = [(r.text, r.bold, r.italic) for r in out.paragraphs[0].runs]
    assert runs == [
        ("HELLO ", None, None),
        ("BOLD WORLD", True, None),
        (". NORMAL TEXT.", None, None),
        (" ITALIC END.", None, True),
    ]
    assert [r.text for r in out.paragraphs[1].runs] == ["SPELLCHECKED WORDS.", ""]
    assert out.paragraphs[2].text == "BEFORE BREAK.\nAFTER BREAK."
    t = out.tables[0]
    assert [t.cell(0, 0).text, t.cell(0, 1).text, t.cell(1, 0).text] == [
        "CELL ONE.",
        "42",
        "HELLO ",
    ]
    assert t.cell(1, 1).tables[0].cell(0, 0).text == "NESTED CELL."
    assert out.sections[0].header.paragraphs[0].text == "HEADER TEXT"
    assert out.sections[0].footer.paragraphs[0].text == "FOOTER TEXT"


def test_docx_identity_keeps_text() -> None:
    data = make_docx()
    res, _ = run("r.docx", data, identity)
    a, b = docx.Document(io.BytesIO(data)), docx.Document(io.BytesIO(res.data))
    assert [p.text for p in a.paragraphs] == [p.text for p in b.paragraphs]


def test_docx_bad_content() -> None:
    with pytest.raises(InputError, match="PNG image"):
        translate_file("a.docx", b"\x89PNG\r\n\x1a\n" + b"\x00" * 20, identity)
    with pytest.raises(InputError, match="old Word"):
        translate_file("a.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 20, identity)
    with pytest.raises(InputError, match="damaged"):
        translate_file("a.docx", make_docx()[:200], identity)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("hello.txt", "not a word document")
    with pytest.raises(InputError, match="not a Word file"):
        translate_file("a.docx", buf.getvalue(), identity)
    with pytest.raises(InputError):
        translate_file("a.docx", b"Plain text named docx", identity)


def test_docx_zip_bomb_refused() -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", b"<Types/>")
        zf.writestr("big.xml", b"0" * 3_000_000)
    data = buf.getvalue()
    assert len(data) < 100_000
    with pytest.raises(InputTooLongError):
        translate_file("a.docx", data, identity, max_bytes=100_000)


def test_docx_images_and_hyperlinks_survive() -> None:
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (4, 4), "red").save(png, "PNG")
    png.seek(0)
    d = docx.Document()
    p = d.add_paragraph("Before image. ")
    p.add_run("Caption text").add_picture(png)
    p.add_run(" after.")
    link_p = d.add_paragraph("Visit ")
    rid = d.part.relate_to("https://example.com/", RT.HYPERLINK, is_external=True)
    link = OxmlElement("w:hyperlink")
    link.set(qn("r:id"), rid)
    r_el, t_el = OxmlElement("w:r"), OxmlElement("w:t")
    t_el.text = "our site"
    r_el.append(t_el)
    link.append(r_el)
    link_p._p.append(link)
    link_p.add_run(" today.")
    buf = io.BytesIO()
    d.save(buf)

    res, fake = run("x.docx", buf.getvalue(), Fake(str.upper))
    assert fake.calls == [
        ["Before image.", "Caption text", "after.", "Visit", "our site", "today."]
    ]
    out = docx.Document(io.BytesIO(res.data))
    assert [p.text for p in out.paragraphs] == [
        "BEFORE IMAGE. CAPTION TEXT AFTER.",
        "VISIT OUR SITE TODAY.",
    ]
    assert len(out.inline_shapes) == 1
    assert [(h.text, h.address) for h in out.paragraphs[1].hyperlinks] == [
        ("OUR SITE", "https://example.com/")
    ]


def test_docx_footnotes_translated() -> None:
    w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    footnotes = (
        f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:footnotes xmlns:w="{w}">'
        '<w:footnote w:id="1"><w:p><w:r><w:t>A footnote.</w:t></w:r></w:p></w:footnote>'
        "</w:footnotes>"
    )
    zin, buf = zipfile.ZipFile(io.BytesIO(make_docx())), io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "[Content_Types].xml":
                data = data.replace(
                    b"</Types>",
                    b'<Override PartName="/word/footnotes.xml" ContentType="application/'
                    b'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>',
                )
            if info.filename == "word/_rels/document.xml.rels":
                data = data.replace(
                    b"</Relationships>",
                    b'<Relationship Id="rIdFn" Type="http://schemas.openxmlformats.org/'
                    b'officeDocument/2006/relationships/footnotes" Target="footnotes.xml"/>'
                    b"</Relationships>",
                )
            zout.writestr(info, data)
        zout.writestr("word/footnotes.xml", footnotes)
    res, fake = run("f.docx", buf.getvalue(), Fake(str.upper))
    assert fake.calls[0][-1] == "A footnote."
    out = zipfile.ZipFile(io.BytesIO(res.data)).read("word/footnotes.xml").decode()
    assert '<w:t xml:space="preserve">A FOOTNOTE.</w:t>' in out


# --- .html ---------------------------------------------------------------------------------------

HTML_PAGE = (
    '<!DOCTYPE html>\n<html lang="zh"><head><title>通知</title>\n'
    '<style>p { color: red; }</style><script>var s = "<b>不翻译</b>";</script></head>\n'
    '<body class="x"><!-- 注释 --><h1 id="t">欢迎</h1>\n'
    '<div><p>明天 <b>上课</b> &amp; 考试。<br/>带<a href="/x?a=1&amp;b=2">课本</a>。</p>\n'
    '<p translate="no">校长 <i>签名</i></p><ul><li>一</li><li>&#20108;</li></ul></div>\n'
    '</body></html>\n'
)


def test_html_text_between_tags_translated_and_every_tag_kept() -> None:
    res, fake = run("notice.html", HTML_PAGE.encode())
    assert res.filename == "notice.en.html"
    assert fake.sent == ["通知", "欢迎", "明天", "上课", "& 考试。", "带", "课本", "一", "二"]
    assert res.data.decode() == (
        '<!DOCTYPE html>\n<html lang="zh"><head><title>[[通知]]</title>\n'
        '<style>p { color: red; }</style><script>var s = "<b>不翻译</b>";</script></head>\n'
        '<body class="x"><!-- 注释 --><h1 id="t">[[欢迎]]</h1>\n'
        '<div><p>[[明天]] <b>[[上课]]</b> [[&amp; 考试。]]<br/>[[带]]<a href="/x?a=1&amp;b=2">'
        '[[课本]]</a>。</p>\n'
        '<p translate="no">校长 <i>签名</i></p><ul><li>[[一]]</li><li>[[二]]</li></ul></div>\n'
        '</body></html>\n'
    )


def test_html_escapes_what_the_translation_brings_and_refuses_binary() -> None:
    res, _ = run("a.htm", b"<p>x</p>", Fake(lambda s: "a < b & c"))
    assert res.data == b"<p>a &lt; b &amp; c</p>"
    with pytest.raises(InputError, match="PDF"):
        run("a.html", b"%PDF-1.4 ...")


# --- .pptx and .xlsx (built and read back with python-pptx and openpyxl) -------------------------


def make_pptx() -> bytes:
    import pptx
    from pptx.util import Inches

    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Welcome"
    body = slide.placeholders[1].text_frame
    body.text = "First point"
    para = body.add_paragraph()
    plain, bold, tail = para.add_run(), para.add_run(), para.add_run()
    plain.text, bold.text, tail.text = "A ", "bold", " word"
    bold.font.bold = True
    table = slide.shapes.add_table(2, 2, Inches(1), Inches(5), Inches(4), Inches(1)).table
    table.cell(0, 0).text, table.cell(1, 1).text = "Cell one", "Cell two"
    slide.notes_slide.notes_text_frame.text = "Speaker note"
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def test_pptx_slides_tables_and_notes_translated_formatting_kept() -> None:
    import pptx

    data = make_pptx()
    res, fake = run("lesson.pptx", data, Fake(str.upper))
    assert res.filename == "lesson.en.pptx"
    assert set(fake.sent) == {"Welcome", "First point", "A", "bold", "word", "Cell one",
                              "Cell two", "Speaker note"}
    slide = pptx.Presentation(io.BytesIO(res.data)).slides[0]
    assert slide.shapes.title.text == "WELCOME"
    paragraphs = slide.placeholders[1].text_frame.paragraphs
    assert paragraphs[0].text == "FIRST POINT"
    assert [(r.text, r.font.bold) for r in paragraphs[1].runs] == [
        ("A ", None), ("BOLD", True), (" WORD", None)]
    table = next(s for s in slide.shapes if s.has_table).table
    assert (table.cell(0, 0).text, table.cell(1, 1).text) == ("CELL ONE", "CELL TWO")
    assert slide.notes_slide.notes_text_frame.text == "SPEAKER NOTE"
    with zipfile.ZipFile(io.BytesIO(data)) as before, \
            zipfile.ZipFile(io.BytesIO(res.data)) as after:
        assert before.namelist() == after.namelist()
        untouched = [n for n in before.namelist() if "slides/" not in n and "notesSlide" not in n]
        assert all(before.read(n) == after.read(n) for n in untouched)


def make_xlsx() -> bytes:
    import openpyxl
    from openpyxl.cell.rich_text import CellRichText, TextBlock
    from openpyxl.cell.text import InlineFont

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Marks"
    sheet["A1"], sheet["B1"], sheet["C1"] = "Name", "Score", 42
    sheet["A2"] = "Good work"
    sheet["B2"] = "=SUM(C1:C1)"
    sheet["A3"] = CellRichText("Very ", TextBlock(InlineFont(b=True), "good"))
    sheet["A4"] = "Good work"
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_xlsx_cell_text_translated_numbers_and_formulas_kept() -> None:
    import openpyxl

    res, fake = run("marks.xlsx", make_xlsx(), Fake(str.upper))
    assert res.filename == "marks.en.xlsx"
    assert sorted(fake.sent) == ["Good work", "Name", "Score", "Very", "good"]
    book = openpyxl.load_workbook(io.BytesIO(res.data), rich_text=True)
    sheet = book["Marks"]
    assert [sheet["A1"].value, sheet["B1"].value, sheet["C1"].value] == ["NAME", "SCORE", 42]
    assert (sheet["A2"].value, sheet["B2"].value, sheet["A4"].value) == (
        "GOOD WORK", "=SUM(C1:C1)", "GOOD WORK")
    rich = sheet["A3"].value
    assert str(rich) == "VERY GOOD" and rich[1].font.b


def test_office_packages_that_are_not_what_they_say_are_refused() -> None:
    with pytest.raises(InputError, match="old PowerPoint"):
        run("a.pptx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\0" * 64)
    with pytest.raises(InputError, match="not an Excel file"):
        run("a.xlsx", make_pptx())
    with pytest.raises(InputError, match="damaged"):
        run("a.pptx", b"PK\x03\x04 broken")
