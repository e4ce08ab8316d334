"""The chat formats the tiny demo models are built in: one row per format, read by demo_model.py.

The transformers engines never write a special token themselves (they call each checkpoint's own
``apply_chat_template``; the llama.cpp ones render :mod:`hunyuan_webui.core.chat`'s table, which a
test holds to these templates), so a demo model of each real chat format is what proves that: the
streaming, stop handling and cache run on the 1.8B models' tokens as on the 7B models'.

* ``7b``: Hunyuan-MT-7B / HY-MT1.5-7B / Hy-MT2-7B. ``<|startoftext|>{user}<|extra_0|>``, then the
  model writes ``{answer}<|eos|>``. No system prompt: the template refuses one.
* ``1.8b``: HY-MT1.5-1.8B / Hy-MT2-1.8B (HY-MT2.md §1.5, from Tencent's ``hy_dense_template.py``).
  ``<｜hy_begin▁of▁sentence｜>`` then an optional ``{system}<｜hy_place▁holder▁no▁3｜>``, each user
  turn ``<｜hy_User｜>{user}``, each assistant turn ``<｜hy_Assistant｜>{answer}`` and the stop token
  ``<｜hy_place▁holder▁no▁2｜>``; the generation prompt is ``<｜hy_Assistant｜>``. The real pad token is
  not recorded anywhere this project trusts, so the demo uses one of its own, ``<｜hy_demo_pad｜>``
  (only ever used to left-pad batches; the real checkpoint's own is read from its tokenizer).

Each format's phrases are prompted in one prompt family: the 7B demo in Hunyuan-MT's wording (as
before), the 1.8B demo in Hy-MT2's, so it also exercises Hy-MT2's default templates.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ChatFormat:
    name: str  # what `demo-model --format` takes
    registry_format: str  # ModelSpec.chat_format
    directory: str  # under assets/
    family: str  # the prompt family its phrases are prompted in
    stands_for: str  # the real models it mimics
    bos: str
    eos: str
    pad: str
    extra: tuple[str, ...]  # the other special tokens, after the ordinary vocabulary
    template: str
    corpus_families: tuple[str, ...]  # prompt families the tokenizer is trained on
    modes: tuple[str, ...]

    @property
    def special_tokens(self) -> tuple[str, ...]:
        return (self.bos, self.eos, self.pad, *self.extra)


# One user message renders as <|startoftext|>{content}<|extra_0|>, an assistant message as
# {content}<|eos|>. The user turn already ends with the answer marker, so add_generation_prompt adds
# nothing. Like Hunyuan-MT there is no system prompt: one is refused rather than silently dropped.
_TEMPLATE_7B = (
    "{%- for message in messages -%}"
    "{%- if loop.first -%}{{ bos_token }}{%- endif -%}"
    "{%- if message['role'] == 'user' -%}{{ message['content'] + '<|extra_0|>' }}"
    "{%- elif message['role'] == 'assistant' -%}{{ message['content'] + eos_token }}"
    "{%- else -%}{{ raise_exception('The Hunyuan-MT chat format has no ' + message['role']"
    " + ' role: send one user message.') }}"
    "{%- endif -%}"
    "{%- endfor -%}"
)

_USER, _ASSISTANT, _SYSTEM_END = "<｜hy_User｜>", "<｜hy_Assistant｜>", "<｜hy_place▁holder▁no▁3｜>"
_TEMPLATE_18B = (
    "{{- bos_token -}}"
    "{%- for message in messages -%}"
    "{%- if message['role'] == 'system' -%}{{ message['content'] + '" + _SYSTEM_END + "' }}"
    "{%- elif message['role'] == 'user' -%}{{ '" + _USER + "' + message['content'] }}"
    "{%- elif message['role'] == 'assistant' -%}"
    "{{ '" + _ASSISTANT + "' + message['content'] + eos_token }}"
    "{%- else -%}{{ raise_exception('No ' + message['role'] + ' role in this chat format.') }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '" + _ASSISTANT + "' }}{%- endif -%}"
)

FORMATS: dict[str, ChatFormat] = {
    f.name: f for f in (
        ChatFormat(name="7b", registry_format="hunyuan-7b", directory="demo-model",
                   family="hunyuan-mt", stands_for="Hunyuan-MT-7B",
                   bos="<|startoftext|>", eos="<|eos|>", pad="<|pad|>", extra=("<|extra_0|>",),
                   template=_TEMPLATE_7B, corpus_families=("hunyuan-mt", "hy-mt1.5"),
                   modes=("translate",)),
        ChatFormat(name="1.8b", registry_format="hy-1.8b", directory="demo-model-1.8b",
                   family="hy-mt2", stands_for="Hy-MT2-1.8B",
                   bos="<｜hy_begin▁of▁sentence｜>", eos="<｜hy_place▁holder▁no▁2｜>",
                   pad="<｜hy_demo_pad｜>", extra=(_USER, _ASSISTANT, _SYSTEM_END),
                   template=_TEMPLATE_18B, corpus_families=("hy-mt2",),
                   modes=("translate", "terminology", "context", "style", "instructions",
                          "structured")),
    )
}
DEFAULT_FORMAT = "7b"


def chat_format(fmt: ChatFormat | str = DEFAULT_FORMAT) -> ChatFormat:
    if isinstance(fmt, ChatFormat):
        return fmt
    if fmt not in FORMATS:
        raise ValueError(f"unknown demo chat format {fmt!r}; known: {', '.join(FORMATS)}")
    return FORMATS[fmt]
