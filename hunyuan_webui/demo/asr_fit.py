"""The demo recogniser's training loop: the decoder learns, from the encoder's fixed outputs, to
write each clip's text, until the clips that must be exact are written with a margin.

Each step is a batch of clips; the encoder outputs come from the converted model run in int8,
with a little Gaussian noise on top (float16 on a GPU, other CPUs, round differently). A clip is
learnt when, at every position, the right token beats the runner-up logit by :data:`MARGIN`; the
clips not yet learnt are drawn more often. Training stops when every required clip (espeak-ng's
default voice saying a whole phrase, and the sounds without speech) is learnt and
:data:`SHARE` of all clips are right.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from hunyuan_webui.demo.asr_training import log

LEARNING_RATE = 3e-3
DECAY_FROM = 15  # epochs at the full rate; then it shrinks by DECAY an epoch, to a twentieth
DECAY = 0.85
BATCH = 24
MAX_EPOCHS = 60
MIN_EPOCHS = 8
MARGIN = 4.0
SHARE = 0.97  # of all clips (other voices, noisy, beginnings): right, if not by the margin
NOISE = 0.05  # standard deviation of the noise added to the (layer-normed) encoder outputs


class LiveVocabulary:
    """The tokens the clips use, trained as a small embedding of their own; every other row of
    the 51,865 is zero, so its logit is exactly 0, and stands in the softmax as one column of
    logit ``log(count)`` (the same probability mass as that many zero logits)."""

    def __init__(self, model: Any, inputs: np.ndarray, labels: np.ndarray) -> None:
        import torch

        used = set(inputs.reshape(-1).tolist()) | set(labels[labels >= 0].reshape(-1).tolist())
        self.ids = torch.tensor(sorted(used))
        table = model.model.decoder.embed_tokens.weight
        self.index = torch.full((table.shape[0],), -1, dtype=torch.long)
        self.index[self.ids] = torch.arange(len(self.ids))
        self.weight = torch.nn.Parameter(table.detach()[self.ids].clone())
        self.dead_log_count = float(np.log(table.shape[0] - len(self.ids)))

    def to_live(self, ids: Any) -> Any:
        """Token ids as rows of the live embedding (-100 labels stay -100)."""
        import torch

        return torch.where(ids >= 0, self.index[ids.clamp(min=0)], ids)

    def write_back(self, model: Any) -> None:
        """The trained rows into the model's embedding, every other row zero."""
        import torch

        with torch.no_grad():
            table = model.model.decoder.embed_tokens.weight
            table.zero_()
            table[self.ids] = self.weight.detach()


def scores(model: Any, live: LiveVocabulary, inputs: Any, memory: Any) -> Any:
    """Logits over the live tokens, then one column for all the others (logit 0)."""
    import torch

    embeds = torch.nn.functional.embedding(inputs, live.weight)
    hidden = model.model.decoder(inputs_embeds=embeds, encoder_hidden_states=memory,
                                 use_cache=False).last_hidden_state
    logits = hidden @ live.weight.T
    return torch.cat([logits, torch.zeros(*logits.shape[:-1], 1)], dim=-1)


def margins(logits: Any, labels: Any) -> Any:
    """Per clip, the smallest lead of the right token over the best other one (inf: no label)."""
    import torch

    mask = labels != -100
    safe = labels.clamp(min=0)
    right = logits.gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    others = logits.scatter(-1, safe.unsqueeze(-1), float("-inf")).max(-1).values
    lead = torch.where(mask, right - others, torch.full_like(right, float("inf")))
    return lead.min(-1).values


def train_decoder(model: Any, memories: list[np.ndarray], inputs: np.ndarray,
                  labels: np.ndarray, must: np.ndarray, seed: int, verbose: bool,
                  started: float) -> dict[str, Any]:
    """Train ``model``'s decoder in place; ``memories``: one encoder-output array per compute
    type, each ``[clips, 1500, d]``; ``must``: the clips that must be written exactly with the
    margin (the default voice, and no speech); of the others, :data:`SHARE` must be right."""
    import torch

    generator = torch.Generator().manual_seed(seed)
    live = LiveVocabulary(model, inputs, labels)
    for p in model.parameters():
        p.requires_grad_(False)
    params = [p for name, p in model.model.decoder.named_parameters() if "embed_tokens" not in name]
    for p in params:
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW([*params, live.weight], lr=LEARNING_RATE, weight_decay=0.0)
    x_all, y_all = live.to_live(torch.from_numpy(inputs)), live.to_live(torch.from_numpy(labels))
    n = len(inputs)
    bias = torch.zeros(live.weight.shape[0] + 1)
    bias[-1] = live.dead_log_count
    weights = torch.ones(n)
    model.train()
    epoch, lead = 0, torch.zeros(n)
    for epoch in range(1, MAX_EPOCHS + 1):
        order = torch.multinomial(weights, n, replacement=True, generator=generator)
        for start in range(0, n, BATCH):
            rows = order[start:start + BATCH]
            which = int(torch.randint(len(memories), (1,), generator=generator))
            memory = torch.from_numpy(memories[which][rows.numpy()].astype(np.float32))
            memory = memory + NOISE * torch.randn(memory.shape, generator=generator)
            logits = scores(model, live, x_all[rows], memory) + bias
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                     y_all[rows].reshape(-1), ignore_index=-100)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        lead = evaluate(model, live, memories, x_all, y_all)
        weights = torch.where(lead < MARGIN, 4.0, 1.0)
        required = lead[torch.from_numpy(must)]
        right = float((lead > 0).float().mean())
        log(verbose, f"epoch {epoch}: loss {loss.item():.4f}, required clips' min margin "
                     f"{required.min().item():.2f}, {right:.1%} of all clips right", started)
        if epoch >= MIN_EPOCHS and bool((required >= MARGIN).all()) and right >= SHARE:
            break
        if epoch >= DECAY_FROM:
            for group in optimizer.param_groups:
                group["lr"] = max(LEARNING_RATE / 20, group["lr"] * DECAY)
    live.write_back(model)
    model.eval()
    required = lead[torch.from_numpy(must)]
    return {"epochs": epoch, "required_min_margin": round(required.min().item(), 3),
            "right_share": round(float((lead > 0).float().mean()), 4)}


def evaluate(model: Any, live: LiveVocabulary, memories: list[np.ndarray], x_all: Any,
             y_all: Any) -> Any:
    """The smallest margin of each clip over every compute type's encoder outputs."""
    import torch

    model.eval()
    worst = torch.full((len(x_all),), float("inf"))
    with torch.no_grad():
        for memory_all in memories:
            for start in range(0, len(x_all), 64):
                rows = slice(start, start + 64)
                memory = torch.from_numpy(memory_all[rows].astype(np.float32))
                lead = margins(scores(model, live, x_all[rows], memory), y_all[rows])
                worst[rows] = torch.minimum(worst[rows], lead)
    model.train()
    return worst
