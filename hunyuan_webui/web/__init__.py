"""The web layer: thin HTTP and page front ends over the service.

``api.py`` (the JSON API, LibreTranslate's routes and the operational ones), ``openai.py`` and
``deepl.py`` (those protocols' routes), ``ui.py`` (the Gradio page), and what guards them all:
``access.py`` (who may use what, and their limits), ``gatekeeper.py`` (that policy as ASGI
middleware, with files kept to their visitors: ``visitor_files.py``), ``security.py`` (CORS,
headers, body limits, sign-in throttling) and ``metrics.py``. Nothing below this package imports
from it.
"""
