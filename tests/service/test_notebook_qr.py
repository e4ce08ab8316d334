"""The notebook's QR code scans as shown, read by a real QR decoder (zxing-cpp).

It was printed light on dark (for a dark terminal) as text, and a notebook draws text with gaps
between the lines: it decoded only after inverting it and setting the line height to 1.0. Now a
notebook shows a PNG image, black on white, and a terminal gets half blocks in explicit black on
white. The decoder never tries the inverted image here (``try_invert=False``), as a plain phone
scanner does not.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path

import pytest

from hunyuan_webui import notebook

URL = "http://192.168.1.23:7860/"
CELL_W, CELL_H = 8, 16  # a terminal's character cell, in pixels (twice as tall as wide)
BLACK, WHITE = 0, 255
# A terminal's own colours: (foreground, background) grey levels.
THEMES = {"light terminal": (30, 250), "dark terminal": (220, 20)}
_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def decode(image) -> list[str]:
    import zxingcpp

    return [code.text for code in zxingcpp.read_barcodes(image, try_invert=False)]


def _apply(params: list[int], colours: tuple[int, int], theme: tuple[int, int]
           ) -> tuple[int, int]:
    """The (foreground, background) after an SGR sequence: a reset goes back to the terminal's
    own colours; 256-colour 16 is black, 231 white; the basic colours, black or white."""
    fg, bg = colours
    i = 0
    while i < len(params):
        code = params[i]
        if code == 0:
            fg, bg = theme
        elif code in (38, 48) and i + 2 < len(params) and params[i + 1] == 5:
            level = {16: BLACK, 231: WHITE}.get(params[i + 2], 128)
            fg, bg = (level, bg) if code == 38 else (fg, level)
            i += 2
        elif 30 <= code <= 37 or 90 <= code <= 97:
            fg = BLACK if code in (30, 90) else WHITE
        elif 40 <= code <= 47 or 100 <= code <= 107:
            bg = BLACK if code in (40, 100) else WHITE
        i += 1
    return fg, bg


def render_terminal(text: str, theme: tuple[int, int]):
    """Draw printed text as a terminal does: each character a cell, half blocks filling half of
    it in the foreground colour, SGR colours honoured, the rest in the terminal's own colours."""
    from PIL import Image

    cells: list[list[tuple[str, int, int]]] = []
    colours = theme
    for line in text.rstrip("\n").split("\n"):
        row: list[tuple[str, int, int]] = []
        for piece in re.split(r"(\x1b\[[0-9;]*m)", line):
            match = _SGR.fullmatch(piece)
            if match:
                params = [int(p) for p in match.group(1).split(";") if p] or [0]
                colours = _apply(params, colours, theme)
            else:
                row.extend((ch, *colours) for ch in piece)
        cells.append(row)
    width = max(len(r) for r in cells) + 4
    image = Image.new("L", (width * CELL_W, (len(cells) + 2) * CELL_H), theme[1])
    half = CELL_H // 2
    for y, row in enumerate(cells, start=1):
        for x, (ch, fg, bg) in enumerate(row, start=2):
            top = fg if ch in "\u2580\u2588" else bg
            bottom = fg if ch in "\u2584\u2588" else bg
            left, upper = x * CELL_W, y * CELL_H
            image.paste(top, (left, upper, left + CELL_W, upper + half))
            image.paste(bottom, (left, upper + half, left + CELL_W, upper + CELL_H))
    return image


@pytest.mark.parametrize("theme", THEMES.values(), ids=THEMES.keys())
def test_the_terminals_qr_code_scans_as_printed(theme):
    printed = notebook.qr_text(URL)
    assert decode(render_terminal(printed, theme)) == [URL]


def test_the_notebooks_qr_image_scans_as_shown():
    from PIL import Image

    shown = notebook.qr_html(URL)
    data = re.search(r'src="data:image/png;base64,([^"]+)"', shown).group(1)
    image = Image.open(io.BytesIO(base64.b64decode(data)))
    assert decode(image) == [URL]
    corner = image.convert("L").getpixel((0, 0))
    assert corner == WHITE  # a quiet zone of white around dark modules


def test_a_terminal_is_shown_the_text_code(capsys):
    """Outside a notebook (no kernel), the code is printed as text; it scans."""
    notebook.show(notebook.Addresses("http://127.0.0.1:7860/", lan=URL))
    printed = capsys.readouterr().out
    assert f"Students on the same network: {URL}" in printed
    code = printed[printed.index("\x1b["):]
    assert decode(render_terminal(code, THEMES["light terminal"])) == [URL]


@pytest.mark.slow
def test_a_notebook_shows_an_image_that_scans_and_no_text_code():
    """In a real kernel (ipykernel via nbclient): the output holds an image that decodes, and no
    text QR code (which a notebook draws with gaps between its lines)."""
    import nbformat
    from nbclient import NotebookClient
    from PIL import Image

    cell = ("from hunyuan_webui import notebook\n"
            f"notebook.show(notebook.Addresses('http://127.0.0.1:7860/', lan={URL!r}))\n")
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    root = Path(__file__).resolve().parents[2]
    NotebookClient(book, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(root)}}).execute()
    outputs = book.cells[0].outputs
    html = "".join(o["data"].get("text/html", "") for o in outputs
                   if o.get("output_type") == "display_data")
    printed = "".join(o.get("text", "") for o in outputs if o.get("output_type") == "stream")
    data = re.search(r'src="data:image/png;base64,([^"]+)"', html).group(1)
    assert decode(Image.open(io.BytesIO(base64.b64decode(data)))) == [URL]
    assert URL in printed
    assert not set(printed) & set("\u2580\u2584\u2588"), printed
