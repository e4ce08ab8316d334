"""``app.py --class`` (``bash launch.sh --class``): a class is opened at start and its links
printed; the server listens on every interface unless told otherwise (students' phones must
reach it)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from hunyuan_webui import app as app_mod
from hunyuan_webui.service.rooms import Rooms
from hunyuan_webui.settings import Settings


@pytest.mark.parametrize(("argv", "rest", "lang"), [
    (["--demo", "--class"], ["--demo", "--host", "0.0.0.0"], "zh"),
    (["--class=en", "--host", "127.0.0.1"], ["--host", "127.0.0.1"], "en"),
    (["--demo"], ["--demo"], None),
])
def test_the_class_flag(argv, rest, lang, monkeypatch):
    monkeypatch.delenv("HYMT_HOST", raising=False)
    assert app_mod._class_flag(argv) == (rest, lang)


def test_a_class_opened_at_start_prints_the_teachers_link_and_the_code(capsys):
    rooms = Rooms(translator=None)  # type: ignore[arg-type]  # opening one translates nothing
    app = SimpleNamespace(state=SimpleNamespace(rooms=rooms))
    app_mod._open_class(app, "http://127.0.0.1:7860", Settings(port=7860), "en")  # type: ignore
    out = capsys.readouterr().out
    teacher, students = out.strip().splitlines()
    assert "http://127.0.0.1:7860/class/teach/" in teacher and "#key=" in teacher
    code = teacher.split("/class/teach/")[1].split("#")[0]
    assert f"http://127.0.0.1:7860/class/{code}" in students
    assert f"(code {code[:3]} {code[3:]})" in students
    assert rooms.public(code)["lang"] == "en"
