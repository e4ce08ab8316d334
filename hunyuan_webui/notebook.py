"""Start, show and stop the translator from a Jupyter notebook (a teacher's launch cell).

``start()`` runs ``launch.sh --background`` (it returns once the model is ready, or at once with
the running server's address when one is already up), showing meanwhile how long it has taken and
what the server is doing (its log's last line), then shows what people need: a clickable link,
the page inline when asked, and, when serving beyond this machine, the LAN address with a QR code
students can scan; with ``"--class"``, the teacher's page and a QR code of the class itself (the
students' page of its code). QR codes are shown as scanned: a PNG image in a notebook (text there is drawn with gaps
between its lines), black-on-white half blocks in a terminal. Under JupyterHub
(``JUPYTERHUB_SERVICE_PREFIX`` is set) the page is served under the hub's proxy path
(jupyter-server-proxy's ``/user/NAME/proxy/PORT/``) and that is the link shown. ``stop()`` stops it. Nothing here imports the model or Gradio.
"""

from __future__ import annotations

import base64
import html
import io
import os
import re
import subprocess
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from hunyuan_webui.urls import lan_ip

ROOT = Path(__file__).resolve().parent.parent
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class Addresses:
    local: str  # from this machine
    lan: str | None = None  # from other machines on the network (--host 0.0.0.0)
    hub: str | None = None  # through JupyterHub's proxy
    teacher: str | None = None  # a class opened at start (--class): the teacher's page
    room: str | None = None  # and where its students join (what its QR code opens)

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
    code, said = _run_showing_progress([*args, *flags])
    print(said.strip())
    if code != 0:
        raise RuntimeError(f"the translator did not start (see {LOG})")
    where = replace(addresses(host, port, root_path), **class_links(said))
    show(where, inline=inline, height=height)
    return where


LOG = ROOT / ".hymt" / "server.log"
_STAMP = re.compile(r"^\S+ \S+ (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) [\w.]+: ")


def class_links(said: str) -> dict[str, str]:
    """The class ``--class`` opened, from the launch's lines: its teacher's page and the
    students' address (nothing when no class was asked for)."""
    links = {}
    if found := re.search(r"Class open: teacher's page (\S+)", said):
        links["teacher"] = found.group(1)
    if found := re.search(r"Class open: students join at (\S+)", said):
        links["room"] = found.group(1)
    return links


def progress_line(elapsed: float, log_tail: str) -> str:
    """What the cell shows while the translator starts: the time so far and the server's last
    log line (without its time stamp), e.g. "Starting the translator… 12 s · loading..."."""
    last = next((_STAMP.sub("", line).strip() for line in reversed(log_tail.splitlines())
                 if line.strip() and not line.startswith("===")), "")
    last = last if len(last) <= 160 else last[:157] + "..."
    return f"Starting the translator… {elapsed:.0f} s" + (f" · {last}" if last else "")


def _run_showing_progress(command: list[str]) -> tuple[int, str]:
    """Run the launch, showing its progress every second: a line updated in place in a
    notebook, a line every ten seconds in a terminal. Returns its status and what it said."""
    start = LOG.stat().st_size if LOG.exists() else 0
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    said: list[str] = []
    reader = threading.Thread(target=lambda: said.extend(process.stdout or ()), daemon=True)
    reader.start()
    began, handle, shown = time.monotonic(), None, 0.0
    while process.poll() is None:
        time.sleep(1.0)
        tail = _read_from(LOG, start)
        line = progress_line(time.monotonic() - began, tail)
        if in_notebook():
            from IPython.display import HTML, display

            body = HTML(f"<code>{html.escape(line)}</code>")
            if handle is None:
                handle = display(body, display_id=True)
            else:
                handle.update(body)
        elif time.monotonic() - shown >= 10:
            shown = time.monotonic()
            print(line, flush=True)
    reader.join(10)
    if handle is not None:
        from IPython.display import HTML

        handle.update(HTML(f"<code>{html.escape(_done_line(process.returncode, began))}</code>"))
    return process.returncode, "".join(said)


def _done_line(code: int, began: float) -> str:
    took = time.monotonic() - began
    return f"Started in {took:.0f} s." if code == 0 else f"Failed after {took:.0f} s: see {LOG}"


def _read_from(path: Path, offset: int) -> str:
    """The end of what ``path`` gained past ``offset`` (the last few KB are enough)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(offset, size - 4096))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def show(where: Addresses, inline: bool = False, height: int = 720) -> None:
    """A clickable link (and the page itself when ``inline``); the LAN address and a QR code;
    with a class, the teacher's page, and the QR code opens the class."""
    lines = [f'<a href="{html.escape(where.best)}" target="_blank">Open the translator: '
             f"{html.escape(where.best)}</a>"]
    if where.teacher:
        lines.append(f'<a href="{html.escape(where.teacher)}" target="_blank">Open the '
                     "teacher's page of the class</a>")
    if where.room:
        lines.append(f"Students join the class at: <code>{html.escape(where.room)}</code>")
    elif where.lan and where.lan != where.best:
        lines.append(f"Students on the network: <code>{html.escape(where.lan)}</code>")
    scan = where.room or where.lan  # the class itself when there is one
    notebook = in_notebook()
    if notebook:
        from IPython.display import HTML, IFrame, display

        if scan:  # an image: it scans as shown
            lines.append(qr_html(scan))
        display(HTML("<br>".join(lines)))
        if inline:
            display(IFrame(where.best, width="100%", height=height))
    else:  # a terminal (or an IPython console): plain text
        print(f"Open the translator: {where.best}")
    print(f"Translator: {where.best}")
    if where.room:
        print(f"Class: students join at {where.room}")
    elif where.lan:
        print(f"Students on the same network: {where.lan}")
    if scan and not notebook:
        print(qr_text(scan), end="")


def stop() -> None:
    done = subprocess.run(["bash", str(ROOT / "launch.sh"), "stop"], cwd=ROOT,
                          capture_output=True, text=True)
    print((done.stderr + done.stdout).strip())
