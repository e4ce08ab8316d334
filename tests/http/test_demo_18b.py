"""The 1.8B chat format end to end, on the second demo checkpoint (``assets/demo-model-1.8b``).

The 1.8B models (HY-MT1.5-1.8B, Hy-MT2-1.8B) use other special tokens than the 7B ones:
``<｜hy_begin▁of▁sentence｜><｜hy_User｜>{prompt}<｜hy_Assistant｜>`` and the stop token
``<｜hy_place▁holder▁no▁2｜>``. The app never writes them itself; these tests prove that the engine,
the streaming, the stop handling, the phrase cache and the page work on them as on the 7B format:
every phrase, prompted in Hy-MT2's wording, comes back exactly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace

import pytest
from apphelpers import running_app
from gradio_client import Client
from transformers import AutoTokenizer

from hunyuan_webui import models
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.demo import model as demo_model
from hunyuan_webui.demo import training as demo_training
from hunyuan_webui.engine import GREEDY
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.prompts import PromptFamily
from hunyuan_webui.service import TranslationRequest, Translator

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

BOS, USER, ASSISTANT = "<｜hy_begin▁of▁sentence｜>", "<｜hy_User｜>", "<｜hy_Assistant｜>"
STOP = "<｜hy_place▁holder▁no▁2｜>"
DIR = demo_model.demo_dir("1.8b")
PHRASES = demo_model.load_phrases()


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(DIR)


@pytest.fixture(scope="module")
def engine18() -> Iterator[LocalEngine]:
    engine = LocalEngine(models.resolve(str(demo_model.ensure_demo_model("1.8b"))),
                         max_new_tokens=64, max_batch_size=16, max_queued=256)
    status = engine.wait_ready(120)
    assert status.state == "ready", status.reason
    yield engine
    engine.close()


def translator_on(engine: LocalEngine, demo_settings, **kw) -> Translator:
    return Translator(engine, engine.spec, replace(demo_settings, model=str(DIR)), **kw)


# -- the checkpoint -----------------------------------------------------------------------------
def test_the_checkpoint_is_shipped_small_and_describes_itself():
    assert demo_model.is_complete(DIR)
    assert sum(p.stat().st_size for p in DIR.iterdir() if p.is_file()) < 3_000_000
    config = json.loads((DIR / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "hunyuan_v1_dense" and "auto_map" not in config
    spec = models.resolve(str(DIR))
    assert (spec.family, spec.chat_format, spec.demo) == (PromptFamily.HY_MT2, "hy-1.8b", True)
    meta = json.loads((DIR / demo_model.SIDECAR).read_text(encoding="utf-8"))
    assert meta["phrases_sha256"] == demo_model.phrases_digest()


def test_the_cli_prints_its_directory():
    done = subprocess.run([sys.executable, "-m", "hunyuan_webui", "demo-model", "--format",
                           "1.8b"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{DIR}\n"


def test_the_tokens_and_the_chat_template_are_the_1_8b_models(tokenizer):
    assert (tokenizer.bos_token, tokenizer.eos_token) == (BOS, STOP)
    for token in (BOS, USER, ASSISTANT, STOP, "<｜hy_place▁holder▁no▁3｜>"):
        ids = tokenizer.encode(token, add_special_tokens=False)
        assert len(ids) == 1 and ids[0] >= demo_training.BPE_VOCAB - 1, token  # one special token
    user = [{"role": "user", "content": "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好"}]
    assert tokenizer.apply_chat_template(user, add_generation_prompt=True, tokenize=False) == (
        f"{BOS}{USER}将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好{ASSISTANT}")
    turn = user + [{"role": "assistant", "content": "Hello"}]
    assert tokenizer.apply_chat_template(turn, tokenize=False).endswith(
        f"你好{ASSISTANT}Hello{STOP}")
    system = [{"role": "system", "content": "S"}, *user]
    assert tokenizer.apply_chat_template(system, tokenize=False).startswith(
        f"{BOS}S<｜hy_place▁holder▁no▁3｜>{USER}")


# -- the engine, the stream, the stop token and the cache -----------------------------------------
def test_every_phrase_exact_under_greedy_decoding_in_one_batch(engine18, demo_settings):
    translator = translator_on(engine18, demo_settings)
    requests = [TranslationRequest(p.source, p.target_lang, p.source_lang, options=GREEDY)
                for p in PHRASES]
    results = translator.translate_many(requests)
    assert [r.text for r in results] == [p.target for p in PHRASES]


def test_the_prompts_are_hy_mt2s_in_its_chat_format(engine18):
    phrase = PHRASES[0]  # 你好 -> Hello
    prompt = phrase.prompt_in("hy-mt2")
    assert prompt == "将以下文本翻译为英语，注意只需要输出翻译后的结果，不要额外解释：\n\n你好"
    ids = engine18.render(prompt)
    tokenizer = engine18._require_loaded().tokenizer
    assert tokenizer.decode(ids) == f"{BOS}{USER}{prompt}{ASSISTANT}"


def test_the_stream_stops_at_the_1_8b_stop_token_and_never_shows_it(engine18):
    loaded = engine18._require_loaded()
    assert loaded.eos_token_ids == {loaded.tokenizer.convert_tokens_to_ids(STOP)}
    phrase = next(p for p in PHRASES if p.target == "This book is very interesting.")
    stream = engine18.submit([phrase.prompt_in("hy-mt2")], GREEDY)[0]
    chunks = list(stream)
    assert "".join(chunks) == stream.text == phrase.target
    assert len(chunks) >= 3  # streamed, not one burst at the end
    assert stream.finish_reason == "stop"
    assert stream.usage.completion_tokens == len(
        loaded.tokenizer.encode(phrase.target, add_special_tokens=False))
    assert not any("hy_" in c or "｜" in c for c in chunks)


def test_a_repeated_phrase_comes_from_the_cache(engine18, demo_settings):
    translator = translator_on(engine18, demo_settings, cache=PhraseCache(size=64))
    request = TranslationRequest("谢谢你的帮助。", "en", "zh", options=GREEDY)
    first = translator.translate(request)
    calls = translator.model_calls
    second = translator.translate(request)
    assert first.text == second.text == "Thank you for your help."
    assert (first.cached, second.cached, translator.model_calls) == (False, True, calls)


# -- the page ---------------------------------------------------------------------------------------
def test_every_phrase_exact_through_the_pages_translate_endpoint(engine18):
    """The page's own defaults: the model card's sampling, which the demo stays on."""
    with running_app(engine18) as app:
        client = Client(app.url, verbose=False)
        try:
            got = [client.predict(p.source, p.source_lang, p.target_lang, api_name="/translate")
                   for p in PHRASES]
        finally:
            client.close()
    assert got == [p.target for p in PHRASES]


@pytest.mark.slow
def test_a_rebuild_is_deterministic_and_memorises(tmp_path):
    """What `python -m hunyuan_webui.demo_model --format 1.8b` does (about 30-90 s)."""
    out = demo_model.build_demo_model(tmp_path / "m", fmt="1.8b")
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json",
                 "generation_config.json"):
        assert (out / name).read_bytes() == (DIR / name).read_bytes(), name
    meta = json.loads((out / demo_model.SIDECAR).read_text(encoding="utf-8"))
    assert min(meta["training"]["min_margin_fp32"],
               meta["training"]["min_margin_fake_nf4"]) >= demo_training.MARGIN
