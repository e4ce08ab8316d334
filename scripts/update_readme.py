"""Regenerate the README's configuration table from hunyuan_webui.settings (run after adding a flag)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from hunyuan_webui.settings import markdown_table  # noqa: E402

README = ROOT / "README.md"
text = README.read_text(encoding="utf-8")
start = text.index("| flag | environment | default | meaning |")
end = text.index("\n\n", start)
README.write_text(text[:start] + markdown_table() + text[end:], encoding="utf-8")
print("README.md configuration table updated")
