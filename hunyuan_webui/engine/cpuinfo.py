"""What the CPU can do, from its flags: whether bf16 arithmetic is native here.

The real Hy-MT checkpoints are bf16. On a CPU with native bf16 instructions (x86's AVX512-BF16,
from Intel Cooper Lake and AMD Zen 4 on, or AMX, Intel's server Xeons from Sapphire Rapids on),
oneDNN multiplies bf16 weights directly, reading half the bytes of fp32, and PyTorch decodes a
batch several times faster in bf16 than in fp32 (docs/PERFORMANCE.md, the bf16 table). Without
them, bf16 is emulated and slower than fp32, so ``--dtype auto`` keeps fp32 there
(:func:`hunyuan_webui.engine.loader.resolve_dtype`).

No torch import: the launch choice (:mod:`hunyuan_webui.choice`) reads it before torch loads.
"""

from __future__ import annotations

import functools

BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # as Linux's /proc/cpuinfo names them


@functools.cache
def cpu_flags() -> frozenset[str]:
    """The CPU's feature flags (Linux); empty where they cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:  # not Linux
        pass
    return frozenset()


def native_bf16() -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX)."""
    return any(flag in cpu_flags() for flag in BF16_FLAGS)


def bf16_instructions() -> str:
    """Which of them, for people: "AMX", "AVX512-BF16", or ""."""
    flags = cpu_flags()
    if "amx_bf16" in flags:
        return "AMX"
    return "AVX512-BF16" if "avx512_bf16" in flags else ""
