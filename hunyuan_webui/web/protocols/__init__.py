"""The protocols the app speaks, a module each: its schemas, error shape, key rule and routes
together. The JSON API (v1), OpenAI's, DeepL's and LibreTranslate's, the extensions' small JSON
shapes, OpenAI's transcriptions (audio), and the operational routes (ops)."""

from hunyuan_webui.web.protocols import audio, deepl, documents, extensions, libretranslate, ops, v1
from hunyuan_webui.web.protocols import openai as openai_protocol
from hunyuan_webui.web.protocols.protocol import Protocol

# The one list of protocols the app speaks (see :mod:`hunyuan_webui.web.protocols.protocol`).
PROTOCOLS: tuple[Protocol, ...] = (ops.PROTOCOL, v1.PROTOCOL, libretranslate.PROTOCOL,
                                   openai_protocol.PROTOCOL, deepl.PROTOCOL, extensions.PROTOCOL,
                                   documents.PROTOCOL, documents.DEEPL_PROTOCOL, audio.PROTOCOL)
