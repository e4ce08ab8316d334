"""Repacked Q4_K weights for llama.cpp on CPUs with Intel AMX, without its AMX path.

llama.cpp speeds up CPU decoding by storing some quantized weights in interleaved layouts (its
``CPU_REPACK`` buffer type: Q4_K as ``q4_K_8x8``). It offers them through its "extra buffer types",
which on a CPU with AMX also hold the AMX one, whose kernels crash on quantized files with
llama-cpp-python 0.3.36 (:func:`~hunyuan_webui.engine.llama_model.cpu_has_amx`). Those machines
load without the extra buffer types, and so lost the repacking too: on this project's 2-core Xeon
a Q4_K_M 1.8B decoded 6.9 tokens/s, against 9.8 with its Q4_K weights repacked.

:func:`repack_overrides` gives them back one by one: it names every weight the repack layout
takes (Q4_K matrices in the decoder blocks whose rows come in eights; what llama.cpp's own
``ggml_repack_get_optimal_repack_type`` accepts on an AVX2 CPU) and places exactly those in
``CPU_REPACK`` through the model's ``tensor_buft_overrides``, AMX left out. A forced placement
skips llama.cpp's own check, so the list is kept to what was seen to work: Q6_K and Q8_0 weights
crash there too and stay plain. Everything else (the embeddings, norms, other types) stays where
llama.cpp puts it. Reading the file's tensor list uses ggml's own GGUF reader (metadata only).
"""

from __future__ import annotations

import ctypes
import re
from pathlib import Path
from typing import Any

GGML_TYPE_Q4_K = 12
REPACK_BUFFER = "CPU_REPACK"
_BLOCK_WEIGHT = re.compile(r"blk\.\d+\.\w+\.weight")


class _Tensor(ctypes.Structure):
    """The head of ``struct ggml_tensor``: its type, buffer and shape."""

    _fields_ = [("type", ctypes.c_int), ("buffer", ctypes.c_void_p),
                ("ne", ctypes.c_int64 * 4)]


class _GgufParams(ctypes.Structure):
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.POINTER(ctypes.c_void_p))]


class _Override(ctypes.Structure):
    """``struct llama_model_tensor_buft_override``."""

    _fields_ = [("pattern", ctypes.c_char_p), ("buft", ctypes.c_void_p)]


class RepackOverrides:
    """The overrides array and the strings it points to, kept alive while the model loads."""

    def __init__(self, names: list[str], buft: int) -> None:
        self.names = names
        self._patterns = [f"^{re.escape(name)}$".encode() for name in names]
        self.array = (_Override * (len(names) + 1))()
        for i, pattern in enumerate(self._patterns):
            self.array[i].pattern, self.array[i].buft = pattern, buft
        self.array[len(names)].pattern = None  # the list ends with an empty pattern

    @property
    def address(self) -> int:
        return ctypes.addressof(self.array)


def repack_overrides(path: Path) -> RepackOverrides | None:
    """Overrides that repack ``path``'s Q4_K block weights, or None when there are none or this
    build of llama.cpp has no repack buffer type."""
    libs = _ggml_libraries()
    if libs is None:
        return None
    base, ggml = libs
    buft = _repack_buffer_type(base, ggml)
    if buft is None:
        return None
    names = repackable_weights(base, path)
    return RepackOverrides(names, buft) if names else None


def repackable_weights(base: Any, path: Path) -> list[str]:
    """Names of the Q4_K decoder-block matrices of ``path`` whose row count is a multiple of 8."""
    base.gguf_init_from_file.restype = ctypes.c_void_p
    base.gguf_init_from_file.argtypes = [ctypes.c_char_p, _GgufParams]
    base.ggml_get_first_tensor.restype = ctypes.POINTER(_Tensor)
    base.ggml_get_first_tensor.argtypes = [ctypes.c_void_p]
    base.ggml_get_next_tensor.restype = ctypes.POINTER(_Tensor)
    base.ggml_get_next_tensor.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Tensor)]
    base.ggml_get_name.restype = ctypes.c_char_p
    base.ggml_get_name.argtypes = [ctypes.POINTER(_Tensor)]
    base.gguf_free.argtypes = [ctypes.c_void_p]
    base.ggml_free.argtypes = [ctypes.c_void_p]
    ctx = ctypes.c_void_p()
    gguf = base.gguf_init_from_file(str(path).encode(), _GgufParams(True, ctypes.pointer(ctx)))
    if not gguf:
        return []
    names = []
    try:
        tensor = base.ggml_get_first_tensor(ctx)
        while tensor:
            name = base.ggml_get_name(tensor).decode()
            if (tensor.contents.type == GGML_TYPE_Q4_K and tensor.contents.ne[1] % 8 == 0
                    and tensor.contents.ne[2] == 1 and _BLOCK_WEIGHT.fullmatch(name)):
                names.append(name)
            tensor = base.ggml_get_next_tensor(ctx, tensor)
    finally:
        base.gguf_free(gguf)
        if ctx:
            base.ggml_free(ctx)
    return names


def _ggml_libraries() -> tuple[Any, Any] | None:
    """ggml's base and backend-registry libraries, as llama-cpp-python ships them."""
    import llama_cpp

    lib_dir = Path(llama_cpp.__file__).resolve().parent / "lib"
    try:
        return (ctypes.CDLL(str(lib_dir / "libggml-base.so")),
                ctypes.CDLL(str(lib_dir / "libggml.so")))
    except OSError:  # another layout (a Mac's .dylib, a system build): no repacking forced
        return None


def _repack_buffer_type(base: Any, ggml: Any) -> int | None:
    """The CPU device's ``CPU_REPACK`` buffer type, from its extra buffer types."""
    ggml.ggml_backend_dev_by_type.restype = ctypes.c_void_p
    ggml.ggml_backend_dev_by_type.argtypes = [ctypes.c_int]
    base.ggml_backend_dev_backend_reg.restype = ctypes.c_void_p
    base.ggml_backend_dev_backend_reg.argtypes = [ctypes.c_void_p]
    base.ggml_backend_reg_get_proc_address.restype = ctypes.c_void_p
    base.ggml_backend_reg_get_proc_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    base.ggml_backend_buft_name.restype = ctypes.c_char_p
    base.ggml_backend_buft_name.argtypes = [ctypes.c_void_p]
    device = ggml.ggml_backend_dev_by_type(0)  # GGML_BACKEND_DEVICE_TYPE_CPU
    if not device:
        return None
    registry = base.ggml_backend_dev_backend_reg(device)
    address = base.ggml_backend_reg_get_proc_address(registry, b"ggml_backend_dev_get_extra_bufts")
    if not address:
        return None
    extra = ctypes.CFUNCTYPE(ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p)(address)(device)
    i = 0
    while extra and extra[i]:
        if base.ggml_backend_buft_name(extra[i]) == REPACK_BUFFER.encode():
            return int(extra[i])
        i += 1
    return None
