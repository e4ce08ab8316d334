"""The laptop benchmark: decoding on a CPU at the real Hy-MT2-1.8B shape, against this machine's
memory-bandwidth ceiling. ``python -m benchmarks.cpu_laptop --help``.

Decoding one token reads every weight once (the input embedding: one row), so on a CPU its speed
is bound by memory bandwidth: the *ceiling* of a format is the bandwidth over the weight bytes
one token reads. The bandwidth is measured in the same run, by a copy benchmark (``torch``'s
parallel ``copy_`` of a large buffer on the engine's threads: bytes read plus bytes written,
over the best time of several). Then, one format at a time, in this process:

* ``torch-fp32`` / ``torch-bf16``: our PyTorch engine
  (:class:`~hunyuan_webui.engine.local.LocalEngine`) on the checkpoint;
* ``llamacpp-F16`` / ``llamacpp-Q8_0`` / ``llamacpp-Q4_K_M``: our llama.cpp engine
  (:class:`~hunyuan_webui.engine.llamacpp.LlamaCppEngine`) on GGUF files of the same weights:
  F16 written by :func:`~hunyuan_webui.engine.gguf_files.write_gguf`, the others made from it by
  llama.cpp's own quantizer (``llama_model_quantize``, through llama-cpp-python).

Each reports single-stream decode tokens/s (one request: tokens after the first over the time
from the first to the last) as a share of its ceiling, and the tokens/s of 8 clients at once (8
requests in one batch: the weights are read once per step for all of them, so this is not bound
by the same ceiling). Every engine takes its default threads (``engine/threads.py``), as the app
would.

The model: a random-weight ``HunYuanDenseV1ForCausalLM`` (:func:`benchmarks.peers.build_checkpoint`:
greedy decoding never stops early) of the 1.8B shape: hidden 2048, 16 query / 4 KV heads of 128,
FFN 6144, vocabulary 120,818 (the HY-MT1.5-1.8B configuration, taken to be Hy-MT2-1.8B's), 32
layers, or fewer with ``--layers`` (the table says how many; the embeddings stay whole). ``--quick``
is a smoke test on a tiny shape, for the test suite. The table goes to stdout and, with
``--doc``, between the ``cpu-laptop`` markers of ``docs/PERFORMANCE.md``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks import peers as bench_peers
from benchmarks import report as bench_report
from hunyuan_webui.engine.gguf_files import quantize_gguf, write_gguf
from hunyuan_webui.engine.threads import let_idle_threads_sleep

DOC_START, DOC_END = "<!-- cpu-laptop:start -->", "<!-- cpu-laptop:end -->"
SHAPE_1_8B = bench_peers.Shape(hidden=2048, layers=32, heads=16, kv_heads=4, ffn=6144,
                               vocab=120818)
QUICK_SHAPE = bench_peers.Shape(hidden=256, layers=1, heads=4, kv_heads=2, ffn=512)
SYSTEMS = ("torch-fp32", "torch-bf16", "llamacpp-F16", "llamacpp-Q8_0", "llamacpp-Q4_K_M")
QUANTS = ("Q8_0", "Q4_K_M")  # made from the F16 file by llama.cpp's quantizer
FORMAT = 1  # bump when the checkpoint or its files change: a kept --work-dir is rebuilt


@dataclass
class Result:
    system: str
    weight_bytes: int  # read per generated token
    ceiling: float  # tokens/s: bandwidth / weight_bytes
    single: float | None = None  # single-stream decode tokens/s
    clients8: float | None = None  # tokens/s with 8 clients
    tokens_ok: bool = False
    error: str = ""

    @property
    def share(self) -> float | None:
        return self.single / self.ceiling if self.single else None


# -- the machine's bandwidth -------------------------------------------------------------------
def copy_bandwidth(megabytes: int = 1024, repeats: int = 5) -> float:
    """Bytes/s of a large buffer copy (read + write), the best of ``repeats``, on torch's
    threads."""
    import torch

    src = torch.ones(megabytes * 2**20 // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    dst.copy_(src)  # touch every page first
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - start)
    return 2 * src.numel() * 4 / best


# -- the files and the bytes a token reads ---------------------------------------------------------
def prepare(work: Path, shape: bench_peers.Shape, say: Any) -> tuple[Path, dict[str, Path]]:
    """The checkpoint and its GGUF files (F16, then quantized by llama.cpp), built once per shape
    in ``work``."""
    key = f"{FORMAT}-" + "-".join(str(v) for v in asdict(shape).values())
    model_dir, ggufs = work / f"model-{key}", {}
    if not (model_dir / "config.json").is_file():
        name = f"laptop-{key}"
        bench_peers.SIZES.setdefault(name, shape)
        say(f"building the random-weight checkpoint ({shape}) in {model_dir} ...")
        bench_peers.build_checkpoint(model_dir, name)
    gguf_dir = work / f"gguf-{key}"  # beside the checkpoint, not in it (it would be a GGUF dir)
    gguf_dir.mkdir(parents=True, exist_ok=True)
    f16 = gguf_dir / "laptop-F16.gguf"
    if not f16.is_file():
        say("writing the F16 GGUF ...")
        write_gguf(model_dir, gguf_dir / ".partial.gguf", ftype="F16")
        os.replace(gguf_dir / ".partial.gguf", f16)
    ggufs["F16"] = f16
    for quant in QUANTS:
        path = gguf_dir / f"laptop-{quant}.gguf"
        if not path.is_file():
            say(f"quantizing to {quant} with llama.cpp's quantizer ...")
            quantize_gguf(f16, path, quant)
        ggufs[quant] = path
    return model_dir, ggufs


def torch_bytes_per_token(model_dir: Path, element_bytes: int) -> int:
    """Every parameter once, except the input embedding table: one row of it."""
    import safetensors

    total, embedding, rows = 0, 0, 1
    for shard in sorted(model_dir.glob("*.safetensors")):
        with safetensors.safe_open(str(shard), "np") as f:
            for name in f.keys():  # noqa: SIM118 - safe_open has no __iter__
                shape = f.get_slice(name).get_shape()
                count = 1
                for dim in shape:
                    count *= dim
                total += count
                if name.endswith("embed_tokens.weight"):
                    embedding, rows = count, shape[0]
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if config.get("tie_word_embeddings"):  # the output layer reads the whole table anyway
        return total * element_bytes
    return (total - embedding + embedding // rows) * element_bytes


def gguf_bytes_per_token(path: Path) -> int:
    """The file's tensors once, except ``token_embd`` (one row) unless it is also the output."""
    import gguf

    tensors = {t.name: t for t in gguf.GGUFReader(str(path)).tensors}
    total = sum(int(t.n_bytes) for t in tensors.values())
    embd = tensors.get("token_embd.weight")
    if embd is None or "output.weight" not in tensors:
        return total
    rows = int(embd.shape[-1])  # GGUF lists dimensions innermost first
    return total - int(embd.n_bytes) + int(embd.n_bytes) // rows


# -- measuring -----------------------------------------------------------------------------------
def start(system: str, model_dir: Path, ggufs: dict[str, Path], tokens: int) -> Any:
    from hunyuan_webui import models

    if system.startswith("torch-"):
        from hunyuan_webui.engine.local import LocalEngine

        engine: Any = LocalEngine(models.resolve(str(model_dir)), dtype=system[len("torch-"):],
                                  device="cpu", max_batch_size=8, max_new_tokens=tokens)
    else:
        from hunyuan_webui.engine.llamacpp import LlamaCppEngine

        spec = models.resolve(str(ggufs[system[len("llamacpp-"):]]))
        engine = LlamaCppEngine(spec, device="cpu", max_batch_size=8, max_new_tokens=tokens)
    status = engine.wait_ready(1800)
    if status.state != "ready":
        engine.close()
        raise RuntimeError(f"{system} did not load: {status.reason}")
    return engine


async def measure(engine: Any, tokens: int, clients: int) -> tuple[float, float, bool]:
    """(single-stream decode tokens/s, tokens/s of ``clients`` at once, every count right)."""
    from benchmarks.clients import engine_client, run_batch

    client = engine_client(engine, tokens)
    await client(0)  # warm-up
    single = await client(1)
    batch = await run_batch(client, clients, clients, first=2)
    samples = [single, *batch.samples]
    ok = all(s.ok and s.tokens == tokens for s in samples)
    span = (single.last_text or 0) - (single.ttft or 0)
    rate = (tokens - 1) / span if span > 0 else 0.0
    return rate, sum(s.tokens or 0 for s in batch.samples) / batch.wall_s, ok


def run(args: argparse.Namespace) -> dict[str, Any]:
    def say(message: str) -> None:
        print(f"[cpu-laptop] {message}", file=sys.stderr, flush=True)

    shape = QUICK_SHAPE if args.quick else replace(SHAPE_1_8B, layers=args.layers)
    tokens = 4 if args.quick else args.tokens
    clients = 2 if args.quick else args.clients
    systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    load_before = os.getloadavg()
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="hymt-laptop-"))
    model_dir, ggufs = prepare(work, shape, say)
    import torch

    from hunyuan_webui.engine.llama_model import cpu_has_amx
    from hunyuan_webui.engine.threads import engine_threads

    torch.set_num_threads(engine_threads())
    bandwidth = copy_bandwidth(64 if args.quick else args.copy_mb)
    say(f"copy bandwidth: {bandwidth / 1e9:.1f} GB/s on {torch.get_num_threads()} thread(s)")
    results = []
    for system in systems:
        if system.startswith("torch-"):
            weight = torch_bytes_per_token(model_dir, 4 if system == "torch-fp32" else 2)
        else:
            weight = gguf_bytes_per_token(ggufs[system[len("llamacpp-"):]])
        result = Result(system, weight, bandwidth / weight)
        say(f"{system}: {weight / 1e6:.0f} MB read per token, ceiling "
            f"{result.ceiling:.1f} tokens/s ...")
        try:
            engine = start(system, model_dir, ggufs, tokens)
            try:
                result.single, result.clients8, result.tokens_ok = asyncio.run(
                    measure(engine, tokens, clients))
            finally:
                engine.close()
        except Exception as exc:  # one format failing leaves the others' rows
            result.error = f"{type(exc).__name__}: {exc}"
        say(f"{system}: {result.single or 0:.1f} tokens/s alone, {result.clients8 or 0:.1f} "
            f"with {clients} clients {result.error}")
        results.append(result)
    return {"shape": asdict(shape), "quick": args.quick, "tokens": tokens, "clients": clients,
            "bandwidth": bandwidth, "threads": torch.get_num_threads(), "amx": cpu_has_amx(),
            "machine": bench_report.machine_info(load_before),
            "command": "python -m benchmarks.cpu_laptop " + " ".join(args.argv),
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "results": [{**asdict(r), "share": r.share} for r in results]}


def table(result: dict[str, Any]) -> str:
    shape, machine = result["shape"], result["machine"]
    layers = ("all 32 layers" if shape["layers"] == 32 else f"{shape['layers']} of its 32 "
              "layers (the embeddings whole)")
    model = (f"a tiny smoke-test shape (hidden {shape['hidden']}), not the 1.8B" if result["quick"]
             else f"the Hy-MT2-1.8B shape (hidden {shape['hidden']}, FFN {shape['ffn']}, "
                  f"vocabulary {shape['vocab']:,}) with {layers}")
    lines = [
        f"Command: `{result['command']}`",
        "",
        f"Run {result['when']} on {machine['cpus']} CPUs "
        f"({machine['processor']}), {result['threads']} engine thread(s), torch "
        f"{machine['torch']}; load average {machine['load_before']} before, "
        f"{machine['load_after']} after. Model: {model}, random weights; {result['tokens']} "
        f"tokens per answer. Copy bandwidth: "
        f"{result['bandwidth'] / 1e9:.1f} GB/s; ceiling = bandwidth / weight bytes read per token."
        + (" This CPU has AMX: llama.cpp runs without its AMX path (it crashes on quantized "
           "files), its Q4_K weights repacked by name (`engine/llama_repack.py`)."
           if result.get("amx") else ""),
        "",
        f"| system | weights read per token | ceiling tokens/s | 1 stream tokens/s | of ceiling "
        f"| {result['clients']} clients tokens/s | tokens ok |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["results"]:
        if r["error"]:
            lines.append(f"| {r['system']} | {r['weight_bytes'] / 1e6:.0f} MB | "
                         f"{r['ceiling']:.1f} | failed: {r['error'][:80]} | | | |")
            continue
        lines.append(f"| {r['system']} | {r['weight_bytes'] / 1e6:.0f} MB | {r['ceiling']:.1f} | "
                     f"{r['single']:.1f} | {100 * (r['share'] or 0):.0f}% | "
                     f"{r['clients8']:.1f} | {'yes' if r['tokens_ok'] else 'NO'} |")
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cpu_laptop",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=32,
                        help="decoder layers of the 1.8B shape (32 = the real model; fewer for "
                             "a machine without the RAM: the table says how many)")
    parser.add_argument("--tokens", type=int, default=64, help="generated tokens per answer")
    parser.add_argument("--clients", type=int, default=8, help="clients at once, the second column")
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--copy-mb", type=int, default=1024,
                        help="buffer of the copy benchmark (MB); far beyond the caches")
    parser.add_argument("--work-dir", help="keep the checkpoint and GGUF files here (reused)")
    parser.add_argument("--quick", action="store_true",
                        help="a tiny shape, 4 tokens, 2 clients: a smoke test of the whole path")
    parser.add_argument("--out", help="write the JSON results here")
    parser.add_argument("--doc", help="also write the table between the cpu-laptop markers of "
                                      "this document (docs/PERFORMANCE.md)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    let_idle_threads_sleep()  # before torch loads: OpenMP as the app's engine process runs it
    result = run(args)
    text = table(result)
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    if args.doc:
        bench_report.update_doc(Path(args.doc), text, DOC_START, DOC_END)
    failed = [r for r in result["results"] if r["error"] or not r["tokens_ok"]]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
