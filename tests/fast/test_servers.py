"""The managed servers' command lines and messages, without starting any (the fast lane).

What a person sees when a server is not installed, the exact flags each server gets from our
settings, the restart policy's arithmetic and the supervisor's loop, and which engines take which
checkpoint formats.
"""

from __future__ import annotations

import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from ggufhelpers import write_wrong_gguf

from hunyuan_webui import models
from hunyuan_webui.core import kinds
from hunyuan_webui.core.config import EngineConfig
from hunyuan_webui.engine import factory, get_engine
from hunyuan_webui.engine.restarts import RestartPolicy, Supervisor
from hunyuan_webui.engine.servers import SERVERS, Server
from hunyuan_webui.errors import InputError, ModelLoadError
from hunyuan_webui.settings import Settings

MT7B = models.resolve("tencent/Hunyuan-MT-7B")


def installed(name: str) -> Server:
    """The server as if its program were on the PATH under its plain name."""
    server = SERVERS[name]
    return replace(server, requires=(), executable=None,
                   launcher=(server.executable or name,))


def test_vllm_is_sized_from_our_settings():
    settings = Settings(max_input_tokens=2000, max_new_tokens=1000, max_batch_size=8,
                        gpu_memory=0.8, dtype="bf16")
    assert installed("vllm").command(MT7B, settings.engine_config(), MT7B.source, 8123) == [
        "vllm", "serve", "tencent/Hunyuan-MT-7B", "--host", "127.0.0.1", "--port", "8123",
        "--served-model-name", "tencent/Hunyuan-MT-7B", "--dtype", "bfloat16",
        "--max-model-len", "4024", "--gpu-memory-utilization", "0.8", "--max-num-seqs", "8"]


def test_sglang_gets_the_same_settings_in_its_own_words_and_extra_args_come_last():
    settings = Settings(context_tokens=8192, engine_args="--tp 2 --enable-metrics")
    assert installed("sglang").command(MT7B, settings.engine_config(), MT7B.source, 30000) == [
        "sglang", "--model-path", "tencent/Hunyuan-MT-7B", "--host", "127.0.0.1",
        "--port", "30000", "--served-model-name", "tencent/Hunyuan-MT-7B", "--dtype", "auto",
        "--context-length", "8192", "--mem-fraction-static", "0.9",
        "--max-running-requests", "16", "--tp", "2", "--enable-metrics"]


def test_llama_server_gets_the_model_cards_sampling_as_its_defaults():
    spec = models.resolve("tencent/HY-MT1.5-1.8B-GGUF")
    command = installed("llama-server").command(
        spec, EngineConfig(device="cpu", cpu_threads=3), "/m/HY-MT1.5-1.8B-Q8_0.gguf", 8080)
    assert command == [
        "llama-server", "-m", "/m/HY-MT1.5-1.8B-Q8_0.gguf", "--host", "127.0.0.1",
        "--port", "8080", "--alias", "tencent/HY-MT1.5-1.8B-GGUF", "-c", "28672",
        "--parallel", "4", "-ngl", "0", "--temp", "0.7", "--top-k", "20",
        "--top-p", "0.6", "--min-p", "0", "--repeat-penalty", "1.05", "--repeat-last-n", "7168",
        "--threads", "3"]


def test_llama_server_ends_at_the_chat_formats_stop_token_by_id(tmp_path):
    """The GGUF's end-of-generation metadata names the pad token (a converter's mistake): the
    command overrides it with <|eos|>'s id in the file's vocabulary, and never asks for --jinja
    (the remote engine sends prompts rendered here to /v1/completions)."""
    from hunyuan_webui.engine.gguf_files import token_ids

    gguf = write_wrong_gguf(tmp_path)
    spec = models.resolve(str(gguf))
    command = installed("llama-server").command(spec, EngineConfig(device="cpu"), str(gguf), 1)
    assert "--jinja" not in command
    assert command[-6:] == ["--override-kv", "tokenizer.ggml.eos_token_id=int:769",
                            "--override-kv", "tokenizer.ggml.eot_token_id=int:769",
                            "--override-kv", "tokenizer.ggml.add_bos_token=bool:false"]
    assert token_ids(gguf, ["<|eos|>", "<|pad|>"]) == {"<|eos|>": 769, "<|pad|>": 770}
    with pytest.raises(ModelLoadError) as err:  # a 1.8B format asked of a 7B-format file
        installed("llama-server").command(replace(spec, chat_format="hy-1.8b"), EngineConfig(),
                                          str(gguf), 1)
    assert err.value.user_message == (
        "hunyuan-mt-demo-wrong-F32.gguf has no <｜hy_begin▁of▁sentence｜>, <｜hy_User｜>, "
        "<｜hy_Assistant｜>, <｜hy_place▁holder▁no▁2｜> token: is it a model of the family named? "
        "(A hymt.json beside it can name its chat_format.)")


def test_transformers_serve_is_asked_for_the_model_it_loaded(demo_path):
    spec = models.resolve(demo_path)
    server = installed("transformers-serve")
    assert server.command(spec, EngineConfig(device="cpu"), spec.source, 9000) == [
        "transformers-serve", "serve", spec.source, "--host", "127.0.0.1",
        "--port", "9000", "--device", "cpu", "--dtype", "auto", "--log-level", "warning"]
    assert server.served_name(spec, spec.source) == spec.source
    assert SERVERS["vllm"].served_name(spec, spec.source) == spec.id


def test_a_missing_server_is_one_paragraph_with_the_install_command():
    venv = Path(sys.executable).parent.parent
    with pytest.raises(InputError) as err:
        get_engine(MT7B, EngineConfig(kind=kinds.VLLM))
    assert err.value.user_message == (
        "--engine vllm starts vLLM as a managed server, but it is not installed here. Install "
        f"it into the translator's environment ({venv}) with `pip install vllm`, then start the "
        "translator again. Or start any OpenAI-compatible server yourself and pass --engine "
        "openai --endpoint http://HOST:PORT/v1.")


def test_a_missing_program_is_named_with_where_to_get_it(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(InputError) as err:
        SERVERS["llama-server"].command(MT7B, EngineConfig(), "x.gguf", 1)
    assert err.value.user_message == (
        "--engine llama-server starts llama.cpp's llama-server as a managed server, but it is "
        "not installed here. Install it with `brew install llama.cpp` (macOS, Linux), or take "
        "llama-server from a release at https://github.com/ggml-org/llama.cpp/releases and put "
        "it on the PATH, then start the translator again. Or start any OpenAI-compatible server "
        "yourself and pass --engine openai --endpoint http://HOST:PORT/v1.")


def test_bitsandbytes_precisions_are_refused_with_what_to_do_instead():
    with pytest.raises(InputError) as err:
        installed("vllm").command(MT7B, EngineConfig(dtype="int4"), MT7B.source, 1)
    assert err.value.user_message == (
        "--dtype int4 quantizes with bitsandbytes, which vLLM does not do: choose a checkpoint "
        "quantized ahead of time (an -FP8 or -GPTQ model id), or pass its own flags with "
        "--engine-args.")


def test_the_context_length_follows_the_input_and_output_limits():
    assert Settings().context_length() == 4096 + 1024 + 2048
    assert Settings(max_input_tokens=100, max_new_tokens=50).context_length() == 1174
    assert Settings(context_tokens=3000).context_length() == 3000
    with pytest.raises(InputError, match="--gpu-memory must be a share"):
        Settings(gpu_memory=1.5)


def test_engines_and_checkpoint_formats_must_match(demo_path, tmp_path):
    gguf = tmp_path / "Hy-MT2-1.8B-Q4_K_M.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(InputError) as err:
        get_engine(models.resolve(demo_path), EngineConfig(kind=kinds.LLAMACPP))
    assert err.value.user_message == (
        f"--engine llamacpp runs GGUF files, and {Path(demo_path).resolve()} is not one: pass a "
        ".gguf file or a -GGUF repository with --model (e.g. tencent/Hy-MT2-1.8B-GGUF), or "
        "choose another --engine.")
    with pytest.raises(InputError) as err:
        get_engine(models.resolve(str(gguf)), EngineConfig(kind=kinds.PROCESS))
    assert err.value.user_message == (
        f"{gguf} is a GGUF checkpoint, which transformers does not run here: use --engine "
        "llamacpp (or llama-server).")


def test_restarts_back_off_and_then_stop_with_the_reason():
    policy = RestartPolicy("The vLLM server", limit=2, window_s=60, backoff_s=(0.5, 2.0))
    assert policy.failed("stopped unexpectedly (exit code 1)", 10) == 0.5
    assert policy.failed("stopped unexpectedly (exit code 1)", 11) == 2.0
    assert policy.failed("stopped unexpectedly (killed by signal 9)", 12) is None
    assert policy.given_up == (
        "The vLLM server failed 3 times within 1 minutes (last: it stopped unexpectedly (killed "
        "by signal 9)); it is not restarted again. See the server log, then restart the "
        "translator.")


def test_the_supervisor_restarts_after_the_backoff_and_then_gives_up():
    """The loop both engine supervisors share, with a process that fails as soon as it starts."""
    heard: list[str] = []
    replaced: list[int] = []
    policy = RestartPolicy("The test server", limit=2, window_s=60, backoff_s=(0.01,))
    supervisor = Supervisor(policy, watch=lambda: ("stopped unexpectedly (exit code 1)", 7),
                            replace=lambda: replaced.append(1), restarting=heard.append,
                            give_up=heard.append, name="test-supervisor", poll_every_s=0.01)
    supervisor.start(at_exit=lambda: supervisor.close(timeout=5))
    deadline = time.monotonic() + 5
    while len(heard) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert heard[:2] == ["The test server stopped unexpectedly (exit code 1); restarting it."] * 2
    assert heard[2] == policy.given_up and len(heard) == 3
    assert supervisor.restarts == 2 and replaced == [1, 1]
    assert supervisor.close(timeout=5) and not supervisor.close(timeout=5)


def test_a_closed_supervisor_stops_watching():
    supervisor = Supervisor(RestartPolicy("The test server"), watch=lambda: None,
                            restarting=print, give_up=print, name="test-supervisor")
    assert supervisor.close(timeout=1)
    assert supervisor.poll(lambda: "a problem it never looks for") == ""
    assert supervisor.sleep(60) is True  # at once: closing


@pytest.fixture
def demo_path() -> str:
    from hunyuan_webui.demo.model import DEMO_DIR

    return str(DEMO_DIR)


def test_the_engines_get_their_share_of_the_settings_and_one_table_builds_them():
    settings = Settings(engine="openai", endpoint="http://h:1/v1", api_key="sk-secret",
                        max_batch_size=4, context_tokens=9000)
    config = settings.engine_config()
    assert (config.kind, config.endpoint, config.api_key, config.max_batch_size,
            config.context_length()) == ("openai", "http://h:1/v1", "sk-secret", 4, 9000)
    assert "sk-secret" not in repr(config)
    assert Settings().engine_config().context_length() == Settings().context_length()
    assert set(factory.ENGINES) == set(kinds.ENGINES) == set(Settings.__dataclass_fields__[
        "engine"].metadata["choices"])
    assert factory.ENGINES[kinds.PROCESS].child == "hunyuan_webui.engine.local:LocalEngine"
    with pytest.raises(InputError, match="--engine must be one of local, process"):
        factory.build(MT7B, EngineConfig(kind="tgi"))


# -- the servers' own speculative decoding -----------------------------------------------------


@pytest.fixture
def ngram_everywhere(monkeypatch):
    """As if the installed vLLM and SGLang had n-gram speculation (their source names it)."""
    from hunyuan_webui.engine import servers

    monkeypatch.setattr(servers, "ngram_support", lambda engine: True)


def test_vllm_and_sglang_get_their_own_ngram_speculation(ngram_everywhere):
    config = Settings(device="cuda").engine_config()
    vllm = installed("vllm").command(MT7B, config, MT7B.source, 1)
    assert vllm[-2:] == ["--speculative-config",
                         '{"method": "ngram", "num_speculative_tokens": 5, '
                         '"prompt_lookup_max": 4}']
    sglang = installed("sglang").command(MT7B, config, MT7B.source, 1)
    assert sglang[-4:] == ["--speculative-algorithm", "NGRAM", "--speculative-num-draft-tokens",
                           "5"]


@pytest.mark.parametrize("settings", [
    {"device": "cuda", "speculative": False},  # --no-speculative
    {"device": "cpu"},  # SGLang's runs on CUDA only; vLLM's CPU backend is not assumed to
    {"device": "cuda", "engine_args": "--speculative-config '{\"method\": \"suffix\"}'"},
], ids=["off", "cpu", "own-flags"])
def test_no_server_speculation_where_it_is_off_or_set_by_hand(ngram_everywhere, settings):
    config = Settings(**settings).engine_config()
    for name in ("vllm", "sglang"):
        command = installed(name).command(MT7B, config, MT7B.source, 1)
        assert sum(arg.startswith("--speculative") for arg in command) == \
            ("engine_args" in settings), command


def test_ngram_support_is_read_from_the_installed_source(tmp_path, monkeypatch):
    """A package whose source names the method has it; one that does not, or is missing, not."""
    from hunyuan_webui.engine import servers

    package = tmp_path / "fakevllm" / "config"
    package.mkdir(parents=True)
    (package.parent / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "speculative.py").write_text('SpeculativeMethod = Literal["ngram", "eagle"]\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(servers.NGRAM_SOURCES, "vllm", ("fakevllm.config.speculative", '"ngram"'))
    assert servers.ngram_support("vllm")
    (package / "speculative.py").write_text('SpeculativeMethod = Literal["eagle"]\n')
    assert not servers.ngram_support("vllm")
    monkeypatch.setitem(servers.NGRAM_SOURCES, "vllm", ("nosuchpackage.config", '"ngram"'))
    assert not servers.ngram_support("vllm") and not servers.ngram_support("llama-server")
