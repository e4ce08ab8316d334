"""What a translation in progress needs from the service, and nothing more.

A :class:`~hunyuan_webui.service.translate.job.Job` reads its model, engines, cache and in-flight table
through a :class:`Backend`, which the :class:`~hunyuan_webui.service.translate.translator.Translator` builds
once. So a job never reaches back into the translator, and the two modules do not import each
other.
"""

from __future__ import annotations

from dataclasses import dataclass

from hunyuan_webui import modes
from hunyuan_webui.cache import PhraseCache, cache_key
from hunyuan_webui.engine import Engine
from hunyuan_webui.models import ModelSpec
from hunyuan_webui.service.checks.answers import Guards
from hunyuan_webui.service.translate.inflight import Flights
from hunyuan_webui.service.translate.request import TranslationRequest


@dataclass(frozen=True)
class Backend:
    spec: ModelSpec
    engine: Engine
    chimera: Engine | None  # the engine that fuses ensemble candidates, if one is loaded
    cache: PhraseCache | None
    flights: Flights
    window: int  # segments one request may have submitted and unfinished at once
    guards: Guards | None = None  # the answer checks (None: all off)

    def prompt_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        return modes.translation_prompt(self.spec, segment, source, request.target_lang,
                                        request.glossary, request.context, request.mode,
                                        style=request.style, instructions=request.instructions,
                                        data_format=request.data_format)

    def key_for(self, segment: str, source: str, request: TranslationRequest) -> str:
        # A request reaches here validated, its options filled in with the model's defaults.
        assert request.options is not None
        return cache_key(model=self.spec.id, source_lang=source, target_lang=request.target_lang,
                         mode=request.mode, text=segment,
                         options={**request.options.cache_fields(),
                                  "glossary": list(request.glossary), "context": request.context,
                                  **_mode_fields(request)})

    def reads_cache(self, request: TranslationRequest) -> bool:
        """May this request's segments be answered from the cache? Yes by default, whatever the
        decoding settings: they are part of the key, so a repeated request gets the answer the
        first one got. ``cache=False`` asks for a fresh one."""
        return request.cache and self.writes_cache(request)

    def writes_cache(self, request: TranslationRequest) -> bool:
        """Are this request's answers stored? Also when it asked for a fresh one (Retranslate):
        the fresh answer replaces the old. With the guards on, only an answer that passed them
        is stored, by the reader that judged it (:mod:`hunyuan_webui.service.checks.watch`)."""
        return (self.cache is not None and self.cache.enabled
                and request.mode not in modes.PARAGRAPH_MODES)


def _mode_fields(request: TranslationRequest) -> dict[str, object]:
    """The newer modes' inputs, in the cache key only when given (older keys stay valid)."""
    fields = {"style": request.style, "instructions": list(request.instructions),
              "data_format": request.data_format}
    return {name: value for name, value in fields.items() if value}
