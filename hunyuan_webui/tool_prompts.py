"""Translation requests other tools write into a chat: their prompts read backwards.

Page, PDF, subtitle and selection translators speak OpenAI's chat protocol with a prompt of their
own. Hy-MT models follow their own templates and little else, so a tool's prompt sent to them as
free text gets explanations, the wrong language or lost paragraph breaks. :func:`recognize` reads
the prompts of the widely used tools (and the general shapes "Translate (from X) to/into Y: ...",
"翻译成英文：..."), and returns what was asked: the target (and source, if named) language, the
items to translate, and the form the tool wants back (:class:`Form`: one text, or a JSON object
of segments, KISS Translator's ``id | text`` lines or ``<root><t>`` XML). The service then
translates the items with the loaded model's own template. Anything not recognised is None, and
stays plain generation.

Where each prompt comes from (the current default texts in each tool's source):

- Immersive Translate: ``systemPrompt``/``prompt``, ``multipleSystemPrompt``/``multiplePrompt``
  and ``subtitlePrompt``: immersive-translate/i18ns, official/i18n/en-US/.../current/prompts.md
  ("Translate to {{to}} (output translation only):\\n\\n{{text}}", "Translate to {{to}}:\\n\\n
  {{text}}" with ``%%`` between paragraphs; "翻译成 {{to}}（仅输出翻译）：" in Chinese).
- KISS Translator: fishjar/kiss-translator src/config/api.js ``defaultNobatchUserPrompt``
  ("Translate the Source Text below to ${to}. ... Source Text: ${text}\\n\\nTranslated Text:") and
  the batch ``defaultSystemPrompt`` / ``defaultSystemPromptXml`` / ``defaultSystemPromptLines``,
  whose user message is ``{"targetLanguage", "segments": [{"id", "text"}], "glossary", ...}``
  (src/apis/trans.js ``genUserPrompt``).
- PDFMathTranslate: Byaidu/PDFMathTranslate pdf2zh/translator.py ``BaseTranslator.prompt``
  ("Translate the following markdown source text to {lang_out}. Keep the formula notation {v*}
  unchanged. ... Source Text: {text}\\n\\nTranslated Text:").
- BabelDOC: funstory-ai/BabelDOC babeldoc/format/pdf/document_il/midend/il_translator.py
  ``PROMPT_TEMPLATE`` ("You are a professional {lang_out} native translator ... Now translate the
  following text:\\n\\n{text}", glossary table included) and babeldoc/translator/translator.py
  ``OpenAITranslator.prompt`` (";; Treat next line as plain text input and translate it into
  {lang_out}, ... Input:\\n\\n{text}").
- openai-translator / Bob: openai-translator/openai-translator src/common/translate.ts and
  src/common/lang/index.ts ("Only reply the result and nothing else. Please translate to
  {name}:\\n\\n{text}", after the role prompt "You are a professional translator.").
- pot: pot-app/pot-desktop src/services/translate/openai/index.jsx ("Translate into $to:\\n\\"\\"\\"
  \\n$text\\n\\"\\"\\"").
- SubtitleEdit: SubtitleEdit/subtitleedit src/libse/Settings/ToolsSettings.cs ``ChatGptPrompt``
  ("Translate from {0} to {1}, keep punctuation as input, keep line breaks exactly the same, ...
  give only the output without comments:" then two line breaks and the text).
- Qwen-MT's convention (the user message is the text, ``translation_options`` says the rest) is
  read from the request body by the route: :func:`from_options`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from hunyuan_webui import languages

_S = regex.S
_LANG = r"(?P<to>[^\n:：,，]{1,40}?)"
_FROM = r"(?P<from>[^\n:：,，]{1,40}?)"

# One user message holding instruction and text, whole (fullmatch), most specific first.
TEMPLATES: tuple[tuple[str, regex.Pattern[str]], ...] = tuple(
    (name, regex.compile(pattern, _S | regex.I if name.startswith("general") else _S))
    for name, pattern in (
        ("kiss", r"\s*#\s*Context\b.*?\n\s*Translate the Source Text below to " + _LANG
         + r"\.\s*\n.*?\nSource Text: (?P<text>.*?)\n+Translated Text:\s*"),
        ("source-text", r"(?:.*?)\bTranslate the following (?:[\w-]+ )?(?:source )?text (?:in"
         r"|to) " + _LANG + r"[.,].*?\n\s*Source Text:\s?(?P<text>.*?)\n+Translated Text:\s*"),
        ("babeldoc", r"\s*You are a professional " + _LANG + r" native translator\b.*?"
         r"\n\s*Now translate the following text:\n\n(?P<text>.*?)\s*"),
        ("babeldoc-plain", r"\s*;; Treat next line as plain text input and translate it into "
         + _LANG + r", output translation ONLY\..*?Input:\n\n(?P<text>.*?)\s*"),
        ("openai-translator", r"(?:.*?\n\n)?(?:\(Requirements: [^\n]*\) )?Only reply the result "
         r"and nothing else\. Please translate to " + _LANG + r":\n\n(?P<text>.*?)\s*"),
        ("pot", r"\s*Translate into " + _LANG + r':\n"""\n(?P<text>.*?)\n"""\s*'),
        ("immersive", r"\s*Translate to " + _LANG + r"(?: \(output translation only\))?:"
         r"\n\n(?P<text>.*?)\s*"),
        ("immersive-zh", r"\s*翻译成\s?" + _LANG + r"(?:（仅输出翻译）)?：\n\n(?P<text>.*?)\s*"),
        ("subtitleedit", r"\s*Translate from " + _FROM + r" to " + _LANG + r", keep punctuation"
         r" as input\b[^\n]*:\n\n(?P<text>.*?)\s*"),
        ("general", r"\s*(?:please\s+)?translate\s+(?:(?:the\s+)?(?:following|this|below)\s+"
         r"(?:[\w-]+\s+){0,2}?(?:text|sentences?|paragraphs?|segments?|content|words?|"
         r"phrases?|array|list|object|strings?|items?|data)\s+)?"
         r"(?:from\s+" + _FROM + r"\s+)?(?:to|into)\s+" + _LANG
         + r"\s*(?:[.,;][^\n]*)?(?:[:：]|\n)\s*(?P<text>.*?)\s*"),
        ("general-zh", r"\s*(?:请)?(?:把|将)?(?:下面|以下|这段|这句)?的?(?:文本|内容|文字|句子|"
         r"段落|话)?(?:从" + _FROM + r")?翻译(?:成|为|到)" + r"(?P<to>[^\s:：,，。]{1,12}?)"
         r"(?:\s*[:：,，。]|\s*\n)\s*(?P<text>.*?)\s*"),
    ))
# An instruction in the system message alone; the user message is then the text.
SYSTEM_INSTRUCTIONS = (
    regex.compile(r"\btranslat\w*\b[^.\n]{0,80}?\b(?:from\s+" + _FROM + r"\s+)?(?:to|into)\s+"
                  r"(?P<to>[A-Z][\w()-]*(?: [A-Z][\w()-]*)?)", _S | regex.I),
    regex.compile(r"(?:从(?P<from>[^\s，,。]{1,12}?))?翻译(?:成|为)(?P<to>[^\s，,。：:]{1,12}?)"
                  r"(?=[\s，,。：:]|$)", _S),
)
# Names tools use that the language table does not hold.
EXTRA_NAMES = {"brazilian portuguese": "pt", "european portuguese": "pt", "american english": "en",
               "british english": "en", "english (us)": "en", "english (uk)": "en",
               "classical chinese": "zh", "chinese": "zh"}


def language(name: str | None) -> str | None:
    """Our code for a language name or code as a tool writes it ("English", "简体中文",
    "中文(简体)", "英文", "zh-CN", "Simplified Chinese"), or None."""
    if not name:
        return None
    name = name.strip().strip(".。\"'`“”").strip()
    code = languages.by_name(name) or EXTRA_NAMES.get(name.casefold())
    if code is None:
        code = languages.by_name(name.replace("(", "（").replace(")", "）"))
    if code is None and name.endswith("文") and len(name) > 1:  # 英文 = 英语, 日文 = 日语
        code = languages.by_name(name[:-1] + "语")
    return code


# -- what comes back ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Form:
    """How the translations of the items are given back: ``text`` (the one item as it is),
    ``json`` (the JSON the tool sent, every string translated), ``kiss-json``, ``kiss-lines``
    or ``kiss-xml`` (KISS Translator's batch answers)."""

    kind: str = "text"
    data: Any = None  # the parsed JSON (json) or the segment ids (kiss-*)

    def render(self, texts: Sequence[str], sources: Sequence[str]) -> str:
        if self.kind == "text":
            return texts[0]
        if self.kind == "json":
            return json.dumps(_fill(self.data, iter(texts)), ensure_ascii=False)
        ids = self.data
        if self.kind == "kiss-lines":
            return "\n".join(f"{i} | " + t.replace("\n", "<br>") for i, t in zip(ids, texts))
        if self.kind == "kiss-xml":
            body = "".join(f'\n    <t id="{_attr(i)}" sourceLanguage="{s}">{t}</t>'
                           for i, t, s in zip(ids, texts, sources))
            return f"<root>{body}\n</root>"
        return json.dumps({"translations": [
            {"id": i, "text": t, "sourceLanguage": s} for i, t, s in zip(ids, texts, sources)]},
            ensure_ascii=False)


def _attr(value: object) -> str:
    return str(value).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def _strings(value: Any) -> list[str]:
    """The string values of a JSON value, depth first (keys are not translated)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def _fill(value: Any, texts: Any) -> Any:
    if isinstance(value, str):
        return next(texts)
    if isinstance(value, list):
        return [_fill(v, texts) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, texts) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class ToolRequest:
    """A translation a tool asked for in a chat."""

    tool: str
    target: str
    items: tuple[str, ...]
    source: str = languages.AUTO
    form: Form = field(default_factory=Form)
    glossary: tuple[tuple[str, str], ...] = ()
    context: str = ""

    @property
    def chars(self) -> int:
        return sum(len(t) for t in self.items)


# -- recognising ----------------------------------------------------------------------------------
def recognize(user: str, system: Sequence[str] = ()) -> ToolRequest | None:
    """The translation a tool's prompt asks for (``user``: the last user message, ``system``: the
    system messages), or None when it is not one this module knows."""
    found = _kiss_batch(user, "\n".join(system))
    if found is not None:
        return found
    for name, pattern in TEMPLATES:
        match = pattern.fullmatch(user)
        if match is None:
            continue
        target = language(match["to"])
        if target is None or not match["text"].strip():
            continue
        source = language(match.groupdict().get("from")) or languages.AUTO
        glossary = _babeldoc_glossary(user) if name == "babeldoc" else ()
        return _request(name, match["text"], target, source, user, glossary)
    for text in system:
        for pattern in SYSTEM_INSTRUCTIONS:
            match = pattern.search(text)
            target = language(match["to"]) if match else None
            if match and target and user.strip():
                source = language(match["from"]) or languages.AUTO
                return _request("system", user, target, source, text)
    return None


def _request(tool: str, text: str, target: str, source: str, instruction: str,
             glossary: tuple[tuple[str, str], ...] = ()) -> ToolRequest:
    """One text, or the strings of a JSON array or object when the instruction asks for JSON."""
    if "json" in instruction.casefold() and text.strip()[:1] in ("[", "{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, list | dict) and _strings(data):
            return ToolRequest(tool, target, tuple(_strings(data)), source, Form("json", data),
                               glossary)
    return ToolRequest(tool, target, (text,), source, glossary=glossary)


def _kiss_batch(user: str, system: str) -> ToolRequest | None:
    """KISS Translator's batch request: a JSON object of segments, answered as JSON, lines or
    XML as its system prompt says."""
    if not user.lstrip().startswith("{") or "segments" not in user:
        return None
    try:
        data = json.loads(user)
    except ValueError:
        return None
    segments = data.get("segments") if isinstance(data, dict) else None
    target = language(data.get("targetLanguage")) if isinstance(segments, list) else None
    if not target or not segments or not all(
            isinstance(s, dict) and isinstance(s.get("text"), str) for s in segments):
        return None
    kind = ("kiss-lines" if '"ID | Text"' in system else
            "kiss-xml" if "<root>" in system else "kiss-json")
    glossary = data.get("glossary") if isinstance(data.get("glossary"), dict) else {}
    terms = tuple((str(k), str(v) or str(k)) for k, v in glossary.items() if str(k).strip())
    context = "\n".join(str(data[k]) for k in ("title", "description")
                        if isinstance(data.get(k), str) and data[k].strip())
    return ToolRequest("kiss-batch", target, tuple(s["text"] for s in segments),
                       form=Form(kind, [s.get("id", i) for i, s in enumerate(segments)]),
                       glossary=terms, context=context)


_TABLE_ROW = regex.compile(r"^\|\s*(?P<s>[^|\n]+?)\s*\|\s*(?P<t>[^|\n]+?)\s*\|\s*$", regex.M)


def _babeldoc_glossary(prompt: str) -> tuple[tuple[str, str], ...]:
    """BabelDOC's glossary tables (``| Source Term | Target Term |`` rows)."""
    head, _, _ = prompt.partition("Now translate the following text:")
    rows = [(m["s"], m["t"]) for m in _TABLE_ROW.finditer(head)]
    return tuple(r for r in rows if r != ("Source Term", "Target Term")
                 and not set(r[0]) <= set("-: "))


def from_options(text: str, options: Mapping[str, Any]) -> ToolRequest | None:
    """Qwen-MT's convention: the user message is the text; ``translation_options`` carries
    ``source_lang``, ``target_lang`` (names or codes), ``terms`` ([{source, target}]) and
    ``domains`` (a description of the field, used as context)."""
    target = language(str(options.get("target_lang") or ""))
    if target is None or not text.strip():
        return None
    given = str(options.get("source_lang") or "auto")
    source = languages.AUTO if given.strip().lower() == "auto" else language(given)
    terms = options.get("terms") if isinstance(options.get("terms"), list) else []
    glossary = tuple((str(t["source"]), str(t["target"])) for t in terms
                     if isinstance(t, dict) and t.get("source") and t.get("target"))
    domains = options.get("domains")
    return ToolRequest("qwen-mt", target, (text,), source or languages.AUTO, glossary=glossary,
                       context=domains if isinstance(domains, str) else "")

