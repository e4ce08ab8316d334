"""Faster fp32 matrix multiplies on a CPU, for the same weights and the same results.

A decoding step multiplies a few rows (one per sequence in the batch) by every weight matrix, and
on a CPU those multiplies are most of the step. ``F.linear`` computes ``x @ W.T`` from the
``[out, in]`` weight; which routine does it fastest depends on the number of rows. Measured on the
benchmark model's weights (one thread, weights read from cache, not registers):

- 1 row: the default BLAS is fastest once ``W.T`` is contiguous in memory (no transposed operand);
- 2 to 32 rows: oneDNN with the weight reordered ahead of time into its blocked layout is
  1.1-1.3x faster at 4-16 rows;
- longer inputs (prefill): the two are even, so the BLAS.

:func:`tune_linears` stores every ``nn.Linear`` weight transposed (still the same ``[out, in]``
tensor, a view with swapped strides) and, where oneDNN is available and memory allows a second
copy, turns the module into a :class:`TunedLinear` that picks the routine per call by row count.
Results differ from the default only in float rounding order. Weights an embedding shares (a
tied ``lm_head``) are left alone: an embedding reads whole rows. ``python -m benchmarks.bench``
measures the effect on whole requests.
"""

from __future__ import annotations

import logging
from typing import Any

import torch
import torch.nn.functional as F

log = logging.getLogger(__name__)

PACKED_ROWS = range(2, 33)  # row counts for which the reordered oneDNN weight is used
# The reordered copies may take at most this share of the memory that is free at load time.
PACKED_MEMORY_SHARE = 0.25


class TunedLinear(torch.nn.Linear):
    """``nn.Linear`` that multiplies 2-32 rows with a oneDNN-reordered copy of its weight."""

    packed: torch.Tensor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.numel() // x.shape[-1] in PACKED_ROWS and x.dtype == torch.float32:
            return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")
        return F.linear(x, self.weight, self.bias)


def tune_linears(model: Any) -> str:
    """Prepare every plain fp32 ``nn.Linear`` of ``model`` for CPU decoding; says what was done."""
    shared = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    linears = [m for m in model.modules()
               if type(m) is torch.nn.Linear and id(m.weight) not in shared
               and m.weight.dtype == torch.float32 and m.weight.is_contiguous()]
    for module in linears:
        module.weight.data = module.weight.data.t().contiguous().t()
    size = sum(m.weight.numel() * 4 for m in linears)
    free = _free_memory()
    if not linears or not torch.backends.mkldnn.is_available():
        return f"{len(linears)} weights stored transposed"
    if free is None or size > PACKED_MEMORY_SHARE * free:
        return (f"{len(linears)} weights stored transposed; no oneDNN copies "
                f"({size / 2**30:.2f} GiB more than a quarter of the available memory, "
                f"or that is unknown)")
    try:
        for module in linears:
            packed = torch.ops.mkldnn._reorder_linear_weight(module.weight.detach(), None)
            module.__class__ = TunedLinear
            module.packed = packed
        _check(linears[0])
    except (RuntimeError, AttributeError) as exc:  # a torch build without these oneDNN ops
        for module in linears:
            if isinstance(module, TunedLinear):
                module.__class__ = torch.nn.Linear
                del module.packed
        log.warning("oneDNN weight reordering failed (%s); using the BLAS only", exc)
        return f"{len(linears)} weights stored transposed"
    return (f"{len(linears)} weights stored transposed, with oneDNN copies for "
            f"{PACKED_ROWS.start}-{PACKED_ROWS.stop - 1} rows (+{size / 2**20:.0f} MiB)")


def _check(module: TunedLinear) -> None:
    """The oneDNN path must give the BLAS's answer (to rounding) before it is trusted."""
    with torch.inference_mode():
        x = torch.randn(4, module.in_features, generator=torch.Generator().manual_seed(0))
        got = module(x)
        want = F.linear(x, module.weight, module.bias)
    if not torch.allclose(got, want, rtol=1e-3, atol=1e-4):
        raise RuntimeError("oneDNN and the BLAS disagree on a test multiply")


def _free_memory() -> int | None:
    """Bytes of memory available now (Linux ``MemAvailable``), or None where unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None
