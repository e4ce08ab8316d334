"""GGUF checkpoints through llama.cpp (``--engine llamacpp``), on a GGUF of the demo model.

The GGUF is written from the demo checkpoint's own weights (F32, nothing quantized) by
:func:`~hunyuan_webui.engine.gguf_files.write_gguf`. The engine renders the prompt in the project's
own chat format (the same tokens as transformers' template), and greedy decoding gives the PyTorch
engine's answers, for every demo phrase, also when all of them are decoded in one batch; also from
a GGUF whose embedded chat template and end-of-generation metadata are wrong, which are never
trusted. The first tests need no model: which file
of a GGUF repository is taken, and the messages people get.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import replace

import pytest
from apphelpers import LONG_PAIR, LONG_TEXT, wait_until
from ggufhelpers import PAD, WRONG_TEMPLATE, write_wrong_gguf

from hunyuan_webui import models
from hunyuan_webui.cache import PhraseCache
from hunyuan_webui.choice import with_demo
from hunyuan_webui.core import kinds
from hunyuan_webui.core.chat import CHAT_FORMATS
from hunyuan_webui.core.config import EngineConfig
from hunyuan_webui.demo.formats import FORMATS
from hunyuan_webui.demo.gguf import ensure_demo_gguf
from hunyuan_webui.engine import (
    GREEDY,
    DecodingOptions,
    EngineState,
    close_engines,
    get_engine,
    llama_model,
)
from hunyuan_webui.engine.gguf_files import pick_file, quant_of, write_gguf
from hunyuan_webui.engine.llamacpp import LlamaCppEngine
from hunyuan_webui.engine.process import ProcessEngine
from hunyuan_webui.errors import InputError, ModelLoadError
from hunyuan_webui.prompts import translation_prompt
from hunyuan_webui.service import TranslationRequest, Translator
from hunyuan_webui.settings import Settings

HY_MT2_7B = ["README.md", "Hy-MT2-7B-Q4_K_M.gguf", "HY-MT2-7B-Q6_K.gguf", "HY-MT2-7B-Q8_0.gguf",
             "Hy-MT2-7B-F16-00001-of-00002.gguf", "Hy-MT2-7B-F16-00002-of-00002.gguf",
             "mmproj-Hy-MT2-7B-F16.gguf"]


# -- no model --------------------------------------------------------------------------------
def test_the_file_is_chosen_by_quantization_whatever_its_case():
    assert pick_file(HY_MT2_7B) == "Hy-MT2-7B-Q4_K_M.gguf"  # the default, Q4_K_M
    assert pick_file(HY_MT2_7B, "q8_0") == "HY-MT2-7B-Q8_0.gguf"
    assert pick_file(HY_MT2_7B, "F16") == "Hy-MT2-7B-F16-00001-of-00002.gguf"  # the first shard
    assert pick_file(["Hy-MT2-1.8B-2Bit.gguf", "README.md"]) == "Hy-MT2-1.8B-2Bit.gguf"  # the one
    assert [quant_of(f) for f in ("a/HY-MT1.5-1.8B-IQ4_XS.gguf", "x.BF16.gguf", "Hy-2Bit.gguf")] \
        == ["IQ4_XS", "BF16", "2Bit"]


def test_a_missing_quantization_lists_the_ones_there_are():
    with pytest.raises(ModelLoadError) as err:
        pick_file(HY_MT2_7B, "Q5_K_M")
    assert err.value.user_message == ("No Q5_K_M file among the GGUF files there; choose one of "
                                      "F16, Q4_K_M, Q6_K, Q8_0 with --gguf-quant.")


def test_a_gguf_file_is_a_model_with_the_sidecar_beside_it(tmp_path):
    gguf = tmp_path / "HY-MT1.5-1.8B-Q8_0.gguf"
    gguf.write_bytes(b"GGUF")
    spec = models.resolve(str(gguf))
    assert (spec.id, spec.local_path, spec.prequantized) == (str(gguf), str(gguf), "gguf")
    assert spec.family.value == "hy-mt1.5"  # from its name
    (tmp_path / "hymt.json").write_text(json.dumps({"family": "hunyuan-mt", "params_b": 0.5}))
    assert models.resolve(str(gguf)).family.value == "hunyuan-mt"


def test_without_llama_cpp_python_the_message_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(llama_model, "available", lambda: False)
    with pytest.raises(InputError) as err:
        get_engine(models.resolve("tencent/Hy-MT2-1.8B-GGUF"), EngineConfig(kind=kinds.LLAMACPP))
    assert err.value.user_message == (
        "llama.cpp runs GGUF checkpoints here through the llama-cpp-python package, which is not "
        "installed. Install it into this environment with `pip install llama-cpp-python` (it "
        "compiles llama.cpp, which takes a few minutes; add CMAKE_ARGS=\"-DGGML_CUDA=on\" for an "
        "NVIDIA GPU or CMAKE_ARGS=\"-DGGML_METAL=on\" on a Mac), then start the translator again.")


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_the_own_chat_formats_write_what_the_demo_templates_write(fmt):
    """The table llama.cpp prompts come from against the templates the demo models were trained
    in (Tencent's formats, HY-MT2.md §1.5)."""
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    demo = FORMATS[fmt]
    message = "Translate into English.\n\n<|eos|>你好"
    rendered = ImmutableSandboxedEnvironment().from_string(demo.template).render(
        messages=[{"role": "user", "content": message}], add_generation_prompt=True,
        bos_token=demo.bos, eos_token=demo.eos)
    own = CHAT_FORMATS[demo.registry_format]
    assert own.text(message) == rendered
    assert own.stops == (demo.eos,)


def test_only_byte_level_hunyuan_checkpoints_are_written(tmp_path, demo_path):
    shutil.copytree(demo_path, tmp_path / "other")
    config = json.loads((tmp_path / "other" / "config.json").read_text())
    (tmp_path / "other" / "config.json").write_text(json.dumps({**config, "model_type": "llama"}))
    with pytest.raises(ValueError, match="only hunyuan_v1_dense checkpoints are written here"):
        write_gguf(tmp_path / "other", tmp_path / "x.gguf")


# -- the demo model through llama.cpp ----------------------------------------------------------
@pytest.fixture(scope="module")
def gguf_spec() -> models.ModelSpec:
    return models.resolve(str(ensure_demo_gguf()))


@pytest.fixture(scope="module")
def llama(gguf_spec) -> Iterator[LlamaCppEngine]:
    """llama.cpp in this process, for what the child process does not expose (prompt tokens)."""
    engine = LlamaCppEngine(gguf_spec, max_new_tokens=64, cpu_threads=1)
    assert engine.wait_ready(60).state == EngineState.READY, engine.status().reason
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def llamacpp(gguf_spec) -> Iterator[ProcessEngine]:
    """What --engine llamacpp builds: llama.cpp in the supervised engine process."""
    engine = ProcessEngine(gguf_spec, runner="llamacpp", max_new_tokens=64, max_batch_size=16,
                           max_queued=128, cpu_threads=1, context_tokens=2048)
    status = engine.wait_ready(120)
    assert status.state == EngineState.READY, status.reason
    yield engine
    engine.close()


@pytest.mark.slow
def test_the_prompt_tokens_are_the_checkpoints_own(llama, engine, phrases):
    for p in phrases:
        assert llama.render(p.prompt) == engine.render(p.prompt)
    assert llama.count_tokens("谢谢你的帮助。") == engine.count_tokens("谢谢你的帮助。")


@pytest.mark.slow
def test_every_demo_phrase_comes_back_exact_through_llama_cpp(llamacpp, engine, phrases):
    """All 50 at once (one continuous batch) and one at a time: the PyTorch engine's answers."""
    prompts = [p.prompt for p in phrases]
    batched = [s.result() for s in llamacpp.submit(prompts, GREEDY)]
    torch_texts = [s.result() for s in engine.submit(prompts, GREEDY)]
    assert batched == torch_texts == [p.target for p in phrases]
    assert [llamacpp.generate(p, GREEDY) for p in prompts[:10]] == torch_texts[:10]
    status = llamacpp.status()
    assert (status.device, status.dtype, status.extra["gguf"]) == (
        "cpu (llama.cpp)", "F32", "hunyuan-mt-demo-F32.gguf")


@pytest.fixture(scope="module")
def wrong_gguf(tmp_path_factory) -> models.ModelSpec:
    return models.resolve(str(write_wrong_gguf(tmp_path_factory.mktemp("wrong"))))


@pytest.mark.slow
def test_a_wrong_embedded_template_changes_nothing(wrong_gguf, llama, phrases):
    """Every demo phrase exact from the GGUF with the wrong template and end metadata: the
    prompt is the project's own, and the answer ends at <|eos|>, found by id in the vocabulary."""
    import gguf

    reader = gguf.GGUFReader(wrong_gguf.local_path)
    field = reader.get_field("tokenizer.chat_template")
    assert field.contents() == WRONG_TEMPLATE
    eos = int(reader.get_field("tokenizer.ggml.eos_token_id").contents())
    wrong = LlamaCppEngine(wrong_gguf, max_new_tokens=64, cpu_threads=1, warmup=False)
    try:
        assert wrong.wait_ready(60).state == EngineState.READY, wrong.status().reason
        assert wrong.stop_ids == llama.stop_ids == {769} and eos == PAD  # <|eos|>, not <|pad|>
        prompts = [p.prompt for p in phrases]
        assert [wrong.render(p) for p in prompts] == [llama.render(p) for p in prompts]
        streams = wrong.submit(prompts, GREEDY)
        assert [s.result() for s in streams] == [p.target for p in phrases]
        assert {s.finish_reason for s in streams} == {"stop"}
    finally:
        wrong.close()


@pytest.mark.slow
def test_the_answer_ends_at_the_stop_token_id_not_at_text(llama, phrases):
    """A user's "<|eos|>" is text, never the stop token; and without the stop id an answer runs
    on to its cap: nothing else stops it (the GGUF's own end-of-generation token is never
    consulted, and a stop token has no text to match)."""
    rendered = llama.render("Hello <|eos|> world")
    assert 769 not in rendered and rendered[0] == 768 and rendered[-1] == 771  # bos, <|extra_0|>
    phrase = phrases[0]
    stops = llama.stop_ids
    try:
        llama.stop_ids = frozenset()
        stream = llama.stream(phrase.prompt, DecodingOptions(deterministic=True,
                                                             max_new_tokens=40))
        assert stream.result().startswith(phrase.target)
        assert (stream.finish_reason, stream.usage.completion_tokens) == ("length", 40)
    finally:
        llama.stop_ids = stops
    assert llama.generate(phrase.prompt, GREEDY) == phrase.target


@pytest.mark.slow
def test_the_1_8b_format_comes_from_the_own_table_and_ends_at_its_stop_id(tmp_path, phrases):
    """The 1.8B models' format (other markers, another stop token), also from a wrong GGUF."""
    from transformers import AutoTokenizer

    from hunyuan_webui.demo.model import demo_dir

    spec = models.resolve(str(write_wrong_gguf(tmp_path, "1.8b")))
    assert spec.chat_format == "hy-1.8b"
    tokenizer = AutoTokenizer.from_pretrained(demo_dir("1.8b"))
    engine = LlamaCppEngine(spec, max_new_tokens=64, cpu_threads=1, warmup=False)
    try:
        assert engine.wait_ready(60).state == EngineState.READY, engine.status().reason
        assert engine.stop_ids == {tokenizer.convert_tokens_to_ids("<｜hy_place▁holder▁no▁2｜>")}
        prompts = [p.prompt_in("hy-mt2") for p in phrases]
        assert tokenizer.decode(engine.render(prompts[0])) == \
            f"<｜hy_begin▁of▁sentence｜><｜hy_User｜>{prompts[0]}<｜hy_Assistant｜>"
        streams = engine.submit(prompts, GREEDY)
        assert [s.result() for s in streams] == [p.target for p in phrases]
        assert {s.finish_reason for s in streams} == {"stop"}
    finally:
        engine.close()


@pytest.mark.slow
def test_the_service_streams_valid_text_and_caches_it(llamacpp, gguf_spec, demo_settings, phrases):
    settings = replace(demo_settings, model=gguf_spec.id, engine="llamacpp", cache_size=64)
    translator = Translator(llamacpp, gguf_spec, settings, cache=PhraseCache(size=64))
    request = TranslationRequest("谢谢你的帮助。今天天气很好。", "en", "zh", options=GREEDY)
    updates = list(translator.start(request))
    deltas = [u.delta for u in updates if u.delta]
    assert len(deltas) >= 3 and all("\ufffd" not in d for d in deltas)
    assert "".join(deltas) == updates[-1].result.text == \
        "Thank you for your help. The weather is nice today."
    again = translator.translate(request)
    assert again.text == updates[-1].result.text and again.cached_segments == 2
    for p in phrases[:5]:  # the model card's sampling, with a seed
        options = DecodingOptions(seed=3)
        assert llamacpp.generate(p.prompt, options) == p.target


@pytest.mark.slow
def test_length_cap_and_cancel_free_their_slots(llama, phrases):
    longest = max(phrases, key=lambda p: len(p.target))
    capped = llama.stream(longest.prompt, DecodingOptions(deterministic=True, max_new_tokens=3))
    assert longest.target.startswith(capped.result())
    assert (capped.finish_reason, capped.usage.completion_tokens) == ("length", 3)
    # en -> th, the demo model runs on for hundreds of tokens on this text
    stream = llama.stream(translation_prompt(LONG_TEXT, *LONG_PAIR),
                          DecodingOptions(deterministic=True, max_new_tokens=500))
    next(iter(stream))
    stream.cancel()
    stream.result()
    assert stream.finish_reason == "cancelled" and stream.usage.completion_tokens < 500
    assert wait_until(lambda: llama.status().active == 0, 5)
    assert llama.generate(phrases[2].prompt, GREEDY) == phrases[2].target


@pytest.mark.slow
def test_demo_with_engine_llamacpp_runs_the_gguf(phrases):
    settings = with_demo(Settings(engine="llamacpp", demo=True, max_new_tokens=64,
                                  cpu_threads=1, warmup=False))
    assert settings.model == str(ensure_demo_gguf())
    try:
        engine = get_engine(models.resolve(settings.model), settings.engine_config())
        assert isinstance(engine, ProcessEngine) and engine.wait_ready(120).ready
        assert engine.generate(phrases[0].prompt, GREEDY) == phrases[0].target
    finally:
        close_engines()


@pytest.mark.slow
def test_an_architecture_llama_cpp_does_not_know_fails_with_its_words(tmp_path):
    import gguf

    writer = gguf.GGUFWriter(str(tmp_path / "odd.gguf"), "no-such-arch")
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    engine = LlamaCppEngine(models.resolve(str(tmp_path / "odd.gguf")), warmup=False)
    try:
        status = engine.wait_ready(30)
        assert status.state == EngineState.FAILED
        assert status.reason.startswith("llama.cpp could not load odd.gguf: ")
        assert "unknown model architecture: 'no-such-arch'" in status.reason
    finally:
        engine.close()


@pytest.fixture
def demo_path() -> str:
    from hunyuan_webui.demo.model import DEMO_DIR

    return str(DEMO_DIR)
