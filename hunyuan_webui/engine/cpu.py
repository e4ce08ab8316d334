"""Faster fp32 and bf16 matrix multiplies on a CPU, for the same weights and the same results.

A decoding step multiplies a few rows (one per sequence in the batch) by every weight matrix, and
on a CPU those multiplies are most of the step. ``F.linear`` computes ``x @ W.T`` from the
``[out, in]`` weight; which routine does it fastest depends on the number of rows. Measured on the
benchmark model's weights (one thread, weights read from cache, not registers):

- 1 row: the default BLAS is fastest once ``W.T`` is contiguous in memory (no transposed operand;
  in fp32 also about 2x oneDNN's two-row kernel on the 1.8B's largest matrix on this project's
  AMD machine). It rounds differently from the kernels of two rows or more, so in fp32 a row
  decoded alone gets slightly other numbers than in a batch or beside its own drafts;
- 2 to 32 rows: oneDNN with the weight reordered ahead of time into its blocked layout is
  1.1-1.3x faster at 4-16 rows;
- longer inputs (prefill): the two are even, so the BLAS.

A decoder layer also multiplies one input by several matrices in a row: the attention's query, key
and value projections, the MLP's gate and up projections. At a few rows each call costs about as
much to set up as to compute, so those are multiplied as one matrix (their weights side by side,
as vLLM's ``qkv_proj`` and ``gate_up_proj`` are) and each module takes its own columns. On the
benchmark model at 8 rows, a whole decoding step took 0.96x the time with separate calls
(``python -m benchmarks.cpu_step``; the effect on whole requests: ``python -m benchmarks.bench``).

:func:`tune_linears` stores every ``nn.Linear`` weight transposed (still the same ``[out, in]``
tensor, a view with swapped strides) and, where oneDNN is available and memory allows a second
copy, turns the module into a :class:`TunedLinear` that picks the routine per call by row count;
siblings named as above share one reordered copy (:class:`SharedInput`).
bf16 weights (a bf16 checkpoint on a CPU with AVX512-BF16 or AMX, :mod:`hunyuan_webui.engine.loader`)
get the same treatment from one row on, a single row multiplied as two (:func:`packed_product`):
there oneDNN's two-row kernel beat ``F.linear``'s one-row one (19.9 against 25-29 ms on the same
matrix), and every row then gets the same numbers alone, in a batch and beside its drafts.
``python -m benchmarks.cpu_step --dtype bf16`` measures a whole step with and without it.

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

PACKED_ROWS = range(2, 33)  # row counts for which the reordered oneDNN weight is used (fp32)
BF16_PACKED_ROWS = range(1, 33)  # the same for bf16 weights: from one row
TUNED_DTYPES = (torch.float32, torch.bfloat16)
# How close the oneDNN path must come to the BLAS's on a test multiply before it is trusted.
TOLERANCE = {torch.float32: (1e-3, 1e-4), torch.bfloat16: (2e-2, 2e-2)}
# Sibling linears that read the same input, by the names transformers' decoder layers give them.
SHARED_INPUT = (("q_proj", "k_proj", "v_proj"), ("gate_proj", "up_proj"))
# The reordered copies may take at most this share of the memory that is free at load time.
PACKED_MEMORY_SHARE = 0.25


def packed_rows(dtype: torch.dtype) -> range:
    """Row counts that a reordered weight of ``dtype`` multiplies."""
    return BF16_PACKED_ROWS if dtype == torch.bfloat16 else PACKED_ROWS


def packed_product(x: torch.Tensor, packed: torch.Tensor,
                   bias: torch.Tensor | None) -> torch.Tensor:
    """``x`` times a weight reordered by ``torch.ops.mkldnn._reorder_linear_weight``, plus bias.

    One row (bf16) is multiplied as two, itself twice: oneDNN takes another kernel for a single
    row, which rounds differently, while from two rows on each row's result is the same whatever
    the others are (checked at load, :func:`hunyuan_webui.engine.decode.decode_step`). So a row
    gets the same numbers alone, in a batch, and with its drafts beside it (speculative
    decoding)."""
    rows = x.numel() // x.shape[-1]
    if rows == 1:
        flat = x.reshape(1, x.shape[-1])
        out = torch.ops.mkldnn._linear_pointwise(torch.cat([flat, flat]), packed, bias, "none",
                                                 [], "")
        return out[:1].reshape(*x.shape[:-1], out.shape[-1])
    return torch.ops.mkldnn._linear_pointwise(x, packed, bias, "none", [], "")


class TunedLinear(torch.nn.Linear):
    """``nn.Linear`` that multiplies 1-32 rows with a oneDNN-reordered copy of its weight, its own
    or (``shared``) the one it shares with siblings that read the same input."""

    packed: torch.Tensor | None = None
    shared: SharedInput | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype == self.weight.dtype and x.numel() // x.shape[-1] in packed_rows(x.dtype):
            if self.shared is not None:
                return self.shared.product(self, x)
            assert self.packed is not None
            return packed_product(x, self.packed, self.bias)
        return F.linear(x, self.weight, self.bias)


class SharedInput:
    """Linears that read one input, multiplied as one matrix.

    The first member called with an input multiplies it by every member's weight at once and keeps
    the other members' columns; a member then called with that same tensor object gets its columns
    without a multiply. Any other call (another input, a member asking twice) multiplies again, so
    the order in which a model calls the members never changes a result. Only the model's one
    scheduler thread calls it.
    """

    def __init__(self, members: list[TunedLinear]) -> None:
        self.members = members
        self.sizes = [m.out_features for m in members]
        weight = torch.cat([m.weight.detach() for m in members])
        self.packed = torch.ops.mkldnn._reorder_linear_weight(weight, None)
        biases = [m.bias for m in members]
        self.bias = (None if biases[0] is None
                     else torch.cat([b.detach() for b in biases if b is not None]))
        self._input: torch.Tensor | None = None
        self._waiting: dict[int, torch.Tensor] = {}  # id(member) -> its columns of _input

    @staticmethod
    def fits(members: list[torch.nn.Linear]) -> bool:
        """Same input width and dtype, and either all with a bias or none."""
        first = members[0]
        return all(m.in_features == first.in_features and m.weight.dtype == first.weight.dtype
                   and (m.bias is None) == (first.bias is None) for m in members)

    def product(self, member: TunedLinear, x: torch.Tensor) -> torch.Tensor:
        if x is self._input:
            kept = self._waiting.pop(id(member), None)
            if kept is not None:
                return kept
        columns = packed_product(x, self.packed, self.bias).split(self.sizes, dim=-1)
        self._input = x
        self._waiting = {id(m): c.contiguous() for m, c in zip(self.members, columns)
                         if m is not member}
        return columns[self.members.index(member)].contiguous()


def tune_linears(model: Any) -> str:
    """Prepare every plain fp32 or bf16 ``nn.Linear`` of ``model`` for CPU decoding; says what was
    done."""
    shared = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    linears = [m for m in model.modules()
               if type(m) is torch.nn.Linear and id(m.weight) not in shared
               and m.weight.dtype in TUNED_DTYPES and m.weight.is_contiguous()]
    for module in linears:  # fp32's BLAS is faster on W.T; bf16's kernels on W as it is
        if module.weight.dtype == torch.float32:
            module.weight.data = module.weight.data.t().contiguous().t()
    size = sum(m.weight.numel() * m.weight.element_size() for m in linears)
    rows = packed_rows(linears[0].weight.dtype) if linears else PACKED_ROWS
    free = _free_memory()
    if not linears or not torch.backends.mkldnn.is_available():
        return f"{len(linears)} weights stored transposed"
    if free is None or size > PACKED_MEMORY_SHARE * free:
        return (f"{len(linears)} weights stored transposed; no oneDNN copies "
                f"({size / 2**30:.2f} GiB more than a quarter of the available memory, "
                f"or that is unknown)")
    groups = _sibling_groups(model, {id(m) for m in linears})
    grouped = {id(m) for group in groups for m in group}
    try:
        for module in linears:
            module.__class__ = TunedLinear
            if id(module) not in grouped:
                module.packed = torch.ops.mkldnn._reorder_linear_weight(module.weight.detach(), None)
        for group in groups:
            shared = SharedInput(group)  # type: ignore[arg-type]
            for module in group:
                module.shared = shared
        for module in linears:
            _check(module)  # type: ignore[arg-type]
    except (RuntimeError, AttributeError) as exc:  # a torch build without these oneDNN ops
        for module in linears:
            module.__class__ = torch.nn.Linear
            module.__dict__.pop("packed", None)
            module.__dict__.pop("shared", None)
        log.warning("oneDNN weight reordering failed (%s); using the BLAS only", exc)
        return f"{len(linears)} weights stored transposed"
    return (f"{len(linears)} weights stored transposed, with oneDNN copies for "
            f"{rows.start}-{rows.stop - 1} rows (+{size / 2**20:.0f} MiB), "
            f"{len(groups)} groups of projections multiplied together")


def _sibling_groups(model: Any, eligible: set[int]) -> list[list[torch.nn.Linear]]:
    """Each module's children named as one of :data:`SHARED_INPUT`, where all are eligible."""
    groups = []
    for parent in model.modules():
        for names in SHARED_INPUT:
            members = [getattr(parent, name, None) for name in names]
            if all(isinstance(m, torch.nn.Linear) and id(m) in eligible for m in members) \
                    and SharedInput.fits(members):  # type: ignore[arg-type]
                groups.append(members)
    return groups  # type: ignore[return-value]


def _check(module: TunedLinear) -> None:
    """The oneDNN path must give the BLAS's answer (to rounding) before it is trusted."""
    dtype = module.weight.dtype
    with torch.inference_mode():
        x = torch.randn(4, module.in_features, generator=torch.Generator().manual_seed(0))
        got = module(x.to(dtype)).float()
        want = F.linear(x.to(dtype), module.weight, module.bias).float()
    rtol, atol = TOLERANCE[dtype]
    if not torch.allclose(got, want, rtol=rtol, atol=atol):
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
