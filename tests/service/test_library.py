"""The Python library: ``from hunyuan_webui import Translator`` in a plain script or a notebook, no
server. A script run in a child process loads the demo model and prints translations (compared
exactly); in-process tests use the session's engine behind the same facade.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.errors import InputError
from hunyuan_webui.library import Translator

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

ROOT = Path(__file__).resolve().parents[2]


def run_script(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent(source), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # as if installed; the script is elsewhere
    return subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)


def test_a_plain_script_prints_a_translation(tmp_path):
    done = run_script(tmp_path, """
        from hunyuan_webui import Translator

        translator = Translator.load(demo=True)
        print(translator.translate("谢谢你的帮助。", to="en", deterministic=True))
        print("|".join(translator.stream("Thank you for your help. Good morning.", to="zh",
                                         deterministic=True)))
        print(translator.translate_many(["你好", "谢谢。"], to="en", source="zh", deterministic=True))
        print(translator.result("谢谢你的帮助。", to="en", deterministic=True).cached)
        translator.close()
    """)
    assert done.returncode == 0, done.stderr
    first, streamed, many, cached = done.stdout.splitlines()
    assert first == "Thank you for your help."
    # In pieces, each sentence once it is judged whole (never taken back).
    assert streamed.replace("|", "") == "谢谢你的帮助。早上好。" and "|" in streamed
    assert many == "['Hello', 'Thank you.']"
    assert cached == "True"  # the second time comes from the phrase cache


def test_importing_the_package_loads_nothing_heavy(tmp_path):
    done = run_script(tmp_path, """
        import sys
        import hunyuan_webui
        from hunyuan_webui import Translator
        print(sorted(m for m in ("torch", "transformers", "gradio", "fastapi") if m in sys.modules))
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n"


@pytest.fixture
def library(make_translator):
    return Translator(make_translator(cache=PhraseCache(size=64)))


def test_translate_stream_and_batches_share_one_service(library, phrases):
    zh_en = [p for p in phrases if (p.source_lang, p.target_lang) == ("zh", "en")]
    assert library.translate_many([p.source for p in zh_en], to="en", deterministic=True) == [
        p.target for p in zh_en]
    pieces = list(library.stream("Good morning.", to="de", source="en", deterministic=True))
    assert "".join(pieces) == library.translate("Good morning.", to="de", deterministic=True) == (
        "Guten Morgen.")
    result = library.result("Good morning.", to="de", source="en", deterministic=True)
    assert result.cached and result.source_lang == "en"
    assert library.detect("Where is the train station?").code == "en"
    assert len(library.languages) == 38 and library.model == library.service.spec.id


def test_a_text_with_nothing_to_translate_comes_back_as_it_was(library):
    assert library.translate("12345", to="en", source="zh", deterministic=True) == "12345"
    assert library.translate("  \n", to="en", source="zh") == ""


def test_mistakes_are_reported_before_any_work(library):
    with pytest.raises(InputError, match="temprature.*Valid: deterministic"):
        library.translate("你好", to="en", temprature=0.5)
    with pytest.raises(InputError, match="Unknown language code 'xx'"):
        library.translate("你好", to="xx")
    with pytest.raises(InputError, match="Unknown setting.*cache_sise"):
        Translator.load(demo=True, cache_sise=10)  # refused before anything loads
