"""The translation service: requests in, streamed translations out, over any engine.

Four sub-packages, each of one subject, lowest first (``scripts/check_structure.py`` keeps the
order: a package imports only those below it, never a peer):

- :mod:`~hunyuan_webui.service.checks`: the answer checks, which judge a model's answer (wrong
  language, a loop, the source again, too long) and decide what of it may be shown yet;
- :mod:`~hunyuan_webui.service.translate`: one translation. The :class:`Translator` validates,
  detects, segments and plans; a :class:`Job` is one translation in progress;
- :mod:`~hunyuan_webui.service.operations`: what a tool or a reader asks for beyond one request:
  a long text in parts (:class:`LongText`), a tool's batch of items, markup, a file with progress
  and cancel (:class:`FileJob`) and documents translated in the background;
- :mod:`~hunyuan_webui.service.rooms`: a class, whose teacher writes once and whose students read
  it in their own language.

This package exports what the front ends use, so most of them import from here alone.
"""

from hunyuan_webui.service.operations.filejob import FileJob, FileProgress
from hunyuan_webui.service.operations.longtext import LongText, PartUpdate
from hunyuan_webui.service.translate.job import Job, batched_updates
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult, Update
from hunyuan_webui.service.translate.translator import Translator

__all__ = ["FileJob", "FileProgress", "Job", "LongText", "PartUpdate", "TranslationRequest",
           "TranslationResult", "Translator", "Update", "batched_updates"]
