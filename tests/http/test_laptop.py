"""The machine a teacher has: a laptop without a GPU.

There the launch runs Hy-MT2-1.8B's GGUF through llama.cpp (a quantized file read once per token
instead of 7 GB of fp32), installs llama-cpp-python for it (``launch.sh``, asked through
``python -m hunyuan_webui.llama_cpp_setup --needs-llama-cpp``), and says honestly what runs
when it cannot.
A local checkpoint is sized from its own files, so a small one starts on a CPU as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from apphelpers import app_process
from choicehelpers import SMALL, FakeProbe

from hunyuan_webui import choice, models
from hunyuan_webui.app import check_hardware
from hunyuan_webui.demo_model import demo_dir, load_phrases
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.llama_cpp_setup import needs_llama_cpp
from hunyuan_webui.settings import Settings

REPO = Path(__file__).resolve().parents[2]
GGUF = "tencent/Hy-MT2-1.8B-GGUF"
DEMO_PARAMS = 689_920  # the demo checkpoint's tensors, counted from its safetensors header


def _bare_copy(tmp_path: Path, name: str = "tiny-translator") -> Path:
    """The demo checkpoint as a user's own model: another name, no hymt.json."""
    copy = tmp_path / name
    shutil.copytree(demo_dir(), copy)
    (copy / models.SIDECAR).unlink()
    return copy


# -- a local model's size, from the model ------------------------------------------------------
def test_a_local_checkpoint_is_sized_from_its_own_files_not_the_7b_default(tmp_path):
    bare = _bare_copy(tmp_path)
    spec = models.resolve(str(bare))
    assert spec.params_b * 1e9 == pytest.approx(DEMO_PARAMS)
    check_hardware(Settings(model=str(bare)))  # no GPU here, and no --device cpu: allowed

    # The sidecar stays optional, and the files win over its figure.
    (bare / models.SIDECAR).write_text(json.dumps({"params_b": 7.5}))
    assert models.resolve(str(bare)).params_b * 1e9 == pytest.approx(DEMO_PARAMS)

    # Only a config.json: its shape says how big the model is (here a 7B's).
    big = tmp_path / "my-finetune"
    big.mkdir()
    (big / "config.json").write_text(json.dumps({
        "model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_hidden_layers": 32,
        "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
        "intermediate_size": 14336, "vocab_size": 128167, "tie_word_embeddings": False}))
    assert models.resolve(str(big)).params_b == pytest.approx(8.03, abs=0.01)
    with pytest.raises(TranslatorError, match=r"needs a GPU \(about 15 GiB in bf16"):
        check_hardware(Settings(model=str(big)))

    # A GGUF file: its size over its quantization's bytes per weight.
    gguf = tmp_path / "mine-Q8_0.gguf"
    gguf.write_bytes(b"\0" * 1_062_500)
    assert models.resolve(str(gguf)).params_b == pytest.approx(0.001)


@pytest.mark.slow
def test_a_local_checkpoint_without_a_sidecar_starts_on_a_cpu_without_device_cpu(tmp_path):
    """The bug: a 25M-parameter checkpoint without hymt.json was refused with "needs a GPU
    (about 14 GiB in bf16)". Now ``app.py --model DIR`` starts and translates."""
    bare = _bare_copy(tmp_path)
    phrase = next(p for p in load_phrases() if p.source == "谢谢你的帮助。")
    with app_process("--model", str(bare), demo=False, env={"CUDA_VISIBLE_DEVICES": ""}) as app:
        r = httpx.post(f"{app.url}/v1/translate", trust_env=False, timeout=60,
                       json={"text": phrase.source, "source_lang": phrase.source_lang,
                             "target_lang": phrase.target_lang,
                             "options": {"deterministic": True}})
    assert r.status_code == 200, r.text
    assert (r.json()["translation"], r.json()["model"]) == (phrase.target, "tiny-translator")


# -- the launch choice without a GPU -----------------------------------------------------------
def test_without_a_gpu_the_gguf_is_downloaded_in_the_quantization_that_fits():
    # A laptop with 8 GiB free: Q4_K_M, downloaded.
    probe = FakeProbe(ram=8.0, online={GGUF, SMALL}, llama_cpp=True)
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.model, picked.settings.engine, picked.settings.gguf_quant) == (
        GGUF, "llamacpp", "Q4_K_M")
    assert picked.reason == (f"{GGUF} in Q4_K_M through llama.cpp (about 4 GiB with KV-cache "
                             "room; 8.0 GiB of RAM free; weights to download)")
    assert picked.banner == ""
    # RAM to spare: Q8_0, for the instruction modes the 1.8B has.
    picked = choice.choose(Settings(), FakeProbe(ram=24.0, online={GGUF}, llama_cpp=True))
    assert picked.settings.gguf_quant == "Q8_0"
    # A cached Q4_K_M is taken before a Q8_0 to download, and nothing is asked of the hub.
    probe = FakeProbe(ram=24.0, in_cache={f"{GGUF}@Q4_K_M"}, online={GGUF}, llama_cpp=True)
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.gguf_quant, picked.reason.endswith("weights cached)")) == (
        "Q4_K_M", True)
    assert probe.asked == [GGUF, GGUF]  # cached: Q8_0? Q4_K_M? (never downloadable?)
    # A quantization asked for is kept.
    picked = choice.choose(Settings(gguf_quant="Q6_K"),
                           FakeProbe(ram=24.0, online={GGUF}, llama_cpp=True))
    assert picked.settings.gguf_quant == "Q6_K"


def test_a_cached_gguf_without_llama_cpp_python_is_named_in_the_banner():
    """The bug: with the GGUF cached and llama-cpp-python missing, the banner said no
    Hy-MT2-1.8B weights were cached here, and not what to install."""
    picked = choice.choose(Settings(), FakeProbe(in_cache={f"{GGUF}@Q4_K_M"}))
    assert picked.settings.demo
    assert picked.banner.startswith(
        "**Demo model.** No GPU was found. The tencent/Hy-MT2-1.8B-GGUF file (Q4_K_M) is cached "
        "here, but llama-cpp-python, which runs it, is not installed: `bash launch.sh` installs "
        "it (once: it compiles llama.cpp, about 5-15 minutes, and keeps the wheel in "
        ".hymt/wheels), or `pip install llama-cpp-python`; then start the translator again.")
    assert "no Hy-MT2-1.8B weights are cached" not in picked.banner


def test_the_fp32_fallback_says_it_is_slow_and_what_to_install():
    picked = choice.choose(Settings(), FakeProbe(in_cache={f"{GGUF}@Q4_K_M", SMALL}))
    assert (picked.settings.model, picked.settings.dtype, picked.settings.engine) == (
        SMALL, "fp32", "process")
    assert picked.banner == (
        "**Slow model path.** No GPU was found, and llama-cpp-python is not installed, so "
        "tencent/Hy-MT2-1.8B runs in fp32 through PyTorch, reading all its weights for every "
        "word it writes. Its Q4_K_M file (tencent/Hy-MT2-1.8B-GGUF) is cached here and runs "
        "through llama.cpp from about a sixth of those bytes: to use it, install "
        f"llama-cpp-python ({choice.LLAMA_CPP_HINT}).")
    picked = choice.choose(Settings(), FakeProbe(online={GGUF, SMALL}))
    assert "file (tencent/Hy-MT2-1.8B-GGUF) can be downloaded" in picked.banner
    # llama.cpp has nothing to offer (offline, nothing cached): no banner about it.
    assert choice.choose(Settings(), FakeProbe(in_cache={SMALL})).banner == ""


def test_the_launcher_installs_llama_cpp_python_only_when_the_launch_would_use_it():
    wants = needs_llama_cpp(Settings(), FakeProbe(ram=8.0, online={GGUF, SMALL}))
    assert wants is not None and wants.settings.engine == "llamacpp"
    assert wants.reason.startswith(f"{GGUF} in Q4_K_M through llama.cpp")
    for settings, probe in [
        (Settings(), FakeProbe(online={GGUF}, llama_cpp=True)),  # installed already
        (Settings(), FakeProbe(gpus=[80.0], online={GGUF, SMALL, "tencent/Hy-MT2-7B"})),  # a GPU
        (Settings(), FakeProbe()),  # no GGUF to be had
        (Settings(model=SMALL), FakeProbe(online={GGUF})),  # a model named
        (Settings(engine="vllm"), FakeProbe(online={GGUF})),
        (Settings(demo=True), FakeProbe(online={GGUF})),
    ]:
        assert needs_llama_cpp(settings, probe) is None, settings
    # What launch.sh runs: exit 1 (nothing to install) for a named model, without any probing.
    out = subprocess.run([sys.executable, "-m", "hunyuan_webui.llama_cpp_setup",
                          "--needs-llama-cpp", "--model", SMALL], cwd=REPO, capture_output=True,
                         text=True, timeout=60)
    assert (out.returncode, out.stdout) == (1, "")


def test_the_launcher_script_installs_llama_cpp_python_from_its_kept_wheel():
    script = (REPO / "launch.sh").read_text(encoding="utf-8")
    assert 'install_llama_cpp "${args[@]+"${args[@]}"}"' in script
    assert "-m hunyuan_webui.llama_cpp_setup --needs-llama-cpp" in script
    assert 'pip" wheel -q --no-deps' in script and '--find-links "$wheels"' in script


@pytest.mark.slow
def test_a_no_gpu_launch_with_a_cached_1_8b_gguf_runs_it_through_llama_cpp(tmp_path):
    """``app.py`` at its defaults (``--model auto``) on a machine without a GPU, with the 1.8B's
    Q4_K_M GGUF in the hub cache (the 1.8B-format demo model, quantized by llama.cpp's own
    quantizer, standing in for it) and llama-cpp-python installed: llama.cpp serves it, and it
    translates. (On an AMX Xeon this also holds the llama.cpp engine to its AMX workaround.)"""
    from hunyuan_webui.engine.gguf_files import quantize_gguf, write_gguf

    repo = tmp_path / "hub" / "models--tencent--Hy-MT2-1.8B-GGUF"
    snapshot = repo / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0123abcd")
    quantize_gguf(write_gguf(demo_dir("1.8b"), tmp_path / "demo-F32.gguf"),
                  snapshot / "Hy-MT2-1.8B-Q4_K_M.gguf", "Q4_K_M")
    phrase = next(p for p in load_phrases() if p.source == "谢谢你的帮助。")
    with app_process(demo=False, env={"HF_HOME": str(tmp_path), "CUDA_VISIBLE_DEVICES": ""}
                     ) as app:
        ready = httpx.get(f"{app.url}/ready", trust_env=False, timeout=10).json()
        r = httpx.post(f"{app.url}/v1/translate", trust_env=False, timeout=60,
                       json={"text": phrase.source, "source_lang": phrase.source_lang,
                             "target_lang": phrase.target_lang,
                             "options": {"deterministic": True}})
    assert r.status_code == 200, r.text
    assert (r.json()["translation"], r.json()["model"]) == (phrase.target, GGUF)
    assert (ready["device"], ready["dtype"]) == ("cpu (llama.cpp)", "Q4_K_M"), ready


FAKE_PYTHON = """#!/bin/bash
# A stand-in for the virtualenv's python: llama_cpp is missing, and the launch wants it.
case "$*" in
  "-c import llama_cpp") exit 1 ;;
  "-c import torch") exit 0 ;;
  "-m hunyuan_webui.llama_cpp_setup --needs-llama-cpp"*)
    echo "tencent/Hy-MT2-1.8B-GGUF in Q4_K_M through llama.cpp (test)"; exit 0 ;;
  app.py*) echo "APP $*"; exit 0 ;;
esac
exit 0
"""
FAKE_PIP = """#!/bin/bash
echo "$*" >> "$(dirname "$0")/../pip.log"
if [ "$1" = wheel ]; then
  while [ "$#" -gt 0 ]; do
    if [ "$1" = -w ]; then touch "$2/llama_cpp_python-0.3.36-cp311-cp311-linux_x86_64.whl"; fi
    shift
  done
fi
"""


def test_launch_sh_builds_llama_cpp_python_once_and_keeps_the_wheel(tmp_path):
    """What ``bash launch.sh`` does on a laptop the launch would run llama.cpp on, with stand-ins
    for the virtualenv's python and pip: it says the build is one-time, builds the wheel into
    .hymt/wheels, installs from there; a second virtualenv installs the kept wheel, unbuilt."""
    for name in ("launch.sh", "requirements.txt", "requirements-dev.txt"):
        shutil.copy(REPO / name, tmp_path / name)
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, text in (("python", FAKE_PYTHON), ("pip", FAKE_PIP)):
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    digest = hashlib.sha256((tmp_path / "requirements.txt").read_bytes()).hexdigest()
    env = {**os.environ, "HYMT_VENV": str(venv), "PYTHON": sys.executable}

    def launch() -> subprocess.CompletedProcess:
        (venv / ".hymt-run.stamp").write_text(digest + "\n")
        return subprocess.run(["bash", str(tmp_path / "launch.sh"), "--port", "1234"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)

    first = launch()
    assert first.returncode == 0, first.stderr
    assert first.stdout == "APP app.py --port 1234\n"
    assert "a one-time build of llama.cpp, about 5-15 minutes" in first.stderr
    pin = "llama-cpp-python==0.3.36"
    assert (venv / "pip.log").read_text().splitlines() == [
        f"wheel -q --no-deps -w .hymt/wheels {pin}",
        f"install -q --find-links .hymt/wheels {pin}"]
    (venv / "pip.log").unlink()
    second = launch()  # a new virtualenv, the same checkout: the kept wheel
    assert second.returncode == 0 and "one-time build" not in second.stderr, second.stderr
    assert (venv / "pip.log").read_text().splitlines() == [
        f"install -q --find-links .hymt/wheels {pin}"]
    env["HYMT_LLAMA_CPP"] = "0"  # asked not to: nothing installed
    (venv / "pip.log").unlink()
    assert launch().returncode == 0 and not (venv / "pip.log").exists()
