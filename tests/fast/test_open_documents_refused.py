"""Hostile OpenDocument files and e-books are refused with words, at once, small, leaving nothing
on disk: an external entity (it would read the server's files), scripts and macros (a document
with code in it is not translated), DRM, and packages that are not what their name says. The
bombs and the package's other lies (tests/bombs.py) cover these kinds too, in
tests/service/test_package.py and over HTTP in tests/http/test_package_bombs.py."""

from __future__ import annotations

import tempfile
import time
import tracemalloc

import opendocs as od
import pytest

from hunyuan_webui.errors import InputError
from hunyuan_webui.files import translate_file

MB = 1_000_000
CASES = od.HOSTILE


@pytest.mark.parametrize("case", list(CASES))
def test_a_hostile_or_mistaken_file_is_refused_with_words_small_and_leaves_nothing(
        case, tmp_path, monkeypatch):
    name, make, words = CASES[case]
    data = make()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where anything written would go
    sent: list[str] = []
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(InputError) as refused:
            translate_file(name, data, lambda s: sent.extend(s) or s)
        elapsed = time.monotonic() - started
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert words in str(refused.value), str(refused.value)
    assert sent == []  # nothing of it reached the translator
    assert elapsed < 10 and peak < 20 * MB, (elapsed, peak)
    assert list(tmp_path.iterdir()) == []


def test_the_same_files_without_their_hostile_part_are_translated():
    """The refusals are for what was added, not for the kind: each base file goes through."""
    for name, data in (("lesson.odt", od.make_odf(".odt")), ("marks.ods", od.make_odf(".ods")),
                       ("book.epub", od.make_epub()),
                       ("book.epub", od.make_epub(extra={"OEBPS/images/pic.svg": od.SVG.replace(
                           b"<script>alert(1)</script>", b"")}))):
        result = translate_file(name, data, lambda s: [x.upper() for x in s])
        assert result.segments > 0
