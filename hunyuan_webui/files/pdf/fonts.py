"""Which font draws a target language's script in a translated PDF, from Debian's Noto fonts.

Every script the model translates into has a font here; the font is embedded as a subset (only
the glyphs drawn). A server without the font says which Debian package to install, before the
document is translated.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hunyuan_webui.errors import InputError

NOTO = os.environ.get("HUNYUAN_NOTO_DIR", "/usr/share/fonts")
_CORE = "truetype/noto/"
_CJK = "opentype/noto/NotoSansCJK-Regular.ttc"


@dataclass(frozen=True)
class Font:
    path: str  # relative to NOTO
    package: str  # the Debian package that installs it
    index: int = 0  # the face in a collection (.ttc)
    rtl: bool = False

    @property
    def shaped(self) -> bool:
        """Whether the script needs HarfBuzz's shaping (joined letters, reordered marks, right
        to left): not Latin, Cyrillic, Greek or CJK, whose glyphs stand one per character
        (shaping them costs fpdf2 most of a page's time and changes nothing a reader sees)."""
        return self.path not in (_CORE + "NotoSans-Regular.ttf", _CJK)

    @property
    def file(self) -> str:
        return os.path.join(NOTO, self.path)


LATIN = Font(_CORE + "NotoSans-Regular.ttf", "fonts-noto-core")
# Faces of NotoSansCJK-Regular.ttc: 0 JP, 1 KR, 2 SC, 3 TC, 4 HK.
_BY_LANG = {
    "zh": Font(_CJK, "fonts-noto-cjk", 2), "yue": Font(_CJK, "fonts-noto-cjk", 4),
    "zh-Hant": Font(_CJK, "fonts-noto-cjk", 3), "ja": Font(_CJK, "fonts-noto-cjk", 0),
    "ko": Font(_CJK, "fonts-noto-cjk", 1),
    "ar": Font(_CORE + "NotoSansArabic-Regular.ttf", "fonts-noto-core", rtl=True),
    "fa": Font(_CORE + "NotoSansArabic-Regular.ttf", "fonts-noto-core", rtl=True),
    "ur": Font(_CORE + "NotoSansArabic-Regular.ttf", "fonts-noto-core", rtl=True),
    "ug": Font(_CORE + "NotoSansArabic-Regular.ttf", "fonts-noto-core", rtl=True),
    "he": Font(_CORE + "NotoSansHebrew-Regular.ttf", "fonts-noto-core", rtl=True),
    "hi": Font(_CORE + "NotoSansDevanagari-Regular.ttf", "fonts-noto-core"),
    "mr": Font(_CORE + "NotoSansDevanagari-Regular.ttf", "fonts-noto-core"),
    "bn": Font(_CORE + "NotoSansBengali-Regular.ttf", "fonts-noto-core"),
    "gu": Font(_CORE + "NotoSansGujarati-Regular.ttf", "fonts-noto-core"),
    "ta": Font(_CORE + "NotoSansTamil-Regular.ttf", "fonts-noto-core"),
    "te": Font(_CORE + "NotoSansTelugu-Regular.ttf", "fonts-noto-core"),
    "th": Font(_CORE + "NotoSansThai-Regular.ttf", "fonts-noto-core"),
    "km": Font(_CORE + "NotoSansKhmer-Regular.ttf", "fonts-noto-core"),
    "my": Font(_CORE + "NotoSansMyanmar-Regular.ttf", "fonts-noto-core"),
    "bo": Font(_CORE + "NotoSerifTibetan-Regular.ttf", "fonts-noto-core"),
}


def for_language(lang: str | None) -> Font:
    """The font for ``lang`` (Latin, Cyrillic, Greek and Vietnamese: Noto Sans), checked to be
    on this server."""
    font = _BY_LANG.get(lang or "", LATIN)
    for needed in (font, LATIN):
        if not os.path.isfile(needed.file):
            raise InputError(
                f"This server has no font to write {lang or 'this language'} into a PDF "
                f"({needed.file} is missing). The server's administrator can install the "
                f"Debian package {needed.package} (apt-get install {needed.package}).")
    return font


# Where a text's script begins: the language whose font draws it (kana before Han: Japanese
# writes both; Hangul before Han too).
_SCRIPTS = (("ja", 0x3040, 0x30FF), ("ko", 0xAC00, 0xD7AF), ("zh", 0x4E00, 0x9FFF),
            ("ar", 0x0600, 0x06FF), ("he", 0x0590, 0x05FF), ("hi", 0x0900, 0x097F),
            ("bn", 0x0980, 0x09FF), ("gu", 0x0A80, 0x0AFF), ("ta", 0x0B80, 0x0BFF),
            ("te", 0x0C00, 0x0C7F), ("th", 0x0E00, 0x0E7F), ("km", 0x1780, 0x17FF),
            ("my", 0x1000, 0x109F), ("bo", 0x0F00, 0x0FFF))


def for_text(text: str, lang: str | None = None) -> Font:
    """The font that draws ``text``: its language's when known (``lang``), else the first script
    of :data:`_SCRIPTS` it holds (a PDF's own text, whose language was not given), else Latin."""
    if lang and lang in _BY_LANG:
        return for_language(lang)
    for script, low, high in _SCRIPTS:
        if any(low <= ord(ch) <= high for ch in text):
            return for_language(script)
    return for_language(None)
