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
- the attention is the call transformers' ``sdpa`` makes on a CPU for one query token: with the
  padding mask it builds, the query heads packed per key head; where no row is padded, no mask
  and SDPA's own grouped heads. A step of several tokens per row (a token and the drafts being
  verified with it, :mod:`hunyuan_webui.engine.speculative`) attends them one at a time, each
  with that same call over the keys up to itself: transformers' own call for several query
  tokens (a causal mask, the key heads repeated) rounds differently, and a draft's logits must
  be the very ones a one-token step would have had there.

Everything else is the model's own modules (embedding, norms, o/down projections, ``lm_head``,
the rotary embedding, the cache's ``update``). It is used only where it is exact: at load,
:func:`decode_step` runs a padded and an unpadded batch through both and keeps this step only if
the logits are equal, so a transformers release that changes the model's arithmetic turns it off
rather than changing an answer; and it sends steps of several tokens per row this way only from
the number of rows on (1 in bf16, 2 in fp32, where a single row is multiplied by the BLAS) at
which each of their positions equals the one-token steps taken one after the other, bit for bit:
there drafts cannot change an answer. Steps of more than 32 tokens in all, or of 1 in fp32, and
everything that is not a fp32 or bf16 ``HunYuanDenseV1ForCausalLM`` on a CPU go through the
model's own ``forward``.
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
    model. ``multi_rows``: from how many rows on steps of several tokens per row go this way too
    (where the load check found each of their positions equal to one-token steps; None: never)."""

    def __init__(self, model: Any, multi_rows: int | None = 1) -> None:
        config = model.config
        self.model = model
        self.multi_rows = multi_rows
        self.rows = packed_rows(model.get_input_embeddings().weight.dtype)
        self.heads, self.kv_heads = config.num_attention_heads, config.num_key_value_heads
        self.head_dim = model.model.layers[0].self_attn.head_dim
        self.layers = [_Layer(layer, self.heads, self.kv_heads)
                       for layer in model.model.layers[: config.num_hidden_layers]]

    def serves(self, rows: int, tokens: int) -> bool:
        """Whether a step of ``tokens`` per row over ``rows`` rows goes this way."""
        return rows * tokens in self.rows and (
            tokens == 1 or (self.multi_rows is not None and rows >= self.multi_rows))

    def __call__(self, inputs: dict[str, Any]) -> torch.Tensor:
        ids: torch.Tensor = inputs["input_ids"]
        rows, tokens = ids.shape
        if not self.serves(rows, tokens):
            return self.model(**inputs).logits
        core = self.model.model
        x = core.embed_tokens(ids)
        cos, sin = core.rotary_emb(x, position_ids=inputs["position_ids"])
        rotary = (cos.unsqueeze(1), sin.unsqueeze(1))
        padding: torch.Tensor = inputs["attention_mask"]
        cache = inputs["past_key_values"]
        for layer in self.layers:
            x = self._layer(layer, x, rotary, padding, cache)
        return self.model.lm_head(core.norm(x))

    def _layer(self, layer: _Layer, x: torch.Tensor, rotary: tuple[torch.Tensor, torch.Tensor],
               padding: torch.Tensor, cache: Any) -> torch.Tensor:
        rows, tokens = x.shape[0], x.shape[1]
        heads, kv_heads, dim = self.heads, self.kv_heads, self.head_dim
        attn = layer.attn
        qkv = packed_product(layer.layer.input_layernorm(x), layer.qkv.packed, layer.qkv.bias)
        split = (heads + kv_heads) * dim
        qk = qkv[..., :split].view(rows, tokens, heads + kv_heads, dim).transpose(1, 2)
        qk = _rms_norm(_rotate(qk, *rotary), layer.qk_norm, layer.eps)
        value = qkv[..., split:].view(rows, tokens, kv_heads, dim).transpose(1, 2)
        key, value = cache.update(qk[:, heads:], value, attn.layer_idx)
        x = x + attn.o_proj(_attention(qk[:, :heads], key, value, padding, attn.scaling))
        gate, up = packed_product(layer.layer.post_attention_layernorm(x), layer.gate_up.packed,
                                   layer.gate_up.bias).split(layer.gate_up.sizes, dim=-1)
        return x + layer.mlp.down_proj(layer.mlp.act_fn(gate) * up)


def _attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               padding: torch.Tensor, scale: float) -> torch.Tensor:
    """transformers' ``sdpa_attention_forward`` on a CPU for one query token per row, ``[rows,
    tokens, heads * dim]``: SDPA's grouped heads where no row is padded, else the query heads
    packed per key head under the padding mask. Several query tokens (a token and its drafts)
    are attended one at a time, each exactly as a step of one token at that place would be
    (the keys up to itself): transformers' own call for several tokens rounds differently, and
    a draft's logits must be the ones plain decoding would have had."""
    rows, heads, tokens, dim = query.shape
    width = key.shape[2]
    out = []
    for j in range(tokens):
        end = width - tokens + j + 1
        out.append(_one_query(query[:, :, j:j + 1], key[:, :, :end], value[:, :, :end],
                              padding[:, :end], scale))
    return torch.cat(out, dim=1) if tokens > 1 else out[0]


def _one_query(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
               padding: torch.Tensor, scale: float) -> torch.Tensor:
    rows, heads, _, dim = query.shape
    if bool(padding.all()):
        out = F.scaled_dot_product_attention(query, key, value, scale=scale, enable_gqa=True)
    else:
        kv_heads = key.shape[1]
        out = F.scaled_dot_product_attention(
            query.reshape(rows, kv_heads, heads // kv_heads, dim), key, value,
            attn_mask=padding.bool()[:, None, None, :], scale=scale)
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
    decodes). Steps of several tokens per row (a token and its drafts, being verified) go
    through it only if each of their positions gives the very logits that one-token steps,
    taken one after the other, give there: then drafts never change an answer."""
    if not fits(model):
        return None
    step = DecodeStep(model, multi_rows=None)
    try:
        if not _agrees(model, step):
            log.warning("the direct decoding step did not give the model's own logits; "
                        "using the model's forward")
            return None
        step.multi_rows = _drafts_agree(model, step)
    except (RuntimeError, AttributeError, TypeError, ValueError) as exc:
        log.warning("the direct decoding step failed its check (%s); using the model's forward",
                    exc)
        return None
    if step.multi_rows != 1:
        log.info("steps of several tokens per row round as one-token steps do %s; elsewhere "
                 "drafts are verified by the model's forward, the same answers up to rounding",
                 f"from {step.multi_rows} rows on" if step.multi_rows else "nowhere here")
    return step


IDS = torch.tensor([[0, 0, 3, 5, 6, 1, 9, 2], [7, 2, 9, 4, 8, 3, 5, 6]])
PADDED = torch.tensor([[0, 0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1, 1]])


def _agrees(model: Any, step: DecodeStep) -> bool:
    """Two rows, prefilled twice, one decoding step through each path: with one row left-padded
    and with none (attention takes another route without a mask); and one row alone where one
    row goes this way."""
    ids = IDS[:, :6] % model.config.vocab_size
    mask = PADDED[:, :6]
    checks = [(ids, mask), (ids[:, 2:], mask[1:, 2:].expand(2, -1))]
    if step.serves(1, 1):
        checks.append((ids[1:], mask[1:]))

    def forward(inputs: dict[str, Any]) -> torch.Tensor:
        return model(**inputs).logits

    return all(torch.equal(_logits(model, forward, i, m, 1), _logits(model, step, i, m, 1))
               for i, m in checks)


def _drafts_agree(model: Any, step: DecodeStep) -> int | None:
    """A step of 4 tokens per row through ``step`` against 4 one-token steps through what decodes
    them (``step`` itself, which hands the model's forward the rows it does not serve): equal
    logits at every position for two rows, and two of which one is left-padded; and for one
    row. From how many rows on they are equal (1 or 2), or None. (In fp32 one row is multiplied
    by the BLAS, two by oneDNN: they round differently.)"""
    ids = IDS % model.config.vocab_size

    def equal(i: torch.Tensor, m: torch.Tensor) -> bool:
        return torch.equal(_logits(model, step, i, m, 4),
                           _logits(model, step, i, m, 4, one_at_a_time=True))

    step.multi_rows = 1
    try:
        if not (equal(ids[:, 2:], PADDED[1:, 2:].expand(2, -1)) and equal(ids, PADDED)):
            return None
        return 1 if equal(ids[1:], PADDED[1:]) else 2
    finally:
        step.multi_rows = None


def _logits(model: Any, path: Any, ids: torch.Tensor, mask: torch.Tensor, tokens: int,
            one_at_a_time: bool = False) -> torch.Tensor:
    """Logits ``[rows, tokens, vocab]`` for the last ``tokens`` of ``ids`` after the rest was read
    by the model: from ``path`` (a step's inputs -> logits) in one step, or one token at a
    time."""
    from hunyuan_webui.engine.kvcache import growing_cache

    device = model.get_input_embeddings().weight.device
    ids, mask = ids.to(device), mask.to(device)
    read, read_mask = ids[:, :-tokens], mask[:, :-tokens]
    cache = growing_cache(model.config)
    start = read_mask.sum(-1, keepdim=True)

    def inputs(first: int, count: int) -> dict[str, Any]:
        grown = torch.cat([read_mask, torch.ones_like(read_mask[:, :1]).expand(-1, first + count)],
                          dim=-1)
        return {"input_ids": ids[:, ids.shape[1] - tokens + first:][:, :count],
                "attention_mask": grown, "past_key_values": cache, "use_cache": True,
                "position_ids": start + torch.arange(first, first + count, device=device)}

    with torch.inference_mode():
        model(input_ids=read, attention_mask=read_mask,
              position_ids=(read_mask.cumsum(-1) - 1).clamp(min=0), past_key_values=cache,
              use_cache=True)
        if not one_at_a_time:
            return path(inputs(0, tokens))
        return torch.cat([path(inputs(j, 1))[:, -1:] for j in range(tokens)], dim=1)
