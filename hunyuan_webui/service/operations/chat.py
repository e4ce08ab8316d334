"""A chat message read as what it asks for: a translation, a tool's batch, or plain generation.

Tools that speak only OpenAI's protocol send their request as a prompt. What the service does
with one, in this order:

1. the last user message is one of the model cards' translation prompts
   (:func:`~hunyuan_webui.prompts.recognize`; the system message may hold the instruction and the
   user message the text), and the text's language can be told: one translation, through the
   front door like any other;
2. it is a known tool's own prompt (Immersive Translate, KISS Translator, PDFMathTranslate,
   BabelDOC, pot, openai-translator, SubtitleEdit; "Translate to X: ..."), or Qwen-MT's
   ``translation_options`` came with it (:mod:`hunyuan_webui.tool_prompts`): one plain text is
   one translation; several items, or tags and placeholders to keep, are the tool's batch
   (:func:`~hunyuan_webui.service.operations.items.translate_items`), given back in its form;
3. anything else is plain generation: the model takes exactly one user message and no system
   prompt, so the conversation is folded into one message (:func:`fold`).

:func:`read_chat` and :func:`read_prompt` (the legacy completions' lone prompt) answer an
:class:`Asked`; the protocol's mapping turns it into its answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from hunyuan_webui import prompts, tool_prompts
from hunyuan_webui.engine import DecodingOptions
from hunyuan_webui.service.door.translator import Translator
from hunyuan_webui.service.operations import items
from hunyuan_webui.service.translate.request import TranslationRequest

SYSTEM_ROLES = ("system", "developer")
ROLE_LABELS = {"user": "User", "assistant": "Assistant", "tool": "Tool", "function": "Tool"}


class Message(Protocol):
    """One message of a conversation: its role and (read when needed) its text."""

    role: str

    def text(self) -> str: ...


@dataclass(frozen=True)
class Asked:
    """What a message asks for: exactly one of a translation, a tool's batch or a prompt to
    generate from."""

    translation: TranslationRequest | None = None
    tool: tool_prompts.ToolRequest | None = None
    prompt: str = ""


def read_chat(translator: Translator, messages: Sequence[Message], options: DecodingOptions,
              tool_options: DecodingOptions,
              translation_options: Mapping[str, Any] | None = None) -> Asked:
    """What a conversation asks for. ``options`` decode a model card's prompt, ``tool_options`` a
    tool's (greedy unless the request set a temperature). Detection and a few regular
    expressions per message: call it off the event loop."""
    last = next((m for m in reversed(messages) if m.role == "user"), None)
    if last is not None:
        wanted = _card_prompt(translator, last, messages, options)
        if wanted is not None:
            return Asked(translation=wanted)
        tool = _tool_prompt(last, messages, translation_options)
        if tool is not None:
            return _for_tool(translator, tool, tool_options)
    return Asked(prompt=fold(messages))


def read_prompt(translator: Translator, prompt: str, options: DecodingOptions,
                tool_options: DecodingOptions,
                translation_options: Mapping[str, Any] | None = None) -> Asked:
    """What a legacy completion's prompt asks for, read like a chat's lone user message (but
    the tools' prompts only when no model card's prompt is found)."""
    found = prompts.recognize(prompt)
    if found is not None and found.text.strip():
        wanted = _translation(translator, found, options)
        if wanted is not None:
            return Asked(translation=wanted)
    tool = (tool_prompts.from_options(prompt, translation_options) if translation_options
            else tool_prompts.recognize(prompt))
    if tool is not None:
        return _for_tool(translator, tool, tool_options)
    return Asked(prompt=prompt)


def _card_prompt(translator: Translator, last: Message, messages: Sequence[Message],
                 options: DecodingOptions) -> TranslationRequest | None:
    """The translation a model card's prompt asks for, or None when it is not one (or its
    text's language cannot be told: then the model answers the prompt itself)."""
    found = prompts.recognize(last.text())
    system = [m.text() for m in messages if m.role in SYSTEM_ROLES]
    if found is None and system:  # the instruction in the system message, the text in the user's
        found = prompts.recognize("\n\n".join([*system, last.text()]))
    if found is None or not found.text.strip():
        return None
    return _translation(translator, found, options)


def _translation(translator: Translator, found: prompts.RecognizedPrompt,
                 options: DecodingOptions) -> TranslationRequest | None:
    detected = translator.detect(found.text).code
    if detected is None:
        return None
    return TranslationRequest(text=found.text, target_lang=found.target, source_lang=detected,
                              options=options, mode="context" if found.context else "translate",
                              glossary=found.glossary, context=found.context)


def _tool_prompt(last: Message, messages: Sequence[Message],
                 translation_options: Mapping[str, Any] | None) -> tool_prompts.ToolRequest | None:
    """The translation a tool's own prompt (or Qwen-MT's ``translation_options``) asks for, or
    None. The system messages count only for a lone user turn (not a conversation)."""
    if translation_options:
        return tool_prompts.from_options(last.text(), translation_options)
    turns = [m for m in messages if m.role not in SYSTEM_ROLES]
    system = [m.text() for m in messages if m.role in SYSTEM_ROLES] if len(turns) == 1 else []
    return tool_prompts.recognize(last.text(), system)


def _for_tool(translator: Translator, tool: tool_prompts.ToolRequest,
              options: DecodingOptions) -> Asked:
    """One plain text streams like any translation; several items (or tags and placeholders to
    keep) are the tool's batch."""
    if tool.form.kind == "text" and not items.has_kept(tool.items[0]):
        return Asked(translation=items.request_for(translator, tool.items[0], tool.target,
                                                   tool.source, options, tool.glossary,
                                                   tool.context))
    return Asked(tool=tool)


def fold(messages: Sequence[Message]) -> str:
    """The conversation as the one user message the model takes: system messages first, then a
    lone user message as it is, or several turns labelled by role."""
    system = [m.text() for m in messages if m.role in SYSTEM_ROLES]
    turns = [m for m in messages if m.role not in SYSTEM_ROLES]
    if len(turns) == 1 and turns[0].role == "user":
        return "\n\n".join([*system, turns[0].text()])
    return "\n\n".join([*system, *(f"{ROLE_LABELS[m.role]}: {m.text()}" for m in turns)])
