"""PyTorch bf16 against fp32 and llama.cpp Q4_K_M through the page: ``python -m benchmarks.bench
bf16 --help``.

On the real Hy-MT2-1.8B shape with random weights (:mod:`benchmarks.cpu_laptop` builds the fp32
checkpoint and its GGUF files; the bf16 checkpoint here is its weights rounded to bf16, as the
real checkpoints are stored), the app runs as its users start it, one system at a time:

* ``torch-bf16``: ``app.py --model DIR-bf16`` (``--dtype auto``: bf16 on a CPU that computes bf16
  natively, which the table says; fp32 elsewhere);
* ``torch-fp32``: ``app.py --model DIR-bf16 --dtype fp32``;
* ``llamacpp-Q4_K_M``: ``app.py --model FILE-Q4_K_M.gguf`` (``--engine llamacpp``).

Each is measured through the page's own protocol (Gradio's ``/gradio_api/call/translate``, each
client in a session it keeps), at ``--clients`` closed-loop clients (8) and at 1, answers capped
at ``--tokens`` tokens (the random weights never stop by themselves), the tokens counted by the
engine (``/ready``). Rounds alternate the systems' order; the app is restarted for each (the
three do not fit in RAM at once beside other work). The ratios are what to read.

The answers: bf16 in the app must give the answers of the bf16 *reference forward*,
transformers' own ``generate`` on the same bf16 weights as the app loads them (its multiplies on
oneDNN's packed weights), greedy, request by request through ``POST /v1/translate`` (greedy, no
repetition penalty, speculative decoding on). The check also compares with ``generate`` on the
model as transformers alone loads it (``F.linear``): random weights make near-ties common, and
one row's ``F.linear`` kernel rounds otherwise than the packed one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks import cpu_laptop
from benchmarks import peers as bench_peers
from benchmarks.report import machine_info, publish

DOC_START, DOC_END = "<!-- bench-bf16:start -->", "<!-- bench-bf16:end -->"
SYSTEMS = ("torch-bf16", "torch-fp32", "llamacpp-Q4_K_M")
CHECK_TEXTS = ("The committee will publish its final report next spring.",
               "Please keep your luggage with you at all times.",
               "我们明天早上八点在火车站门口见面。", "Call Anna at 555-0199.")


def bf16_checkpoint(model_dir: Path) -> Path:
    """The fp32 checkpoint's weights rounded to bf16 and stored so (config ``dtype``), once."""
    out = model_dir.with_name(model_dir.name + "-bf16")
    if (out / "hymt.json").is_file():
        return out
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16)
    model.save_pretrained(out, safe_serialization=True)
    del model
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json", "hymt.json"):
        shutil.copyfile(model_dir / name, out / name)  # the sidecar last: it marks it done
    return out


def prepare(work: Path, layers: int, say: Any) -> dict[str, str]:
    """The model each system loads, by system."""
    shape = replace(cpu_laptop.SHAPE_1_8B, layers=layers)
    model_dir, ggufs = cpu_laptop.prepare(work, shape, say)
    bf16 = bf16_checkpoint(model_dir)
    return {"torch-bf16": str(bf16), "torch-fp32": str(bf16), "llamacpp-Q4_K_M":
            str(ggufs["Q4_K_M"])}


def start(system: str, model: str, tokens: int, log_dir: Path) -> bench_peers.Peer:
    """The app on ``model`` as this system, at its defaults (threads, batch), answers capped."""
    import subprocess

    port = bench_peers.free_port()
    cmd = bench_peers.app_command(model, port, max_new_tokens=tokens, defaults=True)
    cmd += ["--cache-size", "0"] + (["--dtype", "fp32"] if system == "torch-fp32" else [])
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{system}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=bench_peers.peer_env(None),
                                start_new_session=True)
    peer = bench_peers.Peer(system, f"http://127.0.0.1:{port}", proc, log_path, cmd)
    bench_peers._wait_healthy(peer, "/ready", 1800)
    return peer


async def throughput(url: str, tokens: int, clients: int, requests: int, first: int
                     ) -> dict[str, Any]:
    """Tokens/s of ``clients`` page clients (the engine's count over the wall time)."""
    import httpx

    from benchmarks.clients import engine_counter, gradio_client, run_batch

    async with httpx.AsyncClient(timeout=1800, trust_env=False) as http:
        client = gradio_client(http, url, tokens)
        await client(first - 1)  # warm-up: a session, the page's first call
        before = await engine_counter(http, url)
        batch = await run_batch(client, clients, requests, first=first, timeout=3600)
        made = await engine_counter(http, url) - before
        ready = (await http.get(url + "/ready")).json()
    failed = [s.error for s in batch.samples if not s.ok]
    return {"tokens_per_s": made / batch.wall_s, "tokens": made, "wall_s": batch.wall_s,
            "requests": len(batch.samples), "failed": failed[:3], "dtype": ready.get("dtype"),
            "dtype_reason": ready.get("extra", {}).get("dtype_reason", "")}


def answers(url: str, tokens: int) -> list[str]:
    """The app's greedy answers to the check texts (``POST /v1/translate``)."""
    import httpx

    out = []
    with httpx.Client(base_url=url, timeout=1800, trust_env=False) as http:
        for text in CHECK_TEXTS:
            r = http.post("/v1/translate", json={
                "text": text, "source_lang": "en" if text.isascii() else "zh",
                "target_lang": "fr", "cache": False, "options": {
                    "deterministic": True, "repetition_penalty": 1.0, "max_new_tokens": tokens}})
            r.raise_for_status()
            out.append(r.json()["translation"])
    return out


def reference(model_dir: str, tokens: int, as_loaded: bool) -> list[str]:
    """transformers' own greedy ``generate`` on the bf16 weights, one request at a time, in the
    official prompt and the checkpoint's chat format: the bf16 reference forward. ``as_loaded``:
    on the model as the app loads it (its multiplies on oneDNN's packed weights,
    ``engine/cpu.py``); else as transformers loads it (``F.linear``), whose one-row kernel rounds
    otherwise."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from hunyuan_webui import models
    from hunyuan_webui.engine import loader
    from hunyuan_webui.prompts import translation_prompt

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    if as_loaded:
        model = loader.load(models.resolve(model_dir), "bf16", "cpu").model
    else:
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.bfloat16).eval()
    out = []
    for text in CHECK_TEXTS:
        prompt = translation_prompt(text, "en" if text.isascii() else "zh", "fr")
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                            add_generation_prompt=True, tokenize=True,
                                            return_dict=False)
        with torch.inference_mode():
            generated = model.generate(torch.tensor([list(ids)]), max_new_tokens=tokens,
                                       do_sample=False, repetition_penalty=1.0)
        out.append(tokenizer.decode(generated[0, len(ids):], skip_special_tokens=True,
                                    clean_up_tokenization_spaces=False))
    del model
    return out


def run(args: argparse.Namespace) -> dict[str, Any]:
    def say(message: str) -> None:
        print(f"[bf16] {message}", file=sys.stderr, flush=True)

    load_before = os.getloadavg()
    work = Path(args.work_dir or tempfile.mkdtemp(prefix="hymt-bf16-"))
    models = prepare(work, args.layers, say)
    systems = [s for s in args.systems.split(",") if s]
    cells: dict[str, dict[int, list[dict[str, Any]]]] = {s: {} for s in systems}
    app_answers: list[str] = []
    for r in range(args.rounds):
        for system in (systems if r % 2 == 0 else systems[::-1]):
            peer = start(system, models[system], args.tokens, work / "logs")
            try:
                for clients in (args.clients, 1):
                    requests = 2 * clients if clients > 1 else 2
                    cell = asyncio.run(throughput(peer.url, args.tokens, clients, requests,
                                                  first=1000 * r + 100 * clients + 1))
                    cells[system].setdefault(clients, []).append(cell)
                    say(f"round {r + 1} {system} {clients} client(s): "
                        f"{cell['tokens_per_s']:.1f} tokens/s ({cell['dtype']})")
                if system == "torch-bf16" and not app_answers:
                    app_answers = answers(peer.url, args.check_tokens)
            finally:
                peer.stop()
    want = reference(models["torch-bf16"], args.check_tokens, True) if app_answers else []
    plain = reference(models["torch-bf16"], args.check_tokens, False) if app_answers else []
    return {"benchmark": "bf16", "command": "python -m benchmarks.bench bf16 "
            + " ".join(args.argv), "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "layers": args.layers, "tokens": args.tokens, "clients": args.clients,
            "rounds": args.rounds, "machine": machine_info(load_before),
            "results": {s: {str(c): {"tokens_per_s": statistics.median(
                x["tokens_per_s"] for x in runs), "runs": runs} for c, runs in by.items()}
                for s, by in cells.items()},
            "answers": {"app": app_answers, "reference": want, "plain": plain,
                        "same": [a == b for a, b in zip(app_answers, want)],
                        "same_as_plain": [a == b for a, b in zip(app_answers, plain)]}}


def table(result: dict[str, Any]) -> str:
    machine, res = result["machine"], result["results"]
    dtype = next((r["runs"][0]["dtype"] for r in res.get("torch-bf16", {}).values()), "?")
    reason = next((r["runs"][0]["dtype_reason"] for r in res.get("torch-bf16", {}).values()), "")
    clients = str(result["clients"])
    lines = [f"Command: `{result['command']}`", "",
             f"Run {result['when']} on {machine['cpus']} CPUs ({machine['processor']}), torch "
             f"{machine['torch']}; load average {machine['load_before']} before, "
             f"{machine['load_after']} after (a machine shared with other work). Model: the "
             f"Hy-MT2-1.8B shape with {result['layers']} layers, random weights; "
             f"{result['tokens']} tokens per answer; {result['rounds']} rounds, the systems' "
             "order alternating; each through the page (Gradio's protocol), the app at its "
             f"defaults. `--dtype auto` on the bf16 checkpoint here: **{dtype}** ({reason}).", "",
             f"| system | 1 client tokens/s | {clients} clients tokens/s | {clients} clients / "
             "fp32 |", "|---|---:|---:|---:|"]
    fp32 = res.get("torch-fp32", {}).get(clients, {}).get("tokens_per_s")
    for system, by in res.items():
        many = by.get(clients, {}).get("tokens_per_s", 0.0)
        lines.append(f"| {system} | {by.get('1', {}).get('tokens_per_s', 0.0):.1f} | "
                     f"{many:.1f} | {many / fp32:.2f}x |" if fp32 else
                     f"| {system} | {by.get('1', {}).get('tokens_per_s', 0.0):.1f} | {many:.1f} | |")
    same, plain = result["answers"]["same"], result["answers"].get("same_as_plain", [])
    if same:
        lines += ["", f"bf16 answers through `POST /v1/translate` (greedy, speculative decoding "
                  f"on) against the bf16 reference forward, transformers' `generate` on the "
                  f"model as the app loads it: {sum(same)} of {len(same)} the same"
                  + (f"; against `generate` on the model as transformers alone loads it "
                     f"(`F.linear`, whose one-row kernel rounds otherwise): {sum(plain)} of "
                     f"{len(plain)}." if plain else ".")]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench bf16",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", help="keep the checkpoints and GGUF files here (reused)")
    parser.add_argument("--layers", type=int, default=32)
    parser.add_argument("--tokens", type=int, default=32, help="tokens per answer")
    parser.add_argument("--check-tokens", type=int, default=24,
                        help="tokens per answer of the answers check")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--systems", default=",".join(SYSTEMS))
    parser.add_argument("--out", help="write the JSON results here")
    parser.add_argument("--doc", help="write the table between this document's markers")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    started = time.monotonic()
    result = run(args)
    result["seconds"] = round(time.monotonic() - started)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    publish(table(result), args.doc, DOC_START, DOC_END)
    return 0
