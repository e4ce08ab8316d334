"""The README's Jupyter cells, run in a real kernel (nbclient + ipykernel) as a teacher runs them.

The launch cell returns once the demo model is ready and its output holds a link to click; the
stop cell stops the server. The cells are read from the README, so the README cannot drift from
what works.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

from hunyuan_webui.urls import free_port

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow


def readme_cells() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### In Jupyter or JupyterHub"):]
    section = section[:section.index("\n### ", 5)]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_the_readme_jupyter_cells_start_link_and_stop(demo_dir, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    port = free_port()
    cells = readme_cells()
    assert len(cells) >= 2 and "port=7860" in cells[0]
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell(cell.replace("7860", str(port))) for cell in cells])
    # launch.sh runs the app with this interpreter's environment, not a fresh .venv.
    monkeypatch.setenv("HYMT_VENV", sys.prefix)
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    finally:
        os.system(f"cd {ROOT} && bash launch.sh stop >/dev/null 2>&1")
    start, stop = notebook.cells[0].outputs, notebook.cells[-1].outputs
    html = [o["data"]["text/html"] for o in start if o.get("output_type") == "display_data"
            and "text/html" in o.get("data", {})]
    assert any(f'href="http://127.0.0.1:{port}/"' in h for h in html), start
    printed = "".join(o.get("text", "") for o in start if o.get("output_type") == "stream")
    assert "translator ready" in printed
    assert "stopped the server" in "".join(o.get("text", "") for o in stop)


def test_a_class_started_in_a_notebook_shows_progress_and_its_qr_code_opens_the_class(
        demo_dir, monkeypatch):
    """The start cell was silent for 45 s, and its QR code opened the translator's / even with
    --class: now a line says how long it has taken (updated in place), and the QR code holds the
    class's own address, beside a link to the teacher's page."""
    import base64
    import io

    import nbformat
    import zxingcpp
    from nbclient import NotebookClient
    from PIL import Image

    port = free_port()
    cell = ("from hunyuan_webui import notebook\n"
            f"notebook.start('--class=en', demo=True, port={port})")
    book = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell)])
    monkeypatch.setenv("HYMT_VENV", sys.prefix)
    monkeypatch.delenv("JUPYTERHUB_SERVICE_PREFIX", raising=False)
    client = NotebookClient(book, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}})
    try:
        client.execute()
    finally:
        os.system(f"cd {ROOT} && bash launch.sh stop >/dev/null 2>&1")
    outputs = book.cells[0].outputs
    html = [o["data"]["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert any(re.fullmatch(r"<code>Started in \d+ s\.</code>", h) for h in html), html  # progress
    page = next(h for h in html if "Open the translator" in h)
    code = re.search(rf'href="http://127\.0\.0\.1:{port}/class/teach/(\d{{6}})#key=', page)
    assert code, page
    room = f"http://127.0.0.1:{port}/class/{code.group(1)}"
    assert f"Students join the class at: <code>{room}</code>" in page
    png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', page).group(1))
    assert [c.text for c in zxingcpp.read_barcodes(Image.open(io.BytesIO(png)))] == [room]
