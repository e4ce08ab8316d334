"""Training a demo model: its tokenizer, its toy-width shape and the training loop that makes
every memorised answer win by a margin, in full precision and through fake NF4 weights.

:mod:`hunyuan_webui.demo_model` builds, ships and finds the checkpoints; this module is what it
runs to make one (see that module's docstring for why the answers are robust).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hunyuan_webui import languages, prompts
from hunyuan_webui.demo.formats import DEFAULT_FORMAT, ChatFormat, chat_format
from hunyuan_webui.demo.phrases import Phrase

if TYPE_CHECKING:  # pragma: no cover
    import torch
    from transformers import PreTrainedTokenizerFast

# Model shape: the real layer types at toy width. Rope settings follow the Hunyuan-7B checkpoints
# (NTK alpha scaling, which the config calls "dynamic" with a fixed alpha).
BPE_VOCAB = 768  # byte alphabet + merges; the special tokens come after
HIDDEN = 128
LAYERS = 2
HEADS = 4
KV_HEADS = 2
INTERMEDIATE = 4 * HIDDEN
MAX_POSITIONS = 4096

# The model card's decoding defaults (Hunyuan-MT-7B generation_config.json).
GENERATION_DEFAULTS = {"do_sample": True, "top_k": 20, "top_p": 0.6, "temperature": 0.7,
                       "repetition_penalty": 1.05}

# Training. Training stops once every answer token beats the runner-up logit by MARGIN even after
# a repetition penalty of PENALTY has been charged to it alone (the engine applies 1.05 even when
# greedy), both in full precision and through fake NF4 weights. A margin of 7 also keeps the model
# card's sampling defaults (temperature 0.7, top_p 0.6) on the memorised answer.
LEARNING_RATE = 1e-2
MIN_STEPS = 50
MAX_STEPS = 2000
CHECK_EVERY = 25
MARGIN = 7.0
PENALTY = 1.1
NF4_BLOCK = 64
NF4_CODE = (  # bitsandbytes' NormalFloat4 code book
    -1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0,
)


def tokenizer_corpus(phrases: Sequence[Phrase],
                     fmt: ChatFormat | str = DEFAULT_FORMAT) -> list[str]:
    """What the BPE is trained on: the phrases, their prompts and every prompt wording x language."""
    fmt = chat_format(fmt)
    corpus: list[str] = []
    for p in phrases:
        corpus += [p.prompt_in(fmt.family), p.source, p.target]
    families = [prompts.family(name).templates["translate"].text for name in fmt.corpus_families]
    english = list(dict.fromkeys(t["en"] for t in families))  # the same wording once
    for lang in languages.LANGUAGES:
        for texts in families:
            corpus.append(prompts.fill(texts["zh"], {"target_language": lang.chinese,
                                                     "source_text": ""}))
        for text in english:
            corpus.append(prompts.fill(text, {"target_language": lang.english, "source_text": ""}))
        corpus.append(lang.autonym)
    return corpus


def build_tokenizer(phrases: Sequence[Phrase],
                    fmt: ChatFormat | str = DEFAULT_FORMAT) -> PreTrainedTokenizerFast:
    """A byte-level BPE with a chat format's special tokens and chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=BPE_VOCAB, min_frequency=2, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet())  # any byte can be encoded
    fmt = chat_format(fmt)
    tok.train_from_iterator(tokenizer_corpus(phrases, fmt), trainer)
    # Like the real tokenizer, the special tokens sit after the ordinary vocabulary.
    tok.add_special_tokens(list(fmt.special_tokens))
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token=fmt.bos, eos_token=fmt.eos, pad_token=fmt.pad,
        extra_special_tokens=list(fmt.extra),
        chat_template=fmt.template,
        clean_up_tokenization_spaces=False,
        model_max_length=MAX_POSITIONS,
        padding_side="left",
    )


def model_config(tokenizer: PreTrainedTokenizerFast) -> Any:
    from transformers import HunYuanDenseV1Config

    eos = tokenizer.eos_token_id
    return HunYuanDenseV1Config(
        vocab_size=len(tokenizer),
        hidden_size=HIDDEN,
        intermediate_size=INTERMEDIATE,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        num_key_value_heads=KV_HEADS,
        head_dim=HIDDEN // HEADS,
        hidden_act="silu",
        max_position_embeddings=MAX_POSITIONS,
        initializer_range=0.02,
        rms_norm_eps=1e-5,
        rope_parameters={"rope_type": "dynamic", "rope_theta": 10000.0, "alpha": 1000.0,
                         "factor": 1.0},
        attention_bias=False,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=eos,
        eod_token_id=eos,
        pad_token_id=tokenizer.pad_token_id,
        use_cache=True,
    )


def encode_examples(tokenizer: PreTrainedTokenizerFast, phrases: Sequence[Phrase],
                    family: str = "hunyuan-mt") -> list[tuple[list[int], int]]:
    """Each phrase as (token ids of prompt + answer + eos, length of the prompt part)."""
    examples = []
    for p in phrases:
        user = [{"role": "user", "content": p.prompt_in(family)}]
        prompt_ids = _ids(tokenizer.apply_chat_template(user, add_generation_prompt=True,
                                                        tokenize=True))
        full_ids = _ids(tokenizer.apply_chat_template(
            user + [{"role": "assistant", "content": p.target}], tokenize=True))
        answer_ids = tokenizer.encode(p.target, add_special_tokens=False)
        if full_ids != prompt_ids + answer_ids + [tokenizer.eos_token_id]:
            raise AssertionError(f"chat template does not split cleanly for {p}")
        if tokenizer.decode(answer_ids, skip_special_tokens=True) != p.target:
            raise AssertionError(f"tokenizer does not round-trip {p.target!r}")
        examples.append((full_ids, len(prompt_ids)))
    return examples


def _ids(rendered: Any) -> list[int]:
    """apply_chat_template(tokenize=True) returns a list or a BatchEncoding depending on version."""
    if isinstance(rendered, list):
        return list(rendered)
    return list(rendered["input_ids"])


def train_model(tokenizer: PreTrainedTokenizerFast, phrases: Sequence[Phrase], seed: int = 0,
                verbose: bool = False, family: str = "hunyuan-mt") -> tuple[Any, dict[str, Any]]:
    """Memorise the phrases; returns the model (eval mode, fp32) and training statistics."""
    import torch
    from torch.func import functional_call
    from transformers import GenerationConfig, HunYuanDenseV1ForCausalLM

    started = time.perf_counter()
    torch.manual_seed(seed)
    config = model_config(tokenizer)
    model = HunYuanDenseV1ForCausalLM(config).float()
    model.generation_config = GenerationConfig(
        bos_token_id=config.bos_token_id, eos_token_id=config.eos_token_id,
        pad_token_id=config.pad_token_id, max_new_tokens=2048, **GENERATION_DEFAULTS)

    input_ids, attention, target = _training_batch(tokenizer, phrases, family,
                                                   config.pad_token_id)
    answer_mask = target != -100

    quantized = [name for name, module in model.named_modules()
                 if isinstance(module, torch.nn.Linear) and not name.endswith("lm_head")]
    params = dict(model.named_parameters())
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, weight_decay=0.0,
                                  betas=(0.9, 0.98))

    def logits_of(fake_nf4: bool) -> torch.Tensor:
        if fake_nf4:
            swapped = {f"{name}.weight": _fake_nf4(params[f"{name}.weight"])
                       for name in quantized}
            out = functional_call(model, swapped, (), {"input_ids": input_ids,
                                                       "attention_mask": attention})
        else:
            out = model(input_ids=input_ids, attention_mask=attention)
        return out.logits[:, :-1].float()

    model.train()
    step, margins = _fit(model, optimizer, logits_of, target,
                         lambda logits: _min_margin(logits, target, answer_mask), verbose)
    model.eval()
    # No wall-clock time in here: the sidecar must be byte-identical when rebuilt.
    stats = {"steps": step, "min_margin_fp32": round(margins[0], 2),
             "min_margin_fake_nf4": round(margins[1], 2)}
    if min(margins) < 0:
        raise RuntimeError(f"the demo model failed to memorise its phrases: {stats}")
    if verbose:
        print(f"trained in {time.perf_counter() - started:.1f}s: {stats}", file=sys.stderr)
    return model, stats


def _fit(model: Any, optimizer: Any, logits_of: Any, target: Any, min_margin: Any,
         verbose: bool) -> tuple[int, tuple[float, float]]:
    """Train until every answer token leads by MARGIN in fp32 and in fake NF4 (checked every
    CHECK_EVERY steps from MIN_STEPS on), or MAX_STEPS; the steps taken and the last margins."""
    import torch

    step, margins = 0, (float("-inf"), float("-inf"))
    while step < MAX_STEPS:
        step += 1
        lr = LEARNING_RATE * min(1.0, step / 25)  # short warm-up, then constant
        for group in optimizer.param_groups:
            group["lr"] = lr
        logits = logits_of(fake_nf4=step % 2 == 0)
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.size(-1)), target.reshape(-1), ignore_index=-100)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step >= MIN_STEPS and step % CHECK_EVERY == 0:
            with torch.no_grad():
                margins = (min_margin(logits_of(False)), min_margin(logits_of(True)))
            if verbose:
                print(f"step {step} loss {loss.item():.4f} margin fp32 {margins[0]:.2f} "
                      f"nf4 {margins[1]:.2f}", file=sys.stderr)
            if min(margins) >= MARGIN:
                break
    return step, margins


def _training_batch(tokenizer: PreTrainedTokenizerFast, phrases: Sequence[Phrase], family: str,
                    pad: int) -> tuple[Any, Any, Any]:
    """Right-padded input ids, attention mask and targets (the next token; -100 outside the
    answers, so the loss is on the answer tokens only)."""
    import torch

    examples = encode_examples(tokenizer, phrases, family)
    width = max(len(ids) for ids, _ in examples)
    input_ids = torch.full((len(examples), width), pad, dtype=torch.long)
    attention = torch.zeros_like(input_ids)
    labels = torch.full_like(input_ids, -100)
    for row, (ids, n_prompt) in enumerate(examples):  # right padding: positions start at 0
        input_ids[row, :len(ids)] = torch.tensor(ids)
        attention[row, :len(ids)] = 1
        labels[row, n_prompt:len(ids)] = input_ids[row, n_prompt:len(ids)]
    return input_ids, attention, labels[:, 1:]  # logits at position t predict token t+1


def _min_margin(logits: Any, target: Any, answer_mask: Any) -> float:
    """The smallest lead of an answer token's logit (after the repetition penalty) over the best
    other token: positive everywhere means greedy decoding reproduces every answer."""
    import torch

    gold = logits.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    gold = torch.where(gold > 0, gold / PENALTY, gold * PENALTY)
    rival = logits.scatter(-1, target.clamp(min=0).unsqueeze(-1), float("-inf")).amax(-1)
    return float((gold - rival)[answer_mask].min())


def _fake_nf4(weight: torch.Tensor) -> torch.Tensor:
    """Round to bitsandbytes NF4 (absmax per block of 64, row-major); straight-through gradient."""
    import torch

    code = torch.tensor(NF4_CODE, dtype=weight.dtype)
    flat = weight.detach().reshape(-1)
    n = flat.numel()
    flat = torch.nn.functional.pad(flat, (0, -n % NF4_BLOCK)).reshape(-1, NF4_BLOCK)
    scale = flat.abs().amax(dim=1, keepdim=True).clamp(min=1e-12)
    index = (flat / scale).unsqueeze(-1).sub(code).abs().argmin(-1)
    rounded = (code[index] * scale).reshape(-1)[:n].reshape(weight.shape)
    return weight + (rounded - weight).detach()
