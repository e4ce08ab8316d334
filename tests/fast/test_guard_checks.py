"""The answer checks added for whole answers (service/checks: same, numbers, kept, mixed,
answers.check_length) on texts we control, and the corpora read the way a stream delivers them:
every bad answer caught, no legitimate one marked. No model, no server."""

from __future__ import annotations

import pytest

from benchmarks.guard_corpus import load_legit, load_misbehaving
from hunyuan_webui.detect import LanguageDetector
from hunyuan_webui.segment import split_document
from hunyuan_webui.service.checks.answers import Guards, check_answer, check_length
from hunyuan_webui.service.checks.kept import missing_item
from hunyuan_webui.service.checks.mixed import half_translated
from hunyuan_webui.service.checks.numbers import missing_numbers
from hunyuan_webui.service.checks.same import translatable
from hunyuan_webui.service.checks.watch import Watch

DETECTOR = LanguageDetector()
GUARDS = Guards(family="hunyuan-mt", detector=DETECTOR)


def judged(source: str, src: str, tgt: str, answer: str, finish: str = "stop"):
    """The finding on ``answer`` fed a few characters at a time, then ended."""
    watch = Watch(GUARDS, source, src, tgt)
    for at in range(0, len(answer), 3):
        watch.feed(answer[at:at + 3])
        if watch.finding is not None:
            return watch.finding
    watch.finish(finish)
    return watch.finding


@pytest.mark.parametrize("source, answer, target", [
    ("I have 3 cats.", "J'ai trois chats.", "fr"),  # spelled out (CLDR's rules)
    ("I have 3 cats.", "我有三只猫。", "zh"),
    ("I bought three apples.", "사과 세 개를 샀어요.", "ko"),
    ("It costs 1,200.50 euros.", "Es kostet 1.200,50 Euro.", "de"),  # the target's separators
    ("In 2024 we sold 12,500 units.", "В 2024 году мы продали 12 500 единиц.", "ru"),
    ("Population: 3 million", "人口：300万", "zh"),  # a scale word
    ("The meeting is at 3 pm.", "Das Treffen ist um 15 Uhr.", "de"),  # a clock hour
    ("会议在3月15日。", "The meeting is on March 15.", "en"),  # a month named (Babel's CLDR)
    ("Due 15.03.2024", "Échéance le 15 mars 2024", "fr"),
    ("Due 15/03/24", "Fällig am 15. März 2024", "de"),  # a two-digit year
    ("the 21st century", "le XXIe siècle", "fr"),  # Roman numerals
    ("50% off", "خصم ٥٠٪", "ar"),  # Arabic-Indic digits
    ("Lesson 3", "第三课", "zh"),
    ("Year 2024", "二〇二四年", "zh"),  # Chinese digits one by one
])
def test_a_number_in_any_form_of_the_same_value_is_kept(source, answer, target):
    assert missing_numbers(source, answer, target, "en" if source.isascii() else "zh") == []


@pytest.mark.parametrize("source, answer, target, lost", [
    ("Page 42, please.", "请看第24页。", "zh", "42"),
    ("In 2024 we sold 12,500 units.", "В 2025 году мы продали 12 500 единиц.", "ru", "2024"),
    ("Lesson 3", "Leçon 4", "fr", "3"),
    ("The meeting is on 2024-03-15.", "会议在2024年5月15日举行。", "zh", "03"),
])
def test_a_changed_or_dropped_number_is_found(source, answer, target, lost):
    assert missing_numbers(source, answer, target, "en") == [lost]


def test_addresses_code_and_placeholders_must_be_kept_exactly():
    assert missing_item("See https://example.org/a.", "Voir https://example.org/a.", "en",
                        "fr") is None
    assert missing_item("See https://example.org/a.", "Voir https://exemple.org/a.", "en",
                        "fr") == ("url", "https://example.org/a")
    assert missing_item("Mail a@b.com now.", "Écrivez à A@B.com.", "en", "fr") is None
    assert missing_item("Run `ls -la` now.", "Lancez `ls -l`.", "en", "fr") == ("code", "ls -la")
    assert missing_item("Hi {name}, %d new.", "Salut {nom}, %d nouveaux.", "en", "fr") == (
        "code", "{name}")
    assert missing_item("Hi {{ name }}!", "你好 {{name}}！", "en", "zh") is None


@pytest.mark.parametrize("source", [
    "Taxi, Hotel, Restaurant, Bank", "Menu: Pizza, Pasta, Tiramisu", "Rio de Janeiro, São Paulo",
    "GitHub Actions", "Bank of America", "iPhone 15 Pro",
])
def test_names_brands_and_lists_of_them_need_no_translation(source):
    assert translatable(source) == ()
    assert check_answer(source, source, "en", "de", DETECTOR, kept=True) is None


def test_a_copy_is_still_a_copy_where_words_should_have_changed():
    assert translatable("apples, pears, bananas") == ("apples", "pears", "bananas")
    found = check_answer("The bus is late again.", "The bus is late again.", "en", "fr",
                         DETECTOR)
    assert found is not None and found.kind == "copy"
    assert check_answer("他在家。", "他在家。", "zh", "zh-Hant", DETECTOR) is None  # all shared
    found = check_answer("我们学习中文。", "我们学习中文。", "zh", "zh-Hant", DETECTOR)
    assert found is not None and found.kind == "copy"  # 们 and 习 are Simplified only


@pytest.mark.parametrize("source, src, tgt, answer, left_in", [
    ("I like to read books in the library after school every day.", "en", "zh",
     "我喜欢 read books in the library after school every day。", "en"),
    ("这个周末我们全家要去海边度假。", "zh", "en", "This weekend 我们全家要去海边度假。", "zh"),
    ("私は毎日図書館で勉強しています。", "ja", "zh", "我每天在图书馆で勉強しています。", "ja"),
    ("我们明天去东京，然后去大阪看朋友。", "zh", "ja", "明日東京に行って，然后去大阪看朋友。", "zh"),
    ("The train was late because of the heavy snow this morning.", "en", "fr",
     "Le train était en retard because of the heavy snow this morning.", "en"),
])
def test_half_a_translation_is_found(source, src, tgt, answer, left_in):
    assert half_translated(answer, source, src, tgt) == left_in


@pytest.mark.parametrize("source, src, tgt, answer", [
    ("We use WeChat and GitHub every day.", "en", "zh", "我们每天都用微信和GitHub。"),
    ("Python 3.12 introduced a faster interpreter.", "en", "zh",
     "Python 3.12 引入了更快的解释器。"),
    ("We use machine learning models.", "en", "zh", "我们使用 machine learning 模型。"),  # a term
    ("The National Diet Library is in Tokyo.", "en", "ja", "国立国会図書館は東京にあります。"),
    ("Tokyo, Osaka, Kyoto, Nagoya", "en", "ja", "東京、大阪、京都、名古屋"),  # kanji, no kana
    ('He wrote "Gone with the Wind".', "en", "fr", "Il a écrit « Gone with the Wind »."),
])
def test_names_terms_kanji_and_quotations_are_no_half_translation(source, src, tgt, answer):
    assert check_answer(answer, source, src, tgt, DETECTOR, kept=True) is None


def test_chinese_for_japanese_is_the_wrong_language():
    for answer in ("谢谢你。", "我们今天放学后去公园。", "今天天气很好。"):
        found = check_answer(answer, "Thank you.", "en", "ja", DETECTOR)
        assert found is not None and (found.kind, found.detected) == ("language", "zh"), answer


def test_an_empty_or_cut_off_answer_is_found():
    source = "The students who finish early can help their classmates with the presentation."
    assert check_length("", source, "en", "fr", "stop").kind == "empty"
    assert check_length(" 。", "Please be quiet.", "en", "ja", "stop").kind == "empty"
    assert check_length("Les élèves qui", source, "en", "fr", "length").kind == "truncated"
    assert check_length("Les élèves qui", source, "en", "fr", "stop") is None  # it chose to end
    assert check_length("", "12345", "en", "fr", "stop") is None  # nothing to translate


def test_every_corpus_source_is_one_segment():
    """The scripted server answers per segment: a source the service would cut in two could not
    be answered from the table."""
    for case in [*load_legit(), *load_misbehaving()]:
        assert len(split_document(case.source, case.source_lang).segments) == 1, case


def test_the_corpora_as_a_stream_delivers_them_every_bad_answer_caught_no_false_alarm():
    legit, bad = load_legit(), load_misbehaving()
    assert len(legit) >= 300 and len({(c.source_lang, c.target_lang) for c in legit}) >= 20
    assert len(bad) >= 100 and {c.kind for c in bad} >= {
        "language", "copy", "loop", "length", "half", "empty", "truncated", "number", "url",
        "code"}
    alarms = [(c, f) for c in legit
              if (f := judged(c.source, c.source_lang, c.target_lang, c.answer)) is not None]
    assert alarms == []
    missed = [c for c in bad
              if judged(c.source, c.source_lang, c.target_lang, c.answer, c.finish) is None]
    assert missed == []
    for case in bad:  # and every retry answer the corpus gives as good is good
        if case.retry:
            assert judged(case.source, case.source_lang, case.target_lang, case.retry) is None, \
                case
