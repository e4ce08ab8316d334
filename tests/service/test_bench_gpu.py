"""The prepared GPU check (``python -m benchmarks.gpu``), smoke-tested on a CPU.

It runs once, on a lent GPU machine that has torch, transformers, safetensors and numpy but not
this app's web stack, and nothing can be installed there. So the end-to-end run here happens with
the web packages made unimportable, and the modules it imported are checked against what that
machine has: the packages it lists and everything they require.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib.metadata import PackageNotFoundError, distribution, packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from benchmarks import gpu, gpu_measures, gpu_report

ROOT = Path(__file__).resolve().parents[2]
WEB = ("gradio", "gradio_client", "fastapi", "starlette", "uvicorn", "httpx", "requests",
       "aiohttp", "websockets", "sse_starlette", "openai", "redis", "multipart")
# REFERENCE.md section 8: what the GPU machine's Python has (bitsandbytes is optional).
MACHINE = ("torch", "transformers", "accelerate", "safetensors", "tokenizers", "huggingface_hub",
           "numpy")
MEASUREMENTS = ("copy_bandwidth", "checkpoint", "load", "probe", "single_stream", "batch16",
                "first_token", "int8", "int4")
# Runs the module as `python -m` would, with the web packages unimportable (None in sys.modules
# makes `import` fail and find_spec answer None, as on a machine without them); then lists every
# module imported, and the top-level packages that our own modules imported themselves (what the
# libraries import for themselves, when present, is theirs to check).
RUNNER = """
import builtins, json, runpy, sys
blocked, listing, *argv = sys.argv[1:]
for name in blocked.split(","):
    sys.modules[name] = None
ours, real_import = set(), builtins.__import__
def tracking_import(name, globals=None, locals=None, fromlist=(), level=0):
    caller = str((globals or {}).get("__name__", ""))
    if level == 0 and caller.startswith(("hunyuan_webui", "benchmarks", "__main__")):
        ours.add(name.split(".")[0])
    return real_import(name, globals, locals, fromlist, level)
builtins.__import__ = tracking_import
sys.argv = ["benchmarks.gpu", *argv]
try:
    runpy.run_module("benchmarks.gpu", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
else:
    code = 0
with open(listing, "w") as f:
    json.dump({"all": sorted(k for k, v in sys.modules.items() if v is not None),
               "ours": sorted(ours)}, f)
sys.exit(code)
"""


def machine_modules() -> set[str]:
    """Top-level modules of the GPU machine's packages and of everything they require."""
    found: set[str] = set()
    todo = list(MACHINE)
    while todo:
        name = canonicalize_name(todo.pop())
        if name in found:
            continue
        try:
            requires = distribution(name).requires or []
        except PackageNotFoundError:
            continue
        found.add(name)
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return {module for module, owners in packages_distributions().items()
            if any(canonicalize_name(o) in found for o in owners)}


def third_party(modules: list[str]) -> set[str]:
    tops = {m.split(".")[0] for m in modules}
    return {t for t in tops if t not in sys.stdlib_module_names and not t.startswith("_")
            and t not in ("hunyuan_webui", "benchmarks", "__main__")}


def test_spec_bandwidth_by_gpu_name() -> None:
    assert gpu_measures.spec_bandwidth("NVIDIA H200") == 4.8e12
    assert gpu_measures.spec_bandwidth("NVIDIA H100 80GB HBM3") == 3.35e12  # the SXM part's own name
    assert gpu_measures.spec_bandwidth("NVIDIA H100 PCIe") == 2.0e12
    assert gpu_measures.spec_bandwidth("NVIDIA A100-SXM4-80GB") == 2.04e12
    assert gpu_measures.spec_bandwidth("NVIDIA A100-SXM4-40GB") == 1.56e12
    assert gpu_measures.spec_bandwidth("NVIDIA L40S") == 0.864e12
    assert gpu_measures.spec_bandwidth("Tesla T4") is None


def test_help_imports_no_web_module() -> None:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "benchmarks.gpu", "--help"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    for flag in ("--device", "--size", "--tokens", "--budget-s", "--out", "--doc", "--model-dir"):
        assert flag in done.stdout
    imported = {m.group(1).strip().split(".")[0]
                for m in re.finditer(r"^import time:.*\|\s*(\S+)\s*$", done.stderr, re.M)}
    assert "torch" in imported  # the parse found the modules
    assert not imported & set(WEB)


def test_no_time_left_skips_every_measurement_with_the_reason(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]
                                                              ) -> None:
    out = tmp_path / "gpu.json"
    assert gpu.main(["--device", "cpu", "--size", "tiny", "--tokens", "8", "--budget-s", "0",
                     "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    for name in MEASUREMENTS:
        entry = results["measurements"][name]
        assert entry["status"] == "skipped" and "time budget" in entry["reason"], (name, entry)
    assert "time budget" in capsys.readouterr().out


def test_missing_bitsandbytes_is_recorded_not_raised(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine refuses --dtype int8 before reading any weight when bitsandbytes is missing
    (as it may be on the GPU machine); the run records its message and goes on."""
    from hunyuan_webui.demo.model import ensure_demo_model

    monkeypatch.setitem(sys.modules, "bitsandbytes", None)
    args = gpu.build_parser().parse_args(["--device", "cpu", "--size", "tiny",
                                          "--out", str(tmp_path / "gpu.json")])
    run = gpu.Run(args, gpu_measures.Budget(120))
    gpu.measure_quantized(run, Path(ensure_demo_model()), "int8", {"params": 1}, {})
    entry = run.results["measurements"]["int8"]
    assert entry["status"] == "failed" and "bitsandbytes" in entry["reason"], entry


@pytest.mark.slow
def test_smoke_run_measures_everything_without_the_web_stack(tmp_path: Path) -> None:
    out, listing, doc = tmp_path / "gpu.json", tmp_path / "modules.json", tmp_path / "PERF.md"
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, ",".join(WEB), str(listing), "--device", "cpu",
         "--size", "tiny", "--tokens", "8", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert re.search(r"^\[\s*\d+\.\d+s\] single_stream: ok$", done.stderr, re.M)  # stamped

    results = json.loads(out.read_text())
    for name in MEASUREMENTS:
        entry = results["measurements"][name]
        assert entry["status"] == "ok" or entry.get("reason"), (name, entry)
    m = results["measurements"]
    single = m["single_stream"]
    assert single["status"] == "ok" and single["tokens"] == single["requested_tokens"] == 8
    assert single["exact"] and single["decode_tokens_per_s"] > 0
    assert single["ceiling_measured_tokens_per_s"] > 0 and single["fraction_of_measured"] > 0
    assert m["batch16"]["exact"] and m["batch16"]["tokens"] == 16 * 8
    assert min(m["first_token"]["prompt_tokens"]) >= gpu_measures.PROMPT_TOKENS
    assert results["environment"]["torch"] and results["environment"]["transformers"]
    assert "| single-stream decode" in done.stdout

    imported = json.loads(listing.read_text())
    assert not {m.split(".")[0] for m in imported["all"]} & set(WEB)
    assert {"torch", "transformers", "safetensors"} <= set(imported["ours"])  # tracking works
    unexpected = third_party(imported["ours"]) - machine_modules() - {"bitsandbytes"}
    assert not unexpected, f"imports the GPU machine may not have: {sorted(unexpected)}"

    doc.write_text(f"# Performance\n\nBefore.\n\n{gpu_report.DOC_START}\nold\n{gpu_report.DOC_END}\n\nAfter.\n")
    assert gpu.main(["--from-json", str(out), "--doc", str(doc)]) == 0
    text = doc.read_text()
    assert "old" not in text and "Before." in text and "After." in text
    block = text.split(gpu_report.DOC_START)[1].split(gpu_report.DOC_END)[0]
    # The precision the engine chose here: bf16 on a CPU that computes it natively, else fp32.
    assert f"| single-stream decode ({single['dtype']}, 8 tokens) |" in block
    assert single["dtype"] in ("fp32", "bf16")
