"""The package keeps its shape: no import cycle, no function over 60 lines, no module over 400
(``scripts/check_structure.py``; a maintainer reads it to see what to split)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import check_structure  # noqa: E402


def test_the_checker_finds_a_cycle_and_a_long_function(tmp_path):
    package = tmp_path / "hunyuan_webui"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from hunyuan_webui import b\n")
    (package / "b.py").write_text("from hunyuan_webui.a import x\n\n\ndef long():\n" +
                                  "    pass\n" * 61)
    found = check_structure.problems(tmp_path)
    assert "import cycle: hunyuan_webui.a <-> hunyuan_webui.b" in found
    assert any("long() is 62 lines" in p for p in found)


def test_the_package_has_no_cycle_and_no_long_unit():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_structure.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout
