"""What each kind of server is sent and what its answers mean: one *dialect* per server family.

Sampling fields are not portable, so each server gets its own dialect:

* ``vllm`` (vLLM, SGLang): ``top_k``, ``repetition_penalty`` and ``stop_token_ids`` as extra body
  fields. Greedy is ``temperature: 0`` (both treat it as argmax; the repetition penalty still
  applies, as in the in-process engine).
* ``transformers`` (``transformers serve``): it refuses unknown fields with 422. ``temperature: 0``
  sets ``do_sample=False`` (greedy; the checkpoint's ``do_sample: true`` would otherwise win) and
  ``frequency_penalty`` p becomes ``repetition_penalty`` 1 + p. When the stop ids are known (the
  checkpoint's ``generation_config.json`` at hand, or a known model) a whole ``generation_config``
  JSON goes too, carrying ``do_sample``, ``top_k``, the penalty and ``eos_token_id``: it replaces
  the checkpoint's, and under ``--continuous-batching`` its ``eos_token_id`` is the only stop rule.
  Without it ``top_k`` is the checkpoint's (the model card's 20 for Hunyuan). Continuous batching in
  transformers 5.23 also takes the sampling settings of the *first* request for all later ones and
  drops the repetition penalty.
  A model that may think aloud first (Hy-MT2-30B-A3B) also gets its ``chat_template_kwargs``
  (``reasoning_effort: no_think``).
* ``openai``: standard fields only (``temperature``, ``top_p``, ``seed``).

``auto`` starts with ``vllm`` (kept for good when ``/models`` says vLLM or SGLang) and changes
dialect once, without counting a retry, when the server refuses the extra fields (a 400/422 naming
them): :func:`fallback_dialect` says to which, :class:`DialectChoice` keeps the current one.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

from hunyuan_webui.core import kinds
from hunyuan_webui.core.chat import ChatFormat
from hunyuan_webui.engine.base import DecodingOptions

log = logging.getLogger(__name__)

# The dialects are named after the servers that speak them: vLLM's extra sampling fields, and the
# plain OpenAI API.
VLLM, PLAIN = kinds.VLLM, kinds.OPENAI

DIALECTS = ("auto", VLLM, "transformers", PLAIN)
# /v1/models "owned_by" values of servers that take vLLM-style extra sampling fields.
VLLM_LIKE_OWNERS = frozenset({kinds.VLLM, kinds.SGLANG})
# Words in a 400/422 that mean "these fields are not accepted here" (the extra sampling fields,
# pydantic's extra="forbid", OpenAI's own wording).
REFUSED_FIELD_HINTS = ("top_k", "repetition_penalty", "stop_token_ids", "generation_config",
                       "chat_template_kwargs",
                       "frequency_penalty", "Extra inputs", "extra_forbidden",
                       "Unrecognized request argument")


def request_body(model: str, prompt: str, options: DecodingOptions, max_new_tokens: int,
                 dialect: str, stop_token_ids: Sequence[int] = (),
                 chat_template_kwargs: dict[str, Any] | None = None,
                 prompt_format: ChatFormat | None = None) -> dict[str, Any]:
    """The ``/chat/completions`` body for one prompt in one dialect (see the module docstring);
    with a ``prompt_format`` the ``/completions`` body, the prompt rendered in it here, so that no
    chat template of the server's is applied."""
    rendered = prompt_format.text(prompt) if prompt_format else None
    body: dict[str, Any] = {
        "model": model,
        **({"prompt": rendered} if rendered is not None
           else {"messages": [{"role": "user", "content": prompt}]}),
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": max_new_tokens,  # the OpenAI API's name
    }
    if options.deterministic:
        body["temperature"] = 0.0
    else:
        body["temperature"] = options.temperature
        body["top_p"] = options.top_p
        if options.seed is not None:
            body["seed"] = options.seed
    if dialect == VLLM:
        body["repetition_penalty"] = options.repetition_penalty
        if not options.deterministic:
            body["top_k"] = options.top_k or -1  # vLLM and SGLang spell "no top-k" -1
        if stop_token_ids:
            body["stop_token_ids"] = list(stop_token_ids)
        if chat_template_kwargs and rendered is None:  # Hy-MT2-30B-A3B: {"reasoning_effort": "no_think"}
            body["chat_template_kwargs"] = dict(chat_template_kwargs)
    elif dialect == "transformers":
        # transformers serve reads repetition_penalty = 1 + frequency_penalty.
        body["frequency_penalty"] = round(options.repetition_penalty - 1.0, 6)
        if stop_token_ids:
            # A generation_config replaces the checkpoint's; with continuous batching its
            # eos_token_id is the only stop rule, so it is sent only when the stop ids are known.
            config: dict[str, Any] = {"do_sample": not options.deterministic,
                                      "repetition_penalty": options.repetition_penalty,
                                      "eos_token_id": list(stop_token_ids)}
            if not options.deterministic:
                config.update(temperature=options.temperature, top_p=options.top_p,
                              top_k=options.top_k)
            body["generation_config"] = json.dumps(config)
    return body


def fallback_dialect(dialect: str, detail: str) -> str | None:
    """The dialect to try after a 400/422 whose body is ``detail``; None if it refused no fields.

    ``transformers serve`` answers "Unexpected fields" to vLLM's extras (it takes extras of its
    own); any other complaint about the extra fields leaves the standard ones only."""
    if "Unexpected fields" in detail and dialect == VLLM:
        return "transformers"
    if any(word in detail for word in REFUSED_FIELD_HINTS):
        return PLAIN
    return None


def finish_reason(reason: str | None) -> str:
    """The server's ``finish_reason`` as a :class:`~hunyuan_webui.engine.base.Stream` ending."""
    if reason == "length":
        return "length"
    if reason in ("abort", "cancelled"):
        return "cancelled"
    return "stop"  # "stop", "eos", a stop string, or a server that only sent [DONE]


class DialectChoice:
    """The dialect an engine speaks now: fixed when one was asked for, else settled by ``auto``."""

    def __init__(self, dialect: str) -> None:
        self.name = VLLM if dialect == "auto" else dialect
        self.auto = dialect == "auto"

    def pin_vllm(self) -> None:
        """``/models`` says vLLM or SGLang: known to take the extra fields, no more guessing."""
        if self.auto:
            self.name, self.auto = VLLM, False

    def refused(self, sent: str, detail: str) -> bool:
        """After a 400/422 (body ``detail``) to a request sent in ``sent``: True when the request
        should go again at once, in the dialect that is now current."""
        if not self.auto or sent == PLAIN:
            return False
        new = fallback_dialect(sent, detail)
        if new is None:
            return False
        if self.name == sent:
            self.name = new
            log.warning("the server refused %s-style fields (%s); using the %s dialect", sent,
                        detail[:120], new)
        return True
