"""The web layer: thin HTTP and page front ends over the service.

Its parts, lowest first (``scripts/check_structure.py`` keeps the order: a part imports only the
parts below it, never a peer): ``bodies.py`` (the one body reader) and ``fonts.py`` (the fonts the
server lends); ``responses.py`` (error and streaming responses); :mod:`~hunyuan_webui.web.guards`
around every route (who may use what and their limits, files kept to their visitors, sizes,
deadlines, headers, metrics); ``deps.py`` (what a route reads from a request); then the front ends,
peers that know nothing of each other: :mod:`~hunyuan_webui.web.page` (the Gradio page),
:mod:`~hunyuan_webui.web.protocols` (the JSON API, OpenAI, DeepL, LibreTranslate, the extensions'
routes) and :mod:`~hunyuan_webui.web.classroom` (the class pages); last ``api.py``, which assembles
the app. Nothing below this package imports from it.
"""
