"""The 38 languages of the Hunyuan-MT model card, as one table.

Prompts, the UI pickers, language detection and the HTTP API all read this table; nothing else in
the package lists languages. Codes are the model card's (``zh-Hant`` and ``yue`` included); a small
alias map accepts the spellings other tools send (``zh-CN``, ``zh-TW``, ``fil``, ``iw``...).
"""

from __future__ import annotations

from dataclasses import dataclass

from hunyuan_webui.errors import UnknownLanguageError


@dataclass(frozen=True)
class Language:
    code: str
    english: str
    chinese: str
    autonym: str
    rtl: bool = False

    @property
    def label(self) -> str:
        """What the pickers show: ``English name · 中文名 · autonym``."""
        return f"{self.english} · {self.chinese} · {self.autonym}"


CHINESE_CODES = frozenset({"zh", "zh-Hant", "yue"})

# Order follows the model card.
LANGUAGES: tuple[Language, ...] = (
    Language("zh", "Chinese", "中文", "简体中文"),
    Language("en", "English", "英语", "English"),
    Language("fr", "French", "法语", "Français"),
    Language("pt", "Portuguese", "葡萄牙语", "Português"),
    Language("es", "Spanish", "西班牙语", "Español"),
    Language("ja", "Japanese", "日语", "日本語"),
    Language("tr", "Turkish", "土耳其语", "Türkçe"),
    Language("ru", "Russian", "俄语", "Русский"),
    Language("ar", "Arabic", "阿拉伯语", "العربية", rtl=True),
    Language("ko", "Korean", "韩语", "한국어"),
    Language("th", "Thai", "泰语", "ไทย"),
    Language("it", "Italian", "意大利语", "Italiano"),
    Language("de", "German", "德语", "Deutsch"),
    Language("vi", "Vietnamese", "越南语", "Tiếng Việt"),
    Language("ms", "Malay", "马来语", "Bahasa Melayu"),
    Language("id", "Indonesian", "印尼语", "Bahasa Indonesia"),
    Language("tl", "Filipino", "菲律宾语", "Filipino"),
    Language("hi", "Hindi", "印地语", "हिन्दी"),
    Language("zh-Hant", "Traditional Chinese", "繁体中文", "繁體中文"),
    Language("pl", "Polish", "波兰语", "Polski"),
    Language("cs", "Czech", "捷克语", "Čeština"),
    Language("nl", "Dutch", "荷兰语", "Nederlands"),
    Language("km", "Khmer", "高棉语", "ភាសាខ្មែរ"),
    Language("my", "Burmese", "缅甸语", "မြန်မာဘာသာ"),
    Language("fa", "Persian", "波斯语", "فارسی", rtl=True),
    Language("gu", "Gujarati", "古吉拉特语", "ગુજરાતી"),
    Language("ur", "Urdu", "乌尔都语", "اردو", rtl=True),
    Language("te", "Telugu", "泰卢固语", "తెలుగు"),
    Language("mr", "Marathi", "马拉地语", "मराठी"),
    Language("he", "Hebrew", "希伯来语", "עברית", rtl=True),
    Language("bn", "Bengali", "孟加拉语", "বাংলা"),
    Language("ta", "Tamil", "泰米尔语", "தமிழ்"),
    Language("uk", "Ukrainian", "乌克兰语", "Українська"),
    Language("bo", "Tibetan", "藏语", "བོད་ཡིག"),
    Language("kk", "Kazakh", "哈萨克语", "Қазақ тілі"),
    Language("mn", "Mongolian", "蒙古语", "Монгол хэл"),
    Language("ug", "Uyghur", "维吾尔语", "ئۇيغۇرچە", rtl=True),
    Language("yue", "Cantonese", "粤语", "粵語"),
)

BY_CODE: dict[str, Language] = {lang.code: lang for lang in LANGUAGES}
CODES: tuple[str, ...] = tuple(BY_CODE)
AUTO = "auto"

# Spellings other tools use for the same languages (BCP 47 variants, LibreTranslate, old ISO codes).
ALIASES: dict[str, str] = {
    "zh-cn": "zh", "zh-hans": "zh", "zh-sg": "zh", "cmn": "zh",
    "zh-tw": "zh-Hant", "zh-hk": "zh-Hant", "zh-mo": "zh-Hant", "zt": "zh-Hant",
    "zh-yue": "yue", "fil": "tl", "iw": "he", "in": "id", "pt-br": "pt", "pt-pt": "pt",
}
_LOWER = {code.lower(): code for code in CODES}


def normalize_source(code: str) -> str:
    """A source language: ``auto`` (any case or spacing) for detection, else :func:`normalize`."""
    return AUTO if isinstance(code, str) and code.strip().lower() == AUTO else normalize(code)


def normalize(code: str) -> str:
    """The canonical code for ``code`` (case-insensitive, aliases accepted), or raise."""
    key = code.strip().replace("_", "-").lower()
    if key in _LOWER:
        return _LOWER[key]
    if key in ALIASES:
        return ALIASES[key]
    raise UnknownLanguageError(code, CODES)


def get(code: str) -> Language:
    return BY_CODE[normalize(code)]


def is_rtl(code: str) -> bool:
    return get(code).rtl


# Written without spaces between sentences (and mostly between words).
UNSPACED = frozenset({"zh", "zh-Hant", "yue", "ja", "th", "km", "my", "bo"})


def sentence_gap(code: str) -> str:
    """What goes between two sentences of this language: a space, or nothing."""
    return "" if normalize(code) in UNSPACED else " "


# Their sentences end in a full-width stop with nothing after it ("早上好。请坐。"): the space
# between two English sentences is not kept between their translations.
CLOSED_UP = frozenset({"zh", "zh-Hant", "yue", "ja"})
FULL_WIDTH_ENDS = frozenset("。！？；…」』）”’")
HORIZONTAL_SPACE = " \t\u00a0\u3000"  # the spacing between two sentences on one line


def closes_up(code: str, translated: str, gap: str) -> bool:
    """Whether ``gap``, the source's spacing between two sentences, goes from between their
    translations into ``code``: only spaces on one line, after a full-width stop."""
    return (normalize(code) in CLOSED_UP and translated[-1:] in FULL_WIDTH_ENDS
            and bool(gap) and not gap.strip(HORIZONTAL_SPACE))


# Names other tools put in prompts for the same languages (their "{{to}}" placeholders), besides
# the table's own English names, Chinese names, autonyms and codes.
NAME_ALIASES: dict[str, str] = {
    "simplified chinese": "zh", "chinese (simplified)": "zh", "chinese simplified": "zh",
    "mandarin": "zh", "mandarin chinese": "zh", "简体中文": "zh", "中文（简体）": "zh",
    "汉语": "zh", "chinese (traditional)": "zh-Hant", "chinese traditional": "zh-Hant",
    "繁體中文": "zh-Hant", "中文（繁体）": "zh-Hant", "中文（繁體）": "zh-Hant",
    "tagalog": "tl", "myanmar": "my", "farsi": "fa", "uighur": "ug", "uygur": "ug",
    "cantonese chinese": "yue", "广东话": "yue", "粤语（广东话）": "yue",
}
_BY_NAME: dict[str, str] = {
    **{name.casefold(): lang.code for lang in LANGUAGES
       for name in (lang.english, lang.chinese, lang.autonym)},
    **NAME_ALIASES,
}


def by_name(name: str) -> str | None:
    """The code for a language *name* as a prompt writes it ("English", "英语", "Simplified
    Chinese", or a code such as "zh-CN"), or None when it is none of ours."""
    key = name.strip().strip("\"'“”「」").casefold()
    if key in _BY_NAME:
        return _BY_NAME[key]
    try:
        return normalize(key)
    except UnknownLanguageError:
        return None
