"""What a document costs the web process: ``python -m benchmarks.package_memory``.

Starts ``app.py --demo`` (of this checkout, or of ``--repo``, to compare another version side by
side), warms it with a real document of each Office kind, then sends each case through
``POST /v1/documents`` and follows it to its end: the bombs of ``tests/bombs.py`` (a .docx, .pptx,
.xlsx under 300 KB that unpacks to 60 MB: one huge part, many parts, a directory that lies about
sizes) and a real 60,000-paragraph .docx (read and written back, its text already in the target
language, so that the model's time does not hide the file's). For each: the answer, the seconds to
it, the server's resident memory (``VmRSS``, sampled every 10 ms) at its peak and once the job has
ended, above the warm level, and the slowest ``/health`` of another client meanwhile. The table
is markdown (docs/RELIABILITY.md, "Files that unpack to gigabytes").

``--cases`` picks some (``docx one member,docx real``): an unbounded version takes gigabytes per
bomb.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the bombs the tests send

import bombs  # noqa: E402

from hunyuan_webui.urls import free_port  # noqa: E402


def real_docx(paragraphs: int = 60_000) -> bytes:
    """A real .docx (python-docx's template) of ``paragraphs`` distinct paragraphs, written
    into its body directly (python-docx's add_paragraph slows down as the body grows)."""
    body = "".join(f"<w:p><w:r><w:t>Sentence number {i} is here, and it says something else "
                   f"{i * 7}.</w:t></w:r></w:p>" for i in range(paragraphs)).encode()
    return bombs.rebuild(bombs.base(".docx"), {"word/document.xml": lambda original: [
        original.replace(b"<w:body>", b"<w:body>" + body, 1)]})


def cases() -> dict[str, Callable[[], bytes]]:
    out: dict[str, Callable[[], bytes]] = {}
    for ext in bombs.KINDS:
        for name, make in bombs.BOMBS.items():
            out[f"{ext[1:]} {name}"] = lambda e=ext, m=make: m(e)
    out["docx real"] = real_docx
    return out


@contextlib.contextmanager
def server(repo: Path) -> Iterator[tuple[str, int]]:
    port = free_port()
    cmd = [sys.executable, str(repo / "app.py"), "--demo", "--engine", "local", "--no-warmup",
           "--cpu-threads", "1", "--port", str(port), "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen(cmd, cwd=repo, stdout=log, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline and proc.poll() is None:
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{url}/ready", timeout=2, trust_env=False).status_code == 200:
                        break
                time.sleep(0.25)
            else:
                log.seek(0)
                raise SystemExit(f"app.py did not start:\n{log.read().decode()[-2000:]}")
            yield url, proc.pid
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=30)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class Watch:
    """The server's peak RSS and another client's slowest /health while open."""

    def __init__(self, url: str, pid: int) -> None:
        self.url, self.pid, self.peak, self.slowest = url, pid, 0.0, 0.0
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._rss), threading.Thread(target=self._health)]

    def __enter__(self) -> Watch:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _rss(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, rss_mib(self.pid))

    def _health(self) -> None:
        with httpx.Client(base_url=self.url, trust_env=False, timeout=30) as other:
            while not self._stop.wait(0.05):
                started = time.monotonic()
                with contextlib.suppress(httpx.HTTPError):
                    other.get("/health")
                self.slowest = max(self.slowest, time.monotonic() - started)


def run_case(c: httpx.Client, url: str, pid: int, name: str, data: bytes, base: float) -> str:
    source = "en" if name.endswith("real") else "zh"
    with Watch(url, pid) as watch:
        started = time.monotonic()
        try:
            outcome, seconds = follow(c, name, data, source, started)
        except httpx.HTTPError as exc:  # the server stalled or dropped the connection
            outcome, seconds = f"{type(exc).__name__} after {time.monotonic() - started:.1f} s", 0
        time.sleep(2)
    after = rss_mib(pid)
    return (f"| {name} | {len(data) // 1000} | {outcome} | {seconds:.2f} | "
            f"{watch.peak - base:+.0f} | {after - base:+.0f} | {watch.slowest:.2f} |")


def follow(c: httpx.Client, name: str, data: bytes, source: str,
           started: float) -> tuple[str, float]:
    """Send the case; an accepted one is followed to its end (then forgotten)."""
    answer = c.post("/v1/documents", data={"target_lang": "en", "source_lang": source},
                    files={"file": ("lesson." + name.split()[0], data)})
    seconds = time.monotonic() - started
    outcome = str(answer.status_code)
    if answer.status_code == 202:
        doc = answer.json()["id"]
        while (status := c.get(f"/v1/documents/{doc}").json())["status"] in (
                "queued", "translating"):
            time.sleep(0.2)
        outcome += f" → {status['status']} in {time.monotonic() - started:.1f} s"
        c.delete(f"/v1/documents/{doc}")
    return outcome, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", type=Path, default=ROOT, help="checkout whose app.py to run")
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    args = parser.parse_args()
    chosen = cases()
    if args.cases:
        chosen = {k: v for k, v in chosen.items() if k in args.cases.split(",")}
    made = {name: make() for name, make in chosen.items()}
    with server(args.repo.resolve()) as (url, pid), \
            httpx.Client(base_url=url, trust_env=False, timeout=120) as c:
        for ext in bombs.KINDS:  # warm: the libraries each kind loads
            sent = c.post("/v1/documents", data={"target_lang": "en"},
                          files={"file": ("warm" + ext, bombs.base(ext))})
            while c.get(f"/v1/documents/{sent.json()['id']}").json()["status"] in (
                    "queued", "translating"):
                time.sleep(0.2)
        time.sleep(2)
        base = rss_mib(pid)
        print(f"app.py of {args.repo}; warm RSS {base:.0f} MiB\n")
        print("| case | KB | answer | s to answer | RSS peak (MiB) | RSS after (MiB) | "
              "slowest /health (s) |")
        print("|---|---:|---|---:|---:|---:|---:|")
        for name, data in made.items():
            print(run_case(c, url, pid, name, data, base), flush=True)


if __name__ == "__main__":
    main()
