"""The service's front door: one call for every front end, and the operation it hands back.

``translator.py`` holds :class:`~hunyuan_webui.service.door.translator.Translator`, whose
:meth:`~hunyuan_webui.service.door.translator.Translator.translate_texts` plans, validates and
starts texts of any accepted length; ``operation.py`` the
:class:`~hunyuan_webui.service.door.operation.Operation` it returns (updates as they come, the
results, cancel); ``longtext.py`` one text of it, in parts when long, and ``parts.py`` where a
long text is cut. It sits on one translation (:mod:`hunyuan_webui.service.translate`) and under
everything that translates: the operations on items, markup and files, and the rooms.
"""
