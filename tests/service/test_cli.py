"""``python -m hunyuan_webui translate``: the command line, run as a user runs it."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hunyuan_webui", *args], input=stdin,
                          capture_output=True, text=True, timeout=180)


def test_translates_the_demo_in_a_child_process_quietly():
    done = cli("translate", "--demo", "--from", "zh", "--to", "en", "谢谢你的帮助。")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Thank you for your help.\n"
    assert "Loading weights" not in done.stderr and "rope" not in done.stderr


def test_settings_with_values_are_not_taken_for_text(demo_dir):
    done = cli("translate", "--engine", "local", "--model", demo_dir, "--to", "zh",
               stdin="Thank you for your help.")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "谢谢你的帮助。\n"


def test_a_bad_language_code_is_one_line_before_any_loading():
    done = cli("translate", "--demo", "--to", "xx", "hello")
    assert done.returncode == 2
    assert done.stderr.startswith("error: Unknown language code 'xx'.") and not done.stdout
    assert "Traceback" not in done.stderr


def test_modes_on_the_command_line_with_the_notice_on_stderr():
    done = cli("translate", "--demo", "--from", "zh", "--to", "en", "--mode", "style",
               "--style", "formal", "谢谢。")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Thank you.\n"
    assert "[This model has no style prompt (Hy-MT2 has): the style was not used.]" in done.stderr
    done = cli("translate", "--demo", "--to", "en", "--mode", "terminology", "谢谢。")
    assert done.returncode == 2
    assert done.stderr == ("error: The terminology mode needs a glossary: at least one term "
                           "pair.\n")
