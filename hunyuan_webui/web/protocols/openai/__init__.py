"""OpenAI's chat completions, spoken by the translator: ``POST /v1/chat/completions`` (streaming and
not), the legacy ``POST /v1/completions`` and ``GET /v1/models``.

Page, PDF and subtitle translators often speak only this protocol, with a custom endpoint and a
prompt the user writes. A request whose last user message is one of the model cards' translation
prompts (the tool's system message may hold the instruction and the user message the text) goes
through the service's front door: sentence segments, the phrase cache, in-flight sharing, the
same streamed-text guarantees, and an extra ``translation`` object in the answer that says what
was done and whether it came from the cache. So does a known tool's own prompt (Immersive
Translate, KISS Translator, PDFMathTranslate, BabelDOC, pot, openai-translator, SubtitleEdit;
"Translate to X: ..."; Qwen-MT's ``translation_options``), answered in the form the tool asked
for. Anything else is plain generation through the model's chat template, within the same limits
and batches (:mod:`hunyuan_webui.service.operations.chat` reads what a message asks for).

``schemas.py`` holds the requests, the answers' shapes and OpenAI's error shape; ``mapping.py``
the way onto the service and back; ``routes.py`` the routes.
"""
