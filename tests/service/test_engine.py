"""The engine and the service on the demo model: exact outputs, streaming, batching, limits.

Everything here runs the real loading and decoding path (``from_pretrained`` on a directory, the
chat template from the tokenizer, the batching scheduler) on a 0.7M-parameter checkpoint.
"""

from __future__ import annotations

import time

import pytest

from hunyuan_webui import models, prompts
from hunyuan_webui.engine import GREEDY, DecodingOptions
from hunyuan_webui.engine.local import LocalEngine
from hunyuan_webui.errors import (
    BusyError,
    CancelledError,
    InputError,
    InputTooLongError,
    ModelLoadError,
    NotReadyError,
    UnknownLanguageError,
)
from hunyuan_webui.service import TranslationRequest

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

THAI = "สวัสดี"


def greedy(text: str, src: str, tgt: str) -> TranslationRequest:
    return TranslationRequest(text=text, source_lang=src, target_lang=tgt, options=GREEDY)


def test_every_demo_phrase_translates_exactly(translator, phrases):
    for p in phrases:
        assert translator.translate(greedy(p.source, p.source_lang, p.target_lang)).text == p.target


def test_model_card_sampling_keeps_the_memorised_answers(translator, phrases):
    """top_p 0.6 leaves a single candidate when the model is this sure."""
    for p in phrases[:10]:
        request = TranslationRequest(p.source, p.target_lang, p.source_lang)
        assert translator.translate(request).text == p.target


def test_stream_chunks_grow_and_concatenate_to_the_final_text(translator):
    updates = list(translator.start(greedy("谢谢你的帮助。", "zh", "en")))
    deltas = [u.delta for u in updates if u.delta]
    assert len(deltas) >= 3
    assert "".join(deltas) == "Thank you for your help."
    assert updates[-1].result.text == "Thank you for your help."
    texts = [u.text for u in updates]
    assert all(a == b[: len(a)] for a, b in zip(texts, texts[1:]))  # each is a prefix of the next


def test_thai_streams_token_by_token_without_replacement_characters(translator):
    deltas = [u.delta for u in translator.start(greedy("Hello", "en", "th")) if u.delta]
    assert "".join(deltas) == THAI
    assert len(deltas) > 1
    assert all("\ufffd" not in d for d in deltas)


def test_emoji_output_is_never_split(translator):
    deltas = [u.delta for u in translator.start(greedy("I love you ❤️", "en", "zh")) if u.delta]
    assert "".join(deltas) == "我爱你 ❤️"
    assert all("\ufffd" not in d and not d.startswith("\ufe0f") for d in deltas)


def test_batched_output_is_identical_to_running_alone(engine, phrases):
    texts = [prompts.translation_prompt(p.source, p.source_lang, p.target_lang) for p in phrases]
    texts = texts[:16]
    alone = [engine.generate(t, GREEDY) for t in texts]
    together = [s.result() for s in engine.submit(texts, GREEDY)]
    assert together == alone
    # Staggered arrivals join a running batch (continuous batching) with different lengths.
    streams = []
    for t in reversed(texts):
        streams.append(engine.stream(t, GREEDY))
        time.sleep(0.002)
    assert [s.result() for s in streams] == list(reversed(alone))


def test_cancel_frees_the_slot_within_one_step(engine):
    long = DecodingOptions(deterministic=True, max_new_tokens=64)
    prompt = prompts.translation_prompt("x " * 40, "en", "zh")
    stream = engine.stream(prompt, long)
    while stream.usage.completion_tokens < 2:
        time.sleep(0.001)
    steps_at_cancel = engine.steps
    stream.cancel()
    deadline = time.monotonic() + 5
    while not stream.done and time.monotonic() < deadline:
        time.sleep(0.001)
    assert stream.finish_reason == "cancelled"
    assert engine.steps - steps_at_cancel <= 1
    assert engine.status().active == 0
    assert stream.usage.completion_tokens < 64


def test_last_reader_leaving_cancels_but_a_shared_reader_keeps_it(engine):
    prompt = prompts.translation_prompt("y " * 40, "en", "zh")
    stream = engine.stream(prompt, DecodingOptions(deterministic=True, max_new_tokens=64))
    first, second = iter(stream), iter(stream)
    next(first), next(second)
    first.close()
    assert not stream.cancelled
    second.close()
    assert stream.cancelled


def test_backpressure_answers_busy_instead_of_queueing_forever(demo_dir):
    engine = LocalEngine(models.resolve(demo_dir), max_batch_size=1, max_queued=2,
                         max_new_tokens=1024, warmup=False)
    try:
        assert engine.wait_ready(60).state == "ready"
        # A text the demo model answers for seconds: the first sequence is still running when
        # the queue fills (a short one could end first on a busy machine and free its slot).
        prompt = prompts.translation_prompt("-".join(["ha"] * 200), "en", "th")
        opts = DecodingOptions(deterministic=True, max_new_tokens=1024)
        running = engine.submit([prompt], opts)
        while engine.status().active == 0:
            time.sleep(0.001)
        queued = engine.submit([prompt, prompt], opts)
        with pytest.raises(BusyError, match="busy"):
            engine.submit([prompt], opts)
        for s in running + queued:
            s.cancel()
    finally:
        engine.close()


def test_submit_before_ready_and_failed_load_explain_themselves(tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    engine = LocalEngine(models.resolve(str(broken)))
    status = engine.wait_ready(60)
    assert status.state == "failed"
    assert "--demo" in status.reason and "--model PATH" in status.reason
    with pytest.raises(NotReadyError, match="could not be loaded"):
        engine.submit(["hi"], GREEDY)


def test_unknown_model_names_are_refused_with_advice():
    with pytest.raises(InputError, match="--demo"):
        models.resolve("./no/such/dir")


def test_offline_hub_model_fails_with_a_clear_message(monkeypatch, tmp_path):
    import huggingface_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    # huggingface_hub reads HF_HUB_OFFLINE when it is imported (a user sets it before starting);
    # set after, it tried the network here for 46 s first.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    from hunyuan_webui.engine.loader import load

    with pytest.raises(ModelLoadError) as err:
        load(models.resolve("tencent/Hunyuan-MT-7B"), "fp32", "cpu")
    message = err.value.user_message
    assert "offline" in message and "--model PATH" in message and "--demo" in message


def test_empty_and_whitespace_input_never_reach_the_model(translator):
    for text in ("", "   \n\t "):
        result = translator.translate(greedy(text, "auto", "en"))
        assert result.text == ""
    assert translator.model_calls == 0


def test_too_long_input_is_refused_before_any_model_work(make_translator):
    translator = make_translator(max_input_chars=10)
    with pytest.raises(InputTooLongError, match="limit is 10"):
        translator.start(greedy("Thank you for your help.", "en", "zh"))
    assert translator.model_calls == 0


def test_token_limit_is_enforced(make_translator):
    translator = make_translator(max_input_tokens=5)
    with pytest.raises(InputTooLongError, match="tokens"):
        translator.start(greedy("Thank you for your help.", "en", "zh"))


def test_unknown_language_lists_valid_codes(translator):
    with pytest.raises(UnknownLanguageError, match="Valid codes: zh, en"):
        translator.start(greedy("hello", "en", "klingon"))


def test_same_source_and_target_is_returned_with_a_notice(translator):
    result = translator.translate(greedy("Thank you.", "en", "en"))
    assert result.text == "Thank you."
    assert "already in English" in result.notice
    assert translator.model_calls == 0


@pytest.mark.parametrize("junk", ["\x00\x01binary\x00", "\x01\x02\x03\x04\x05\x06\x07\x08 abc",
                                  "bad \ud800 surrogate"])
def test_binary_junk_is_refused_clearly(translator, junk):
    with pytest.raises(InputError, match="binary|invalid characters"):
        translator.start(greedy(junk, "en", "zh"))


def test_auto_detection_picks_the_source(translator):
    result = translator.translate(greedy("谢谢你的帮助。", "auto", "en"))
    assert result.source_lang == "zh"
    assert result.text == "Thank you for your help."
    assert result.detection is not None and result.detection.code == "zh"


def test_stopping_a_job_cancels_its_segments(translator):
    job = translator.start(greedy("x y z " * 30, "en", "zh"))
    iterator = iter(job)
    next(iterator)
    job.cancel()
    assert list(iterator) == []  # ends quietly, without a result
    deadline = time.monotonic() + 5
    while translator.engine.status().active and time.monotonic() < deadline:
        time.sleep(0.001)
    assert translator.engine.status().active == 0
    with pytest.raises(CancelledError):
        job.result()


@pytest.mark.parametrize("dtype", ["int8", "int4"])
def test_quantized_engines_translate_every_phrase_exactly(demo_dir, phrases, dtype):
    """bitsandbytes runs on the CPU: the same loader path a GPU user takes with --dtype."""
    import logging

    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
    engine = LocalEngine(models.resolve(demo_dir), dtype=dtype, max_new_tokens=64)
    try:
        status = engine.wait_ready(300)
        assert status.state == "ready", status.reason
        assert status.dtype == dtype
        texts = [prompts.translation_prompt(p.source, p.source_lang, p.target_lang)
                 for p in phrases]
        got = [s.result() for s in engine.submit(texts, GREEDY)]
        assert got == [p.target for p in phrases]
    finally:
        engine.close()


def test_int8_through_the_engine_translates_and_logs_the_cast_once(demo_dir, phrases, caplog):
    """bitsandbytes logged "inputs will be cast ... to float16" on every int8 matrix product:
    thousands of lines for one translation on a CPU (the demo-model tests silenced its logger)."""
    engine = LocalEngine(models.resolve(demo_dir), dtype="int8", device="cpu")
    try:
        assert engine.wait_ready(120).state == "ready"
        assert engine.status().dtype == "int8"
        with caplog.at_level("WARNING", logger="bitsandbytes"):
            for phrase in phrases[:3]:
                assert engine.generate(phrase.prompt, GREEDY) == phrase.target
        casts = [r for r in caplog.records if "will be cast" in r.getMessage()]
        assert len(casts) <= 1, len(casts)
    finally:
        engine.close()
