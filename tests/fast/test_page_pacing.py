"""The page's redraws while many pages stream: a budget the web server shares, so decoding keeps
its cores (docs/PERFORMANCE.md, "Where the app lost against transformers serve")."""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

from apphelpers import machine_stalls, run_event, running_app, visitor
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


def test_the_app_process_does_not_search_for_an_absent_matplotlib_on_every_event(monkeypatch):
    """Gradio tries ``import matplotlib`` around every event; without matplotlib each try searched
    sys.path again. The server process marks it absent once (and leaves an installed one alone).
    Here in the test's process, its ``sys.modules`` entry put back afterwards."""
    import importlib.util

    from hunyuan_webui.web.page.events import skip_absent_matplotlib

    monkeypatch.delitem(sys.modules, "matplotlib", raising=False)  # undone after the test
    installed = importlib.util.find_spec("matplotlib") is not None
    marked = skip_absent_matplotlib()
    assert marked is not installed, (marked, installed)
    try:
        import matplotlib  # noqa: F401
        got = "imported" if installed else "found"
    except ImportError as exc:
        got = "absent" if "halted" in str(exc) else str(exc)
    assert got in ("absent", "imported"), got
    if not installed:
        assert skip_absent_matplotlib() is False  # marked once: the next call finds it marked


def test_a_paced_reader_gets_the_end_as_soon_as_it_comes():
    """A page paced at one redraw a second still sees its translation finish when the model
    finishes (here after ~0.3 s), not at the next redraw."""
    import asyncio
    import time

    from hunyuan_webui import models
    from hunyuan_webui.cache import PhraseCache
    from hunyuan_webui.service import TranslationRequest, Translator
    from hunyuan_webui.settings import Settings

    translator = Translator(TypingEngine(delay=0.01), models.resolve("tencent/Hunyuan-MT-7B"),
                            Settings(), cache=PhraseCache(size=10))
    request = TranslationRequest(text="Good morning, dear friends.", source_lang="en",
                                 target_lang="de")

    async def read() -> tuple[float, list[int], str]:
        started = time.monotonic()
        operation = await translator.atranslate_texts([request])  # the page's way
        sizes, last = [], None
        async for batch in operation.updates(every=1.0):
            sizes.append(len(batch))
            last = batch[-1]
        assert last is not None and last.result is not None
        return time.monotonic() - started, sizes, last.result.text

    with machine_stalls() as stalled:
        took, sizes, done = asyncio.run(read())
    assert done == "GOOD MORNING, DEAR FRIENDS."
    assert len(sizes) == 2, sizes  # the first words at once, then everything else in one batch
    # The typing takes ~0.3 s; the next redraw would have been at 1 s. A pause of the machine
    # itself meanwhile (a busy CI machine's) is added.
    assert took < 0.8 + stalled[0], (took, stalled[0])
