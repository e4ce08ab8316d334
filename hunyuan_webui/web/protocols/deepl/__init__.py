"""DeepL's API, spoken by the translator: ``POST /v2/translate``, ``GET|POST /v2/languages`` and
``GET|POST /v2/usage``, so that DeepL clients (the ``deepl`` library, PDF and subtitle tools with a
custom server URL) work unchanged; its document API is :mod:`hunyuan_webui.web.protocols.documents`.

DeepL's language codes map onto ours (``EN-US``/``EN-GB`` -> en, ``PT-BR``/``PT-PT`` -> pt,
``ZH``/``ZH-HANS`` -> zh, ``ZH-HANT`` -> zh-Hant, the rest by code); ``tag_handling=html|xml``
works on every model (every tag kept, the text between translated; ``ignore_tags`` honoured; the
formatted prompt first where the model has one); ``context`` becomes the context mode. Errors
are DeepL's: ``{"message": ...}`` with its status codes (403 for a bad key, 456 for a spent
character allowance, 429 for too many requests). ``schemas.py`` holds the parameters and the
error shape, ``mapping.py`` the way onto the service's front door, ``routes.py`` the routes.
"""
