"""One row per language: a table with one more row (Greek) is found by detection, the answer
checks, segmentation, the budgets, the protocols' code maps and the page's pickers, with nothing
but the row (and Greek's code points, which detect/scripts.py already knows)."""

from __future__ import annotations

import pytest

from hunyuan_webui import languages
from hunyuan_webui.detect import LanguageDetector
from hunyuan_webui.errors import UnknownLanguageError
from hunyuan_webui.languages import GREEK, Language
from hunyuan_webui.segment import split_document
from hunyuan_webui.service.checks import budget
from hunyuan_webui.service.checks.answers import LANGUAGE, check_answer
from hunyuan_webui.web.page.layout import language_choices
from hunyuan_webui.web.page.text import picker_label, picker_search
from hunyuan_webui.web.protocols.deepl import mapping as deepl
from hunyuan_webui.web.protocols.extensions import mapping as extensions

GREEK_ROW = Language("el", "Greek", "希腊语", "Ελληνικά", (GREEK,), density=1.1,
                     aliases=("el-gr",), names=("modern greek",),
                     deepl_targets=(("EL", "Greek"),), hcfy_name="希腊语")
GREEK_TEXT = "Καλημέρα σε όλους. Σήμερα θα μάθουμε για τον ήλιο και τα αστέρια του ουρανού."
ENGLISH_TEXT = "Good morning, everyone. Today we will learn about the sun and the stars."


@pytest.fixture
def with_greek():
    with languages.using((*languages.LANGUAGES, GREEK_ROW)) as table:
        yield table


def test_the_table_as_shipped_has_no_greek():
    assert len(languages.LANGUAGES) == 38
    assert LanguageDetector().detect(GREEK_TEXT).code is None
    with pytest.raises(UnknownLanguageError):
        languages.normalize("el")
    assert "el" not in [code for _, code in language_choices(False)]


def test_detection_finds_the_new_row(with_greek):
    found = LanguageDetector().detect(GREEK_TEXT)
    assert (found.code, found.reliable) == ("el", True)
    assert LanguageDetector().detect(ENGLISH_TEXT).code == "en"  # the others unchanged
    assert languages.normalize("EL_gr") == "el" and languages.by_name("Modern Greek") == "el"


def test_the_answer_checks_know_its_script(with_greek):
    detector = LanguageDetector()
    assert check_answer(GREEK_TEXT, ENGLISH_TEXT, "en", "el", detector) is None
    wrong = check_answer(ENGLISH_TEXT, GREEK_TEXT, "el", "el", detector, copy=False)
    assert wrong is not None and wrong.kind == LANGUAGE
    assert budget.density("el") == 1.1


def test_segmentation_reads_the_row(with_greek):
    doc = split_document(GREEK_TEXT, "el")
    assert doc.segments == ["Καλημέρα σε όλους.",
                            "Σήμερα θα μάθουμε για τον ήλιο και τα αστέρια του ουρανού."]
    # Into Greek, sentences whose sources touched get a space between them (Greek is spaced).
    touching = split_document("早上好。请坐。", "zh")
    assert touching.render(["Καλημέρα.", "Καθίστε."], "el") == "Καλημέρα. Καθίστε."


def test_the_page_pickers_and_the_protocols_offer_it(with_greek):
    assert ("el" in [code for _, code in language_choices(False)])
    assert picker_label("en", "el") == "Ελληνικά · Greek"
    keys = [entry["keys"] for entry in picker_search()]
    assert any("modern greek" in k.split("\n") and "el" in k.split("\n") for k in keys)
    assert {"language": "EL", "name": "Greek"} in deepl.source_languages()
    assert deepl.ours("el", "target_lang") == "el" and deepl.source_code("el") == "EL"
    assert extensions.browser_code("el") == "el"
    assert extensions.code_of("希腊语", "destination") == "el"
