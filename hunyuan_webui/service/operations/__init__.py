"""Operations on more than one request's worth of text, built on the translator.

``longtext.py`` translates a text longer than one request may be in parts (cut by
``parts.py``) as one operation; ``items.py`` translates a tool's batch of short texts item for
item, copying what the tool inserted (tags, placeholders), and ``markup.py`` cuts HTML and XML
into what is translated and what is copied; ``filejob.py`` translates a file with progress,
cancel and a result, and ``documents.py`` runs such files in the background for the protocols
that upload, poll and fetch. The page and every protocol share these.
"""
