"""The translation service: requests in, streamed translations out, over any engine.

:class:`Translator` (``translator.py``) validates, detects, segments and plans; a :class:`Job`
(``job.py``) is one translation in progress, whose strategy (``sentences.py`` or
``paragraphs.py``) turns segments into text through the phrase cache and the table of segments in
flight (``inflight.py``). ``request.py`` holds the data types every front end uses. A text
longer than one request may be is translated in parts (``longtext.py``, cut by ``parts.py``), and
a file with progress and cancel (``filejob.py``): the page and the protocols share both.
"""

from hunyuan_webui.service.filejob import FileJob, FileProgress
from hunyuan_webui.service.job import Job, batched_updates
from hunyuan_webui.service.longtext import LongText, PartUpdate
from hunyuan_webui.service.request import TranslationRequest, TranslationResult, Update
from hunyuan_webui.service.translator import Translator

__all__ = ["FileJob", "FileProgress", "Job", "LongText", "PartUpdate", "TranslationRequest",
           "TranslationResult", "Translator", "Update", "batched_updates"]
