"""The languages of the Hunyuan-MT model card, one row each: everything the package knows of a
language is on its :class:`Language` row.

A row carries the language's names (English, Chinese, its own, and the other names tools' prompts
use), the writing systems an answer in it is written in (which settle detection when no other
language uses them, and which the answer checks expect), its spacing (written without spaces;
closing up after a full-width stop), its length density (the answer budgets), its romanisation,
the codes browsers, DeepL and the extensions send or expect, its direction and the fonts that
show it. Detection (:mod:`hunyuan_webui.detect`), the answer checks, the budgets, segmentation,
the page, the class pages and the protocols read the rows; nothing else lists languages, and
``len(LANGUAGES)`` is how many there are.

Adding a language is one row here plus its detection samples (``tests/data/detect_samples.tsv``);
a writing system no row used before also needs its code points in
:data:`hunyuan_webui.detect.scripts.RANGES`. :func:`using` swaps in another table (the table
with one more row that the tests build).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from hunyuan_webui.errors import UnknownLanguageError

# Writing systems, by the names detect/scripts.py gives their code points.
LATIN, CYRILLIC, ARABIC, DEVANAGARI = "Latin", "Cyrillic", "Arabic", "Devanagari"
HAN, KANA, HANGUL = "Han", "Kana", "Hangul"
THAI, KHMER, MYANMAR, TIBETAN = "Thai", "Khmer", "Myanmar", "Tibetan"
GUJARATI, TELUGU, TAMIL, BENGALI = "Gujarati", "Telugu", "Tamil", "Bengali"
HEBREW, MONGOLIAN, GREEK = "Hebrew", "Mongolian", "Greek"
# Romanisations a learner may show under a translation (hunyuan_webui.romanize).
PINYIN, LETTERS = "pinyin", "letters"

# Font families (CSS) for the scripts beyond Latin, in the order a browser should try them.
CJK_FONTS = ("Noto Sans CJK SC", "PingFang SC", "Microsoft YaHei")
ARABIC_FONTS = ("Noto Naskh Arabic", "Noto Sans Arabic")


@dataclass(frozen=True)
class Language:
    code: str  # the model card's (zh-Hant and yue included)
    english: str
    chinese: str
    autonym: str
    scripts: tuple[str, ...]  # what an answer in it is written in (names and numbers aside)
    rtl: bool = False
    spaceless: bool = False  # no spaces between sentences (and mostly none between words)
    closes_up: bool = False  # full-width stops with nothing after them ("早上好。请坐。")
    density: float = 1.0  # characters per unit of meaning, English = 1 (the answer budgets)
    romanization: str = ""  # PINYIN, LETTERS, or "" where no reading is faithful
    aliases: tuple[str, ...] = ()  # other codes browsers and tools send (zh-CN, fil, iw...)
    names: tuple[str, ...] = ()  # other names tools' prompts use ("Farsi", "简体中文")
    deepl_source: str = ""  # DeepL's source code ("": the code in capitals)
    deepl_targets: tuple[tuple[str, str], ...] = ()  # DeepL's target codes and names ("": ours)
    browser_code: str = ""  # Immersive Translate's and KISS Translator's spelling ("": ours)
    hcfy_name: str = ""  # 划词翻译's name for it ("": the Chinese name)
    fonts: tuple[str, ...] = ()  # font families that show its script, beyond the Latin ones

    @property
    def label(self) -> str:
        """What the pickers show: ``English name · 中文名 · autonym``."""
        return f"{self.english} · {self.chinese} · {self.autonym}"

    @property
    def deepl_source_code(self) -> str:
        return self.deepl_source or self.code.upper()

    @property
    def deepl_target_codes(self) -> tuple[tuple[str, str], ...]:
        return self.deepl_targets or ((self.code.upper(), self.english),)


def _chinese(code: str, english: str, chinese: str, autonym: str, density: float,
             **more: object) -> Language:
    return Language(code, english, chinese, autonym, (HAN,), spaceless=True, closes_up=True,
                    density=density, fonts=CJK_FONTS, **more)  # type: ignore[arg-type]


def _latin(code: str, english: str, chinese: str, autonym: str, **more: object) -> Language:
    return Language(code, english, chinese, autonym, (LATIN,), **more)  # type: ignore[arg-type]


# Order follows the model card.
LANGUAGES: tuple[Language, ...] = (
    _chinese("zh", "Chinese", "中文", "简体中文", 0.35, romanization=PINYIN,
             aliases=("zh-cn", "zh-hans", "zh-sg", "cmn"),
             names=("simplified chinese", "chinese (simplified)", "chinese simplified",
                    "mandarin", "mandarin chinese", "简体中文", "中文（简体）", "汉语"),
             deepl_targets=(("ZH-HANS", "Chinese (simplified)"),), browser_code="zh-CN",
             hcfy_name="中文(简体)"),
    _latin("en", "English", "英语", "English",
           deepl_targets=(("EN-GB", "English (British)"), ("EN-US", "English (American)"))),
    _latin("fr", "French", "法语", "Français"),
    _latin("pt", "Portuguese", "葡萄牙语", "Português", aliases=("pt-br", "pt-pt"),
           deepl_targets=(("PT-BR", "Portuguese (Brazilian)"),
                          ("PT-PT", "Portuguese (European)"))),
    _latin("es", "Spanish", "西班牙语", "Español"),
    Language("ja", "Japanese", "日语", "日本語", (KANA, HAN), spaceless=True, closes_up=True,
             density=0.45, fonts=CJK_FONTS),
    _latin("tr", "Turkish", "土耳其语", "Türkçe"),
    Language("ru", "Russian", "俄语", "Русский", (CYRILLIC,), romanization=LETTERS),
    Language("ar", "Arabic", "阿拉伯语", "العربية", (ARABIC,), rtl=True, fonts=ARABIC_FONTS),
    Language("ko", "Korean", "韩语", "한국어", (HANGUL,), density=0.5),
    Language("th", "Thai", "泰语", "ไทย", (THAI,), spaceless=True, fonts=("Noto Sans Thai",)),
    _latin("it", "Italian", "意大利语", "Italiano"),
    _latin("de", "German", "德语", "Deutsch"),
    _latin("vi", "Vietnamese", "越南语", "Tiếng Việt"),
    _latin("ms", "Malay", "马来语", "Bahasa Melayu"),
    _latin("id", "Indonesian", "印尼语", "Bahasa Indonesia", aliases=("in",)),
    _latin("tl", "Filipino", "菲律宾语", "Filipino", aliases=("fil",), names=("tagalog",)),
    Language("hi", "Hindi", "印地语", "हिन्दी", (DEVANAGARI,), fonts=("Noto Sans Devanagari",)),
    _chinese("zh-Hant", "Traditional Chinese", "繁体中文", "繁體中文", 0.35, romanization=PINYIN,
             aliases=("zh-tw", "zh-hk", "zh-mo", "zt"),
             names=("chinese (traditional)", "chinese traditional", "繁體中文", "中文（繁体）",
                    "中文（繁體）"),
             deepl_source="ZH", deepl_targets=(("ZH-HANT", "Chinese (traditional)"),),
             browser_code="zh-TW", hcfy_name="中文(繁体)"),
    _latin("pl", "Polish", "波兰语", "Polski"),
    _latin("cs", "Czech", "捷克语", "Čeština"),
    _latin("nl", "Dutch", "荷兰语", "Nederlands"),
    Language("km", "Khmer", "高棉语", "ភាសាខ្មែរ", (KHMER,), spaceless=True, density=1.3,
             fonts=("Noto Sans Khmer",)),
    Language("my", "Burmese", "缅甸语", "မြန်မာဘာသာ", (MYANMAR,), spaceless=True, density=1.3,
             names=("myanmar",), fonts=("Noto Sans Myanmar",)),
    Language("fa", "Persian", "波斯语", "فارسی", (ARABIC,), rtl=True, names=("farsi",),
             fonts=ARABIC_FONTS),
    Language("gu", "Gujarati", "古吉拉特语", "ગુજરાતી", (GUJARATI,), density=1.1),
    Language("ur", "Urdu", "乌尔都语", "اردو", (ARABIC,), rtl=True, fonts=ARABIC_FONTS),
    Language("te", "Telugu", "泰卢固语", "తెలుగు", (TELUGU,), density=1.2),
    Language("mr", "Marathi", "马拉地语", "मराठी", (DEVANAGARI,), fonts=("Noto Sans Devanagari",)),
    Language("he", "Hebrew", "希伯来语", "עברית", (HEBREW,), rtl=True, aliases=("iw",)),
    Language("bn", "Bengali", "孟加拉语", "বাংলা", (BENGALI,), density=1.1),
    Language("ta", "Tamil", "泰米尔语", "தமிழ்", (TAMIL,), density=1.3),
    Language("uk", "Ukrainian", "乌克兰语", "Українська", (CYRILLIC,), romanization=LETTERS),
    Language("bo", "Tibetan", "藏语", "བོད་ཡིག", (TIBETAN,), spaceless=True, density=1.3,
             fonts=("Noto Serif Tibetan", "Microsoft Himalaya", "Jomolhari")),
    Language("kk", "Kazakh", "哈萨克语", "Қазақ тілі", (CYRILLIC,), romanization=LETTERS),
    Language("mn", "Mongolian", "蒙古语", "Монгол хэл", (CYRILLIC, MONGOLIAN),
             romanization=LETTERS, fonts=("Noto Sans Mongolian", "Mongolian Baiti")),
    Language("ug", "Uyghur", "维吾尔语", "ئۇيغۇرچە", (ARABIC,), rtl=True, romanization=LETTERS,
             names=("uighur", "uygur"),
             fonts=(*ARABIC_FONTS, "Microsoft Uighur", "UKIJ Tuz")),
    _chinese("yue", "Cantonese", "粤语", "粵語", 0.4, aliases=("zh-yue",),
             names=("cantonese chinese", "广东话", "粤语（广东话）")),
)
AUTO = "auto"


class Table:
    """A table of languages and what is looked up in it (each lookup built once per table)."""

    def __init__(self, rows: Iterable[Language]) -> None:
        self.rows = tuple(rows)
        self.by_code = {lang.code: lang for lang in self.rows}
        self.codes = tuple(self.by_code)
        self._lower = {code.lower(): code for code in self.codes}
        self.aliases = {alias: lang.code for lang in self.rows for alias in lang.aliases}
        self._by_name = {
            **{name.casefold(): lang.code for lang in self.rows
               for name in (lang.english, lang.chinese, lang.autonym)},
            **{name.casefold(): lang.code for lang in self.rows for name in lang.names},
        }

    def normalize(self, code: str) -> str:
        key = code.strip().replace("_", "-").lower()
        if key in self._lower:
            return self._lower[key]
        if key in self.aliases:
            return self.aliases[key]
        raise UnknownLanguageError(code, self.codes)

    def by_name(self, name: str) -> str | None:
        key = name.strip().strip("\"'“”「」").casefold()
        if key in self._by_name:
            return self._by_name[key]
        try:
            return self.normalize(key)
        except UnknownLanguageError:
            return None

    @functools.cached_property
    def spaceless(self) -> frozenset[str]:
        return frozenset(lang.code for lang in self.rows if lang.spaceless)

    @functools.cached_property
    def closed_up(self) -> frozenset[str]:
        return frozenset(lang.code for lang in self.rows if lang.closes_up)

    @functools.cached_property
    def chinese(self) -> frozenset[str]:
        """The Chinese languages (written in Han alone): the model cards' Chinese prompt."""
        return frozenset(lang.code for lang in self.rows if lang.scripts == (HAN,))

    @functools.cached_property
    def script_users(self) -> dict[str, tuple[str, ...]]:
        """Each writing system and the languages written in it, in table order."""
        out: dict[str, list[str]] = {}
        for lang in self.rows:
            for script in lang.scripts:
                out.setdefault(script, []).append(lang.code)
        return {script: tuple(codes) for script, codes in out.items()}

    @functools.cached_property
    def fonts(self) -> tuple[str, ...]:
        """Every row's font families once, in table order."""
        return tuple(dict.fromkeys(font for lang in self.rows for font in lang.fonts))


_TABLE = Table(LANGUAGES)
BY_CODE: dict[str, Language] = _TABLE.by_code
CODES: tuple[str, ...] = _TABLE.codes


def table() -> Table:
    """The table in use (:func:`using` swaps it)."""
    return _TABLE


@contextlib.contextmanager
def using(rows: Iterable[Language]) -> Iterator[Table]:
    """Use another table for a while (a test's table with one more row): every lookup, and
    everything built from the table (detection, the checks, the page's pickers), reads it."""
    global _TABLE, LANGUAGES, BY_CODE, CODES
    saved = _TABLE, LANGUAGES, BY_CODE, CODES
    _TABLE = Table(rows)
    LANGUAGES, BY_CODE, CODES = _TABLE.rows, _TABLE.by_code, _TABLE.codes
    try:
        yield _TABLE
    finally:
        _TABLE, LANGUAGES, BY_CODE, CODES = saved


def normalize_source(code: str) -> str:
    """A source language: ``auto`` (any case or spacing) for detection, else :func:`normalize`."""
    return AUTO if isinstance(code, str) and code.strip().lower() == AUTO else normalize(code)


def normalize(code: str) -> str:
    """The canonical code for ``code`` (case-insensitive, aliases accepted), or raise."""
    return _TABLE.normalize(code)


def get(code: str) -> Language:
    return _TABLE.by_code[normalize(code)]


def is_rtl(code: str) -> bool:
    return get(code).rtl


def is_spaceless(code: str) -> bool:
    """Written without spaces between sentences (and mostly between words)."""
    return normalize(code) in _TABLE.spaceless


def sentence_gap(code: str) -> str:
    """What goes between two sentences of this language: a space, or nothing."""
    return "" if is_spaceless(code) else " "


def is_chinese(code: str) -> bool:
    return code in _TABLE.chinese


# Their sentences end in a full-width stop with nothing after it ("早上好。请坐。"): the space
# between two English sentences is not kept between their translations.
FULL_WIDTH_ENDS = frozenset("。！？；…」』）”’")
HORIZONTAL_SPACE = " \t\u00a0\u3000"  # the spacing between two sentences on one line


def closes_up(code: str, translated: str, gap: str) -> bool:
    """Whether ``gap``, the source's spacing between two sentences, goes from between their
    translations into ``code``: only spaces on one line, after a full-width stop."""
    return (normalize(code) in _TABLE.closed_up and translated[-1:] in FULL_WIDTH_ENDS
            and bool(gap) and not gap.strip(HORIZONTAL_SPACE))


def by_name(name: str) -> str | None:
    """The code for a language *name* as a prompt writes it ("English", "英语", "Simplified
    Chinese", or a code such as "zh-CN"), or None when it is none of ours."""
    return _TABLE.by_name(name)
