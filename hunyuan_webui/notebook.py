"""Start, show and stop the translator from a Jupyter notebook (a teacher's launch cell).

``start()`` runs ``launch.sh --background`` (it returns once the model is ready, or at once with
the running server's address when one is already up), then shows what people need: a clickable
link, the page inline when asked, and, when serving beyond this machine, the LAN address with a
QR code students can scan as shown: a PNG image in a notebook (text there is drawn with gaps
between its lines), black-on-white half blocks in a terminal. Under JupyterHub
(``JUPYTERHUB_SERVICE_PREFIX`` is set) the page is served under the hub's proxy path
(jupyter-server-proxy's ``/user/NAME/proxy/PORT/``) and that is the link shown. ``stop()`` stops it. Nothing here imports the model or Gradio.
"""

from __future__ import annotations

import base64
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


# Dark modules on a light ground, whatever the terminal's own colours (a QR code printed light on
# dark, for a dark terminal, did not scan): exact black on exact white from the 256-colour table.
QR_COLOURS, QR_RESET = "\x1b[38;5;16;48;5;231m", "\x1b[0m"
QR_BORDER = 4  # modules of quiet zone, as the QR standard asks
# Two rows of modules per line of text (upper and lower half blocks): a terminal draws block
# characters the full height of its cell, so the rows meet without gaps.
_HALVES = {(False, False): " ", (True, False): "\u2580", (False, True): "\u2584",
           (True, True): "\u2588"}


def _qr_matrix(url: str) -> list[list[bool]]:
    import qrcode

    code = qrcode.QRCode(border=QR_BORDER)
    code.add_data(url)
    code.make(fit=True)
    return code.get_matrix()


def qr_text(url: str) -> str:
    """The QR code of ``url`` for a terminal: half blocks, dark on light in explicit colours."""
    rows = _qr_matrix(url)
    if len(rows) % 2:
        rows = [*rows, [False] * len(rows[0])]
    lines = ["".join(_HALVES[top, bottom] for top, bottom in zip(upper, lower, strict=True))
             for upper, lower in zip(rows[::2], rows[1::2], strict=True)]
    return "".join(f"{QR_COLOURS}{line}{QR_RESET}\n" for line in lines)


def qr_png(url: str, box: int = 6) -> bytes:
    """The QR code of ``url`` as a PNG image, black on white, ``box`` pixels a module."""
    from PIL import Image

    rows = _qr_matrix(url)
    image = Image.new("1", (len(rows[0]), len(rows)), 1)
    image.putdata([0 if dark else 1 for row in rows for dark in row])
    out = io.BytesIO()
    image.resize((image.width * box, image.height * box), Image.Resampling.NEAREST).save(out, "PNG")
    return out.getvalue()


def qr_html(url: str) -> str:
    """The QR code of ``url`` as an ``<img>`` for a notebook's output (text there is drawn with
    gaps between the lines, and in the notebook's own colours)."""
    data = base64.b64encode(qr_png(url)).decode("ascii")
    return (f'<img src="data:image/png;base64,{data}" alt="QR code: {html.escape(url)}" '
            f'style="image-rendering: pixelated; background: #fff">')


def in_notebook() -> bool:
    """Whether the output goes to a Jupyter front end (a kernel), not to a terminal."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    return getattr(get_ipython(), "kernel", None) is not None


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
    notebook = in_notebook()
    if notebook:
        from IPython.display import HTML, IFrame, display

        if where.lan:  # an image: it scans as shown
            lines.append(qr_html(where.lan))
        display(HTML("<br>".join(lines)))
        if inline:
            display(IFrame(where.best, width="100%", height=height))
    else:  # a terminal (or an IPython console): plain text
        print(f"Open the translator: {where.best}")
    print(f"Translator: {where.best}")
    if where.lan:
        print(f"Students on the same network: {where.lan}")
        if not notebook:
            print(qr_text(where.lan), end="")


def stop() -> None:
    done = subprocess.run(["bash", str(ROOT / "launch.sh"), "stop"], cwd=ROOT,
                          capture_output=True, text=True)
    print((done.stderr + done.stdout).strip())
