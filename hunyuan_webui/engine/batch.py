"""The local engine's batch: the rows being decoded together and the tensors that go with them.

Rows are left-padded to one width. The key/value cache, the 2-D attention mask, each row's next
input token and the ids each row has seen (for the repetition penalty) always have one entry per
row, in row order: :class:`Batch` changes them together, so they cannot drift apart.

A verification step (speculative decoding, :mod:`hunyuan_webui.engine.speculative`) feeds each
row its next token and its drafts, as many columns as the longest row's; a row with fewer has
filler columns its mask hides. Afterwards (:meth:`Batch.settle`) each row keeps the columns of the
drafts it accepted: the cache is cut after the longest such run, and in the other rows the
columns past their own run become holes, hidden by the mask exactly as left padding is. Positions
are counted from the mask (its ones), so a hole shifts nothing. When holes make the batch much
wider than its longest row, :meth:`Batch.compact` moves every row's columns together again. A
:class:`Prefill` is a group of new rows whose prompts are being read, a chunk of columns at a
time, before they join the batch.

Nothing here takes a lock: the scheduler (:mod:`hunyuan_webui.engine.local`) owns the batch and
guards its membership.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import torch

from hunyuan_webui.engine.base import Stream
from hunyuan_webui.engine.drafts import Drafter
from hunyuan_webui.engine.textstream import IncrementalText, ReasoningFilter

COMPACT_COLUMNS = 32  # holes verification steps may leave before the batch is compacted


@dataclass
class Row:
    """One sequence: its stream, prompt, decoding state and text so far."""

    stream: Stream
    prompt_ids: list[int]
    max_new_tokens: int
    text: IncrementalText | ReasoningFilter
    generator: torch.Generator | None
    generated: list[int] = field(default_factory=list)
    drafter: Drafter | None = None  # speculative decoding's source of drafts (None: off)


@dataclass
class Prefill:
    """New rows whose prompts are being read, one chunk of columns per scheduler pass."""

    rows: list[Row]
    input_ids: torch.Tensor  # [rows, width], left-padded
    mask: torch.Tensor
    positions: torch.Tensor
    cache: Any
    done: int = 0  # columns read so far

    @classmethod
    def start(cls, rows: list[Row], pad: int, device: torch.device, cache: Any) -> Prefill:
        width = max(len(r.prompt_ids) for r in rows)
        input_ids = torch.full((len(rows), width), pad, dtype=torch.long, device=device)
        mask = torch.zeros((len(rows), width), dtype=torch.long, device=device)
        for i, row in enumerate(rows):
            n = len(row.prompt_ids)
            input_ids[i, width - n:] = torch.tensor(row.prompt_ids, device=device)
            mask[i, width - n:] = 1
        positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
        return cls(rows, input_ids, mask, positions, cache)

    def read(self, model: Any, budget: int) -> torch.Tensor | None:
        """Read the next chunk (``budget`` tokens over all rows); the last position's logits once
        every column has been read, else None."""
        width = self.input_ids.shape[1]
        end = min(width, self.done + max(1, budget // len(self.rows)))
        out = model(input_ids=self.input_ids[:, self.done:end], attention_mask=self.mask[:, :end],
                    position_ids=self.positions[:, self.done:end], past_key_values=self.cache,
                    use_cache=True, logits_to_keep=1)
        self.done = end
        return out.logits[:, -1, :].float() if end == width else None


def admit(pending: deque[Row], room: int, budget: int, *, long_allowed: bool
          ) -> tuple[list[Row], Row | None, list[Row]]:
    """Take rows from the queue for the next pass, in order and within ``room`` free rows: prompts
    that fit one chunk's token ``budget`` together (read whole, in one forward), one longer
    prompt when ``long_allowed`` (read a chunk per pass), and the cancelled rows met on the way.
    A long prompt that must wait lets shorter ones behind it go first."""
    short: list[Row] = []
    long: Row | None = None
    dropped: list[Row] = []
    width = 0
    for row in list(pending):
        if len(short) + (long is not None) >= room:
            break
        if row.stream.cancelled:
            dropped.append(row)
        elif len(row.prompt_ids) > budget:
            if long is not None or not long_allowed:
                continue
            long = row
        elif max(width, len(row.prompt_ids)) * (len(short) + 1) <= budget:
            width = max(width, len(row.prompt_ids))
            short.append(row)
        else:
            break
        pending.remove(row)
    return short, long, dropped


class Batch:
    """The running rows and their cache, mask, next tokens and seen ids, kept in step."""

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> list[Row]:
        """Empty the batch; returns the rows it held."""
        rows = getattr(self, "rows", [])
        self.rows: list[Row] = []
        self.cache: Any = None
        self.mask: torch.Tensor | None = None
        self.next: torch.Tensor | None = None
        self.seen: torch.Tensor | None = None  # [rows, vocab]: ids each row has seen
        return rows

    def __len__(self) -> int:
        return len(self.rows)

    def merge(self, group: Prefill, tokens: torch.Tensor, seen: torch.Tensor) -> None:
        """Add a read group's rows, left-padding whichever side is narrower."""
        if not self.rows:
            self.rows, self.cache, self.mask = list(group.rows), group.cache, group.mask
            self.next, self.seen = tokens, seen
            return
        assert self.mask is not None and self.next is not None and self.seen is not None
        width = max(self.mask.shape[1], group.mask.shape[1])
        for old, new in zip(self.cache.layers, group.cache.layers):
            old.keys = torch.cat([_left_pad(old.keys, width), _left_pad(new.keys, width)])
            old.values = torch.cat([_left_pad(old.values, width), _left_pad(new.values, width)])
        self.mask = torch.cat([_left_pad(self.mask, width, dim=1),
                               _left_pad(group.mask, width, dim=1)])
        self.next = torch.cat([self.next, tokens])
        self.seen = torch.cat([self.seen, seen])
        self.rows.extend(group.rows)

    def step_inputs(self) -> dict[str, Any]:
        """The model's inputs for one decoding step; the mask grows by the new column."""
        assert self.mask is not None and self.next is not None
        positions = self.mask.sum(-1, keepdim=True)
        ones = torch.ones((self.mask.shape[0], 1), dtype=self.mask.dtype, device=self.mask.device)
        self.mask = torch.cat([self.mask, ones], dim=-1)
        return {"input_ids": self.next.unsqueeze(-1), "attention_mask": self.mask,
                "position_ids": positions, "past_key_values": self.cache, "use_cache": True}

    def verify_inputs(self, drafts: list[list[int]]) -> dict[str, Any]:
        """The model's inputs for a step that reads each row's next token and its ``drafts``
        (logits at every position); the mask grows by ``1 + the most drafts`` columns, ones for
        each row's real inputs."""
        assert self.mask is not None and self.next is not None
        rows, width = len(drafts), 1 + max(len(d) for d in drafts)
        device = self.mask.device
        ids = self.next.unsqueeze(-1).repeat(1, width)  # fillers: any real id (hidden by the mask)
        new = torch.zeros((rows, width), dtype=self.mask.dtype, device=device)
        for i, run in enumerate(drafts):
            if run:
                ids[i, 1:1 + len(run)] = torch.tensor(run, dtype=ids.dtype, device=device)
            new[i, :1 + len(run)] = 1
        positions = self.mask.sum(-1, keepdim=True) + torch.arange(width, device=device)
        self.mask = torch.cat([self.mask, new], dim=-1)
        return {"input_ids": ids, "attention_mask": self.mask, "position_ids": positions,
                "past_key_values": self.cache, "use_cache": True}

    def settle(self, width: int, kept: list[int]) -> None:
        """After a verification step of ``width`` columns: row ``i`` keeps the first ``kept[i]``
        (its next token and its accepted drafts); the cache is cut after the longest."""
        assert self.mask is not None
        end = self.mask.shape[1] - width + max(kept)
        self.mask = self.mask[:, :end].clone()
        for i, count in enumerate(kept):
            self.mask[i, end - max(kept) + count:] = 0
        for layer in self.cache.layers:
            layer.keys = layer.keys[:, :, :end]
            layer.values = layer.values[:, :, :end]

    def holey(self) -> bool:
        """Whether holes make the batch wide enough to be worth a :meth:`compact`."""
        assert self.mask is not None
        return self.waste() > max(COMPACT_COLUMNS, self.mask.shape[1] // 4)

    def waste(self) -> int:
        """Columns the longest row does not use: holes a compaction would remove."""
        assert self.mask is not None
        return self.mask.shape[1] - int(self.mask.sum(-1).max())

    def compact(self) -> None:
        """Move each row's columns (its mask's ones) to the right end, in order, and drop the
        columns no row then uses: the holes verification steps left go."""
        assert self.mask is not None
        order = torch.sort(self.mask.to(torch.int8), dim=1, stable=True).indices
        index = order[:, self.waste():]
        self.mask = torch.gather(self.mask, 1, index)
        for layer in self.cache.layers:
            rows, heads, _, dim = layer.keys.shape
            spread = index[:, None, :, None].expand(rows, heads, index.shape[1], dim)
            layer.keys = torch.gather(layer.keys, 2, spread)
            layer.values = torch.gather(layer.values, 2, spread)

    def keep(self, keep: list[int]) -> None:
        """Keep only the rows at ``keep``, then trim columns that are padding in every row."""
        if not keep:
            self.clear()
            return
        assert self.mask is not None and self.next is not None and self.seen is not None
        index = torch.tensor(keep, device=self.mask.device)
        self.mask = self.mask.index_select(0, index)
        first = int(self.mask.any(0).nonzero()[0])  # leading columns that only hold padding
        self.mask = self.mask[:, first:]
        for layer in self.cache.layers:
            layer.keys = layer.keys.index_select(0, index)[:, :, first:]
            layer.values = layer.values.index_select(0, index)[:, :, first:]
        self.next = self.next.index_select(0, index)
        self.seen = self.seen.index_select(0, index)
        self.rows = [self.rows[i] for i in keep]


def _left_pad(tensor: torch.Tensor, width: int, dim: int = 2) -> torch.Tensor:
    missing = width - tensor.shape[dim]
    if missing <= 0:
        return tensor
    shape = list(tensor.shape)
    shape[dim] = missing
    return torch.cat([tensor.new_zeros(shape), tensor], dim=dim)
