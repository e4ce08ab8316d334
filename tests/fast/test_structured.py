"""Structured data, pure units: which format, whether an answer is still the same data, and the
value-by-value fallback that leaves everything but the text byte for byte."""

from __future__ import annotations

import pytest

from hunyuan_webui import structured
from hunyuan_webui.errors import InputError

SAMPLES = {
    "json": '{\n  "title": "Welcome, {{name}}!",\n  "count": 3,\n  "tags": ["new"]\n}\n',
    "xml": '<?xml version="1.0"?>\n<menu id="m1">\n  <item key="save">Save the file</item>\n'
           '  <!-- not <shown> -->\n  <item key="quit">Quit &amp; close</item>\n</menu>\n',
    "yaml": "greeting: Hello %s\nitems:\n  - Open\n  - Close\n",
    "csv": "key,text\nsave,Save the file\nquit,\"Quit, now\"\n",
    "tsv": "key\ttext\nsave\tSave the file\n",
    "toml": 'title = "Hello"\n[menu]\nsave = "Save"\n',
    "ini": "[menu]\nsave = Save the file\nquit = Quit\n",
}


@pytest.mark.parametrize("fmt", list(SAMPLES))
def test_each_format_is_detected(fmt):
    assert structured.detect_format(SAMPLES[fmt]) == fmt


def test_plain_text_is_no_format():
    with pytest.raises(InputError, match="Could not tell which format"):
        structured.detect_format("Just a sentence, nothing more.")
    assert structured.normalize_format("YML") == "yaml"
    with pytest.raises(InputError, match="Unknown data format 'docx'"):
        structured.normalize_format("docx")


@pytest.mark.parametrize("fmt, answer, why", [
    ("json", '{"title": "欢迎，{{name}}！", "count": 3, "tags": ["新"]}', None),
    ("json", '{"标题": "欢迎，{{name}}！", "count": 3, "tags": ["新"]}', "keys or structure"),
    ("json", '{"title": "欢迎！", "count": 3, "tags": ["新"]}', "placeholders"),
    ("json", '{"title": "欢迎，{{name}}！", "count": 4, "tags": ["新"]}', "keys or structure"),
    ("json", "欢迎", "does not parse"),
    ("xml", '<menu id="m1"><item key="save">保存</item><item key="quit">退出</item></menu>', None),
    ("xml", '<menu id="m1"><item>保存</item><item key="quit">退出</item></menu>', "structure"),
    ("csv", "key,text\nsave,保存文件\nquit,立即退出\n", None),
    ("csv", "键,文本\nsave,保存文件\nquit,立即退出\n", "structure"),
    ("yaml", "greeting: 你好 %s\nitems:\n  - 打开\n  - 关闭\n", None),
    ("ini", "[menu]\nsave = 保存\n", "structure"),
])
def test_an_answer_must_be_the_same_data(fmt, answer, why):
    got = structured.problem(SAMPLES[fmt], answer, fmt)
    assert (got is None) if why is None else (why in got)


def test_a_fenced_answer_is_unwrapped():
    assert structured.unwrap('```json\n{"a": "b"}\n```', '{"a": "c"}') == '{"a": "b"}'
    assert structured.unwrap("```\nx\n```", "```\ny\n```") == "```\nx\n```"


def test_json_values_come_back_in_place():
    values, rebuild = structured.split_values(SAMPLES["json"], "json")
    assert values == ["Welcome, {{name}}!", "new"]
    assert rebuild(["欢迎，{{name}}！", "新"]) == (
        '{\n  "title": "欢迎，{{name}}！",\n  "count": 3,\n  "tags": ["新"]\n}\n')


def test_xml_text_comes_back_in_place_escaped_and_comments_untouched():
    values, rebuild = structured.split_values(SAMPLES["xml"], "xml")
    assert values == ["Save the file", "Quit & close"]
    assert rebuild(["保存文件", "退出 & 关闭"]) == (
        '<?xml version="1.0"?>\n<menu id="m1">\n  <item key="save">保存文件</item>\n'
        '  <!-- not <shown> -->\n  <item key="quit">退出 &amp; 关闭</item>\n</menu>\n')


def test_csv_cells_below_the_header_come_back():
    values, rebuild = structured.split_values(SAMPLES["csv"], "csv")
    assert values == ["Save the file", "Quit, now"]  # not the "key" column
    assert rebuild(["保存文件", "退出，立即"]) == "key,text\nsave,保存文件\nquit,"\
        "退出，立即\n"
    values, rebuild = structured.split_values(SAMPLES["tsv"], "tsv")
    assert rebuild(["保存"]) == "key\ttext\nsave\t保存\n"


def test_formats_without_a_safe_split_have_none():
    assert structured.split_values(SAMPLES["yaml"], "yaml") is None


def test_identifiers_and_urls_are_not_text():
    assert structured.translatable("Save the file")
    assert structured.translatable("保存")
    for value in ("btn_save", "https://x.y/z", "com.example.app", "12:30", "", "  "):
        assert not structured.translatable(value), value
