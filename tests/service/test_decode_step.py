"""The direct decoding step (hunyuan_webui.engine.decode): the model's own logits, bit for bit,
or not used at all."""

from __future__ import annotations

import logging

import pytest
import torch

from hunyuan_webui import models
from hunyuan_webui.engine import loader
from hunyuan_webui.engine.batch import Batch, Prefill, Row
from hunyuan_webui.engine.decode import decode_step
from hunyuan_webui.engine.kvcache import growing_cache


def _running(loaded: loader.LoadedModel, prompts: list[list[int]]) -> Batch:
    """``prompts`` prefilled together (left-padded), as the scheduler merges them."""
    vocab = loaded.model.config.vocab_size
    rows = [Row(None, prompt, 64, None, None) for prompt in prompts]  # type: ignore[arg-type]
    group = Prefill.start(rows, 0, loaded.device, growing_cache(loaded.model.config))
    with torch.inference_mode():
        logits = group.read(loaded.model, 1 << 20)
    assert logits is not None
    running = Batch()
    running.merge(group, logits.argmax(-1), torch.zeros(len(prompts), vocab, dtype=torch.bool))
    return running


@pytest.fixture(scope="module")
def loaded(demo_dir: str) -> loader.LoadedModel:
    if not torch.backends.mkldnn.is_available():
        pytest.fail("this torch build has no oneDNN: the CPU engine's fast path is not tested")
    return loader.load(models.resolve(demo_dir), device="cpu")


@pytest.mark.parametrize("lengths", [(3, 11, 7), (6, 6), (9,)], ids=["padded", "unpadded", "one"])
def test_the_direct_step_gives_the_models_own_logits_while_rows_grow_and_leave(
        loaded: loader.LoadedModel, lengths: tuple[int, ...]) -> None:
    """Two copies of one batch decode side by side, one through the model's forward and one
    through the app's step; after every step, and after a row leaves, the logits are equal."""
    assert loaded.decode is not None
    prompts = [[(5 * row + 3 * i) % 700 + 1 for i in range(n)] for row, n in enumerate(lengths)]
    forward, direct = _running(loaded, prompts), _running(loaded, prompts)
    with torch.inference_mode():
        for step in range(30):
            want = loaded.model(**forward.step_inputs()).logits[:, -1, :]
            got = loaded.next_logits(direct.step_inputs())
            assert torch.equal(got, want), f"step {step}: max diff {(got - want).abs().max()}"
            forward.next = direct.next = want.argmax(-1)
            if step == 12 and len(lengths) > 1:  # a row ends: the cache is sliced and trimmed
                for batch in (forward, direct):
                    batch.keep(list(range(1, len(lengths))))
    assert len(direct) == max(1, len(lengths) - 1)


def test_a_model_whose_arithmetic_differs_keeps_its_own_forward(
        demo_dir: str, caplog: pytest.LogCaptureFixture) -> None:
    """As if a transformers release changed the query norm: the load-time check sees different
    logits, and the model's forward decodes."""
    model = loader.load(models.resolve(demo_dir), device="cpu").model
    norm = model.model.layers[0].self_attn.query_layernorm
    norm.forward = lambda x: torch.nn.functional.rms_norm(x, norm.weight.shape, norm.weight, 1e-2)
    with caplog.at_level(logging.WARNING, logger="hunyuan_webui.engine.decode"):
        assert decode_step(model) is None
    assert "did not give the model's own logits" in caplog.text


def test_only_fp32_cpu_models_get_the_direct_step(demo_dir: str) -> None:
    assert loader.load(models.resolve(demo_dir), dtype="bf16", device="cpu").decode is None
