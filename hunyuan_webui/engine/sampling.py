"""Choosing the next token for one sequence, exactly as ``model.generate`` would.

The order matches transformers' logits processors: repetition penalty (over the prompt and the
tokens generated so far), then temperature, top-k and top-p, then a draw from the request's own
generator. Greedy (deterministic) mode applies the repetition penalty and takes the argmax.
Each sequence in a batch is chosen on its own, so sampling stays per request.
"""

from __future__ import annotations

import torch

from hunyuan_webui.engine.base import DecodingOptions


def apply_repetition_penalty(logits: torch.Tensor, seen: torch.Tensor, penalty: float) -> torch.Tensor:
    """Make tokens in ``seen`` less likely: divide positive scores, multiply negative ones."""
    if penalty == 1.0 or seen.numel() == 0:
        return logits
    score = logits.gather(0, seen)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return logits.scatter(0, seen, score)


def choose(logits: torch.Tensor, seen: torch.Tensor, options: DecodingOptions,
           generator: torch.Generator | None) -> int:
    """The next token id for one sequence; ``logits`` is a float32 vector over the vocabulary."""
    logits = apply_repetition_penalty(logits, seen, options.repetition_penalty)
    if options.deterministic:
        return int(torch.argmax(logits))
    logits = logits / options.temperature
    k = min(int(options.top_k), logits.shape[-1])
    values, indices = torch.topk(logits, k)  # sorted, largest first
    probs = torch.softmax(values, dim=-1)
    if options.top_p < 1.0:
        # Keep the smallest prefix whose mass reaches top_p (always at least one token).
        before = torch.cumsum(probs, dim=-1) - probs
        probs = torch.where(before < options.top_p, probs, torch.zeros_like(probs))
        probs = probs / probs.sum()
    pick = torch.multinomial(probs, 1, generator=generator)
    return int(indices[pick])
