"""Fonts the server lends to browsers that lack them, for the page and the class pages alike:
Tibetan, Mongolian and the Arabic script (Uyghur).

Windows, macOS and Android have fonts for these scripts; a fresh Linux browser (a classroom's
Chromebooks, a kiosk) often does not, and shows Tibetan or Uyghur examples as rows of boxes. When
the server has Debian's ``fonts-noto-core`` (or the same files elsewhere under the font folders
below), the page's CSS gets an ``@font-face`` per script: the font installed in the browser first
(``local()``), else the server's copy, fetched only when the text holds a character of that script
(``unicode-range``). ``/fonts/<name>.ttf`` serves the files of :data:`WEB_FONTS` and nothing else:
an allow-list of file names, never a path from the request.

CJK is left to the browser: every desktop and phone system has a CJK font, and Noto's CJK files
are 20 MB collections that browsers cannot take as web fonts.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from fastapi import APIRouter, HTTPException
from fastapi.responses import FileResponse

FONT_DIRS = (Path("/usr/share/fonts"), Path("/usr/local/share/fonts"))
CACHE_FOR_S = 7 * 24 * 3600  # fonts do not change while a server runs


@dataclass(frozen=True)
class WebFont:
    name: str  # in the URL: /fonts/<name>.ttf
    family: str  # the CSS family the page's font stack names
    files: tuple[str, ...]  # file names to look for, the first found is served
    local: tuple[str, ...]  # the same fonts as a browser may have them installed
    unicode_range: str

    @property
    def route(self) -> str:
        return f"/fonts/{self.name}.ttf"


WEB_FONTS = (
    WebFont("tibetan", "HYMT Tibetan", ("NotoSerifTibetan-Regular.ttf", "NotoSansTibetan-Regular.ttf"),
            ("Noto Serif Tibetan", "Noto Sans Tibetan"), "U+0F00-0FFF"),
    WebFont("mongolian", "HYMT Mongolian", ("NotoSansMongolian-Regular.ttf",),
            ("Noto Sans Mongolian",), "U+1800-18AF, U+11660-1167F, U+202F"),
    WebFont("arabic", "HYMT Arabic", ("NotoNaskhArabic-Regular.ttf", "NotoSansArabic-Regular.ttf"),
            ("Noto Naskh Arabic", "Noto Sans Arabic"),
            "U+0600-06FF, U+0750-077F, U+08A0-08FF, U+FB50-FDFF, U+FE70-FEFF"),
)
FONT_ROUTES = frozenset(font.route for font in WEB_FONTS)
FAMILIES = tuple(f'"{font.family}"' for font in WEB_FONTS)


@functools.cache
def installed(dirs: tuple[Path, ...] = FONT_DIRS) -> dict[str, Path]:
    """The web fonts this server can lend, by name: the first of each font's files found under
    ``dirs`` (looked up once)."""
    wanted = {file for font in WEB_FONTS for file in font.files}
    found: dict[str, Path] = {}
    for folder in dirs:
        if folder.is_dir():
            for path in folder.rglob("*.ttf"):
                if path.name in wanted and path.is_file():
                    found.setdefault(path.name, path)
    return {font.name: found[file] for font in WEB_FONTS
            for file in [next((f for f in font.files if f in found), None)] if file}


def face_css(fonts: Iterable[str]) -> str:
    """``@font-face`` rules for the named fonts; their URLs are relative to the page, so they hold
    under ``--root-path`` and behind a proxy."""
    rules = []
    for font in WEB_FONTS:
        if font.name not in fonts:
            continue
        local = ", ".join(f'local("{name}")' for name in font.local)
        rules.append(f'@font-face {{ font-family: "{font.family}"; '
                     f'src: {local}, url("fonts/{font.name}.ttf") format("truetype"); '
                     f"unicode-range: {font.unicode_range}; font-display: swap; }}")
    return "\n".join(rules)


def create_router(fonts: dict[str, Path]) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    @router.get("/fonts/{name}.ttf")
    def font(name: str) -> FileResponse:
        path = fonts.get(name)
        if path is None:  # only a name of the allow-list that this server has
            raise HTTPException(status_code=404, detail="No such font here.")
        return FileResponse(path, media_type="font/ttf",
                            headers={"Cache-Control": f"public, max-age={CACHE_FOR_S}"})

    return router
