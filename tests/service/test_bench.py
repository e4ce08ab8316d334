"""The benchmark CLI: it starts, a tiny run completes and writes JSON, and the report helpers.

The real measurement (``python -m benchmarks.bench``, docs/PERFORMANCE.md) takes minutes; here a
~1M-parameter checkpoint, one client and a few tokens exercise the whole path through this app's
own columns (the in-process engine and the JSON API in a real server process).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import peers as bench_peers
from benchmarks import report as bench_report

ROOT = Path(__file__).resolve().parents[2]


def run_bench(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchmarks.bench", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_help_lists_the_options() -> None:
    done = run_bench("--help", timeout=60)
    assert done.returncode == 0, done.stderr
    for flag in ("--size", "--concurrency", "--systems", "--quick", "--out", "--doc"):
        assert flag in done.stdout


@pytest.mark.slow
def test_tiny_run_writes_json_and_counts_every_token(tmp_path: Path) -> None:
    out, doc = tmp_path / "bench.json", tmp_path / "PERFORMANCE.md"
    doc.write_text(f"# Performance\n\n{bench_report.DOC_START}\nold\n{bench_report.DOC_END}\n\nKept.\n")
    done = run_bench("--size", "tiny", "--systems", "engine,app-api", "--concurrency", "1",
                     "--rounds", "1", "--min-requests", "2", "--tokens", "4", "--threads", "1",
                     "--no-cache-check", "--out", str(out), "--doc", str(doc))
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    rows = {row["system"]: row for row in result["rows"]}
    assert set(rows) == {"engine", "app-api"}
    for row in rows.values():
        assert row["clients"] == 1 and row["requests"] == 2 and row["failed"] == 0
        assert row["tokens_checked"], row  # exactly --tokens tokens each: no early stop token
        assert row["tokens_per_s"] > 0 and row["ttft_p50_ms"] > 0
    # Both systems saw the same prompts, token for token.
    assert result["prompt_tokens"]["engine"] == result["prompt_tokens"]["app-api"]
    assert "| app-api | 1 |" in done.stdout
    text = doc.read_text()
    assert "old" not in text and "| engine | 1 |" in text and text.endswith("Kept.\n")


@pytest.mark.slow
def test_the_llama_cpp_columns_run_at_defaults_and_count_every_token(tmp_path: Path) -> None:
    """The condition users run (--defaults: no thread or batch flags) with our llama.cpp engine,
    the app on a GGUF of the checkpoint and llama-cpp-python's own server; the table goes to the
    document's second pair of markers and leaves the first alone."""
    out, doc = tmp_path / "bench.json", tmp_path / "PERFORMANCE.md"
    doc.write_text(f"{bench_report.DOC_START}\ncontrolled\n{bench_report.DOC_END}\n\n"
                   f"{bench_report.DEFAULTS_START}\nold\n{bench_report.DEFAULTS_END}\n")
    done = run_bench("--size", "tiny", "--defaults", "--systems",
                     "engine,llamacpp,app-llamacpp,llama-cpp-server", "--concurrency", "1",
                     "--rounds", "1", "--min-requests", "2", "--tokens", "6", "--no-cache-check",
                     "--out", str(out), "--doc", str(doc), timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["settings"]["defaults"] and result["settings"]["threads"] is None
    assert result["skipped"] == {}
    rows = {row["system"]: row for row in result["rows"]}
    assert set(rows) == {"engine", "llamacpp", "app-llamacpp", "llama-cpp-server"}
    for row in rows.values():
        assert row["requests"] == 2 and row["failed"] == 0, row
        assert row["tokens_checked"], row  # 6 tokens each, also where the server reports none
    # The GGUF is the same model: llama.cpp renders the prompts as transformers does.
    assert result["prompt_tokens"]["llamacpp"] == result["prompt_tokens"]["engine"]
    assert any(t["target"].startswith("llamacpp tokens/s at 1 client") for t in result["targets"])
    text = doc.read_text()
    assert "controlled" in text and "old" not in text and "| llama-cpp-server | 1 |" in text
    assert "every system at its own defaults" in text


def test_transformers_serve_runs_at_its_own_defaults_in_the_defaults_condition() -> None:
    """At --defaults the continuous-batching baseline was capped at 30 paged blocks for 8 clients,
    which made it several times slower than its users see it. Now: its own paged-cache size, or
    the memory share --cb-memory-share gives it; the cap stays in the controlled condition."""
    def serve_cb(**kwargs):
        return bench_peers.command_for("serve-cb", "/m", 8000, device="cpu", max_new_tokens=200,
                                       cb_blocks=30, **kwargs)

    at_defaults = serve_cb(defaults=True)
    assert "--continuous-batching" in at_defaults
    assert "--cb-num-blocks" not in at_defaults and "--cb-max-memory-percent" not in at_defaults
    shared = serve_cb(defaults=True, cb_memory=0.2)
    assert shared[-2:] == ["--cb-max-memory-percent", "0.2"] and "--cb-num-blocks" not in shared
    assert serve_cb(cb_memory=0.2)[-2:] == ["--cb-num-blocks", "30"]  # controlled: sized to fit
    assert "its paged cache at its own size" in bench_report.condition_text({"defaults": True})


def test_the_defaults_condition_measures_one_server_at_a_time_unless_told_to_interleave() -> None:
    """At --defaults each system is measured alone; --interleave makes it an A/B whose rounds
    alternate, and the report says which it was."""
    from benchmarks import bench

    def config(*flags: str):
        return bench.config_from(bench.build_parser().parse_args(["--defaults", *flags]), "/m")

    assert not config().interleave
    assert config("--interleave").interleave
    assert bench_report.condition_text({"defaults": True}).endswith("each measured alone.")
    assert bench_report.condition_text({"defaults": True, "interleave": True}).endswith(
        "all up at once, rounds alternating between them.")


def test_defaults_and_threads_do_not_go_together() -> None:
    done = run_bench("--defaults", "--threads", "1", timeout=60)
    assert done.returncode != 0 and "leave out --threads" in done.stderr


def test_percentile_interpolates() -> None:
    assert bench_report.percentile([], 50) is None
    assert bench_report.percentile([3.0], 95) == 3.0
    assert bench_report.percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    assert bench_report.percentile([4.0, 1.0, 3.0, 2.0], 100) == 4.0


def test_targets_compare_the_app_with_the_baseline_and_the_best_serve() -> None:
    def row(system: str, clients: int, tps: float, ttft: float | None = None,
            engine_ttft: float | None = None) -> bench_report.Row:
        return bench_report.Row(system, clients, 8, 0, ttft, ttft, None, tps, 1.0, True, engine_ttft)

    rows = [row("baseline", 8, 10), row("serve", 8, 20), row("serve-cb", 8, 40),
            row("app-api", 8, 61), row("app-api", 1, 5, ttft=120), row("engine", 1, 6, 90, 100)]
    checks = {c["target"]: c for c in bench_report.target_checks(rows, {"repeat_fraction": 0.01})}
    assert checks["app-api tokens/s at 8 clients / baseline"]["value"] == 6.1
    assert checks["app-api tokens/s at 8 clients / best transformers serve"]["met"] is True
    ttft = checks["app-api TTFT p50 at 1 client / engine's own first-token time"]
    assert ttft["value"] == 1.2 and ttft["met"] is True
    assert checks["repeated identical request / first one (JSON API, cache on)"]["met"] is True


def test_every_prompt_lets_the_gradio_endpoint_answer_200_tokens() -> None:
    """The Gradio endpoint sends no max_new_tokens, so the engine caps an answer at 32 + 3 x the
    prompt's tokens: a shorter prompt would end its answer before the 200 tokens of --defaults."""
    from transformers import AutoTokenizer

    from benchmarks.clients import SENTENCES, prompt
    from hunyuan_webui.demo.model import ensure_demo_model

    tokenizer = AutoTokenizer.from_pretrained(ensure_demo_model())
    for i in range(len(SENTENCES)):
        ids = tokenizer.apply_chat_template([{"role": "user", "content": prompt(i).message}],
                                            add_generation_prompt=True, tokenize=True,
                                            return_dict=False)
        assert 32 + 3 * len(ids) >= 200, (i, len(ids))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["local", "llamacpp"])
def test_the_threads_benchmark_times_every_setting_under_every_load(tmp_path: Path,
                                                                    engine: str) -> None:
    """``python -m benchmarks.threads``: each setting in its own process, beside each load; the
    table goes between the document's markers (the llama.cpp engine's between its own)."""
    from benchmarks import peers, threads

    model = peers.build_checkpoint(tmp_path / "tiny", "tiny")
    doc = tmp_path / "PERFORMANCE.md"
    start, end = threads.LLAMACPP_DOC if engine == "llamacpp" else (threads.DOC_START,
                                                                     threads.DOC_END)
    doc.write_text(f"Kept.\n{start}\nold\n{end}\n")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.threads", "--model-dir", str(model), "--rounds", "1",
         "--steps", "5", "--batch", "2", "--doc", str(doc), "--engine", engine],
        cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    text = doc.read_text()
    assert text.startswith("Kept.\n") and "old" not in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "ms/step" not in line]
    assert [row.split(" | ")[0][2:] for row in rows] == list(threads.LOADS)
    for row in rows:  # 1 thread's time, then each other setting's time and ratio to it
        cells = row.strip("| ").split(" | ")[1:]
        assert len(cells) == 3 and float(cells[0]) > 0
        assert all(cell.endswith("x)") for cell in cells[1:]), row


def test_first_text_compares_the_page_protocol_with_the_json_api(capsys) -> None:
    """``python -m benchmarks.first_text URL``: every column answers, each row has its ratio."""
    from apphelpers import running_app
    from fakes import TypingEngine

    from benchmarks import first_text

    with running_app(TypingEngine(delay=0.001), cache_size=0) as app:
        assert first_text.main([app.url, "--requests", "2"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ")][1:]
    assert [row.split(" | ")[0][2:] for row in rows] == ["gradio", "api card", "api greedy"]
    assert all(row.split(" | ")[1] == "2" for row in rows), rows


def test_the_step_benchmark_times_the_direct_step_and_both_projection_layouts(
        demo_dir: str, tmp_path: Path) -> None:
    """``python -m benchmarks.cpu_step`` on the demo model: all four arrangements, each layer's
    five grouped projections counted as two multiplies where they are shared, five where not
    (plain ``nn.Linear`` shares nothing)."""
    from transformers import AutoConfig

    doc = tmp_path / "PERF.md"
    done = subprocess.run([sys.executable, "-m", "benchmarks.cpu_step", "--model-dir", demo_dir,
                           "--steps", "4", "--doc", str(doc)], cwd=ROOT, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    layers = AutoConfig.from_pretrained(demo_dir).num_hidden_layers
    cells = [[cell.strip() for cell in line.split("|")[1:-1]]
             for line in doc.read_text().splitlines() if line.startswith("| ")]
    multiplies = {row[0]: int(row[2]) for row in cells if row[2].isdigit()}
    assert set(multiplies) == {"direct", "shared", "separate", "plain"}, cells
    assert multiplies["direct"] == multiplies["shared"]
    assert multiplies["separate"] - multiplies["shared"] == 3 * layers
    assert multiplies["plain"] == multiplies["separate"]
    assert "<!-- bench-cpu-step:start -->" in doc.read_text()
