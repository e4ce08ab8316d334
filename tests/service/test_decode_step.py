"""The direct decoding step (hunyuan_webui.engine.decode): the model's own logits, bit for bit,
or not used at all; in fp32 and bf16, for one token per row and for a token with its drafts
(speculative decoding's verification steps, with the holes they leave and the compaction that
removes them)."""

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


@pytest.fixture(scope="module", params=["fp32", "bf16"])
def loaded(demo_dir: str, request: pytest.FixtureRequest) -> loader.LoadedModel:
    if not torch.backends.mkldnn.is_available():
        pytest.fail("this torch build has no oneDNN: the CPU engine's fast path is not tested")
    return loader.load(models.resolve(demo_dir), dtype=request.param, device="cpu")


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


@pytest.mark.parametrize("lengths", [(3, 11, 7), (6, 6), (9,)], ids=["padded", "even", "one"])
def test_a_token_with_its_drafts_gets_the_logits_of_one_token_steps(
        loaded: loader.LoadedModel, lengths: tuple[int, ...]) -> None:
    """Speculative decoding changes no answer: a verification step of a token and 3 drafts per
    row gives, at every position, bit for bit the logits that four one-token steps give there
    (bf16 from one row on; fp32 from two, where one row is multiplied by the BLAS)."""
    rows_from = {"fp32": 2, "bf16": 1}[loaded.dtype]
    assert loaded.decode is not None and loaded.decode.multi_rows == rows_from
    prompts = [[(5 * row + 3 * i) % 700 + 1 for i in range(n)] for row, n in enumerate(lengths)]
    drafted, stepped = _running(loaded, prompts), _running(loaded, prompts)
    with torch.inference_mode():
        for step in range(6):
            tokens = [[(7 * step + row + d) % 50 + 1 for d in range(4)] for row in range(len(lengths))]
            for batch in (drafted, stepped):
                batch.next = torch.tensor([t[0] for t in tokens])
            got = loaded.logits(drafted.verify_inputs([t[1:] for t in tokens]))
            drafted.settle(4, [4] * len(lengths))
            want = []
            for depth in range(4):
                stepped.next = torch.tensor([t[depth] for t in tokens])
                want.append(loaded.next_logits(stepped.step_inputs()))
            same = torch.equal(got, torch.stack(want, dim=1))
            assert same == (len(lengths) >= rows_from), (
                f"step {step}: max diff {(got - torch.stack(want, dim=1)).abs().max()}")


@pytest.mark.parametrize("lengths", [(3, 11, 7), (9,)], ids=["padded", "one"])
def test_rejected_drafts_leave_the_cache(loaded: loader.LoadedModel,
                                          lengths: tuple[int, ...]) -> None:
    """Steps of a token and its drafts (up to 4, a different number per row, some rows none);
    each row then keeps a different number of its new columns (holes in the others' places),
    and the batch is compacted now and then. Every row's logits after its kept tokens are those
    of the same row alone, fed the same tokens one step at a time: what was rolled back is gone
    (up to rounding: the rows around it and the holes change the shapes)."""
    close = {"fp32": 1e-3, "bf16": 0.25}[loaded.dtype]
    prompts = [[(5 * row + 3 * i) % 700 + 1 for i in range(n)] for row, n in enumerate(lengths)]
    batch = _running(loaded, prompts)
    alone = [_running(loaded, [prompt]) for prompt in prompts]
    nexts = [11 + row for row in range(len(lengths))]
    with torch.inference_mode():
        for step in range(12):
            drafts = [[(step + row + d) % 50 + 1 for d in range((step + row) % 5)]
                      for row in range(len(lengths))]
            drafts[0] = drafts[0] or [7]
            batch.next = torch.tensor(nexts)
            got = loaded.logits(batch.verify_inputs(drafts))
            kept = [1 + (step * (row + 1)) % (1 + len(run)) for row, run in enumerate(drafts)]
            batch.settle(got.shape[1], kept)
            if step % 4 == 3:
                batch.compact()
            for row, (run, n) in enumerate(zip(drafts, kept)):
                for token in [nexts[row], *run[:n - 1]]:
                    alone[row].next = torch.tensor([token])
                    logits = loaded.logits(alone[row].step_inputs())[0, -1]
                assert torch.allclose(got[row, n - 1], logits, atol=close), (
                    f"step {step}, row {row}: max diff {(got[row, n - 1] - logits).abs().max()}")
                nexts[row] = int(got[row, n - 1].float().argmax())


def test_fp16_cpu_models_keep_their_own_forward(demo_dir: str) -> None:
    assert loader.load(models.resolve(demo_dir), dtype="fp16", device="cpu").decode is None
