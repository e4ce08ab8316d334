"""The service's front door: :class:`Translator`, through which every front end translates.

The page, the JSON API, OpenAI's, DeepL's and LibreTranslate's protocols, the extensions' routes,
the class rooms, the library and the command line all call :meth:`Translator.translate_texts`
(or :meth:`Translator.atranslate_texts` on the event loop), so they accept the same lengths,
cut long texts the same way and refuse with the same errors:

1. it plans every text: a text longer than one request may be (``--max-input-chars``,
   ``--max-input-tokens``) is cut into parts, up to
   :data:`~hunyuan_webui.service.door.longtext.MAX_PARTS` times ``--max-input-chars``
   (:class:`~hunyuan_webui.service.door.longtext.LongText`); every length is checked before
   any text starts;
2. it validates each request once and starts it (detection, segmentation, the cache), raising
   user errors before any model work;
3. it submits the texts' first segments together, so that short texts share the engine's
   batches, and hands back an :class:`~hunyuan_webui.service.door.operation.Operation` that
   gives updates as they come and the results.

Files have a second door, :class:`~hunyuan_webui.service.operations.filejob.FileJob` (a file's
segments through this one, with progress). :meth:`status` and :meth:`count_tokens` are what the
front ends may know of the engine; they never reach it themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import anyio

from hunyuan_webui.errors import TranslatorError
from hunyuan_webui.service.door.longtext import LongText, check_length, max_chars
from hunyuan_webui.service.door.operation import Errors, Operation
from hunyuan_webui.service.translate.request import TranslationRequest, TranslationResult
from hunyuan_webui.service.translate.translator import BaseTranslator

T = TypeVar("T")


class Translator(BaseTranslator):
    """The service: texts of any accepted length in, an operation that streams them out."""

    @property
    def max_chars(self) -> int:
        """The longest text the service translates (in parts), for every front end."""
        return max_chars(self)

    def check_length(self, text: object) -> str:
        """``text`` if it is within :attr:`max_chars`; else the refusal every front end gives."""
        return check_length(self, text)

    def translate_texts(self, requests: Sequence[TranslationRequest], *,
                        ahead: int | None = None, errors: Errors = "raise",
                        prime: bool = True) -> Operation:
        """Plan, validate and start ``requests``; their translation in progress.

        ``ahead``: how many texts have their first segments submitted ahead of the one being
        read (None: all at once, as a tool's batch wants; a number bounds what a long list puts
        on the engine's queue). ``errors="report"``: a text that cannot be translated becomes a
        :class:`~hunyuan_webui.service.door.operation.Failure` update and the others go on;
        otherwise the first error is raised (here, for what validation finds). ``prime=False``:
        nothing is submitted before :meth:`Operation.prime` or the first read (a class's
        sentences, made before they are logged and started a window at a time)."""
        texts: list[LongText | TranslatorError] = []
        try:
            for request in requests:  # every length checked before anything starts
                texts.append(self._each(errors, LongText.plan, self, request))
            for i, text in enumerate(texts):
                if isinstance(text, LongText):
                    texts[i] = self._each(errors, text.start)
        except BaseException:
            for text in texts:
                if isinstance(text, LongText):
                    text.cancel()
            raise
        operation = Operation(texts, ahead, errors)
        return operation.prime() if prime else operation

    @staticmethod
    def _each(errors: Errors, step: Callable[..., T], *args: Any) -> T | TranslatorError:
        try:
            return step(*args)
        except TranslatorError as exc:
            if errors == "raise":
                raise
            return exc

    async def atranslate_texts(self, requests: Sequence[TranslationRequest], *,
                               ahead: int | None = None, errors: Errors = "raise") -> Operation:
        """:meth:`translate_texts` off the event loop (token counting, detection, cache I/O)."""
        return await anyio.to_thread.run_sync(
            lambda: self.translate_texts(requests, ahead=ahead, errors=errors))

    def translate(self, request: TranslationRequest) -> TranslationResult:
        """One text's whole translation."""
        [result] = self.translate_texts([request]).result()
        return result

    def translate_many(self, requests: Sequence[TranslationRequest]) -> list[TranslationResult]:
        """Several texts' whole translations, in order; their segments share batches."""
        return self.translate_texts(requests).result()

    async def atranslate_many(self, requests: Sequence[TranslationRequest]
                              ) -> list[TranslationResult]:
        """:meth:`translate_many` off the event loop, in one hop."""
        return await anyio.to_thread.run_sync(self.translate_many, requests)
