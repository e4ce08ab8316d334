"""The README's screenshots, retaken: ``python scripts/readme_screenshots.py``.

Starts the translator as users do (``python -m hunyuan_webui.app --demo``), opens it in Chromium
(Playwright, Debian's chromium) and photographs a multi-sentence translation while it streams:

* ``assets/screenshot-en.png``: desktop, 1366x768, an English browser, English -> Chinese;
* ``assets/screenshot-zh.png``: desktop, a Chinese browser, English -> Chinese;
* ``assets/screenshot-phone.png``: a phone, 390x844, a Chinese browser, English -> Chinese.

The demo model writes a sentence in milliseconds, so the page is slowed, not the server: once the
page has loaded, Chromium's network throttling (the DevTools protocol's
``Network.emulateNetworkConditions``) lets the page's stream arrive a little at a time, and each
picture is taken when part of the translation is on screen and part is not. The Chinese glyphs
need a CJK font in the browser's machine (Debian: ``fonts-noto-cjk``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere
ASSETS = ROOT / "assets"
EN_TEXT = ("Good morning. Thank you for your help. Where is the train station? "
           "I am learning Chinese. The meeting starts at nine o'clock.")
EN_TEXT_2 = ("I am learning Chinese. How much does this cost? Please sit down. Thank you. "
             "Where is the train station?")
ATTEMPTS = 8
OUTPUT = "document.querySelector('#output-box textarea').value"
SHOTS = [  # file, locale, viewport, pair, text, the translation's last sentence
    ("screenshot-en.png", "en-US", (1366, 768), ("en", "zh"), EN_TEXT, "会议九点开始。"),
    ("screenshot-zh.png", "zh-CN", (1366, 768), ("en", "zh"), EN_TEXT_2, "火车站在哪里？"),
    ("screenshot-phone.png", "zh-CN", (390, 844), ("en", "zh"), EN_TEXT, "会议九点开始。"),
]


def start_app(port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "GRADIO_ANALYTICS_ENABLED": "False"}
    proc = subprocess.Popen([sys.executable, "-m", "hunyuan_webui.app", "--demo", "--host",
                             "127.0.0.1", "--port", str(port), "--cache-size", "0"],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=2).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise SystemExit(f"the app exited with status {proc.returncode}")
        time.sleep(0.5)
    proc.terminate()
    raise SystemExit("the app did not become ready within 180 s")


def shoot(browser: object, url: str, shot: tuple, out_dir: Path) -> str | None:
    name, locale, (width, height), (source, target), text, last = shot
    context = browser.new_context(locale=locale, viewport={"width": width, "height": height},
                                  device_scale_factor=2 if width < 500 else 1,
                                  is_mobile=width < 500, has_touch=width < 500)
    page = context.new_page()
    page.goto(f"{url}/?sl={source}&tl={target}")
    page.wait_for_function("() => { const b = document.querySelector('#translate-btn');"
                           " return b && !b.disabled; }", timeout=60_000)
    page.locator("#input-box textarea").fill(text)
    page.wait_for_timeout(300)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {
        "offline": False, "latency": 150, "downloadThroughput": 400, "uploadThroughput": 20_000})
    page.locator("#translate-btn").click()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        shown = page.evaluate(OUTPUT)
        if len(shown) > 4 and last not in shown:  # part of it, not all
            break
        page.wait_for_timeout(20)
    else:
        context.close()
        return None  # the stream outran the throttle: try again
    page.screenshot(path=str(out_dir / name))
    context.close()
    return shown


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ASSETS), help="folder for the pictures")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from hunyuan_webui.urls import free_port

    port = args.port or free_port()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    proc = start_app(port)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium,
                                         args=["--no-sandbox", "--disable-gpu"])
            for shot in SHOTS:
                for _ in range(ATTEMPTS):
                    shown = shoot(browser, f"http://127.0.0.1:{port}", shot, Path(args.out))
                    if shown is not None:
                        print(f"{shot[0]}: caught at {shown!r}")
                        break
                else:
                    raise SystemExit(f"{shot[0]}: no half-way moment caught in {ATTEMPTS} tries")
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
