"""The translation service: requests in, streamed translations out, over any engine.

Five sub-packages, each of one subject, lowest first (``scripts/check_structure.py`` keeps the
order: a package imports only those below it, never a peer):

- :mod:`~hunyuan_webui.service.checks`: the answer checks, which judge a model's answer (wrong
  language, a loop, the source again, too long) and decide what of it may be shown yet;
- :mod:`~hunyuan_webui.service.translate`: one request. Its translator validates, detects,
  segments and plans; a :class:`Job` is one translation in progress;
- :mod:`~hunyuan_webui.service.door`: the front door. :meth:`Translator.translate_texts` takes
  texts of any accepted length (in parts when long), validates them once, batches them and
  hands back an :class:`Operation` (updates as they come, the results, cancel). Every front end
  translates through it;
- :mod:`~hunyuan_webui.service.operations`: what a tool or a reader asks for beyond plain texts:
  a tool's batch of items, markup, a chat message read as what it asks for, a file with
  progress and cancel (:class:`FileJob`, the second door) and documents translated in the
  background;
- :mod:`~hunyuan_webui.service.rooms`: a class, whose teacher writes once and whose students read
  it in their own language.

This package exports what the front ends use, so most of them import from here alone.
"""

from hunyuan_webui.service.door.longtext import LongText, PartUpdate
from hunyuan_webui.service.door.operation import Failure, Operation
from hunyuan_webui.service.door.translator import Translator
from hunyuan_webui.service.operations.filejob import FileJob, FileProgress
from hunyuan_webui.service.translate.job import Job, batched_updates
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult, Update
from hunyuan_webui.service.translate.translator import NOTHING_TO_TRANSLATE

__all__ = ["NOTHING_TO_TRANSLATE", "Failure", "FileJob", "FileProgress", "Job", "LongText",
           "Operation", "PartUpdate", "TranslationRequest", "TranslationResult", "Translator",
           "Update", "batched_updates"]
