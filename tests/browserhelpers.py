"""What the browser tests share: Debian's Chromium and its flags, opening the page, picking a
language, the page's output box, and the content-security-policy recorder.

The fixtures themselves (``browser``, ``url``, ``demo_url``) are in ``tests/browser/conftest.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from apphelpers import CHROMIUM, CHROMIUM_ARGS

ARGS = CHROMIUM_ARGS
ASSETS = Path(__file__).resolve().parent.parent / "assets"  # the README's class pictures
OUTPUT = "document.querySelector('#output-box textarea').value"

# Records each violation of the content security policy, for a test to find none.
CSP_VIOLATIONS = """
window.__csp = [];
document.addEventListener('securitypolicyviolation',
  (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
"""

__all__ = ["ARGS", "ASSETS", "CHROMIUM", "CSP_VIOLATIONS", "OUTPUT", "Visitor", "last_changes",
           "open_page", "pick"]


def readme_picture(page, name: str) -> None:
    """The README's pictures are taken where a test sees the page as they show it, into
    ``assets/`` when ``HYMT_README_PICTURES=1`` (``HYMT_README_PICTURES=1 bash launch.sh test
    tests/browser/test_class_pages.py tests/browser/test_browser_rooms.py``); a plain run leaves
    the checkout as it was."""
    if os.environ.get("HYMT_README_PICTURES") == "1":
        page.screenshot(path=str(ASSETS / name))


def open_page(browser, url: str, locale: str = "en-US", width: int = 1280, height: int = 900,
              mobile: bool = False):
    """A new context's page on ``url``, once Translate can be pressed."""
    context = browser.new_context(viewport={"width": width, "height": height}, locale=locale,
                                  is_mobile=mobile, has_touch=mobile)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#translate-btn:not([disabled])", timeout=60_000)
    return page


def pick(page, elem_id: str, label: str) -> None:
    """Choose ``label`` in the language picker ``elem_id`` as a user does: type, then click."""
    box = page.locator(f"#{elem_id} input")
    box.click()
    box.fill(label.split(" · ")[0])
    page.locator("[data-testid=dropdown-option]", has_text=label).first.click()


class Visitor:
    """The request a page listener is given, with only the browser's languages."""

    def __init__(self, accept_language: str) -> None:
        self.headers = {"accept-language": accept_language}


async def last_changes(stream) -> dict:
    """What a listener's stream of updates leaves on the page."""
    changes: dict = {}
    async for update in stream:
        changes.update(update)
    return changes
