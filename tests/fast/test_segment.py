"""split_document: byte-for-byte layout, sentences per script, long segments, the invariants."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hunyuan_webui.errors import InputError
from hunyuan_webui.segment import Document, Piece, is_translatable, split_document

LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def pieces(text: str, lang: str | None = None, **kw) -> list[tuple[str, bool]]:
    return [(p.text, p.translate) for p in split_document(text, lang, **kw).pieces]


def segs(text: str, lang: str | None = None, **kw) -> list[str]:
    return split_document(text, lang, **kw).segments


def check_invariants(text: str, lang: str | None = None, limit: int = 1000) -> Document:
    doc = split_document(text, lang, max_segment_chars=limit)
    assert doc.render(doc.segments) == text
    assert doc.text == text
    for a, b in zip(doc.pieces, doc.pieces[1:], strict=False):
        assert a.translate or b.translate, "adjacent layout pieces are merged"
    for p in doc.pieces:
        assert p.text
        if p.translate:
            assert len(p.text) <= limit
            assert not any(c in LINE_BREAKS for c in p.text)
            assert p.text == p.text.strip()
            assert is_translatable(p.text)
    return doc


# --- round trip --------------------------------------------------------------------------------

INTERESTING = list(
    "aZ .!?。！？،؟۔।॥။၊។៕།༎ \t\r\n\u3000\xa0\u200b\u2028\ufeff-*•1)(（）、,;:…\"'「」“”"
    "中文日本ไทยབོད་ខ្មែរمرحباहिंदी😀\u0301\u200d"
) + ["- ", "1. ", "（1）", "https://x.org/a.b ", "Dr. ", "e.g. ", "\r\n", "\n\n"]


@settings(max_examples=400, deadline=None)
@given(st.text())
def test_round_trip_any_string(text: str) -> None:
    check_invariants(text)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from(INTERESTING) | st.text(max_size=3), max_size=40).map("".join),
    st.sampled_from([None, "en", "zh", "ja", "th", "bo", "ar", "hi", "km", "my", "de"]),
    st.integers(min_value=1, max_value=30),
)
def test_round_trip_layout_heavy(text: str, lang: str | None, limit: int) -> None:
    check_invariants(text, lang, limit)


def test_round_trip_examples() -> None:
    for text in ["", " ", "\n", "\r\n\r\n", "a", "。", "\ufeffHello.", "\ud800 lone surrogate."]:
        check_invariants(text)


# --- layout ------------------------------------------------------------------------------------


def test_layout_pieces_are_verbatim() -> None:
    text = (
        "  - First item. Second sentence!\n"
        "  2. Numbered item\n"
        "（1）中文第一句。第二句！\n"
        "\n"
        "\tIndented line with trailing   \n"
        "• Bullet\r\n"
        "42.5 %\n"
        "Hello  world.  Bye."
    )
    assert pieces(text) == [
        ("  - ", False),
        ("First item.", True),
        (" ", False),
        ("Second sentence!", True),
        ("\n  2. ", False),
        ("Numbered item", True),
        ("\n（1）", False),
        ("中文第一句。", True),
        ("第二句！", True),
        ("\n\n\t", False),
        ("Indented line with trailing", True),
        ("   \n• ", False),
        ("Bullet", True),
        ("\r\n42.5 %\n", False),
        ("Hello  world.", True),
        ("  ", False),
        ("Bye.", True),
    ]


@pytest.mark.parametrize(
    ("line", "marker"),
    [
        ("- item", "- "),
        ("* item", "* "),
        ("+ item", "+ "),
        ("• item", "• "),
        ("1. item", "1. "),
        ("12) item", "12) "),
        ("1.2. item", "1.2. "),
        ("（1）项目", "（1）"),
        ("(a) item", "(a) "),
        ("一、项目", "一、"),
        ("3、项目", "3、"),
        ("① 项目", "① "),
        ("## Heading", "## "),
        ("> quoted", "> "),
        ("  - [x] done", "  - [x] "),
        ("IV. Chapter", "IV. "),
        ("— Bonjour, dit-il.", "— "),
    ],
)
def test_list_markers_stay_verbatim(line: str, marker: str) -> None:
    doc = split_document(line)
    assert doc.pieces[0] == Piece(marker, False)
    assert doc.render(doc.segments) == line


def test_not_markers() -> None:
    assert segs("-5 degrees today") == ["-5 degrees today"]
    assert segs("2024 was a good year.") == ["2024 was a good year."]
    assert segs("1.5 kg of rice") == ["1.5 kg of rice"]


def test_nothing_translatable_is_verbatim() -> None:
    for text in ["42", "3.14 %", "😀🎉", "https://example.com/a.b?c=d", "--- * ---", "me@x.org"]:
        assert pieces(text) == [(text, False)]
    assert segs("See https://example.com. Thanks!") == ["See https://example.com.", "Thanks!"]
    assert segs("1. 2. 3.") == []


def test_symbols_glued_to_a_sentence_stay_with_it() -> None:
    assert pieces("干得好！👍") == [("干得好！👍", True)]
    assert pieces("Done! 🎉 Next.") == [("Done!", True), (" ", False), ("🎉 Next.", True)]
    assert pieces("Wow!!! 😀😀") == [("Wow!!!", True), (" 😀😀", False)]


def test_blank_and_whitespace_only() -> None:
    assert pieces("   \n\n\t") == [("   \n\n\t", False)]
    assert split_document("").pieces == ()


# --- sentences per script ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "en",
            "Dr. Smith arrived at 3 p.m. today. He paid $4.50, e.g. for coffee! Was it good?",
            [
                "Dr. Smith arrived at 3 p.m. today.",
                "He paid $4.50, e.g. for coffee!",
                "Was it good?",
            ],
        ),
        (
            "zh",
            "今天天气很好。你要去哪里？我们一起去公园吧！好的",
            ["今天天气很好。", "你要去哪里？", "我们一起去公园吧！", "好的"],
        ),
        (
            "ja",
            "今日はいい天気です。どこへ行きますか？はい！",
            ["今日はいい天気です。", "どこへ行きますか？", "はい！"],
        ),
        (
            "ja",
            "彼は「はい。」と言った。それから帰った。",
            ["彼は「はい。」と言った。", "それから帰った。"],
        ),
        (
            "th",
            "วันนี้อากาศดีมาก ฉันจะไปตลาดกับแม่ คุณจะไปด้วยไหม",
            ["วันนี้อากาศดีมาก", "ฉันจะไปตลาดกับแม่", "คุณจะไปด้วยไหม"],
        ),
        (
            "th",
            "ฉันชอบกินข้าว แต่ไม่ชอบกินผัก เราจะพบกันเร็วๆ นี้ มีประมาณ 70 ล้านคน",
            ["ฉันชอบกินข้าว แต่ไม่ชอบกินผัก", "เราจะพบกันเร็วๆ นี้", "มีประมาณ 70 ล้านคน"],
        ),
        (
            "bo",
            "ང་བོད་པ་ཡིན། ཁྱེད་རང་གང་ནས་ཡིན། ཐུགས་རྗེ་ཆེ།",
            ["ང་བོད་པ་ཡིན།", "ཁྱེད་རང་གང་ནས་ཡིན།", "ཐུགས་རྗེ་ཆེ།"],
        ),
        (
            "ar",
            "مرحبا بك في القاهرة. كيف حالك اليوم؟ أنا بخير، شكرا!",
            ["مرحبا بك في القاهرة.", "كيف حالك اليوم؟", "أنا بخير، شكرا!"],
        ),
        (
            "ur",
            "میں لاہور میں رہتا ہوں۔ آپ کہاں سے ہیں؟",
            ["میں لاہور میں رہتا ہوں۔", "آپ کہاں سے ہیں؟"],
        ),
        (
            "fa",
            "من در تهران زندگی می‌کنم. شما اهل کجا هستید؟",
            ["من در تهران زندگی می‌کنم.", "شما اهل کجا هستید؟"],
        ),
        (
            "hi",
            "मैं दिल्ली में रहता हूँ। यह शहर बहुत सुंदर है। आप कहाँ से हैं?",
            ["मैं दिल्ली में रहता हूँ।", "यह शहर बहुत सुंदर है।", "आप कहाँ से हैं?"],
        ),
        ("mr", "मी घरी जात आहे। तू कुठे आहेस?", ["मी घरी जात आहे।", "तू कुठे आहेस?"]),
        ("my", "ကျွန်တော်၊ ခင်ဗျားနဲ့ သွားမယ်။ ဟုတ်ကဲ့။", ["ကျွန်တော်၊ ခင်ဗျားနဲ့ သွားမယ်။", "ဟုတ်ကဲ့။"]),
        (
            "km",
            "ខ្ញុំរស់នៅភ្នំពេញ។ទីក្រុងនេះស្អាតណាស់។ តើអ្នកមកពីណា?",
            ["ខ្ញុំរស់នៅភ្នំពេញ។", "ទីក្រុងនេះស្អាតណាស់។", "តើអ្នកមកពីណា?"],
        ),
        (
            "de",
            "Das ist z. B. ein Test. Am 3. Oktober ist Feiertag.",
            ["Das ist z. B. ein Test.", "Am 3. Oktober ist Feiertag."],
        ),
        (
            "ru",
            "Он родился в 1990 г. в Москве. Ты знал?",
            ["Он родился в 1990 г. в Москве.", "Ты знал?"],
        ),
        (
            "ko",
            "저는 서울에 삽니다. 어디에서 오셨어요?",
            ["저는 서울에 삽니다.", "어디에서 오셨어요?"],
        ),
    ],
)
def test_sentences_per_language(lang: str, text: str, expected: list[str]) -> None:
    assert segs(text, lang) == expected
    check_invariants(text, lang)


def test_unknown_language_still_splits_cjk_and_latin() -> None:
    text = "Hello there. How are you? 你好。再见！"
    expected = ["Hello there.", "How are you?", "你好。", "再见！"]
    assert segs(text) == expected
    assert segs(text, "auto") == expected


def test_language_aliases_and_unknown_codes() -> None:
    assert segs("你好。再見", "zh-TW") == ["你好。", "再見"]
    assert segs("Oo. Hindi.", "fil") == ["Oo.", "Hindi."]
    with pytest.raises(InputError):
        split_document("Hello.", "xx-nope")


def test_sentences_never_cross_lines() -> None:
    assert segs("This sentence is\nwrapped over lines.") == [
        "This sentence is",
        "wrapped over lines.",
    ]


# --- long segments -----------------------------------------------------------------------------


def test_long_segment_cut_at_clause_punctuation() -> None:
    text = "这是一个很长的句子，" * 30  # 300 characters, no sentence end
    out = segs(text, "zh", max_segment_chars=100)
    assert out == ["这是一个很长的句子，" * 10] * 3
    latin = "alpha beta, gamma delta, epsilon zeta, eta theta"
    assert segs(latin, "en", max_segment_chars=20) == [
        "alpha beta,",
        "gamma delta,",
        "epsilon zeta,",
        "eta theta",
    ]


def test_long_segment_cut_at_whitespace_then_hard() -> None:
    assert segs("aaaa bbbb cccc dddd", max_segment_chars=10) == ["aaaa bbbb", "cccc dddd"]
    assert segs("abcdefghij" * 3, max_segment_chars=10) == ["abcdefghij"] * 3
    doc = check_invariants("word " * 500, limit=100)
    assert all(len(s) <= 100 for s in doc.segments)


def test_hard_cut_keeps_combining_marks_together() -> None:
    text = "e\u0301" * 10  # é as e + combining acute
    out = segs(text, max_segment_chars=5)
    assert "".join(out) == text
    for s in out:
        assert unicodedata.category(s[0]) != "Mn"
        assert len(s) <= 5


def test_tibetan_long_sentence_cut_at_tsheg() -> None:
    text = "བོད་" * 30
    out = segs(text, "bo", max_segment_chars=20)
    assert "".join(out) == text
    assert all(s.endswith("་") for s in out)


def test_max_segment_chars_must_be_positive() -> None:
    with pytest.raises(ValueError):
        split_document("x", max_segment_chars=0)


# --- Document ----------------------------------------------------------------------------------


def test_render_replaces_segments_in_order() -> None:
    doc = split_document("- One. Two.\n\n3. Three!")
    assert doc.segments == ["One.", "Two.", "Three!"]
    assert doc.render(["Un.", "Deux.", "Trois !"]) == "- Un. Deux.\n\n3. Trois !"
    with pytest.raises(ValueError):
        doc.render(["only one"])


def test_render_spaces_sentences_as_the_target_language_writes_them() -> None:
    """As the streamed text is: no space after a Chinese full stop between two sentences (a line
    break stays), a space between two English translations of touching Chinese sentences."""
    doc = split_document("Thank you. Please sit down.\nThank you.")
    zh = ["谢谢。", "请坐。", "谢谢。"]
    assert doc.render(zh, "zh") == "谢谢。请坐。\n谢谢。"
    assert doc.render(zh, "ja") == "谢谢。请坐。\n谢谢。"
    assert doc.render(zh) == "谢谢。 请坐。\n谢谢。"  # no target: the layout as it was
    assert doc.render(["Merci.", "Asseyez-vous.", "Merci."], "fr") == \
        "Merci. Asseyez-vous.\nMerci."
    assert doc.render(["谢谢", "请坐。", "谢谢。"], "zh") == "谢谢 请坐。\n谢谢。"  # no stop, kept
    touching = split_document("谢谢。请坐。", "zh")
    assert touching.render(["Thank you.", "Please sit down."], "en") == \
        "Thank you. Please sit down."


def test_repeated_sentences_are_separate_segments() -> None:
    doc = split_document("Yes. No. Yes.")
    assert doc.segments == ["Yes.", "No.", "Yes."]
