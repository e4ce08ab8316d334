"""Choosing the next token of every sequence in a batch, exactly as ``model.generate`` would.

The order matches transformers' logits processors: repetition penalty (over the prompt and the
tokens generated so far), then temperature, top-k and top-p, then a draw from the request's own
generator. Greedy (deterministic) rows apply the repetition penalty and take the argmax. The
penalty and the argmax run on the whole batch at once, and the chosen ids reach Python in one
transfer per step (one device synchronisation, not one per row); only sampled rows are handled
one by one, so sampling stays per request.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from hunyuan_webui.engine.base import DecodingOptions


def seen_mask(input_ids: torch.Tensor, attention_mask: torch.Tensor, vocab: int) -> torch.Tensor:
    """[batch, vocab] booleans: which ids each row's prompt contains (padding excluded)."""
    counts = torch.zeros((input_ids.shape[0], vocab), dtype=torch.int32, device=input_ids.device)
    counts.scatter_add_(1, input_ids, attention_mask.to(torch.int32))
    return counts > 0


def apply_repetition_penalty(logits: torch.Tensor, seen: torch.Tensor,
                             penalties: torch.Tensor) -> torch.Tensor:
    """Make seen tokens less likely: divide positive scores, multiply negative ones (per row)."""
    penalties = penalties.unsqueeze(-1)
    penalized = torch.where(logits < 0, logits * penalties, logits / penalties)
    return torch.where(seen, penalized, logits)


def choose(logits: torch.Tensor, seen: torch.Tensor, options: Sequence[DecodingOptions],
           generators: Sequence[torch.Generator | None]) -> list[int]:
    """The next token id of each row; ``logits`` is float32 [batch, vocab]."""
    penalties = [o.repetition_penalty for o in options]
    if any(p != 1.0 for p in penalties):
        logits = apply_repetition_penalty(
            logits, seen, torch.tensor(penalties, dtype=logits.dtype, device=logits.device))
    tokens = torch.argmax(logits, dim=-1)
    # Sampled rows that draw from one generator (the unseeded ones: None) with the same options
    # are drawn in one call; a seeded request has a generator of its own, so its draws are those
    # of a row sampled alone.
    groups: dict[tuple[int, float, float, float], list[int]] = {}
    for row, (opts, generator) in enumerate(zip(options, generators)):
        if not opts.deterministic:  # the repetition penalty is applied above, row by row
            key = (id(generator), opts.temperature, opts.top_k, opts.top_p)
            groups.setdefault(key, []).append(row)
    for rows in groups.values():
        opts, generator = options[rows[0]], generators[rows[0]]
        if len(rows) == 1:
            tokens[rows[0]] = sample(logits[rows[0]], opts, generator)
        else:
            index = torch.tensor(rows, device=logits.device)
            tokens[index] = sample(logits[index], opts, generator)
    return tokens.tolist()


def sample(logits: torch.Tensor, options: DecodingOptions,
           generator: torch.Generator | None) -> torch.Tensor:
    """Temperature, top-k (0: none), top-p, then one draw per row; ``logits`` is one row
    ``[vocab]`` (the id comes back as a 0-d tensor) or several ``[rows, vocab]`` (one id each)."""
    logits = logits / options.temperature
    k = min(int(options.top_k) or logits.shape[-1], logits.shape[-1])  # top_k 0: no cut
    values, indices = torch.topk(logits, k)  # sorted, largest first
    probs = torch.softmax(values, dim=-1)
    if options.top_p < 1.0:
        # Keep the smallest prefix whose mass reaches top_p (always at least one token).
        before = torch.cumsum(probs, dim=-1) - probs
        probs = torch.where(before < options.top_p, probs, torch.zeros_like(probs))
        probs = probs / probs.sum(dim=-1, keepdim=True)
    pick = torch.multinomial(probs, 1, generator=generator)
    return indices.gather(-1, pick).squeeze(-1)
