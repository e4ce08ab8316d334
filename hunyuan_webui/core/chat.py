"""The chat formats of the Hunyuan translation models, as this project knows them (HY-MT2.md §1.5),
for the engines that must not trust a checkpoint's own chat template: a GGUF file carries a Jinja
template written by whoever converted it, and a wrong one (a dropped turn marker, a template for
another model) turns answers into garbage with no end-of-sequence. llama.cpp and llama-server
prompts are rendered from this table and stop on its stop tokens, looked up *by id* in the file's
vocabulary; the transformers engines keep ``apply_chat_template``, which reads Tencent's own
template.

One user message, no system prompt (the prompts of every family are user messages, see
:mod:`hunyuan_webui.prompts`), ready for the answer: ``bos``, ``user_prefix``, the message,
``answer_prefix``. Keyed by :attr:`~hunyuan_webui.core.spec.ModelSpec.chat_format`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatFormat:
    name: str  # ModelSpec.chat_format
    bos: str
    user_prefix: str  # special token before the message ("" when none)
    answer_prefix: str  # special token after it: where the model's answer begins
    stops: tuple[str, ...]  # the tokens that end the answer

    def pieces(self, message: str) -> list[tuple[str, bool]]:
        """The prompt as (text, is_special_token) pieces. Special tokens are looked up by id, the
        message is tokenized as plain text (a user's ``<|eos|>`` stays text)."""
        specials = [(self.bos, True)]
        if self.user_prefix:
            specials.append((self.user_prefix, True))
        return [*specials, (message, False), (self.answer_prefix, True)]

    def text(self, message: str) -> str:
        """The prompt written out, for servers that read special tokens in the prompt text."""
        return "".join(text for text, _ in self.pieces(message))

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((self.bos, *([self.user_prefix] if self.user_prefix else []),
                                    self.answer_prefix, *self.stops)))


_HY_BOS, _HY_USER, _HY_ASSISTANT = ("<｜hy_begin▁of▁sentence｜>", "<｜hy_User｜>",
                                    "<｜hy_Assistant｜>")
CHAT_FORMATS: dict[str, ChatFormat] = {f.name: f for f in (
    # Hunyuan-MT-7B, HY-MT1.5-7B, Hy-MT2-7B: <|startoftext|>{user}<|extra_0|> ... {answer}<|eos|>
    ChatFormat("hunyuan-7b", "<|startoftext|>", "", "<|extra_0|>", ("<|eos|>",)),
    # HY-MT1.5-1.8B, Hy-MT2-1.8B
    ChatFormat("hy-1.8b", _HY_BOS, _HY_USER, _HY_ASSISTANT, ("<｜hy_place▁holder▁no▁2｜>",)),
    # Hy-MT2-30B-A3B (its <think> block, if any, is removed from the stream by the engine)
    ChatFormat("hy-v3", _HY_BOS, _HY_USER, _HY_ASSISTANT, ("<｜hy_eos｜>",)),
)}


def chat_format(name: str) -> ChatFormat:
    try:
        return CHAT_FORMATS[name]
    except KeyError:
        raise ValueError(f"unknown chat format {name!r}; known: {', '.join(CHAT_FORMATS)}") \
            from None
