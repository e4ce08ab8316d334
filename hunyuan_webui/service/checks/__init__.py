"""The answer checks: is a model's answer a translation, and what of it may be shown yet?

``answers.py`` judges an answer (the wrong language or script, a loop, the source handed back)
and counts what it caught; ``budget.py`` says how long an answer to a source may be;
``watch.py`` reads one segment's streaming answer through them: it holds, stops, retries once
and marks. These are the *answer* checks, switched by ``--guards``; the HTTP guards in front of
the server (keys, limits, bodies) are :mod:`hunyuan_webui.web.guards`. Nothing here knows the
translator: a segment's reader is handed in.
"""
