"""``pip install .`` gives the same tool as ``launch.sh``: the wheel carries the package, the
prompt families and the demo checkpoints, and its ``hunyuan-webui`` command serves the page.

The dependencies are this test environment's (a ``.pth`` file points the new virtualenv at them):
what is checked is the wheel itself, installed and run from another directory.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import httpx
import pytest
from apphelpers import free_port, wait_until

pytestmark = pytest.mark.slow  # builds a wheel, a virtualenv and starts a server

ROOT = Path(__file__).resolve().parents[2]


def test_pip_install_gives_a_hunyuan_webui_command_that_serves_the_demo(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(wheels), str(ROOT)], check=True,
                   timeout=300)
    [wheel] = wheels.glob("hunyuan_webui-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "hunyuan_webui/prompt_families/hy-mt2.toml" in names
    assert any(n.endswith("share/hunyuan-webui/demo-model/model.safetensors") for n in names)
    assert any(n.endswith("share/hunyuan-webui/demo-asr/model.bin") for n in names)

    venv = tmp_path / "venv"
    subprocess.run([sys.base_prefix + "/bin/python3", "-m", "venv", str(venv)], check=True,
                   timeout=120)
    site = Path(subprocess.run([str(venv / "bin/python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    (site / "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([str(venv / "bin/pip"), "install", "-q", "--no-deps", str(wheel)],
                   check=True, timeout=300)

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    server = subprocess.Popen([str(venv / "bin/hunyuan-webui"), "--demo", "--port", str(port),
                               "--log-level", "warning"], cwd=tmp_path, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        def ready() -> bool:
            try:
                return httpx.get(url + "/ready", trust_env=False).status_code == 200
            except httpx.HTTPError:
                return False

        assert wait_until(ready, 120, interval=0.5), server.stdout and server.stdout.read1()
        r = httpx.post(url + "/v1/translate", json={"text": "谢谢你的帮助。", "target_lang": "en"},
                       trust_env=False, timeout=60)
        assert r.json()["translation"] == "Thank you for your help."
        assert httpx.get(url + "/", trust_env=False).status_code == 200  # the page
        # The demo recogniser came with the wheel (not rebuilt: /ready would have waited minutes).
        speech = httpx.get(url + "/ready", trust_env=False).json()["speech"]
        assert (speech["state"], speech["model"]) == ("ready", "demo-asr"), speech
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(30)
    time.sleep(0.5)
    assert server.returncode is not None
