"""The launch picks what fits: fake GPU memory figures and fake hub answers drive the choice.

``FakeProbe`` has the real probe's interface and notes every hub question, so a test can also say
what was *not* asked (a 7B download on a machine without a GPU).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from choicehelpers import SEVEN, SMALL, FakeProbe

from hunyuan_webui import choice
from hunyuan_webui.app import check_hardware
from hunyuan_webui.demo.model import demo_dir
from hunyuan_webui.demo.phrases import load_phrases
from hunyuan_webui.errors import InputError, ModelLoadError, TranslatorError
from hunyuan_webui.settings import Settings

EVERYTHING = {SEVEN, SMALL}


@pytest.mark.parametrize("free, model, dtype", [
    (79.5, SEVEN, "bf16"), (22.0, SEVEN, "bf16"),  # an H100; a 24 GB card
    (15.0, SEVEN, "int8"),  # a T4
    (11.0, SEVEN, "int4"),  # an RTX 3060 12 GB
    (7.5, SMALL, "bf16"), (5.0, SMALL, "int4"),
])
def test_the_gpu_table_picks_by_free_memory(free, model, dtype):
    picked = choice.choose(Settings(), FakeProbe(gpus=[free], online=EVERYTHING))
    assert (picked.settings.model, picked.settings.dtype) == (model, dtype)
    assert picked.banner == ""
    assert picked.reason.startswith(f"{model} in {dtype} (about ")
    assert f"{free:.1f} GiB of GPU memory free; weights to download)" in picked.reason


def test_the_7b_needs_room_for_the_kv_cache_not_just_its_weights():
    row = choice.GPU_TABLE[0]
    assert round(row.weights_gib(), 1) == 14.0
    assert round(row.need_gib(), 1) == 18.9  # + 16 x 2,000 tokens x 128 KiB + 1 GiB
    picked = choice.choose(Settings(), FakeProbe(gpus=[16.0], online=EVERYTHING))
    assert picked.settings.dtype == "int8"  # 16 GiB would hold the bf16 weights, not the cache


def test_weights_neither_cached_nor_downloadable_are_passed_over():
    probe = FakeProbe(gpus=[40.0], in_cache={SMALL})
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.model, picked.settings.dtype) == (SMALL, "bf16")
    assert picked.reason.endswith("weights cached)")


def test_a_dtype_given_is_kept():
    picked = choice.choose(Settings(dtype="int4"), FakeProbe(gpus=[80.0], online=EVERYTHING))
    assert (picked.settings.model, picked.settings.dtype) == (SEVEN, "int4")


def test_without_a_gpu_a_cached_1_8b_runs_on_the_cpu_and_no_7b_is_ever_asked_for():
    probe = FakeProbe(in_cache={SMALL, SEVEN}, online=EVERYTHING)
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.model, picked.settings.dtype, picked.settings.device) == (
        SMALL, "fp32", "auto")
    assert not any("7B" in asked for asked in probe.asked)


def test_without_a_gpu_or_weights_the_demo_model_is_served_with_a_banner():
    probe = FakeProbe()
    picked = choice.choose(Settings(port=9999), probe)
    assert picked.settings.model == str(demo_dir())
    assert picked.settings.port == 9999 and picked.settings.demo
    # Cached? Downloadable? Only the 1.8B: its GGUF (Q8_0 or Q4_K_M) too, for what the banner
    # says, since it needs llama-cpp-python, which is not installed here.
    assert probe.asked == [GGUF_SMALL] * 3 + [SMALL, SMALL]
    what = ("the bundled demo model (demo-model, under 1M parameters): it knows only the "
            f"{len(load_phrases())} phrases in assets/demo_phrases.tsv, e.g. 谢谢你的帮助。→ Thank "
            "you for your help, and "
            "answers anything else with nonsense")
    commands = ("For a real model without a GPU: `hf download "
                "tencent/Hy-MT2-1.8B-GGUF --include '*Q4_K_M.gguf'`, then `bash launch.sh` (it "
                "runs the file through llama.cpp); on a machine with a GPU, `bash launch.sh` "
                "picks what fits; or a translation server: `bash launch.sh --engine openai "
                "--endpoint URL --model tencent/Hy-MT2-7B`.")
    why = ("No GPU was found, and no Hy-MT2-1.8B weights are cached here or could be "
           "downloaded.")
    assert picked.banner == f"**Demo model.** {why} This is {what}. {commands}"
    assert picked.reason == f"{why} Serving {what}. {commands}"


def test_too_little_ram_for_the_1_8b_is_the_demo_too():
    picked = choice.choose(Settings(), FakeProbe(ram=4.0, in_cache={SMALL}))
    assert picked.settings.model == str(demo_dir())


def test_a_gpu_too_small_for_anything_falls_to_the_cpu_row_on_the_cpu():
    picked = choice.choose(Settings(), FakeProbe(gpus=[2.0], in_cache={SMALL}))
    assert (picked.settings.model, picked.settings.device) == (SMALL, "cpu")
    picked = choice.choose(Settings(), FakeProbe(gpus=[2.0]))
    assert picked.banner.startswith("**Demo model.** The GPU is too small for any Hy-MT2 model "
                                    "(2.0 GiB free), and no Hy-MT2-1.8B weights are cached here")
    picked = choice.choose(Settings(), FakeProbe(gpus=[40.0]))  # big enough, but nothing to load
    assert picked.banner.startswith("**Demo model.** A GPU was found (40.0 GiB free), but no "
                                    "Hy-MT2 weights are cached here or could be downloaded.")


def test_several_gpus_add_up():
    picked = choice.choose(Settings(), FakeProbe(gpus=[10.0, 10.0], online=EVERYTHING))
    assert (picked.settings.model, picked.settings.dtype) == (SEVEN, "bf16")


def test_device_cpu_ignores_the_gpu():
    probe = FakeProbe(gpus=[80.0], in_cache=EVERYTHING)
    picked = choice.choose(Settings(device="cpu"), probe)
    assert (picked.settings.model, picked.settings.device) == (SMALL, "cpu")


def test_a_named_model_or_the_demo_flag_is_not_second_guessed():
    probe = FakeProbe(gpus=[80.0])
    named = choice.choose(Settings(model="tencent/Hunyuan-MT-7B"), probe)
    assert named.settings == Settings(model="tencent/Hunyuan-MT-7B") and named.banner == ""
    asked = choice.choose(Settings(demo=True), probe)
    assert asked.settings.model == str(demo_dir())
    assert asked.banner.startswith("**Demo model.** This is the bundled demo model")
    assert probe.asked == []
    with pytest.raises(InputError, match="say which model the server runs"):
        choice.choose(Settings(engine="openai", endpoint="http://x/v1"), probe)


def test_the_real_probe_never_goes_online_when_the_hub_is_offline(monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    probe = choice.MachineProbe()
    assert probe.downloadable(SMALL) is False
    assert probe.cached(SMALL) is False
    snapshot = tmp_path / "models--tencent--Hy-MT2-1.8B" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (tmp_path / "models--tencent--Hy-MT2-1.8B" / "refs").mkdir()
    (tmp_path / "models--tencent--Hy-MT2-1.8B" / "refs" / "main").write_text("abc")
    (snapshot / "config.json").write_text("{}")
    assert probe.cached(SMALL) is False  # a config without weights is not a model
    (snapshot / "model.safetensors").write_bytes(b"")
    assert probe.cached(SMALL) is True
    gguf = tmp_path / "models--tencent--Hy-MT2-1.8B-GGUF" / "snapshots" / "def"
    gguf.mkdir(parents=True)
    (gguf / "Hy-MT2-1.8B-Q4_K_M.gguf").write_bytes(b"")
    assert probe.cached("tencent/Hy-MT2-1.8B-GGUF") is True
    assert probe.ram_free_gib() > 0
    assert probe.gpu_free_gib() == []  # this machine has no GPU


def test_the_hardware_check_runs_for_every_in_process_engine():
    """It returned at once unless --engine local, and --engine process is the default: a plain
    launch on a machine without a GPU went on to download and load a 7B in fp32."""
    for engine in ("process", "local"):
        with pytest.raises(TranslatorError, match="No GPU found. tencent/Hunyuan-MT-7B needs a GPU"):
            check_hardware(Settings(model="tencent/Hunyuan-MT-7B", engine=engine))
    check_hardware(Settings(model="tencent/Hunyuan-MT-7B", device="cpu"))  # asked for: allowed
    check_hardware(Settings(model=SMALL))  # a 1.8B is fine on a CPU
    with pytest.raises(ModelLoadError, match="llama.cpp"):
        check_hardware(Settings(model="tencent/Hy-MT2-1.8B-GGUF"))


def test_the_readme_shows_the_launch_table():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    assert choice.markdown_table() in readme, "regenerate with: python scripts/update_readme.py"


GGUF_SMALL = "tencent/Hy-MT2-1.8B-GGUF"


def test_without_a_gpu_a_cached_gguf_runs_through_llama_cpp_when_it_is_installed():
    probe = FakeProbe(in_cache={f"{GGUF_SMALL}@Q4_K_M", SMALL}, llama_cpp=True)
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.model, picked.settings.engine) == (GGUF_SMALL, "llamacpp")
    assert picked.reason.startswith(f"{GGUF_SMALL} in Q4_K_M through llama.cpp (about ")
    assert picked.banner == ""
    # Not installed: the row is skipped, and the page says why the 1.8B is slow.
    probe = FakeProbe(in_cache={GGUF_SMALL, SMALL})
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.model, picked.settings.engine) == (SMALL, "process")
    assert picked.banner.startswith("**Slow model path.**")


def test_a_gguf_row_may_download_and_is_never_taken_by_a_server_engine():
    probe = FakeProbe(online={GGUF_SMALL, SMALL}, llama_cpp=True)
    picked = choice.choose(Settings(), probe)
    assert (picked.settings.model, picked.settings.engine) == (GGUF_SMALL, "llamacpp")
    assert probe.asked == [GGUF_SMALL] * 3  # cached Q8_0? Q4_K_M? downloadable?
    picked = choice.choose(Settings(engine="vllm"),
                           FakeProbe(in_cache={GGUF_SMALL}, online={SMALL}, llama_cpp=True))
    assert (picked.settings.model, picked.settings.engine) == (SMALL, "vllm")
    # --engine llamacpp: only GGUF rows.
    picked = choice.choose(Settings(engine="llamacpp"),
                           FakeProbe(in_cache={GGUF_SMALL, SMALL}, llama_cpp=True))
    assert (picked.settings.model, picked.settings.engine) == (GGUF_SMALL, "llamacpp")


def test_the_real_probe_counts_a_gguf_repository_cached_only_with_the_quantization_asked_for(
        monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    snapshot = tmp_path / "models--tencent--Hy-MT2-1.8B-GGUF" / "snapshots" / "def"
    snapshot.mkdir(parents=True)
    (snapshot / "Hy-MT2-1.8B-Q8_0.gguf").write_bytes(b"")
    (snapshot / "Hy-MT2-1.8B-Q4_K_M.gguf").write_bytes(b"")
    assert choice.MachineProbe("Q8_0").cached(GGUF_SMALL) is True
    assert choice.MachineProbe("Q2_K").cached(GGUF_SMALL) is False


def test_a_fallback_is_told_on_the_terminal_in_one_line():
    """The terminal said only "ready ... demo-model"; the reason was in the log and the page."""
    best = choice.choose(Settings(), FakeProbe(gpus=[79.5], online=EVERYTHING))
    assert best.why == ""  # the best there is: nothing to explain
    smaller = choice.choose(Settings(), FakeProbe(gpus=[11.0], online=EVERYTHING))
    assert smaller.why == ("Running tencent/Hy-MT2-7B in int4: Hy-MT2-7B in bf16 needs about 19 "
                           "GiB, 11.0 GiB of GPU memory free; Hy-MT2-7B in int8 needs about 13 "
                           "GiB, 11.0 GiB of GPU memory free.")
    no_weights = choice.choose(Settings(), FakeProbe(gpus=[40.0], in_cache={SMALL}))
    assert no_weights.why.startswith("Running tencent/Hy-MT2-1.8B in bf16: Hy-MT2-7B is "
                                     "neither cached nor downloadable")
    cpu = choice.choose(Settings(), FakeProbe(in_cache={GGUF_SMALL, SMALL}))
    assert cpu.why == ("Running tencent/Hy-MT2-1.8B in fp32: no GPU was found; llama-cpp-python, "
                       "which runs the GGUF file, is not installed.")
    demo = choice.choose(Settings(), FakeProbe())
    assert demo.why == (f"Serving the demo model, which knows only {len(load_phrases())} "
                        "phrases: No GPU was found, and no Hy-MT2-1.8B weights are cached here "
                        "or could be downloaded. For a real one without a GPU: `hf download "
                        "tencent/Hy-MT2-1.8B-GGUF --include '*Q4_K_M.gguf'`, then "
                        "`bash launch.sh`.")
    assert "\n" not in demo.why + smaller.why + cpu.why
    assert choice.choose(Settings(demo=True), FakeProbe()).why == ""  # asked for: no excuse


def test_the_printed_download_command_is_one_the_installed_hub_client_has():
    """huggingface_hub here ships `hf`, not `huggingface-cli`: every command printed is `hf
    download REPO [--include GLOB]`, and that parses with the installed `hf`."""
    import shutil
    import subprocess
    import sys

    hf = shutil.which("hf", path=str(Path(sys.executable).parent))
    assert hf is not None
    assert shutil.which("huggingface-cli", path=str(Path(sys.executable).parent)) is None
    options = subprocess.run([hf, "download", "--help"], capture_output=True, text=True,
                             timeout=60, check=True).stdout
    assert choice.DOWNLOAD.startswith("hf download tencent/") and "--include" in options
    banner = choice.choose(Settings(), FakeProbe()).banner
    assert choice.DOWNLOAD in banner and "huggingface-cli" not in banner
