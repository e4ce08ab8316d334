"""The page's pure parts, without a browser: its words in both languages, long texts cut into
parts, operator advice kept out of visitors' messages, pinyin, the notebook's addresses."""

from __future__ import annotations

import string

from hunyuan_webui import notebook, romanize
from hunyuan_webui.service.door.parts import split_parts
from hunyuan_webui.web.page.errors import for_visitor
from hunyuan_webui.web.page.text import LABELS, MESSAGES, say, ui_lang


def test_both_ui_languages_have_every_string_with_the_same_placeholders():
    """The tables themselves: tests/fast/test_words.py; here, what the page builds on them."""
    assert LABELS["en"].keys() == LABELS["zh"].keys()
    assert MESSAGES["en"].keys() == MESSAGES["zh"].keys()
    fields = string.Formatter()
    for key, english in MESSAGES["en"].items():
        names = {f for _, f, _, _ in fields.parse(english) if f}
        assert names == {f for _, f, _, _ in fields.parse(MESSAGES["zh"][key]) if f}, key
    assert "{count}" not in LABELS["en"]["header"] + LABELS["zh"]["header"]


class Request:
    def __init__(self, accept: str) -> None:
        self.headers = {"accept-language": accept}


def test_the_ui_language_follows_the_browser():
    assert ui_lang(Request("zh-CN,zh;q=0.9,en;q=0.8")) == "zh"
    assert ui_lang(Request("en-US,en;q=0.9,zh;q=0.8")) == "en"
    assert ui_lang(None) == "en"
    assert say("zh", "segment", done=2, total=5) == "第 2 部分，共 5 部分…"


def test_a_long_text_is_cut_into_parts_within_both_limits_and_joins_back():
    text = "这是一个很长的句子。" * 900 + "\n\n" + "A sentence in English. " * 400
    tokens = lambda s: len(s.encode("utf-8")) // 2  # noqa: E731 - a stand-in tokenizer
    parts = split_parts(text, 5000, 4096, tokens)
    assert "".join(parts) == text
    assert all(len(p) <= 5000 and tokens(p) <= 4096 for p in parts)
    assert len(parts) > 1
    assert split_parts("短文本。", 5000, 4096, tokens) == ["短文本。"]


def test_a_run_without_spaces_or_sentence_ends_is_still_cut():
    text = "字" * 12_000
    parts = split_parts(text, 5000, 4096, len)
    assert "".join(parts) == text and all(len(p) <= 4096 for p in parts)


def test_visitors_do_not_read_server_flags():
    """Students saw 'raise --max-input-tokens': advice for whoever runs the server."""
    message = ("The text is 8,656 tokens long; the limit is 4,096. Split it into smaller parts "
               "(or raise --max-input-tokens).")
    assert "--" not in for_visitor(message)
    assert for_visitor(message).startswith("The text is 8,656 tokens long")


def test_a_chinese_page_reads_the_common_refusals_in_chinese():
    """A class's usual refusals (busy, too fast, too long, a restarting engine) came in English on
    a Chinese page; an English page keeps the service's own message with its numbers."""
    from hunyuan_webui.errors import BusyError, EngineError, InputTooLongError, RateLimitError
    from hunyuan_webui.web.page.errors import visitor_text

    busy = BusyError(retry_after=2.4)
    assert visitor_text(busy, "zh") == "全班都在翻译，翻译器正忙；请 3 秒后再试。"
    assert visitor_text(busy, "en") == "The translator is busy; please try again in a moment."
    limited = RateLimitError("Too many requests: 30 per minute for this key.", retry_after=12)
    assert visitor_text(limited, "zh") == "短时间内翻译得太多了；请等 12 秒。"
    assert visitor_text(limited, "en") == "Too many requests: 30 per minute for this key."
    long = InputTooLongError("The text is 8,656 tokens long; the limit is 4,096. Split it into "
                             "smaller parts (or raise --max-input-tokens).")
    assert visitor_text(long, "zh") == "这段文本超出了服务器一次能翻译的长度，请分成几段。"
    assert visitor_text(long, "en").startswith("The text is 8,656 tokens long; the limit is 4,096")
    assert "--" not in visitor_text(long, "en")
    assert visitor_text(EngineError("The engine process stopped (signal 9)."), "zh") == \
        "翻译引擎出了问题，正在重启；请几秒后再试。"


def test_pinyin_under_chinese_and_nothing_for_other_scripts():
    assert romanize.romanize("谢谢你的帮助。", "zh") == "xiè xiè nǐ de bāng zhù。"
    assert romanize.romanize("Danke.", "de") is None


def test_cyrillic_and_uyghur_are_read_letter_for_letter():
    """Only Chinese had a reading; Cyrillic and Uyghur (which writes every vowel) read
    faithfully letter for letter."""
    assert romanize.romanize("Спасибо за помощь.", "ru") == "Spasibo za pomoshch'."
    assert romanize.romanize("Дякую за допомогу.", "uk") == "Dyakuyu za dopomogu."
    assert romanize.romanize("Рақмет сізге.", "kk") == "Raqmet sizge."
    assert romanize.romanize("Баярлалаа.", "mn") == "Bayarlalaa."
    assert romanize.romanize("رەھمەت", "ug") == "rehmet"
    # Scripts whose letters leave the vowels out, or kanji read as Chinese: no reading.
    for text, code in [("شكرا لك", "ar"), ("תודה רבה", "he"), ("東京", "ja"), ("감사합니다", "ko")]:
        assert romanize.romanize(text, code) is None


def test_the_notebook_shows_the_lan_address_when_serving_the_network(monkeypatch):
    monkeypatch.setattr(notebook, "lan_ip", lambda: "192.168.1.20")
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    where = notebook.addresses("0.0.0.0", 7860)
    assert where.local == "http://127.0.0.1:7860/" and where.best == "http://192.168.1.20:7860/"
    assert "█" in notebook.qr_text(where.best)
    assert notebook.addresses("127.0.0.1", 7860).lan is None


def test_under_jupyterhub_the_link_is_the_hub_proxy(monkeypatch):
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/ana/")
    monkeypatch.setenv("JUPYTERHUB_EXTERNAL_URL", "https://hub.school.example")
    root = notebook.hub_prefix(7860)
    assert root == "/user/ana/proxy/7860"
    assert notebook.addresses("127.0.0.1", 7860, root).best == (
        "https://hub.school.example/user/ana/proxy/7860/")


def test_the_tables_headers_and_the_document_lines_follow_the_ui_language():
    """A Chinese page showed "Source term", "Done: 3 distinct segments translated" and
    "Could not read the glossary" in English."""
    from hunyuan_webui.web.page.report import glossary_table, history_rows

    assert history_rows([["你好", "Hello", "zh → en", "zh", "en"]], "zh") == {
        "headers": ["原文", "译文", "语言对"], "data": [["你好", "Hello", "中文 → 英语"]]}
    assert glossary_table(None, "zh") == {"headers": ["原文术语", "译文术语"], "data": [["", ""]]}
    assert glossary_table([["a", "b"]])["headers"] == ["Source term", "Target term"]
    assert say("zh", "doc_done", n=3, filename="notes.zh.md") == "完成：已翻译 3 个不同的片段 → notes.zh.md"
    assert say("zh", "glossary_unreadable", reason=say("zh", "not_utf8")) == \
        "无法读取术语表：文件不是 UTF-8 文本"
