"""The page's redraws while many pages stream: a budget the web server shares, so decoding keeps
its cores (docs/PERFORMANCE.md, "Where the app lost against transformers serve"). The same over a
real server, many pages at once: ``tests/http/test_page_redraw_budget.py``."""

from __future__ import annotations

import sys

from apphelpers import machine_stalls
from fakes import TypingEngine


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
