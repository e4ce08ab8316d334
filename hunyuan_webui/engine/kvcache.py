"""A key/value cache that appends in place.

transformers' ``DynamicLayer`` grows by ``torch.cat``: every decoding step copies the whole cache of
every layer to add one column. At batch 8 on a CPU that copying was 14% of a step. ``GrowingLayer``
keeps the keys and values at the front of a larger buffer instead and writes each new column into
the spare room; ``keys`` and ``values`` are views of the filled part, so everything that reads a
``DynamicLayer`` (attention, masks, ``get_seq_length``) reads this one unchanged.

The scheduler still replaces ``keys``/``values`` with new tensors when rows join or leave the batch
(:mod:`hunyuan_webui.engine.local`); the next ``update`` notices that they are no longer views of the
buffer and moves them into a fresh one. The spare room grows with the cache (half its length, at
least :data:`MIN_SPARE` columns), so copies happen O(log n) times per sequence, not n times.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

MIN_SPARE = 64


class GrowingLayer(DynamicLayer):
    """A ``DynamicLayer`` whose appends write into preallocated room."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._key_room: torch.Tensor | None = None
        self._value_room: torch.Tensor | None = None

    def update(self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any,
               **kwargs: Any) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        assert self.keys is not None and self.values is not None
        length = self.keys.shape[-2] if self.keys.numel() else 0
        end = length + key_states.shape[-2]
        if not self._holds(key_states, end):
            self._move_into_room(key_states, value_states, length, end)
        assert self._key_room is not None and self._value_room is not None
        self._key_room[:, :, length:end] = key_states
        self._value_room[:, :, length:end] = value_states
        self.keys = self._key_room[:, :, :end]
        self.values = self._value_room[:, :, :end]
        return self.keys, self.values

    def reset(self) -> None:
        self._key_room = self._value_room = None
        super().reset()

    def _holds(self, key_states: torch.Tensor, end: int) -> bool:
        """Are ``keys``/``values`` still the front of the buffer, with room up to ``end``?"""
        room = self._key_room
        return (room is not None and self._value_room is not None and end <= room.shape[-2]
                and room.shape[:2] == key_states.shape[:2]
                and _is_front_of(self.keys, room) and _is_front_of(self.values, self._value_room))

    def _move_into_room(self, key_states: torch.Tensor, value_states: torch.Tensor, length: int,
                        end: int) -> None:
        capacity = end + max(MIN_SPARE, end // 2)
        rooms = []
        for old, new in ((self.keys, key_states), (self.values, value_states)):
            batch, heads, _, dim = new.shape
            room = new.new_empty((batch, heads, capacity, dim))
            if length:
                assert old is not None
                room[:, :, :length] = old
            rooms.append(room)
        self._key_room, self._value_room = rooms


def _is_front_of(view: torch.Tensor | None, room: torch.Tensor) -> bool:
    return (view is not None and view.dim() == 4 and view.data_ptr() == room.data_ptr()
            and view.stride() == room.stride() and view.shape[:2] == room.shape[:2]
            and view.shape[3] == room.shape[3])


def growing_cache(config: Any) -> DynamicCache:
    """A ``DynamicCache`` for ``config`` whose full-attention layers append in place (sliding-window
    or other special layers keep transformers' own kind)."""
    cache = DynamicCache(config=config)
    cache.layers = [GrowingLayer() if type(layer) is DynamicLayer else layer
                    for layer in cache.layers]
    return cache
