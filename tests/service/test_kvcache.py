"""The in-place key/value cache and the CPU weight layout: same numbers, less copying."""

from __future__ import annotations

import pytest
import torch
from transformers import AutoModelForCausalLM, DynamicCache
from transformers.cache_utils import DynamicLayer

from hunyuan_webui.engine.cpu import TunedLinear, tune_linears
from hunyuan_webui.engine.kvcache import MIN_SPARE, GrowingLayer, growing_cache


def kv(batch: int, length: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(batch, 2, length, 4, generator=gen),
            torch.randn(batch, 2, length, 4, generator=gen))


def test_appending_writes_in_place_and_matches_concatenation():
    growing, plain = GrowingLayer(), DynamicLayer()
    for step, length in enumerate([5, 1, 1, 3, 1]):
        keys, values = kv(3, length, step)
        got, want = growing.update(keys, values), plain.update(keys, values)
        assert torch.equal(got[0], want[0]) and torch.equal(got[1], want[1])
        if step == 0:
            room = growing.keys.data_ptr()
        assert growing.keys.data_ptr() == room  # no copy: the same buffer all along
    assert growing.get_seq_length() == plain.get_seq_length() == 11


def test_a_replaced_tensor_is_adopted_and_the_room_grows():
    layer = GrowingLayer()
    layer.update(*kv(2, 4, 0))
    # what the scheduler does when a row leaves: a new tensor that is no view of the room
    layer.keys = layer.keys[1:].clone()
    layer.values = layer.values[1:].clone()
    before = layer.keys.clone()
    keys, values = kv(1, 1, 1)
    out_keys, _ = layer.update(keys, values)
    assert out_keys.shape == (1, 2, 5, 4)
    assert torch.equal(out_keys[:, :, :4], before) and torch.equal(out_keys[:, :, 4:], keys)
    for i in range(MIN_SPARE + 10):  # past the first spare room: moved once more, still right
        layer.update(*kv(1, 1, 100 + i))
    assert layer.get_seq_length() == 5 + MIN_SPARE + 10


def test_a_model_decodes_the_same_with_either_cache(demo_dir):
    model = AutoModelForCausalLM.from_pretrained(demo_dir, dtype=torch.float32).eval()
    ids = torch.tensor([[5, 9, 30, 41, 17, 8]])

    def greedy(cache):
        out, tokens = ids, []
        with torch.inference_mode():
            for _ in range(12):
                logits = model(input_ids=out, past_key_values=cache, use_cache=True).logits
                out = logits[:, -1:].argmax(-1)
                tokens.append(int(out))
        return tokens, cache

    plain, _ = greedy(DynamicCache(config=model.config))
    growing, cache = greedy(growing_cache(model.config))
    assert growing == plain
    assert all(isinstance(layer, GrowingLayer) for layer in cache.layers)


def test_tuned_linears_keep_shapes_and_results_and_leave_tied_weights_alone(demo_dir):
    model = AutoModelForCausalLM.from_pretrained(demo_dir, dtype=torch.float32).eval()
    ids = torch.tensor([[5, 9, 30, 41, 17, 8], [7, 7, 12, 3, 99, 1]])

    def logits(rows: torch.Tensor) -> torch.Tensor:
        with torch.inference_mode():
            return model(input_ids=rows).logits

    alone, batched = logits(ids[:1, -1:]), logits(ids[:, -1:])  # 1 row (BLAS), 2 rows (oneDNN)
    before = logits(ids)
    shapes = {name: p.shape for name, p in model.named_parameters()}
    linears = [m for m in model.modules() if type(m) is torch.nn.Linear]
    tied = model.get_output_embeddings().weight is model.get_input_embeddings().weight
    said = tune_linears(model)
    assert said.startswith(f"{len(linears) - (1 if tied else 0)} weights stored transposed")
    assert {name: p.shape for name, p in model.named_parameters()} == shapes
    assert model.get_input_embeddings().weight.is_contiguous()
    up = model.model.layers[0].mlp.up_proj
    assert up.weight.t().is_contiguous() and not up.weight.is_contiguous()
    if torch.backends.mkldnn.is_available():  # a small model, plenty of memory: always packed
        assert "oneDNN copies for 2-32 rows" in said and isinstance(up, TunedLinear)  # fp32
    for got, want in ((logits(ids), before), (logits(ids[:1, -1:]), alone),
                      (logits(ids[:, -1:]), batched)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
        assert torch.equal(got.argmax(-1), want.argmax(-1))


def test_projections_that_read_one_input_are_multiplied_together_in_any_order(demo_dir):
    """q/k/v and gate/up share one reordered matrix; each module still answers its own product,
    whichever member is called first, and never a product of an earlier input."""
    import torch.nn.functional as F

    from hunyuan_webui.engine.cpu import SharedInput

    if not torch.backends.mkldnn.is_available():
        pytest.fail("this torch build has no oneDNN: the CPU engine's fast path is not tested")
    model = AutoModelForCausalLM.from_pretrained(demo_dir, dtype=torch.float32).eval()
    said = tune_linears(model)
    layer = model.model.layers[0]
    attn, mlp = layer.self_attn, layer.mlp
    assert f"{2 * len(model.model.layers)} groups of projections multiplied together" in said
    assert isinstance(attn.q_proj.shared, SharedInput)
    assert attn.q_proj.shared is attn.k_proj.shared is attn.v_proj.shared
    assert mlp.gate_proj.shared is mlp.up_proj.shared is not None
    assert attn.o_proj.shared is None and mlp.down_proj.shared is None

    gen = torch.Generator().manual_seed(1)
    x, y = (torch.randn(4, attn.q_proj.in_features, generator=gen) for _ in range(2))

    def want(module, rows):
        return F.linear(rows, module.weight, module.bias)

    with torch.inference_mode():
        order = [attn.v_proj, attn.q_proj, attn.k_proj]  # not the order the model uses
        got = {id(m): m(x) for m in order}
        for m in order:
            torch.testing.assert_close(got[id(m)], want(m, x), rtol=1e-4, atol=1e-4)
        # q on x, then k on y: k must not hand back its column of x's product
        attn.q_proj(x)
        torch.testing.assert_close(attn.k_proj(y), want(attn.k_proj, y), rtol=1e-4, atol=1e-4)
        # the same member twice on one input multiplies again rather than failing
        torch.testing.assert_close(mlp.up_proj(x), want(mlp.up_proj, x), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mlp.up_proj(x), want(mlp.up_proj, x), rtol=1e-4, atol=1e-4)
        torch.testing.assert_close(mlp.gate_proj(x), want(mlp.gate_proj, x), rtol=1e-4,
                                   atol=1e-4)
