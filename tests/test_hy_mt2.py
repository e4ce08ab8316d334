"""Hy-MT2 on the page, the JSON API and the command line: per-model decoding defaults and the
instruction modes (terminology, style, personal instructions, structured data, background).

The session's demo engine does the decoding; its spec is swapped for a Hy-MT2 one
(``RecordingEngine.spec``), so what is checked is what each front end sends: the exact prompt and
the decoding options. The demo model memorised plain translations only, so other prompts get
nonsense back; where that matters (the structured-data check) the fallback is what is tested.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from apphelpers import RecordingEngine, running_app

from hunyuan_webui import models
from hunyuan_webui.engine import GREEDY
from hunyuan_webui.prompts import PromptFamily
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.ui import build_ui

MOE = models.HY_V3_DECODING


def hy_mt2(engine, decoding=MOE, modes=models.REGISTRY["tencent/Hy-MT2-7B"].modes):
    spec = replace(engine.spec, family=PromptFamily.HY_MT2, modes=modes, decoding=decoding)
    return RecordingEngine(engine, spec)


@pytest.fixture(scope="module")
def moe_app(engine):
    """An app whose model decodes with the 30B's defaults: 0.7 / 1.0 / no top-k / no penalty."""
    with running_app(hy_mt2(engine)) as running:
        yield running


def test_requests_start_from_the_loaded_models_decoding_defaults(moe_app):
    rec = moe_app.engine
    with moe_app.client() as c:
        rec.calls.clear()
        assert c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh",
                                             "target_lang": "en"}).status_code == 200
        assert rec.options[-1] == MOE
        c.post("/v1/translate", json={"text": "谢谢。", "source_lang": "zh", "target_lang": "en",
                                      "options": {"deterministic": True, "top_p": 0.9}})
        assert rec.options[-1] == replace(MOE, deterministic=True, top_p=0.9)
        c.post("/translate", json={"q": "你好", "source": "zh", "target": "en"})  # LibreTranslate
        assert rec.options[-1] == MOE
        info = c.get("/v1/model").json()
    assert info["decoding"] == {"deterministic": False, "temperature": 0.7, "top_p": 1.0,
                                "top_k": 0, "repetition_penalty": 1.0, "max_new_tokens": None,
                                "seed": None}
    assert info["family"] == "hy-mt2" and "structured" in info["modes"]


def test_the_page_starts_from_the_models_defaults(engine, demo_settings):
    translator = Translator(hy_mt2(engine), hy_mt2(engine).spec, demo_settings)
    config = build_ui(translator).config
    values = {c["props"].get("elem_id"): c["props"].get("value") for c in config["components"]}
    assert (values["opt-temperature"], values["opt-top_p"], values["opt-top_k"],
            values["opt-repetition_penalty"]) == (0.7, 1.0, 0, 1.0)
    assert translator.decoding(deterministic=True) == replace(MOE, deterministic=True)


def test_a_request_without_options_gets_the_spec_defaults(engine, demo_settings):
    rec = hy_mt2(engine)
    translator = Translator(rec, rec.spec, demo_settings)
    translator.translate(TranslationRequest(text="谢谢。", source_lang="zh", target_lang="en"))
    assert rec.options == [MOE]
    rec.calls.clear()
    translator.translate(TranslationRequest(text="谢谢。", source_lang="zh", target_lang="en",
                                            options=GREEDY))
    assert rec.options == [GREEDY]
