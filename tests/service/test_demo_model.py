"""The shipped demo checkpoint, loaded the way any Hunyuan-MT checkpoint is: plain transformers.

Every phrase of ``assets/demo_phrases.tsv``, prompted with the official template and the model's own
chat template, must come back exactly: greedy, greedy with the engine's repetition penalty, batched
with left padding, sampled with the model card's defaults, and through bitsandbytes int8 and NF4.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import unicodedata
from collections import Counter
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from hunyuan_webui import languages, models
from hunyuan_webui.demo import model as demo_model
from hunyuan_webui.demo import training as demo_training
from hunyuan_webui.demo.model import DEMO_DIR, PHRASES_PATH, Phrase, load_phrases
from hunyuan_webui.prompts import PromptFamily, translation_prompt

pytestmark = pytest.mark.slow  # a model, a server or a child process: not the fast lane

PHRASES = load_phrases()
MAX_NEW_TOKENS = 48


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """A model this small decodes 10x faster on one thread when other work shares the CPU."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tokenizer():
    return AutoTokenizer.from_pretrained(DEMO_DIR)


@pytest.fixture(scope="module")
def model():
    return AutoModelForCausalLM.from_pretrained(DEMO_DIR).eval()


def _bnb_model(**quant):
    pytest.importorskip("bitsandbytes")
    from transformers import BitsAndBytesConfig

    # LLM.int8 logs a cast-to-fp16 warning on every matmul of an fp32 model.
    logging.getLogger("bitsandbytes").setLevel(logging.ERROR)
    return AutoModelForCausalLM.from_pretrained(
        DEMO_DIR, quantization_config=BitsAndBytesConfig(**quant), device_map="cpu").eval()


@pytest.fixture(scope="module")
def int8_model():
    return _bnb_model(load_in_8bit=True)


@pytest.fixture(scope="module")
def nf4_model():
    return _bnb_model(load_in_4bit=True, bnb_4bit_quant_type="nf4")


def _prompt_ids(tokenizer, phrase: Phrase) -> torch.Tensor:
    prompt = translation_prompt(phrase.source, phrase.source_lang, phrase.target_lang)
    encoded = tokenizer.apply_chat_template([{"role": "user", "content": prompt}],
                                            add_generation_prompt=True, tokenize=True,
                                            return_dict=True, return_tensors="pt")
    return encoded["input_ids"]


def _translate(model, tokenizer, phrase: Phrase, **generate) -> tuple[str, list[int]]:
    ids = _prompt_ids(tokenizer, phrase)
    with torch.no_grad():
        out = model.generate(ids, attention_mask=torch.ones_like(ids),
                             max_new_tokens=MAX_NEW_TOKENS, **generate)
    new = out[0, ids.shape[1]:].tolist()
    return tokenizer.decode(new, skip_special_tokens=True), new


def _mismatches(model, tokenizer, **generate) -> list[tuple[str, str, str]]:
    bad = []
    for phrase in PHRASES:
        text, new = _translate(model, tokenizer, phrase, **generate)
        if text != phrase.target or new[-1] != tokenizer.eos_token_id:
            bad.append((phrase.source, phrase.target, text))
    return bad


# ---------------------------------------------------------------------------------------------
# The checkpoint as files


def test_checkpoint_is_complete_small_and_native():
    assert demo_model.is_complete(DEMO_DIR)
    size = sum(p.stat().st_size for p in DEMO_DIR.iterdir() if p.is_file())
    assert size < 5_000_000
    config = json.loads((DEMO_DIR / "config.json").read_text(encoding="utf-8"))
    assert config["model_type"] == "hunyuan_v1_dense"
    assert config["architectures"] == ["HunYuanDenseV1ForCausalLM"]
    assert "auto_map" not in config  # native in transformers, no remote code
    assert config["tie_word_embeddings"] is False
    assert config["rope_parameters"]["alpha"] == 1000.0  # the Hunyuan NTK-alpha rope


def test_sidecar_describes_the_model(model):
    spec = models.resolve(str(DEMO_DIR))
    assert spec.family is PromptFamily.HUNYUAN_MT
    assert spec.modes == frozenset({models.TRANSLATE})
    assert spec.local_path == str(DEMO_DIR.resolve())
    assert spec.params_b == pytest.approx(model.num_parameters() / 1e9, rel=1e-3)
    assert "demo" in spec.description.lower()


def test_checkpoint_matches_the_phrase_table():
    """Editing the TSV without `python -m hunyuan_webui.demo_model` leaves a stale checkpoint."""
    meta = json.loads((DEMO_DIR / demo_model.SIDECAR).read_text(encoding="utf-8"))
    assert meta["phrases_sha256"] == demo_model.phrases_digest(PHRASES_PATH)
    assert meta["phrases"] == len(PHRASES)


def test_phrase_table_covers_what_the_app_needs():
    pairs = Counter((p.source_lang, p.target_lang) for p in PHRASES)
    assert pairs["zh", "en"] >= 8 and pairs["en", "zh"] >= 8
    for pair in (("zh", "en"), ("en", "zh")):
        sentences = [p for p in PHRASES if (p.source_lang, p.target_lang) == pair
                     and p.source[-1] in ".。?？!！" and p.target[-1] in ".。?？!！"]
        assert len(sentences) >= 4, pair
    targets = {p.target_lang for p in PHRASES}
    assert {"fr", "de", "ja", "th", "ar", "ug", "bo", "yue", "kk", "ru"} <= targets
    assert targets & {"km", "my"}
    assert any(languages.is_rtl(t) for t in targets)
    assert any(unicodedata.category(c) == "So" for p in PHRASES for c in p.target)  # emoji
    assert any(unicodedata.combining(c) for p in PHRASES for c in p.target)
    assert all(unicodedata.is_normalized("NFC", p.target) for p in PHRASES)


def test_load_phrases_rejects_conflicting_targets(tmp_path: Path):
    table = tmp_path / "phrases.tsv"
    table.write_text("source_lang\ttarget_lang\tsource\ttarget\n"
                     "zh\ten\t你好\tHello\nzh\ten\t你好\tHi\n", encoding="utf-8")
    with pytest.raises(ValueError, match="two targets"):
        load_phrases(table)


# ---------------------------------------------------------------------------------------------
# Tokenizer and chat format


def test_architecture_and_ids(model, tokenizer):
    from transformers import HunYuanDenseV1ForCausalLM

    assert type(model) is HunYuanDenseV1ForCausalLM
    assert model.config.model_type == "hunyuan_v1_dense"
    assert model.config.vocab_size == len(tokenizer)
    assert model.get_input_embeddings().weight.data_ptr() != model.lm_head.weight.data_ptr()
    assert model.config.bos_token_id == tokenizer.bos_token_id
    assert model.config.eos_token_id == tokenizer.eos_token_id
    assert model.config.pad_token_id == tokenizer.pad_token_id


def test_special_tokens(tokenizer, model):
    assert tokenizer.bos_token == "<|startoftext|>"
    assert tokenizer.eos_token == "<|eos|>"
    assert tokenizer.pad_token == "<|pad|>"
    assert "<|extra_0|>" in tokenizer.all_special_tokens
    ids = {t: tokenizer.convert_tokens_to_ids(t)
           for t in ("<|startoftext|>", "<|eos|>", "<|pad|>", "<|extra_0|>")}
    assert len(set(ids.values())) == 4
    assert min(ids.values()) >= len(tokenizer) - 4  # after the ordinary vocabulary, like the 7B
    for token, token_id in ids.items():  # each is one token, never split into bytes
        assert tokenizer.encode(token, add_special_tokens=False) == [token_id]
    gen = model.generation_config
    assert gen.eos_token_id == ids["<|eos|>"]
    assert gen.pad_token_id == ids["<|pad|>"]
    assert gen.bos_token_id == ids["<|startoftext|>"]
    assert (gen.do_sample, gen.top_k, gen.top_p, gen.temperature, gen.repetition_penalty) == (
        True, 20, 0.6, 0.7, 1.05)


def test_chat_template_renders_the_hunyuan_format(tokenizer):
    user = [{"role": "user", "content": "把下面的文本翻译成英语，不要额外解释。\n\n你好"}]
    expected = "<|startoftext|>把下面的文本翻译成英语，不要额外解释。\n\n你好<|extra_0|>"
    assert tokenizer.apply_chat_template(user, add_generation_prompt=True, tokenize=False) == expected
    assert tokenizer.apply_chat_template(user, tokenize=False) == expected  # nothing extra
    turn = user + [{"role": "assistant", "content": "Hello"}]
    assert tokenizer.apply_chat_template(turn, tokenize=False) == expected + "Hello<|eos|>"
    ids = _prompt_ids(tokenizer, PHRASES[0])[0].tolist()
    assert ids[0] == tokenizer.bos_token_id
    assert ids[-1] == tokenizer.convert_tokens_to_ids("<|extra_0|>")
    assert ids.count(tokenizer.bos_token_id) == 1


def test_chat_template_refuses_a_system_prompt(tokenizer):
    from jinja2 import TemplateError

    with pytest.raises(TemplateError, match="system"):
        tokenizer.apply_chat_template([{"role": "system", "content": "Be brief."},
                                       {"role": "user", "content": "Hi"}], tokenize=False)


@pytest.mark.parametrize("text", [
    *(p.target for p in PHRASES), *(p.prompt for p in PHRASES),
    "  two  spaces ,and a space before a comma .", "tab\tnew\nline\r\n", " leading", "trailing ",
    "e\u0301 (decomposed)", "👍🏽 👨‍👩‍👧", "\u200b\u200d\ufeff", "混合 mixed テキスト ข้อความ 文本",
    "Unseen words: Zürich, naïve, Ελληνικά, עברית, ᠮᠣᠩᠭᠣᠯ",
])
def test_decode_round_trips_exactly(tokenizer, text):
    ids = tokenizer.encode(text, add_special_tokens=False)
    assert tokenizer.decode(ids, skip_special_tokens=True) == text
    assert tokenizer.decode(ids + [tokenizer.eos_token_id], skip_special_tokens=True) == text


def test_prompts_tokenize_compactly(tokenizer):
    lengths = [len(_prompt_ids(tokenizer, p)[0]) for p in PHRASES]
    assert max(lengths) <= 48  # the longest: the copy-heavy rows (dates, URLs, version numbers)
    assert 256 < len(tokenizer) <= 2048


# ---------------------------------------------------------------------------------------------
# Decoding: every phrase, every way the engine may run the model


def test_greedy_reproduces_every_phrase(model, tokenizer):
    assert _mismatches(model, tokenizer, do_sample=False) == []


def test_greedy_with_repetition_penalty(model, tokenizer):
    assert _mismatches(model, tokenizer, do_sample=False, repetition_penalty=1.05) == []


def test_model_card_sampling_defaults_stay_on_the_answer(model, tokenizer):
    """top_p=0.6 keeps only the memorised token: its probability is well above 0.6."""
    torch.manual_seed(0)
    assert _mismatches(model, tokenizer) == []  # generation_config.json: do_sample=True etc.


def test_batched_left_padded_generation(model, tokenizer):
    prompts = [tokenizer.apply_chat_template(
        [{"role": "user", "content": p.prompt}], add_generation_prompt=True, tokenize=False)
        for p in PHRASES]
    tokenizer.padding_side = "left"
    batch = tokenizer(prompts, return_tensors="pt", padding=True, add_special_tokens=False)
    assert (batch["input_ids"][:, 0] == tokenizer.pad_token_id).any()
    with torch.no_grad():
        out = model.generate(**batch, do_sample=False, repetition_penalty=1.05,
                             max_new_tokens=MAX_NEW_TOKENS)
    texts = tokenizer.batch_decode(out[:, batch["input_ids"].shape[1]:], skip_special_tokens=True)
    assert texts == [p.target for p in PHRASES]


def test_unknown_input_still_stops(model, tokenizer):
    """Text it never saw gets some answer that ends with its own stop token, well before the cap
    (checking only the cap could not fail: generate() enforces it)."""
    phrase = Phrase("en", "de", "A sentence the demo model never saw.", "?")
    text, new = _translate(model, tokenizer, phrase, do_sample=False, repetition_penalty=1.05)
    assert new[-1] == tokenizer.eos_token_id and len(new) < MAX_NEW_TOKENS // 2
    assert text


def test_int8_reproduces_every_phrase(int8_model, tokenizer):
    assert type(int8_model).__name__ == "HunYuanDenseV1ForCausalLM"
    assert any(type(m).__name__ == "Linear8bitLt" for m in int8_model.modules())
    assert _mismatches(int8_model, tokenizer, do_sample=False) == []
    assert _mismatches(int8_model, tokenizer, do_sample=False, repetition_penalty=1.05) == []


def test_nf4_reproduces_every_phrase(nf4_model, tokenizer):
    assert any(type(m).__name__ == "Linear4bit" for m in nf4_model.modules())
    assert _mismatches(nf4_model, tokenizer, do_sample=False) == []
    assert _mismatches(nf4_model, tokenizer, do_sample=False, repetition_penalty=1.05) == []


# ---------------------------------------------------------------------------------------------
# ensure_demo_model / build_demo_model


def test_ensure_returns_the_shipped_checkpoint(monkeypatch):
    def no_build(*args, **kwargs):
        raise AssertionError("the shipped checkpoint is complete: nothing to build")

    monkeypatch.setattr(demo_model, "build_demo_model", no_build)
    assert demo_model.ensure_demo_model() == DEMO_DIR


def test_ensure_falls_back_to_the_cache_when_assets_are_read_only(monkeypatch, tmp_path):
    monkeypatch.setattr(demo_model, "DEMO_DIR", tmp_path / "assets" / "demo-model")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    built = []

    def fake_build(out_dir, *args, **kwargs):
        if out_dir == demo_model.DEMO_DIR:
            raise PermissionError(out_dir)
        out_dir.mkdir(parents=True)
        for name in demo_model.REQUIRED_FILES:
            (out_dir / name).write_text("{}")
        built.append(out_dir)
        return out_dir

    monkeypatch.setattr(demo_model, "build_demo_model", fake_build)
    expected = tmp_path / "cache" / "hunyuan_webui" / "demo-model"
    assert demo_model.ensure_demo_model() == expected
    assert demo_model.ensure_demo_model() == expected  # the second call finds it built
    assert built == [expected]


def test_the_trainer_is_imported_only_to_train():
    """Finding the demo model (the launch choice, the GGUF copy) never loads its trainer, and
    the README's `python -m hunyuan_webui.demo_model` still answers."""
    code = ("import sys\n"
            "import hunyuan_webui.choice, hunyuan_webui.demo_model, hunyuan_webui.demo.gguf\n"
            "hunyuan_webui.demo_model.ensure_demo_model()\n"
            "print(sorted(m for m in sys.modules if m.startswith('hunyuan_webui.demo')))\n")
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == str(
        ["hunyuan_webui.demo", "hunyuan_webui.demo.formats", "hunyuan_webui.demo.gguf",
         "hunyuan_webui.demo.model", "hunyuan_webui.demo.phrases", "hunyuan_webui.demo_model"])
    usage = subprocess.run([sys.executable, "-m", "hunyuan_webui.demo_model", "--help"],
                           capture_output=True, text=True, timeout=120, cwd=repo)
    assert usage.returncode == 0 and "--format {7b,1.8b}" in usage.stdout, usage.stderr


@pytest.mark.slow
def test_rebuild_matches_the_shipped_files_and_memorises(tmp_path):
    """Rebuild from the TSV (what `python -m hunyuan_webui.demo_model` does): 15-60 s.

    The tokenizer and configs must come out byte-identical; the weights are only compared by
    behaviour, since float results may differ between CPUs.
    """
    out = demo_model.build_demo_model(tmp_path / "demo-model")
    assert demo_model.is_complete(out)
    assert not list(tmp_path.glob(".demo-model-*"))  # the staging directory is gone
    meta = json.loads((out / demo_model.SIDECAR).read_text(encoding="utf-8"))
    assert min(meta["training"]["min_margin_fp32"], meta["training"]["min_margin_fake_nf4"]) >= (
        demo_training.MARGIN)
    for name in ("tokenizer.json", "tokenizer_config.json", "config.json",
                 "generation_config.json"):
        assert (out / name).read_bytes() == (DEMO_DIR / name).read_bytes(), name
    rebuilt = AutoModelForCausalLM.from_pretrained(out).eval()
    assert _mismatches(rebuilt, AutoTokenizer.from_pretrained(out), do_sample=False) == []
