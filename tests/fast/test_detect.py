"""Source-language detection: every language, the hard pairs, junk, and the result's contract."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from hunyuan_webui import detect as detect_module
from hunyuan_webui.detect import NOTHING, Detection, LanguageDetector
from hunyuan_webui.languages import CODES

SAMPLES_PATH = Path(__file__).resolve().parents[1] / "data" / "detect_samples.tsv"


def _load_samples() -> list[tuple[str, str]]:
    rows = []
    for line in SAMPLES_PATH.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            code, sentence = line.split("\t", 1)
            rows.append((code, sentence))
    return rows


SAMPLES = _load_samples()

# Phrases of two or three words that no detector tried gets right (see
# docs/LANGUAGE_DETECTION.md): nothing in them tells these languages apart ("Де туалет?" differs
# from Russian by one letter that Russian also has). They must at least come back unreliable, so
# that the UI asks the user.
KNOWN_MISSES = {
    ("it", "A domani."),
    ("uk", "Де туалет?"),
    ("uk", "Я голодний."),
}


@pytest.fixture(scope="module")
def detector() -> LanguageDetector:
    return LanguageDetector().warm_up()


def _check_contract(result: Detection) -> None:
    assert isinstance(result, Detection)
    assert result.code is None or result.code in CODES
    assert 0.0 <= result.confidence <= 1.0
    assert len(result.candidates) <= 3
    for code, confidence in result.candidates:
        assert code in CODES
        assert 0.0 <= confidence <= 1.0
    confidences = [c for _, c in result.candidates]
    assert confidences == sorted(confidences, reverse=True)
    if result.code is None:
        assert result == NOTHING
    else:
        assert result.candidates[0] == (result.code, result.confidence)
    if result.reliable:
        assert result.code is not None


# --- the sample set ----------------------------------------------------------------------------


def test_samples_cover_every_language_three_times() -> None:
    counts = {code: 0 for code in CODES}
    for code, _ in SAMPLES:
        assert code in counts, f"unknown code {code!r} in {SAMPLES_PATH.name}"
        counts[code] += 1
    assert {code: n for code, n in counts.items() if n < 3} == {}
    assert len(set(SAMPLES)) == len(SAMPLES), "duplicate sample"
    assert set(SAMPLES) >= KNOWN_MISSES


@pytest.mark.parametrize(("code", "sentence"), [s for s in SAMPLES if s not in KNOWN_MISSES],
                         ids=lambda value: value if value in CODES else "")
def test_sample_is_detected(detector: LanguageDetector, code: str, sentence: str) -> None:
    result = detector.detect(sentence)
    _check_contract(result)
    assert result.code == code, f"{sentence!r}: {result}"


@pytest.mark.parametrize(("code", "sentence"), sorted(KNOWN_MISSES))
def test_known_misses_are_not_reliable(detector: LanguageDetector, code: str,
                                       sentence: str) -> None:
    result = detector.detect(sentence)
    _check_contract(result)
    assert result.code in CODES
    assert not result.reliable, result


def test_accuracy_and_reliability_over_the_whole_set(detector: LanguageDetector) -> None:
    results = [(code, detector.detect(sentence)) for code, sentence in SAMPLES]
    right = sum(r.code == code for code, r in results)
    assert right / len(results) >= 0.98
    # A wrong answer that claims to be reliable would translate from the wrong language silently.
    assert [(code, r) for code, r in results if r.reliable and r.code != code] == []
    # ...and most right answers are reliable, so the threshold is not simply too high.
    reliable_right = sum(r.reliable and r.code == code for code, r in results)
    assert reliable_right / len(results) >= 0.85  # 0.915 measured


# --- the hard pairs ----------------------------------------------------------------------------

HARD_CASES = [
    # Simplified vs Traditional Mandarin vs Cantonese (written in Traditional characters).
    ("zh", "我们明天一起去图书馆学习吧。"),
    ("zh-Hant", "我們明天一起去圖書館學習吧。"),
    ("yue", "我哋聽日一齊去圖書館溫書啦。"),
    ("yue", "佢今日冇返工，因為佢病咗。"),
    ("zh-Hant", "他們之間的關係很好。"),  # 關係 is Mandarin, not Cantonese 係
    ("yue", "佢系我嘅朋友"),  # Cantonese in Simplified characters still has 佢 and 嘅
    # Uyghur vs Arabic vs Persian vs Urdu.
    ("ug", "ئۇيغۇر تىلى ناھايىتى چىرايلىق تىل."),
    ("ug", "قورسىقىم ئاچتى."),  # no Uyghur-only letter; medial ى and initial ئ give it away
    ("ar", "اللغة العربية لغة جميلة جدا."),
    ("fa", "زبان فارسی زبان بسیار زیبایی است."),
    ("ur", "اردو ایک بہت خوبصورت زبان ہے۔"),
    # Malay vs Indonesian.
    ("ms", "Saya tak faham apa yang awak cakap."),
    ("id", "Saya tidak mengerti apa yang kamu katakan."),
    ("ms", "Kereta saya rosak, jadi saya naik bas ke pejabat."),
    ("id", "Mobil saya rusak, jadi saya naik bus ke kantor."),
    # Cyrillic: Mongolian vs Kazakh vs Russian vs Ukrainian.
    ("mn", "Монгол хэл бол маш сайхан хэл юм."),
    ("kk", "Қазақ тілі өте әдемі тіл."),
    ("ru", "Русский язык очень красивый."),
    ("uk", "Українська мова дуже гарна."),
    ("mn", "Их баярлалаа."),
    ("kk", "Мен ашпын."),  # none of Kazakh's own letters, still Kazakh
    ("ru", "Где туалет?"),
    # Hindi vs Marathi.
    ("hi", "मेरा नाम राम है और मैं दिल्ली में रहता हूँ।"),
    ("mr", "माझे नाव राम आहे आणि मी पुण्यात राहतो."),
    # Scripts of their own.
    ("bo", "བོད་ཀྱི་སྐད་ཡིག་ནི་ཧ་ཅང་ཡག་པོ་རེད།"),
    ("mn", "ᠮᠣᠩᠭᠣᠯ ᠬᠡᠯᠡ"),  # traditional Mongolian script
    ("km", "ភាសាខ្មែរ"),
    ("my", "မြန်မာဘာသာ"),
]


@pytest.mark.parametrize(("code", "sentence"), HARD_CASES)
def test_hard_pairs(detector: LanguageDetector, code: str, sentence: str) -> None:
    result = detector.detect(sentence)
    _check_contract(result)
    assert result.code == code, f"{sentence!r}: {result}"


def test_autonyms(detector: LanguageDetector) -> None:
    """Each language's own name, from the language table: one or two words."""
    from hunyuan_webui.languages import LANGUAGES

    # 日本語 is all kanji and 粵語 has no Cantonese-only character: both are also good
    # Traditional Chinese. "Français" and "اردو" are single words that Portuguese and Persian
    # share letters with: those two must at least not claim to be reliable.
    for lang in LANGUAGES:
        result = detector.detect(lang.autonym)
        _check_contract(result)
        if lang.code in {"ja", "yue"}:
            assert result.code == "zh-Hant", (lang.autonym, result)
        elif lang.code in {"fr", "ur"}:
            assert not result.reliable, (lang.autonym, result)
        else:
            assert result.code == lang.code, (lang.autonym, result)


def test_cantonese_mixed_with_mandarin_offers_both(detector: LanguageDetector) -> None:
    result = detector.detect("我唔知道他是誰")  # 唔知 is Cantonese, 他是誰 Mandarin
    assert {c for c, _ in result.candidates} >= {"yue", "zh-Hant"}
    false_friend = detector.detect("我們明天八點會議")  # 點會 looks Cantonese, 們 is Mandarin
    assert false_friend.code == "zh-Hant"


def test_shared_characters_lean_simplified_without_certainty(detector: LanguageDetector) -> None:
    result = detector.detect("你好")  # the same in both systems
    assert result.code == "zh"
    assert {c for c, _ in result.candidates} >= {"zh", "zh-Hant"}
    assert not result.reliable  # too short


def test_mixed_scripts(detector: LanguageDetector) -> None:
    assert detector.detect("我用iPhone拍照，效果很好。").code == "zh"
    assert detector.detect("東京タワーに行きました。").code == "ja"
    assert detector.detect("这是我の新朋友，我们明天一起去上学吧。").code == "zh"  # a lone の
    assert detector.detect("の").code == "ja"
    assert detector.detect("오늘 Google 회의가 있어요.").code == "ko"
    english = detector.detect("The word for peace is 和平 in Chinese, as far as I know.")
    assert english.code == "en"
    assert english.confidence < 1.0  # the Han characters take their share


def test_addresses_are_ignored(detector: LanguageDetector) -> None:
    assert detector.detect("https://example.com/a/b?c=d") == NOTHING
    assert detector.detect("info@example.org") == NOTHING
    result = detector.detect("Bitte schreiben Sie an info@example.org oder besuchen Sie "
                             "https://www.example.org/kontakt")
    assert result.code == "de"


# --- junk ---------------------------------------------------------------------------------------


def _random_bytes(n: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return bytes(rng.randrange(256) for _ in range(n))


JUNK = [
    "", " ", "   \n\t  ", "\u3000", "12345", "3.14 + 2 = 5.14", "2024-06-01 12:00:00",
    "😀🎉👍", "👍🏽❤️🔥", "1️⃣2️⃣3️⃣", "!!!???...", "----", "(+86) 010-1234-5678", "∑∫√π≈",
    "\x00\x01\x02\x03", "\x00\x01abc", "\ufffd\ufffd\ufffd", "\ue000\ue001\ue002",
    _random_bytes(300, 1).decode("latin-1"),
    _random_bytes(300, 2).decode("utf-8", "replace"),
    _random_bytes(300, 3).decode("utf-8", "surrogateescape"),
    _random_bytes(300, 4).decode("cp1252", "replace"),
]


@pytest.mark.parametrize("text", JUNK, ids=range(len(JUNK)))
def test_junk_is_nothing(detector: LanguageDetector, text: str) -> None:
    result = detector.detect(text)
    assert result.code is None
    assert result.confidence == 0.0
    assert result.reliable is False
    assert result.candidates == ()


def test_scripts_none_of_our_languages_use(detector: LanguageDetector) -> None:
    for text in ("Καλημέρα σε όλους", "Բարի լույս", "გამარჯობა", "ສະບາຍດີ", "ನಮಸ್ಕಾರ"):
        assert detector.detect(text) == NOTHING, text


def test_not_a_string_is_a_type_error(detector: LanguageDetector) -> None:
    with pytest.raises(TypeError):
        detector.detect(b"hello")  # type: ignore[arg-type]


# --- the contract -------------------------------------------------------------------------------


def _random_texts(n: int, seed: int = 7) -> list[str]:
    """Random strings drawn from our scripts, other scripts, digits, emoji and controls."""
    rng = random.Random(seed)
    pools = [(0x20, 0x7E), (0xA0, 0x24F), (0x400, 0x4FF), (0x600, 0x6FF), (0x900, 0x97F),
             (0xE00, 0xE7F), (0xF00, 0xFFF), (0x1780, 0x17FF), (0x3040, 0x30FF),
             (0x4E00, 0x9FFF), (0xAC00, 0xD7A3), (0x1F300, 0x1F64F), (0x0, 0x1F), (0x370, 0x3FF)]
    texts = []
    for _ in range(n):
        chosen = rng.sample(pools, rng.randint(1, 3))
        length = rng.randint(0, 60)
        texts.append("".join(chr(rng.randint(*rng.choice(chosen))) for _ in range(length)))
    return texts


def test_contract_holds_on_random_text(detector: LanguageDetector) -> None:
    for text in _random_texts(1500):
        _check_contract(detector.detect(text))


def test_reliable_needs_length_and_threshold() -> None:
    strict = LanguageDetector(threshold=1.0)
    lenient = LanguageDetector(threshold=0.0)
    sentence = "Le chat dort sur le canapé depuis ce matin."
    assert lenient.detect(sentence).reliable
    assert not strict.detect(sentence).reliable or strict.detect(sentence).confidence == 1.0
    assert not lenient.detect("Hi").reliable  # too short whatever the threshold
    assert not lenient.detect("Bonjour").reliable
    assert lenient.detect("ไทย").reliable  # a script of its own: one word is enough
    assert lenient.detect("这个").reliable  # 这 is Simplified only
    with pytest.raises(ValueError):
        LanguageDetector(threshold=1.5)


def test_single_script_languages_are_certain(detector: LanguageDetector) -> None:
    result = detector.detect("ฉันอ่านหนังสือเล่มนี้จบแล้ว")
    assert result == Detection("th", 1.0, True, (("th", 1.0),))


def test_thread_safe_lazy_build(detector: LanguageDetector) -> None:
    fresh = LanguageDetector()  # not built yet: the eight threads race to build it
    sentences = [s for _, s in SAMPLES[::7]]
    expected = [detector.detect(s) for s in sentences]
    outcomes: list[list[Detection]] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            outcomes.append([fresh.detect(s) for s in sentences])
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert outcomes == [expected] * 8


def test_fast_for_short_sentences(detector: LanguageDetector) -> None:
    sentences = [s for _, s in SAMPLES]
    for s in sentences:
        detector.detect(s)
    start = time.perf_counter()
    for s in sentences:
        detector.detect(s)
    mean_ms = (time.perf_counter() - start) / len(sentences) * 1000
    assert mean_ms < 5.0  # about 0.1 ms measured; generous for a loaded CI machine


def test_long_text_is_bounded(detector: LanguageDetector) -> None:
    text = "Ceci est une phrase française assez ordinaire. " * 5000  # ~240 000 characters
    start = time.perf_counter()
    result = detector.detect(text)
    assert time.perf_counter() - start < 0.5
    assert result.code == "fr" and result.reliable


def test_module_shortcut_uses_one_shared_detector() -> None:
    assert detect_module.default_detector() is detect_module.default_detector()
    assert detect_module.detect("Dzień dobry, jak się masz?").code == "pl"
