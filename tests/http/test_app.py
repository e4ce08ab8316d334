"""The web app through its real clients: gradio_client against a running server, and launch.sh.

These are the checks a user makes: the ``translate`` endpoint streams growing chunks that end in
exactly the phrase table's target; errors arrive as readable messages; the one-click launcher
starts a demo server in the background, reports its URL and stops it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from apphelpers import free_port, running_app
from fakes import LoadingEngine, TypingEngine
from gradio_client import Client

from hunyuan_webui.app import Server, create_app
from hunyuan_webui.service import Translator
from hunyuan_webui.settings import Settings

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

REPO = Path(__file__).resolve().parents[2]


APP = {"max_input_chars": 200, "cache_size": 0}  # the app (tests/http/conftest.py), no cache


@pytest.fixture(scope="module")
def page_client(app) -> Iterator[Client]:
    """gradio_client on the app's page, as a user of the page's API has it."""
    client = Client(app.url, verbose=False)
    yield client
    client.close()


def test_translate_endpoint_streams_growing_chunks(page_client):
    job = page_client.submit("这本书很有意思。", "zh", "en", api_name="/translate")
    outputs = list(job)
    assert outputs[-1] == "This book is very interesting."
    distinct = list(dict.fromkeys(outputs))
    assert all(b.startswith(a) for a, b in zip(distinct, distinct[1:]))


def test_the_page_redraws_its_stream_at_most_twenty_times_a_second():
    """An answer typed over ~0.9 s: the page's endpoint sends the first words at once, then at
    most one redraw per 50 ms (each is a Gradio message the server pays for); the JSON API still
    sends every piece as it comes."""
    import httpx

    text = "the quick brown fox jumps over the lazy dog"  # 43 characters, 20 ms apart
    with running_app(TypingEngine(delay=0.02), cache_size=0) as app:
        client = Client(app.url, verbose=False)
        started = time.monotonic()
        outputs = list(client.submit(text, "en", "de", api_name="/translate"))
        took = time.monotonic() - started
        distinct = list(dict.fromkeys(outputs))
        assert distinct[-1] == text.upper()
        assert all(b.startswith(a) for a, b in zip(distinct, distinct[1:]))
        assert 4 <= len(distinct) <= took / 0.05 + 2, (len(distinct), took)
        with httpx.stream("POST", f"{app.url}/v1/translate", trust_env=False, timeout=30,
                          json={"text": text, "source_lang": "en", "target_lang": "de",
                                "stream": True}) as response:
            events = [line for line in response.iter_lines() if line.startswith("data:")]
        assert len(events) > 25, len(events)  # per piece: not paced


def test_translate_endpoint_detects_the_source(page_client):
    assert page_client.predict("谢谢你的帮助。", "auto", "en", api_name="/translate") == (
        "Thank you for your help.")


@pytest.mark.parametrize("args, message", [
    (("hello", "en", "xx"), "Unknown language code 'xx'"),
    (("x" * 2001, "en", "zh"), "the limit is 2,000"),  # ten parts of --max-input-chars
])
def test_errors_reach_the_client_as_readable_messages(page_client, args, message):
    with pytest.raises(Exception) as err:
        page_client.predict(*args, api_name="/translate")
    assert message in str(err.value)
    assert "Traceback" not in str(err.value)


def test_the_queue_cannot_be_bypassed(app):
    import httpx

    response = httpx.post(f"{app.url}/gradio_api/run/translate", json={"data": ["hi", "en", "zh"]})
    assert response.status_code >= 400


def test_model_not_ready_is_a_readable_error(engine, demo_settings):
    settings = replace(demo_settings, port=free_port())
    translator = Translator(LoadingEngine(), engine.spec, settings)
    server = Server(create_app(settings, translator), settings).start()
    try:
        client = Client(server.url, verbose=False)
        with pytest.raises(Exception) as err:
            client.predict("谢谢。", "zh", "en", api_name="/translate")
        client.close()
        assert "not ready: it is loading, or restarting" in str(err.value)
        import httpx

        assert httpx.get(f"{server.url}/ready").status_code == 503
    finally:
        server.stop()


def test_settings_come_from_flags_and_environment():
    from hunyuan_webui.settings import from_sources

    settings, rest = from_sources(["--port", "9000", "--max-input-chars", "50"],
                                  env={"HYMT_PORT": "8000", "HYMT_DTYPE": "int4",
                                       "HYMT_WARMUP": "false"})
    assert (settings.port, settings.max_input_chars, settings.dtype, settings.warmup) == (
        9000, 50, "int4", False)
    assert settings.host == "127.0.0.1" and rest == []
    assert isinstance(settings, Settings)


def test_app_help_documents_the_flags():
    out = subprocess.run([sys.executable, "app.py", "--help"], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0
    for flag in ("--model", "--dtype", "--demo", "--host", "--port", "--root-path",
                 "--max-input-chars", "--concurrency", "HYMT_MAX_INPUT_CHARS", "--class"):
        assert flag in out.stdout


def test_busy_port_gets_a_clear_message():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = subprocess.run([sys.executable, "app.py", "--demo", "--port", str(port)], cwd=REPO,
                             capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert f"Port {port}" in out.stderr and "already in use" in out.stderr
    assert "Traceback" not in out.stderr


def test_launcher_runs_the_demo_in_the_background_and_stops_it(tmp_path):
    port = free_port()
    env = {**os.environ, "HYMT_VENV": str(Path(sys.executable).parent.parent)}
    started = subprocess.run(["bash", "launch.sh", "--background", "--demo", "--port", str(port)],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    try:
        assert started.returncode == 0, started.stderr
        assert f"http://127.0.0.1:{port}" in started.stdout
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)
        outputs = list(client.submit("这本书很有意思。", "zh", "en", api_name="/translate"))
        client.close()
        assert outputs[-1] == "This book is very interesting."
        assert all(b.startswith(a) for a, b in zip(outputs, outputs[1:]))  # streamed, growing
    finally:
        stopped = subprocess.run(["bash", "launch.sh", "stop"], cwd=REPO, env=env,
                                 capture_output=True, text=True, timeout=60)
    assert "stopped the server" in stopped.stderr
    log = (REPO / ".hymt" / "server.log").read_text()
    assert "translator ready" in log


def test_document_tab_translates_an_uploaded_file(page_client, tmp_path):
    from gradio_client import handle_file

    source = tmp_path / "notes.md"
    source.write_text("# 你好\n\n谢谢你的帮助。今天天气很好。\n\n```\ncode stays 谢谢\n```\n- [早上好。](https://x.y/谢谢)\n",
                      encoding="utf-8")
    path, status = page_client.predict(handle_file(str(source)), "zh", "en", [], True, {"headers": ["Source term", "Target term"], "data": [["", ""]]},
                                  api_name="/translate_document")
    assert Path(path).name == "notes.en.md"
    assert Path(path).read_text(encoding="utf-8") == (
        "# Hello\n\nThank you for your help. The weather is nice today.\n\n```\ncode stays 谢谢\n```\n"
        "- [Good morning.](https://x.y/谢谢)\n")
    assert "4 distinct segments" in status


def test_document_tab_rejects_a_wrong_file_clearly(page_client, tmp_path):
    from gradio_client import handle_file

    fake = tmp_path / "report.docx"
    fake.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    with pytest.raises(Exception) as err:
        page_client.predict(handle_file(str(fake)), "zh", "en", [], True, {"headers": ["Source term", "Target term"], "data": [["", ""]]},
                       api_name="/translate_document")
    assert "PNG" in str(err.value) or "not a" in str(err.value)


def test_a_plain_launch_without_a_gpu_or_a_hub_serves_the_demo_with_a_banner(tmp_path):
    """`bash launch.sh` with no model flags on this machine (no GPU, no model hub): it used to
    start downloading the 16 GB Hunyuan-MT-7B to load it in fp32. Now it looks for a 1.8B model
    (cache, then a hub that does not answer), never for a 7B, and serves the demo model with a
    banner that says what it is."""
    import httpx

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYMT_", "HF_"))}
    env.update(HYMT_VENV=str(Path(sys.executable).parent.parent), HF_HOME=str(tmp_path / "hf"),
               HF_ENDPOINT="http://127.0.0.1:9")  # a hub that refuses at once
    started = subprocess.run(["bash", "launch.sh", "--background", "--port", str(port)],
                             cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    try:
        assert started.returncode == 0, started.stderr
        url = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{url}/ready").status_code == 200
        assert httpx.get(f"{url}/v1/model").json()["demo"] is True
        config = httpx.get(f"{url}/config").json()
        banners = [c["props"]["value"] for c in config["components"]
                   if c["props"].get("elem_id") == "banner"]
        assert banners and banners[0].startswith(
            "**Demo model.** No GPU was found, and no Hy-MT2-1.8B weights are cached here or "
            "could be downloaded. This is the bundled demo model")
    finally:
        subprocess.run(["bash", "launch.sh", "stop"], cwd=REPO, env=env, capture_output=True,
                       text=True, timeout=60)
    log = (REPO / ".hymt" / "server.log").read_text()
    assert "WARNING hunyuan_webui: launch choice: No GPU was found" in log
    assert "skipping tencent/Hy-MT2-1.8B (weights neither cached nor downloadable)" in log
    assert "7B" not in log.split("launch choice:")[0]  # nothing about a 7B before the choice
    assert not list((tmp_path / "hf").glob("**/models--*"))  # nothing was downloaded
