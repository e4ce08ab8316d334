"""The JSON API: ``POST /v1/translate`` (JSON, or Server-Sent Events with ``"stream": true``),
``POST /v1/detect`` and ``GET /v1/languages``.

Texts go through the service's front door (:meth:`~hunyuan_webui.service.Translator.translate_texts`)
as the page's do: up to ten times ``--max-input-chars`` each, in parts when longer than one
request may be. ``schemas.py`` holds the bodies and the error shape, ``mapping.py`` the way onto
the front door and back, ``routes.py`` the routes.
"""
