"""Which format of the 1.8B a CPU runs faster for a class: PyTorch bf16 or llama.cpp Q4_K_M, by
measured throughput, not by habit.

On a CPU without native bf16 the launch takes the Q4_K_M GGUF through llama.cpp: it reads about a
sixth of fp32's bytes per token, and fp32 PyTorch is several times slower (docs/PERFORMANCE.md,
the laptop table). On a CPU that computes bf16 natively (AVX512-BF16 or AMX,
:mod:`hunyuan_webui.engine.cpuinfo`) PyTorch runs the bf16 checkpoint, and batched decoding, what
a class fanning each sentence out to its languages makes, can beat Q4_K_M there. So the launch
(:func:`hunyuan_webui.choice.cpu_table`) asks :data:`MEASURED`: the tokens/s both formats made on
a machine with those instructions, at :data:`CLASS_CLIENTS` clients at once, and takes the faster.
A single user's answers are faster on Q4_K_M in every run so far (one stream); the table keeps
that figure too, for the log line.

The figures come from ``python -m benchmarks.cpu_laptop`` (our engines on the real 1.8B shape,
random weights, each at its default threads) or ``python -m benchmarks.bench bf16`` (the same
through the page, the formats in alternating rounds), each row saying which; the runs' JSON is
kept in ``benchmarks/results/``. A new run on such a machine updates a row here, by hand, with its
source.
"""

from __future__ import annotations

from dataclasses import dataclass

CLASS_CLIENTS = 8  # the load a class puts on the engine: one sentence into 8 languages
BF16, Q4 = "torch-bf16", "llamacpp-Q4_K_M"


@dataclass(frozen=True)
class Measured:
    """Tokens/s of the 1.8B by format and clients, on one machine."""

    machine: str
    source: str  # which run: command, date, the results file
    tokens_per_s: dict[str, dict[int, float]]

    def faster_at(self, clients: int) -> str:
        return max((BF16, Q4), key=lambda fmt: self.tokens_per_s[fmt][clients])


# By the CPU's bf16 instructions (cpuinfo.bf16_instructions()).
MEASURED: dict[str, Measured] = {
    "AMX": Measured(
        machine="Intel Xeon (Sapphire Rapids or later, AMX), 2 cores of a VM",
        source="python -m benchmarks.cpu_laptop, 2026-12-02 01:18 UTC (docs/PERFORMANCE.md, the "
               "laptop table; PyTorch bf16 then without its packed multiplies and direct step)",
        tokens_per_s={BF16: {1: 3.9, 8: 23.2}, Q4: {1: 10.2, 8: 17.7}}),
    "AVX512-BF16": Measured(
        machine="AMD EPYC (AVX512-BF16, no AMX), 2 cores of a shared VM",
        source="python -m benchmarks.bench bf16 --rounds 2 --tokens 32, 2026-12-05 00:34 UTC: "
               "through the page, the medians of 2 rounds in alternating order, load average 4-8 "
               "(benchmarks/results/bf16-page.json; docs/PERFORMANCE.md, the bf16 table)",
        tokens_per_s={BF16: {1: 1.6, 8: 6.9}, Q4: {1: 5.4, 8: 4.8}}),
}


def bf16_first(instructions: str) -> tuple[bool, str]:
    """Whether PyTorch bf16 goes before Q4_K_M on a CPU with these bf16 ``instructions`` ("" for
    none), and why, in one line for the log."""
    measured = MEASURED.get(instructions)
    if measured is None:
        return False, "no native bf16 on this CPU: llama.cpp Q4_K_M first"
    rates = measured.tokens_per_s
    first = measured.faster_at(CLASS_CLIENTS) == BF16
    return first, (
        f"{instructions}: at {CLASS_CLIENTS} clients PyTorch bf16 made {rates[BF16][CLASS_CLIENTS]:g}"
        f" tokens/s and llama.cpp Q4_K_M {rates[Q4][CLASS_CLIENTS]:g} ({measured.machine}; "
        f"1 client: {rates[BF16][1]:g} and {rates[Q4][1]:g}), so "
        f"{'PyTorch bf16' if first else 'Q4_K_M'} first")
