"""What the default page costs a browser on a cold load: requests, KiB transferred, and the time
until the text box takes input and until Translate is enabled.

Runs the demo model's app on a free loopback port (or measures ``--url``), loads the page in a
fresh headless Chromium (Debian's ``chromium``) ``--runs`` times with an empty cache, and prints
one line per run and the median. KiB transferred is what came over the wire (compressed bodies as
sent, plus headers), from Chromium's own accounting.

    python -m benchmarks.page_weight            # the demo app, 3 cold loads
    python -m benchmarks.page_weight --url http://127.0.0.1:7860/
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import statistics
import time
from collections.abc import Iterator
from typing import Any

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-sync", "--disable-component-update", "--no-first-run"]


def measure(browser: Any, url: str) -> dict[str, float]:
    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    sizes: list[tuple[int, int]] = []  # (body bytes sent, header bytes) per finished request
    encoded: list[str] = []

    def finished(request: Any) -> None:
        with contextlib.suppress(Exception):
            s = request.sizes()
            sizes.append((s["responseBodySize"], s["responseHeadersSize"]))
            response = request.response()
            if response and response.headers.get("content-encoding"):
                encoded.append(request.url)

    page.on("requestfinished", finished)
    started = time.perf_counter()
    page.goto(url)
    page.wait_for_selector("#input-box textarea:not([disabled])")
    usable = time.perf_counter() - started
    page.wait_for_selector("#translate-btn:not([disabled])")
    ready = time.perf_counter() - started
    page.wait_for_timeout(2000)  # late requests (the heartbeat keeps the network busy)
    context.close()
    body = sum(b for b, _ in sizes)
    return {"requests": len(sizes), "kib": (body + sum(h for _, h in sizes)) / 1024,
            "body_kib": body / 1024, "compressed": len(encoded),
            "usable_s": usable, "ready_s": ready}


@contextlib.contextmanager
def demo_app() -> Iterator[str]:
    from hunyuan_webui import models
    from hunyuan_webui.app import Server, create_app
    from hunyuan_webui.demo.model import ensure_demo_model
    from hunyuan_webui.engine.local import LocalEngine
    from hunyuan_webui.service import Translator
    from hunyuan_webui.settings import Settings
    from hunyuan_webui.urls import free_port
    port = free_port()
    settings = Settings(model=str(ensure_demo_model()), port=port, log_level="warning",
                        max_new_tokens=64)
    engine = LocalEngine(models.resolve(settings.model), max_new_tokens=64)
    engine.wait_ready(120)
    server = Server(create_app(settings, Translator(engine, engine.spec, settings)),
                    settings).start()
    try:
        yield server.url + "/"
    finally:
        server.stop()
        engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="measure this page instead of starting the demo app")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with contextlib.ExitStack() as stack:
        url = args.url or stack.enter_context(demo_app())
        pw = stack.enter_context(sync_playwright())
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # (Debian's chromium, as in the browser tests; no browser download)
        measure(browser, url)  # warm the server's own caches; the browser's stay cold
        runs = [measure(browser, url) for _ in range(args.runs)]
        browser.close()
    for i, run in enumerate(runs, 1):
        print(f"run {i}: {run['requests']:.0f} requests, {run['kib']:.0f} KiB transferred "
              f"({run['body_kib']:.0f} KiB bodies, {run['compressed']:.0f} compressed), "
              f"text box usable {run['usable_s']:.2f} s, Translate enabled {run['ready_s']:.2f} s")
    med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
    print(f"median: {med['requests']:.0f} requests, {med['kib']:.0f} KiB, text box usable "
          f"{med['usable_s']:.2f} s, Translate enabled {med['ready_s']:.2f} s")


if __name__ == "__main__":
    main()
