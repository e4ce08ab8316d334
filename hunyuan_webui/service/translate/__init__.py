"""One translation, from a request to streamed text: the service's core.

:class:`~.translator.Translator` (``translator.py``) validates, detects, segments and plans; a
:class:`~.job.Job` (``job.py``) is one translation in progress, whose strategy (``sentences.py``
or ``paragraphs.py``, over the interface in ``strategy.py``) turns segments into text through the
phrase cache and the table of segments in flight (``inflight.py``). ``backend.py`` is what a job
needs from the translator, and ``request.py`` holds the data types every front end uses. Each
answer is read through the checks of :mod:`hunyuan_webui.service.checks`.
"""
