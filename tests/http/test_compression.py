"""The page's HTML goes out compressed; Gradio's scripts already do; streams are left alone.

The page's HTML carries the configuration of every component (~115 KiB): it was a quarter of a
cold load's bytes, sent uncompressed (benchmarks/page_weight.py, docs/PAGE.md). Compression must
never reach an event stream: a compressor holds bytes back until it has enough, and a streamed
translation would arrive in lumps.
"""

from __future__ import annotations

import re

from apphelpers import running_app, visitor
from fakes import TypingEngine


def test_the_page_is_compressed_when_the_browser_accepts_gzip(engine):
    with running_app(engine) as app, visitor(app) as c:
        page = c.get("/", headers={"Accept-Encoding": "gzip"})
        assert page.headers.get("content-encoding") == "gzip"
        assert int(page.headers["content-length"]) < len(page.content) / 3
        assert "Content-Security-Policy" in page.headers and "<html" in page.text
        plain = c.get("/", headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers and plain.text == page.text
        script = re.search(r'src="([^"]+\.js)"', page.text).group(1)
        with c.stream("GET", script, headers={"Accept-Encoding": "gzip, br"}) as js:
            assert js.status_code == 200 and js.headers.get("content-encoding") in ("br", "gzip")


def test_a_streamed_translation_is_neither_compressed_nor_held_back():
    """An answer typed over ~0.6 s (the page redraws at most every 50 ms): it must arrive in
    pieces, as it was generated, not in one lump at the end."""
    text = "a streamed answer that takes about six tenths of a second"
    with running_app(TypingEngine(delay=0.01), cache_size=0) as app, visitor(app) as c:
        started = c.post("/gradio_api/call/translate", json={"data": [text, "en", "de"]})
        assert started.status_code == 200, started.text
        url = f"/gradio_api/call/translate/{started.json()['event_id']}"
        with c.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as stream:
            assert "content-encoding" not in stream.headers
            chunks = [chunk for chunk in stream.iter_raw() if chunk]
        assert b"event: complete" in b"".join(chunks)
        assert len(chunks) > 4, chunks
