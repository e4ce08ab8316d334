"""Every word a visitor reads, kept one way: a table per surface and language
(``hunyuan_webui/web/words/<surface>/<code>.json``), English the reference. A string missing in a
language, a ``{placeholder}`` lost or added in a translation, a blank or wrongly padded string: each fails
here, before a visitor sees a raw key or a ``KeyError``."""

from __future__ import annotations

import json

import pytest

from hunyuan_webui.web import words

TABLES = [(surface, code) for surface in words.SURFACES for code in words.codes(surface)]


def test_each_surface_has_its_reference_and_another_language():
    for surface in words.SURFACES:
        codes = words.codes(surface)
        assert words.REFERENCE in codes and len(codes) >= 2, (surface, codes)


@pytest.mark.parametrize(("surface", "code"), TABLES, ids=[f"{s}-{c}" for s, c in TABLES])
def test_every_string_is_there_with_its_placeholders(surface, code):
    table = json.loads(words.raw(surface, code))
    english = words.table(surface, words.REFERENCE)
    assert list(table) == list(english), f"{surface}/{code}.json: keys differ from en.json"
    for key, reference in english.items():
        value = table[key]
        assert isinstance(value, str) and value.strip(), (surface, code, key)
        # The page joins some of its messages to others (" — low confidence"): spaced as the
        # reference is; the class pages' strings stand alone, unpadded.
        padded = value != value.strip()
        assert padded == (reference != reference.strip()) and not (padded and surface == "class")
        assert words.placeholders(value) == words.placeholders(reference), (code, key, value)


def test_a_language_without_a_table_reads_english_and_an_unknown_one_is_not_served():
    assert words.table("page", "fr") == words.table("page", "en")
    assert words.table("speech", "ar")["mic"] == "🎤 Speak"
    with pytest.raises(KeyError):
        words.raw("page", "fr")
    with pytest.raises(KeyError):
        words.raw("class", "../page/en")


def test_placeholders_are_found_with_or_without_a_format():
    assert words.placeholders("Detected: **{name}** ({confidence:.0%})") == {"name",
                                                                               "confidence"}
    assert words.placeholders("第 {done} 部分，共 {total} 部分…") == {"done", "total"}
