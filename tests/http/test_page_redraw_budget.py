"""The page's redraws while many pages stream, over a real server: a budget the web server
shares, so decoding keeps its cores (docs/PERFORMANCE.md, "Where the app lost against
transformers serve"). The paced reader's own tests, which need no server, are in the fast lane
(``tests/fast/test_page_pacing.py``)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from apphelpers import run_event, running_app, visitor
from fakes import TypingEngine

from hunyuan_webui.web.page.ui import PAGE_REDRAW_MAX_S, PAGE_REDRAW_S, PAGE_REDRAWS_PER_S

TEXT = "The weather is nice today, and we will walk along the river after class. " * 2


def _redraws(stream: str) -> tuple[int, str]:
    """How many times the page's output was redrawn ("generating" events), and the last text."""
    events = stream.split("event: ")[1:]
    generating = [e for e in events if e.startswith("generating")]
    last = events[-1].split("data: ", 1)[1].strip()
    return len(generating), last


def test_a_page_alone_is_redrawn_often_and_eight_at_once_share_the_budget():
    """One stream of ~0.9 s is redrawn about 20 times a second; with 8 at once each is redrawn
    about 5 times a second, and every page still gets its whole text."""
    assert (PAGE_REDRAW_S, PAGE_REDRAWS_PER_S, PAGE_REDRAW_MAX_S) == (0.05, 40, 0.25)
    with running_app(TypingEngine(delay=0.006), cache_size=0, concurrency=16) as app:
        def one(i: int) -> tuple[int, str]:
            with visitor(app) as c:
                status, stream = run_event(c, "translate", {"data": [TEXT + str(i), "en", "de"]})
                assert status == 200, stream
                return _redraws(stream)

        alone, alone_text = one(0)
        with ThreadPoolExecutor(8) as pool:
            together = list(pool.map(one, range(1, 9)))
    expected = (TEXT + "0").upper()
    assert alone_text == f'["{expected}"]'
    assert [text for _, text in together] == [f'["{(TEXT + str(i)).upper()}"]' for i in range(1, 9)]
    assert alone >= 8, alone  # ~0.9 s at 20 per second
    shared = max(count for count, _ in together)
    assert shared <= alone / 2, (alone, [count for count, _ in together])
