"""The README stays true: its configuration and model tables are the ones generated from Settings
and the registry, and the quick start has exactly the two commands."""

from __future__ import annotations

import re
from pathlib import Path

from hunyuan_webui import models
from hunyuan_webui.settings import markdown_table

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_configuration_table_matches_the_settings():
    assert markdown_table() in README, "regenerate with: python scripts/update_readme.py"


def test_model_table_matches_the_registry():
    assert models.markdown_table() in README, "regenerate with: python scripts/update_readme.py"
    for spec in models.REGISTRY.values():
        assert f"| `{spec.id}` |" in README


def test_quick_start_has_exactly_the_two_commands():
    section = README.split("## Quick start", 1)[1].split("###", 1)[0]
    block = re.search(r"```bash\n(.*?)```", section, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]
    assert commands == ["bash launch.sh", "bash launch.sh test"]
