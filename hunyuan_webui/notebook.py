"""Start, show and stop the translator from a Jupyter notebook (a teacher's launch cell).

``start()`` runs ``launch.sh --background`` (it returns once the model is ready, or at once with
the running server's address when one is already up), then shows what people need: a clickable
link, the page inline when asked, and, when serving beyond this machine, the LAN address with a
QR code students can scan. Under JupyterHub (``JUPYTERHUB_SERVICE_PREFIX`` is set) the page is
served under the hub's proxy path (jupyter-server-proxy's ``/user/NAME/proxy/PORT/``) and that is
the link shown. ``stop()`` stops it. Nothing here imports the model or Gradio.
"""

from __future__ import annotations

import html
import io
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from hunyuan_webui.urls import lan_ip

ROOT = Path(__file__).resolve().parent.parent
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Addresses:
    local: str  # from this machine
    lan: str | None = None  # from other machines on the network (--host 0.0.0.0)
    hub: str | None = None  # through JupyterHub's proxy

    @property
    def best(self) -> str:
        return self.hub or self.lan or self.local


def hub_prefix(port: int) -> str | None:
    """The proxied path of ``port`` under JupyterHub, e.g. ``/user/ana/proxy/7860``."""
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX")
    return f"{prefix.rstrip('/')}/proxy/{port}" if prefix else None


def addresses(host: str = "127.0.0.1", port: int = 7860, root_path: str = "") -> Addresses:
    local = f"http://127.0.0.1:{port}{root_path}/" if host in ("0.0.0.0", "::") else \
        f"http://{host}:{port}{root_path}/"
    lan = None
    if host not in LOCAL_HOSTS:
        ip = lan_ip() if host in ("0.0.0.0", "::") else host
        lan = f"http://{ip}:{port}{root_path}/" if ip else None
    hub = None
    if hub_prefix(port) and root_path == hub_prefix(port):
        hub = os.environ.get("JUPYTERHUB_EXTERNAL_URL", "").rstrip("/") + root_path + "/"
    return Addresses(local, lan, hub)


def qr_text(url: str) -> str:
    import qrcode

    code = qrcode.QRCode(border=1)
    code.add_data(url)
    out = io.StringIO()
    code.print_ascii(out=out, invert=True)
    return out.getvalue()


def start(*flags: str, host: str = "127.0.0.1", port: int = 7860, inline: bool = False,
          demo: bool = False, height: int = 720) -> Addresses:
    """Start the translator (``flags`` as for app.py) and show its link; returns its addresses."""
    root_path = hub_prefix(port) or ""
    args = ["bash", str(ROOT / "launch.sh"), "--background", "--host", host, "--port", str(port)]
    args += (["--root-path", root_path] if root_path else []) + (["--demo"] if demo else [])
    done = subprocess.run([*args, *flags], cwd=ROOT, capture_output=True, text=True)
    print((done.stderr + done.stdout).strip())
    if done.returncode != 0:
        raise RuntimeError(f"the translator did not start (see {ROOT / '.hymt/server.log'})")
    where = addresses(host, port, root_path)
    show(where, inline=inline, height=height)
    return where


def show(where: Addresses, inline: bool = False, height: int = 720) -> None:
    """A clickable link (and the page itself when ``inline``); the LAN address and a QR code."""
    lines = [f'<a href="{html.escape(where.best)}" target="_blank">Open the translator: '
             f"{html.escape(where.best)}</a>"]
    if where.lan and where.lan != where.best:
        lines.append(f"Students on the network: <code>{html.escape(where.lan)}</code>")
    try:
        from IPython.display import HTML, IFrame, display
    except ImportError:  # not in a notebook: plain text
        print(f"Open the translator: {where.best}")
    else:
        display(HTML("<br>".join(lines)))
        if inline:
            display(IFrame(where.best, width="100%", height=height))
    print(f"Translator: {where.best}")
    if where.lan:
        print(f"Students on the same network: {where.lan}\n{qr_text(where.lan)}")


def stop() -> None:
    done = subprocess.run(["bash", str(ROOT / "launch.sh"), "stop"], cwd=ROOT,
                          capture_output=True, text=True)
    print((done.stderr + done.stdout).strip())
