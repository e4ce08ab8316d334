"""The package keeps its shape: no import cycle between modules or folders, no import upward (at
the package's top, and inside ``service/`` and ``web/``), no web module past the service's front
door beyond the listed ones, the engine kinds' names in at most two files, no function over 60
lines, no module over 400 (``scripts/check_structure.py``; a maintainer reads it to see what to
split)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
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


def _package(root, files: dict[str, str]) -> None:
    for name, text in {"__init__.py": "", **files}.items():
        path = root / "hunyuan_webui" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checker_finds_a_cycle_between_folders(tmp_path):
    _package(tmp_path, {"low/__init__.py": "", "low/a.py": "from hunyuan_webui.high import b\n",
                        "high/__init__.py": "", "high/b.py": "x = 1\n",
                        "high/c.py": "from hunyuan_webui.low import a\n"})
    found = check_structure.problems(tmp_path, layers=(("all", frozenset({"low", "high",
                                                                          "__init__"})),))
    assert "import cycle: hunyuan_webui.high.c <-> hunyuan_webui.low.a" not in found
    assert "folder import cycle: high <-> low" in found


def test_the_checker_refuses_an_import_upward_or_sideways(tmp_path):
    _package(tmp_path, {"core.py": "from hunyuan_webui import engine\n", "engine.py": "",
                        "models.py": "from hunyuan_webui.engine import x\n", "odd.py": ""})
    layers = tuple((n, frozenset(u)) for n, u in (("bottom", {"core", "__init__"}),
                                                 ("middle", {"engine", "models"})))
    found = check_structure.problems(tmp_path, layers=layers)
    assert ("upward import: hunyuan_webui.core (bottom) imports hunyuan_webui.engine "
            "(a higher layer: middle)") in found
    assert ("upward import: hunyuan_webui.models (middle) imports hunyuan_webui.engine "
            "(the same layer: middle)") in found
    assert "odd: in no layer (add it to LAYERS in scripts/check_structure.py)" in found


def test_the_checker_refuses_an_import_upward_or_sideways_inside_a_folder(tmp_path):
    """Inside ``service/`` the answer checks sit below the translator, and the operations and the
    rooms are peers: an import up, or across, is refused as at the package's top."""
    _package(tmp_path, {
        "service/__init__.py": "from hunyuan_webui.service.translate import t\n",
        "service/checks/__init__.py": "", "service/checks/watch.py":
        "from hunyuan_webui.service.translate.strategy import Reader\n",
        "service/translate/__init__.py": "", "service/translate/strategy.py": "Reader = 1\n",
        "service/operations/__init__.py": "", "service/operations/items.py":
        "from hunyuan_webui.service.rooms import bus\n",
        "service/rooms/__init__.py": "", "service/rooms/bus.py": "x = 1\n",
        "service/hearing.py": ""})
    layers = (("all", frozenset({"service", "__init__"})),)
    found = check_structure.problems(tmp_path, layers=layers)
    assert ("upward import: hunyuan_webui.service.checks.watch (answer checks) imports "
            "hunyuan_webui.service.translate.strategy (a higher layer: one translation)") in found
    assert ("upward import: hunyuan_webui.service.operations.items (operations, rooms) imports "
            "hunyuan_webui.service.rooms.bus (the same layer: operations, rooms)") in found
    assert ("hearing: in no layer (add it to INNER_LAYERS['service'] in "
            "scripts/check_structure.py)") in {p.removeprefix("service/") for p in found}
    assert len(found) == 3, found


def test_the_checker_refuses_a_web_module_past_the_front_door(tmp_path):
    """The web layer translates through ``Translator.translate_texts``: a web module that imports
    the long-text or job modules (or their names through ``hunyuan_webui.service``), or reads a
    translator's ``.engine``, is refused; the package itself has no such reach and no list of
    exceptions."""
    _package(tmp_path, {
        "web/__init__.py": "", "web/page/__init__.py": "",
        "web/page/ui.py": "from hunyuan_webui.service.door.longtext import max_chars\n",
        "web/protocols/__init__.py": "",
        "web/protocols/v1.py": "from hunyuan_webui.service import LongText, Translator\n"
                               "def status(t):\n    return t.engine.status()\n",
        "web/protocols/openai.py": "from hunyuan_webui.service.translate import job\n"
                                   "import hunyuan_webui.engine\n"
                                   "kind = hunyuan_webui.engine.KIND\n",
        "web/protocols/deepl.py": "from hunyuan_webui.service import Operation, PartUpdate\n"
                                  "def status(t):\n    return t.status()\n",
        "engine.py": "", "service/__init__.py": "", "service/door/__init__.py": "",
        "service/door/longtext.py": "", "service/translate/__init__.py": "",
        "service/translate/job.py": ""})
    none: dict = {}
    layers = tuple((n, frozenset(u)) for n, u in (("engine", {"engine"}), ("service", {"service"}),
                                                  ("web", {"web"}), ("top", {"__init__"})))
    reaches = ["web/page/ui.py imports hunyuan_webui.service.door.longtext",
               "web/protocols/openai.py imports hunyuan_webui.service.translate.job",
               "web/protocols/v1.py imports hunyuan_webui.service.door.longtext",
               "web/protocols/v1.py reads the translator's .engine"]
    found = check_structure.problems(tmp_path, layers=layers, inner=none)
    assert found == [f"past the service's front door: {line} (web/ translates through "
                     "Translator.translate_texts)" for line in reaches]
    assert not hasattr(check_structure, "KNOWN_REACHES")


def test_the_checker_counts_the_files_that_spell_an_engine_kind(tmp_path):
    _package(tmp_path, {"core/__init__.py": "", "core/kinds.py": 'LOCAL = "local"\n',
                        "a.py": 'X = "local"\n', "b.py": '"""Say "local" in a docstring."""\n'})
    layers = (("all", frozenset({"core", "a", "b", "c", "__init__"})),)
    assert check_structure.problems(tmp_path, layers=layers) == []
    (tmp_path / "hunyuan_webui" / "c.py").write_text('if kind == "local":\n    pass\n')
    assert check_structure.problems(tmp_path, layers=layers) == [
        "engine kind names spelled as literals in 3 files (at most 2; use "
        "hunyuan_webui.core.kinds): a.py (local); c.py (local); core/kinds.py (local)"]


def test_the_package_has_no_cycle_and_no_long_unit():
    out = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_structure.py")],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout


def test_the_readme_draws_the_layers_the_checker_enforces():
    """The README's architecture table is the checker's LAYERS, top first, unit for unit."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("<!-- layers:start -->")[1].split("<!-- layers:end -->")[0]
    rows = [line.split("|")[1:3] for line in table.strip().splitlines()[2:]]
    drawn = [(name.strip(), frozenset(u.strip(" `") for u in units.split(",")))
             for name, units in rows]
    assert drawn == list(reversed(check_structure.LAYERS))
    for _, units in drawn:
        for unit in units:
            assert (ROOT / "hunyuan_webui" / unit).is_dir() or \
                (ROOT / "hunyuan_webui" / f"{unit}.py").is_file(), unit


def test_the_checker_refuses_a_service_folder_of_more_than_eight_modules(tmp_path):
    files = {"service/__init__.py": "", "service/rooms/__init__.py": "",
             **{f"service/rooms/m{i}.py": "" for i in range(9)},
             "service/door/__init__.py": "", **{f"service/door/d{i}.py": "" for i in range(8)}}
    _package(tmp_path, files)
    found = check_structure.problems(tmp_path, layers=(("all", frozenset({"service",
                                                                         "__init__"})),), inner={})
    crowded = [p for p in found if "modules (at most 8" in p]
    assert crowded == ["service/rooms/: 9 modules (at most 8 a folder of service/: give a subject "
                       "its own folder)"], found
