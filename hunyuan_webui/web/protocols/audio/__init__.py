"""OpenAI's transcription route, spoken by the recogniser: ``POST /v1/audio/transcriptions``.

A multipart form as OpenAI takes it (``file``, ``model``, ``language``, ``prompt``,
``response_format``: ``json``, ``text``, ``srt``, ``vtt`` or ``verbose_json``; ``temperature``),
so that the ``openai`` client's ``audio.transcriptions.create`` works unchanged, and so that
another of these apps (``--asr-endpoint``) or anything written for OpenAI can use this one's
recogniser. Under the same keys, per-minute limits and access policy as the other API routes (the
Gatekeeper applies them: the route is in the API's kind), with the recognised characters charged
to the key's daily quota. The file is read into memory (never written to disk), bounded by
``--max-audio-bytes`` (413); what cannot be read as sound is a 415. Errors in OpenAI's shape.
``schemas.py`` holds the form's formats and the error shape (OpenAI's), ``mapping.py`` the way
onto the recogniser's transcript and back, ``routes.py`` the route.
"""
