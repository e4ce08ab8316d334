"""The first start explains itself: ``bash launch.sh --help`` answers at once in a fresh clone
(no virtualenv made, no package installed, no Python run) with the launcher's whole header and
every flag of the app, ``--class`` included, as the app's own ``--help`` lists them."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from hunyuan_webui import cli_help
from hunyuan_webui.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_flags_file_is_the_settings_as_they_are():
    assert cli_help.FLAGS_FILE.read_text(encoding="utf-8") == cli_help.flags_text(), \
        "regenerate with: python scripts/update_readme.py"


def test_launch_help_in_a_fresh_clone_installs_nothing_and_answers_at_once(tmp_path):
    clone = tmp_path / "clone"
    (clone / "docs").mkdir(parents=True)
    shutil.copy(ROOT / "launch.sh", clone / "launch.sh")
    shutil.copy(cli_help.FLAGS_FILE, clone / "docs" / "flags.txt")
    env = {**os.environ, "PYTHON": str(tmp_path / "no-python-here")}  # none may be needed
    env.pop("HYMT_VENV", None)
    started = time.monotonic()
    done = subprocess.run(["bash", str(clone / "launch.sh"), "--help"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert took < 2.0, took
    assert sorted(p.name for p in clone.iterdir()) == ["docs", "launch.sh"]  # no .venv, no .hymt
    out = done.stdout
    assert out.startswith("One-click launcher for the Hunyuan-MT web translator.")
    # The header whole: it was cut after its first line of the environment's description.
    assert "HYMT_TORCH_INDEX (a pip index URL for torch, e.g. " \
           "https://download.pytorch.org/whl/cu128)." in out
    assert "set -euo" not in out and "#!/usr/bin/env" not in out
    for flag in ("--class[=LANG]", "--demo, --no-demo", "--model VALUE", "--port VALUE",
                 "HYMT_MAX_INPUT_CHARS"):
        assert flag in out, flag
    assert out.endswith(cli_help.flags_text())


def test_the_apps_help_lists_every_flag_and_class():
    text = cli_help.app_parser("app.py").format_help()
    assert "--class [LANG]" in text and "teacher's language" in text
    flags = cli_help.flags_text()
    for name in Settings.__dataclass_fields__:
        flag = f"--{name.replace('_', '-')}"
        assert flag in text and flag in flags, flag


def test_the_notebook_reads_the_class_from_the_launch_and_says_what_the_server_does():
    from hunyuan_webui import notebook

    said = ("[launch] starting in the background (pid 1, log .hymt/server.log)\n"
            "Hunyuan-MT translator ready: http://127.0.0.1:7860  (model demo-model, cpu, fp32)\n"
            "Class open: teacher's page http://127.0.0.1:7860/class/teach/123456#key=abc\n"
            "Class open: students join at http://10.0.0.5:7860/class/123456 (code 123 456)\n")
    assert notebook.class_links(said) == {
        "teacher": "http://127.0.0.1:7860/class/teach/123456#key=abc",
        "room": "http://10.0.0.5:7860/class/123456"}
    assert notebook.class_links("Hunyuan-MT translator ready: http://x") == {}
    log = ("\n=== 2026-01-01 10:00:00: bash launch.sh --background --demo\n"
           "2026-01-01 10:00:03,120 INFO hunyuan_webui: serving on http://127.0.0.1:7860 "
           "(model demo-model; loading...)\n")
    assert notebook.progress_line(12.4, log) == ("Starting the translator… 12 s · serving on "
                                                 "http://127.0.0.1:7860 (model demo-model; "
                                                 "loading...)")
    assert notebook.progress_line(1, "") == "Starting the translator… 1 s"
