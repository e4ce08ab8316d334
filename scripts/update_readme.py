"""Regenerate the README's generated tables and docs/flags.txt (``bash launch.sh --help``): run
after adding a flag, a model or a launch rule.

Each table is found by its header row and replaced up to the next blank line.
"""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from hunyuan_webui import choice, cli_help, models, settings  # noqa: E402

README = ROOT / "README.md"
TABLES = [settings.markdown_table(), models.markdown_table(), choice.markdown_table()]


def replace_table(text: str, table: str) -> str:
    header = table.split("\n", 1)[0]
    start = text.index(header)
    end = text.index("\n\n", start)
    return text[:start] + table + text[end:]


text = README.read_text(encoding="utf-8")
for table in TABLES:
    text = replace_table(text, table)
README.write_text(text, encoding="utf-8")
cli_help.FLAGS_FILE.write_text(cli_help.flags_text(), encoding="utf-8")
print("README.md tables and docs/flags.txt updated")
