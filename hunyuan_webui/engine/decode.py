"""One batched decoding step of a Hunyuan dense model on a CPU, without transformers' per-call
machinery, for the same logits bit for bit.

A decoding step at a few rows is small work spread over many calls: for each of the model's layers
transformers' ``forward`` goes through its decorators, keyword plumbing, mask building and
attention dispatch, and computes the rotary embedding and the q/k norms twice, once for the
queries and once for the keys. On the benchmark model at 8 rows that machinery was about a sixth
of the step. :class:`DecodeStep` computes the same step directly from the model's own modules and
weights:

- q, k and v come from one multiply (the shared oneDNN matrix of
  :class:`~hunyuan_webui.engine.cpu.SharedInput`) and are read as views of its output, and so are
  gate and up;
- the rotary embedding and the q/k norms run once over the query and key heads together (the same
  elementwise arithmetic, per head);
- the attention is the call transformers' ``sdpa`` makes on a CPU: for one query token, with the
  padding mask it builds, the query heads packed per key head, and where no row is padded, no
  mask and SDPA's own grouped heads; for several query tokens (a token and the drafts being
  verified with it, :mod:`hunyuan_webui.engine.speculative`), the padding and causal mask it
  builds, the key and value heads repeated.

Everything else is the model's own modules (embedding, norms, o/down projections, ``lm_head``,
the rotary embedding, the cache's ``update``). It is used only where it is exact: at load,
:func:`decode_step` runs a padded and an unpadded batch through both, for one token per row and
for several, and keeps each only if the logits are equal, so a transformers release that changes
the model's arithmetic turns it off rather than changing an answer. Steps of more than 32 tokens
in all, or of 1 in fp32 (which the shared matrix does not serve), and everything that is not a
fp32 or bf16 ``HunYuanDenseV1ForCausalLM`` on a CPU go through the model's own ``forward``.
``python -m benchmarks.cpu_step`` measures the difference.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
import torch.nn.functional as F
from transformers.models.hunyuan_v1_dense.modeling_hunyuan_v1_dense import rotate_half

from hunyuan_webui.engine.cpu import SharedInput, TunedLinear, packed_product, packed_rows

log = logging.getLogger(__name__)

ARCHITECTURE = "HunYuanDenseV1ForCausalLM"


class _Layer:
    """What one decoder layer's step reads, gathered once."""

    def __init__(self, layer: Any, heads: int, kv_heads: int) -> None:
        attn, mlp = layer.self_attn, layer.mlp
        self.layer, self.attn, self.mlp = layer, attn, mlp
        self.qkv: SharedInput = attn.q_proj.shared
        self.gate_up: SharedInput = mlp.gate_proj.shared
        dim = attn.head_dim
        q_norm, k_norm = attn.query_layernorm, attn.key_layernorm
        # One weight row per head, query heads then key heads: [heads + kv_heads, 1, dim].
        self.qk_norm = torch.cat([q_norm.weight.detach().expand(heads, dim),
                                  k_norm.weight.detach().expand(kv_heads, dim)])[:, None, :]
        self.eps = q_norm.variance_epsilon


class DecodeStep:
    """The logits ``[rows, tokens, vocab]`` of a batched decoding step, from the inputs
    :meth:`~hunyuan_webui.engine.batch.Batch.step_inputs` (one token per row) or
    :meth:`~hunyuan_webui.engine.batch.Batch.verify_inputs` (a token and its drafts) give the
    model. ``multi``: whether steps of several tokens per row go this way too (the load check
    found them exact); else only one-token steps do."""

    def __init__(self, model: Any, multi: bool = True) -> None:
        config = model.config
        self.model = model
        self.multi = multi
        self.rows = packed_rows(model.get_input_embeddings().weight.dtype)
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = model.model.layers[0].self_attn.head_dim
        self.layers = [_Layer(layer, self.heads, self.kv_heads)
                       for layer in model.model.layers[: config.num_hidden_layers]]

    def serves(self, rows: int, tokens: int) -> bool:
        """Whether a step of ``tokens`` per row over ``rows`` rows goes this way."""
        return rows * tokens in self.rows and (tokens == 1 or self.multi)

    def __call__(self, inputs: dict[str, Any]) -> torch.Tensor:
        ids: torch.Tensor = inputs["input_ids"]
        rows, tokens = ids.shape
        if not self.serves(rows, tokens):
            return self.model(**inputs).logits
        core = self.model.model
        x = core.embed_tokens(ids)
        cos, sin = core.rotary_emb(x, position_ids=inputs["position_ids"])
        rotary = (cos.unsqueeze(1), sin.unsqueeze(1))
        mask = _mask(inputs["attention_mask"], tokens)
        cache = inputs["past_key_values"]
        for layer in self.layers:
            x = self._layer(layer, x, rotary, mask, cache)
        return self.model.lm_head(core.norm(x))

    def _layer(self, layer: _Layer, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor],
               mask: torch.Tensor | None, cache: Any) -> torch.Tensor:
        rows, tokens = x.shape[0], x.shape[1]
        heads, kv_heads, dim = self.heads, self.kv_heads, self.head_dim
        attn = layer.attn
        qkv = packed_product(layer.layer.input_layernorm(x), layer.qkv.packed, layer.qkv.bias)
        split = (heads + kv_heads) * dim
        qk = qkv[..., :split].view(rows, tokens, heads + kv_heads, dim).transpose(1, 2)
        qk = _rms_norm(_rotate(qk, *rotary), layer.qk_norm, layer.eps)
        value = qkv[..., split:].view(rows, tokens, kv_heads, dim).transpose(1, 2)
        key, value = cache.update(qk[:, heads:], value, attn.layer_idx)
        x = x + attn.o_proj(_attention(qk[:, :heads], key, value, mask, attn.scaling))
        gate, up = packed_product(layer.layer.post_attention_layernorm(x), layer.gate_up.packed,
                                   layer.gate_up.bias).split(layer.gate_up.sizes, dim=-1)
        return x + layer.mlp.down_proj(layer.mlp.act_fn(gate) * up)


def _mask(padding: torch.Tensor, tokens: int) -> torch.Tensor | None:
    """The boolean mask transformers builds for SDPA from the 2-D padding mask ``[rows, kv]``:
    none for one token without padding; the padding alone for one token; padding and causality
    (each new token sees the cache and the new tokens up to itself) for several."""
    if tokens == 1:
        return None if bool(padding.all()) else padding.bool()[:, None, None, :]
    width = padding.shape[1]
    seen = torch.arange(width, device=padding.device)[None, :] <= torch.arange(
        width - tokens, width, device=padding.device)[:, None]  # [tokens, kv]
    return padding.bool()[:, None, None, :] & seen[None, None]


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               mask: torch.Tensor | None, scale: float) -> torch.Tensor:
    """transformers' ``sdpa_attention_forward`` on a CPU, ``[rows, tokens, heads * dim]``: for one
    query token, SDPA's grouped heads without a mask and the query heads packed per key head with
    one; for several, the key and value heads repeated for their query heads (``repeat_kv``)."""
    rows, heads, tokens, dim = query.shape
    kv_heads = key.shape[1]
    if tokens > 1:
        group = heads // kv_heads
        key, value = (t[:, :, None].expand(rows, kv_heads, group, *t.shape[2:])
                      .reshape(rows, heads, *t.shape[2:]) for t in (key, value))
        out = F.scaled_dot_product_attention(query, key, value, attn_mask=mask, scale=scale)
        return out.transpose(1, 2).reshape(rows, tokens, heads * dim)
    if mask is None:
        out = F.scaled_dot_product_attention(query, key, value, scale=scale, enable_gqa=True)
    else:
        out = F.scaled_dot_product_attention(
            query.reshape(rows, kv_heads, heads // kv_heads, dim), key, value, attn_mask=mask,
            scale=scale)
    return out.reshape(rows, 1, heads * dim)


def _rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """transformers' ``apply_rotary_pos_emb`` for one tensor of heads."""
    return x * cos + rotate_half(x) * sin


def _rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """transformers' ``HunYuanDenseV1RMSNorm``, with a weight per head."""
    dtype = x.dtype
    x = x.to(torch.float32)
    x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return weight * x.to(dtype)


def fits(model: Any) -> bool:
    """A fp32 or bf16 Hunyuan dense model whose projections share oneDNN matrices
    (:func:`~hunyuan_webui.engine.cpu.tune_linears` did its work), with q/k norms and SDPA."""
    if type(model).__name__ != ARCHITECTURE or model.config._attn_implementation != "sdpa":
        return False
    layers = model.model.layers
    return bool(layers) and all(
        isinstance(getattr(layer.self_attn, name, None), TunedLinear)
        and getattr(layer.self_attn, name).shared is not None
        for layer in layers for name in ("q_proj", "k_proj", "v_proj")) and all(
        isinstance(layer.mlp.gate_proj, TunedLinear) and layer.mlp.gate_proj.shared is not None
        and layer.mlp.up_proj.shared is layer.mlp.gate_proj.shared
        and hasattr(layer.self_attn, "query_layernorm") for layer in layers)


def decode_step(model: Any) -> DecodeStep | None:
    """A :class:`DecodeStep` for ``model`` if it fits and gives the model's own logits for one
    token per row on a padded and an unpadded batch, else None (the model's ``forward``
    decodes). Steps of several tokens per row (drafts being verified) go through it only if it
    gives the model's own logits for those too."""
    if not fits(model):
        return None
    step = DecodeStep(model, multi=False)
    try:
        if not _agrees(model, step, tokens=1):
            log.warning("the direct decoding step did not give the model's own logits; "
                        "using the model's forward")
            return None
        step.multi = True
        step.multi = _agrees(model, step, tokens=3)
    except (RuntimeError, AttributeError, TypeError, ValueError) as exc:
        log.warning("the direct decoding step failed its check (%s); using the model's forward",
                    exc)
        return None
    if not step.multi:
        log.warning("the direct decoding step did not give the model's own logits for several "
                    "tokens per row; drafts are verified by the model's forward")
    return step


def _agrees(model: Any, step: DecodeStep, tokens: int) -> bool:
    """Two rows, prefilled twice, one step of ``tokens`` per row through each path: with one row
    left-padded (and, for several tokens, a new column that is a hole, as a row with fewer drafts
    has) and with none (attention takes another route without a mask); and one row alone where
    one row goes this way."""
    ids = torch.tensor([[0, 0, 3, 5, 6, 1], [7, 2, 9, 4, 8, 3]]) % model.config.vocab_size
    mask = torch.tensor([[0, 0, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1]])
    new = torch.ones((2, tokens), dtype=torch.long)
    if tokens > 1:
        new[0, -1] = 0
    checks = [(ids, mask, new), (ids[:, 2:], torch.ones_like(mask[:, 2:]), torch.ones_like(new))]
    if step.serves(1, tokens):
        checks.append((ids[1:], mask[1:], torch.ones_like(new[1:])))
    return all(_agrees_on(model, step, *check) for check in checks)


def _agrees_on(model: Any, step: DecodeStep, ids: torch.Tensor, mask: torch.Tensor,
               new: torch.Tensor) -> bool:
    """The same logits from both paths for a step of ``new.shape[1]`` tokens (the last ones of
    ``ids``; ``new``: their mask) after the rest was read."""
    from hunyuan_webui.engine.kvcache import growing_cache

    device = model.get_input_embeddings().weight.device
    tokens = new.shape[1]
    ids, mask, new = ids.to(device), mask.to(device), new.to(device)
    read, read_mask = ids[:, :-tokens], mask[:, :-tokens]
    positions = read_mask.sum(-1, keepdim=True) + torch.arange(tokens, device=device)
    results = []
    with torch.inference_mode():
        for path in (lambda inputs: model(**inputs).logits, step):
            cache = growing_cache(model.config)
            model(input_ids=read, attention_mask=read_mask,
                  position_ids=(read_mask.cumsum(-1) - 1).clamp(min=0), past_key_values=cache,
                  use_cache=True)
            results.append(path({"input_ids": ids[:, -tokens:],
                                 "attention_mask": torch.cat([read_mask, new], dim=-1),
                                 "position_ids": positions, "past_key_values": cache,
                                 "use_cache": True}))
    return torch.equal(*results)
