"""The registry as data: Hy-MT2's entries, per-model decoding defaults, what can run each model."""

from __future__ import annotations

import json

import pytest

from hunyuan_webui import models, prompts
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.errors import ModelLoadError
from hunyuan_webui.prompts import PromptFamily

HY_MT2 = ("tencent/Hy-MT2-1.8B", "tencent/Hy-MT2-1.8B-FP8", "tencent/Hy-MT2-7B",
          "tencent/Hy-MT2-7B-FP8", "tencent/Hy-MT2-30B-A3B", "tencent/Hy-MT2-30B-A3B-FP8")
MT2_MODES = {"translate", "terminology", "context", "style", "instructions", "structured"}


@pytest.mark.parametrize("model_id", HY_MT2)
def test_hy_mt2_entries(model_id):
    spec = models.resolve(model_id)
    assert spec.family is PromptFamily.HY_MT2
    assert spec.modes == MT2_MODES
    assert spec.license == "Apache-2.0"
    assert spec.prequantized == ("fp8" if model_id.endswith("-FP8") else None)
    if "30B" in model_id:
        assert (spec.architecture, spec.chat_format) == ("hy_v3", "hy-v3")
        assert spec.reasoning_tags == ("<think>", "</think>")
        assert dict(spec.chat_template_kwargs) == {"reasoning_effort": "no_think"}
        assert (spec.params_b, spec.active_params_b) == (30.0, 3.0)
    else:
        assert spec.architecture == "hunyuan_v1_dense" and spec.reasoning_tags is None
        assert spec.chat_format == ("hy-1.8b" if "1.8B" in model_id else "hunyuan-7b")


def test_each_model_has_its_own_decoding_defaults():
    """The 30B uses 0.7 / 1.0 / no top-k / no repetition penalty; the others the model card's."""
    moe = models.resolve("tencent/Hy-MT2-30B-A3B").decoding
    assert (moe.temperature, moe.top_p, moe.top_k, moe.repetition_penalty) == (0.7, 1.0, 0, 1.0)
    for model_id in ("tencent/Hy-MT2-7B", "tencent/Hy-MT2-1.8B", "tencent/Hunyuan-MT-7B"):
        card = models.resolve(model_id).decoding
        assert (card.temperature, card.top_p, card.top_k, card.repetition_penalty) == (
            0.7, 0.6, 20, 1.05)
    # A request's own options start from the model's, not from the class defaults.
    merged = DecodingOptions.from_mapping({"seed": 3}, moe)
    assert (merged.top_p, merged.top_k, merged.repetition_penalty, merged.seed) == (1.0, 0, 1.0, 3)


def test_every_mode_of_every_entry_has_a_prompt_in_its_family():
    for spec in models.REGISTRY.values():
        assert spec.modes <= prompts.family(spec.family).modes, spec.id
        assert set(spec.engines) <= set(models.ENGINE_NAMES), spec.id


def test_gguf_builds_name_the_engine_that_runs_them():
    spec = models.resolve("tencent/Hy-MT2-1.8B-GGUF")
    with pytest.raises(ModelLoadError) as err:
        models.check_in_process(spec)
    assert err.value.user_message == (
        "tencent/Hy-MT2-1.8B-GGUF is a GGUF build, which transformers does not run. Engines "
        "that can run it: llama.cpp. llama.cpp: `llama-server -hf tencent/Hy-MT2-1.8B-GGUF "
        "--jinja --port 8080`, then `bash launch.sh --engine openai --endpoint "
        "http://127.0.0.1:8080/v1 --model tencent/Hy-MT2-1.8B-GGUF`.")


def test_an_older_transformers_gets_the_engines_that_can_run_the_model():
    spec = models.resolve("tencent/Hy-MT2-30B-A3B")
    assert models.in_process_problem(spec) is None  # the pinned transformers knows hy_v3
    with pytest.raises(ModelLoadError) as err:
        models.check_in_process(spec, transformers_version="5.5.0")
    message = err.value.user_message
    assert message.startswith("tencent/Hy-MT2-30B-A3B needs transformers >= 5.6.0 and this "
                               "install has 5.5.0. Engines that can run it: vLLM, SGLang. ")
    assert "`vllm serve tencent/Hy-MT2-30B-A3B`, then `bash launch.sh --engine openai " \
           "--endpoint http://127.0.0.1:8000/v1 --model tencent/Hy-MT2-30B-A3B`" in message
    with pytest.raises(ModelLoadError, match="model type hy_v3"):
        models.check_in_process(spec, transformers_version="5.23.0",
                                architectures={"hunyuan_v1_dense"})


def test_local_directories_are_matched_by_name_then_by_model_type(tmp_path):
    small = tmp_path / "Hy-MT2-1.8B"
    small.mkdir()
    spec = models.resolve(str(small))
    assert (spec.family, spec.chat_format, spec.local_path) == (
        PromptFamily.HY_MT2, "hy-1.8b", str(small.resolve()))
    moe = tmp_path / "my-finetune"
    moe.mkdir()
    (moe / "config.json").write_text(json.dumps({"model_type": "hy_v3"}))
    assert models.resolve(str(moe)).decoding == models.HY_V3_DECODING
    assert models.resolve("someone/hy-mt2-7b-finetuned").family is PromptFamily.HY_MT2


def test_a_sidecar_may_carry_decoding_defaults(tmp_path):
    (tmp_path / "hymt.json").write_text(json.dumps(
        {"family": "hy-mt2", "decoding": {"top_k": 0, "top_p": 1.0}, "demo": True}))
    spec = models.resolve(str(tmp_path))
    assert (spec.decoding.top_k, spec.decoding.top_p, spec.decoding.temperature) == (0, 1.0, 0.7)
    assert spec.demo


def test_memory_estimates_in_the_table():
    assert models.memory_text(models.resolve("tencent/Hy-MT2-7B")) == (
        "bf16 14.0 · int8 8.0 · int4 5.0 GiB; KV 128 KiB/token")
    assert models.memory_text(models.resolve("tencent/Hy-MT2-1.8B-GGUF")) == (
        "Q4_K_M 1.0 · Q8_0 1.8 GiB")
    assert models.decoding_text(models.HY_V3_DECODING) == "0.7 / 1.0 / off / 1.0"


def test_top_k_off_samples_from_everything_and_reaches_vllm_as_minus_one():
    import torch

    from hunyuan_webui.engine.remote import request_body
    from hunyuan_webui.engine.sampling import sample

    options = models.HY_V3_DECODING
    logits = torch.tensor([0.0] * 30 + [1.0])  # top_k 20 would cut ten of these
    generator = torch.Generator().manual_seed(0)
    picks = {int(sample(logits, options, generator)) for _ in range(300)}
    assert len(picks) > 20  # top-p 1.0 and no top-k: every token can come out
    assert request_body("m", "p", options, 16, "vllm")["top_k"] == -1
    with pytest.raises(Exception, match="top_k"):
        DecodingOptions(top_k=-1)
