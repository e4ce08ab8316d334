"""The machine a teacher has: a laptop without a GPU.

There the launch runs Hy-MT2-1.8B's GGUF through llama.cpp (a quantized file read once per token
instead of 7 GB of fp32), installs llama-cpp-python for it (``launch.sh``, asked through
``python -m hunyuan_webui.choice --needs-llama-cpp``), and says honestly what runs when it cannot.
A local checkpoint is sized from its own files, so a small one starts on a CPU as it is.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest
from apphelpers import app_process

from hunyuan_webui import models
from hunyuan_webui.app import check_hardware
from hunyuan_webui.demo_model import demo_dir, load_phrases
from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.settings import Settings

REPO = Path(__file__).resolve().parent.parent
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
    """The issue: a 25M-parameter checkpoint without hymt.json was refused with "needs a GPU
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
