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
