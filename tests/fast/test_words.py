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
        if surface == "server" and key.startswith("sentence."):
            # The service's English sentence may say more than its translation (a parser's
            # "{why}"), never less: every placeholder of the translation is filled.
            assert words.placeholders(value) <= words.placeholders(reference), (code, key)
        else:
            assert words.placeholders(value) == words.placeholders(reference), (code, key, value)


def test_the_server_sentences_in_english_are_the_services_own():
    """The page finds the service's sentences by their English templates: a template changed in
    the service and not in the table would leave the sentence untranslated."""
    from hunyuan_webui import modes
    from hunyuan_webui.service.operations import items

    english = words.table("server", "en")
    for key, text in {"glossary_notice": modes.GLOSSARY_NOTICE,
                      "context_notice": modes.CONTEXT_NOTICE, "format_notice": modes.FORMAT_NOTICE,
                      "format_broken": modes.FORMAT_BROKEN, "style_notice": modes.STYLE_NOTICE,
                      "instructions_notice": modes.INSTRUCTIONS_NOTICE,
                      "structured_notice": modes.STRUCTURED_NOTICE,
                      "glossary_unused": modes.GLOSSARY_UNUSED,
                      "structure_broken": modes.STRUCTURE_BROKEN,
                      "structure_kept": modes.STRUCTURE_KEPT, "terms_unused": items.TERMS_UNUSED,
                      "context_unused": items.CONTEXT_UNUSED}.items():
        assert english[f"sentence.{key}"] == text, key


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
