"""The small JSON shapes browser extensions speak, each on its own path, each answered in its
documented shape; the texts of one request are translated together, in order
(:func:`hunyuan_webui.service.operations.items.translate_items`: tags and placeholders kept, the cache used).

- ``POST /imme``: Immersive Translate's custom API (its docs, immersive-translate/i18ns
  official/i18n/*/services/custom.md): ``{source_lang, target_lang, text_list}`` ->
  ``{"translations": [{"detected_source_lang", "text"}]}``.
- ``POST /kiss``: KISS Translator's custom API (fishjar/kiss-translator custom-api_v2.md,
  src/apis/trans.js ``genCustom``): ``{text, from, to}`` -> ``{"text", "src"}``, or
  ``{texts, from, to}`` -> ``[{"text", "src"}]``.
- ``POST /deeplx``: DeepLX's free endpoint (OwO-Network/DeepLX service/service.go):
  ``{text, source_lang, target_lang}`` -> ``{code, id, data, alternatives, source_lang,
  target_lang, method}``; errors as ``{code, message}``.
- ``POST /hcfy``: 划词翻译's custom translator (its shape as DeepLX-style servers implement it):
  ``{name, text, destination: [target, fallback], source?}`` with Chinese language names
  (``中文(简体)``, ``英语``...) -> ``{text, from, to, result: [translation]}``; the fallback target
  is used when the text is already in the first one.

Extensions often cannot set headers: besides ``Authorization: Bearer``, these paths take the key
as a ``token`` query parameter (as DeepLX does). The request log never records query strings.
``schemas.py`` holds the bodies and the error shape, ``mapping.py`` the way onto the service,
``routes.py`` the routes.
"""
