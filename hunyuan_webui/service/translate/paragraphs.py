"""The paragraph strategy (formatted, alternatives and ensemble modes): one paragraph at a time.

Every paragraph's first-phase prompts are submitted in one engine call, so they batch; then each
paragraph is finished in order: formatted answers are checked for their tags (and translated bare,
with a notice, when the tags came back broken), alternatives collect their variants, and ensemble
candidates are fused by Chimera. These answers are neither cached nor shared in flight.
Structured data is one "paragraph", the whole text: its answer is checked
(:mod:`hunyuan_webui.structured`) before it is shown, and replaced by a value-by-value translation
when the model broke the data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from hunyuan_webui import modes, prompts, structured
from hunyuan_webui.engine import DecodingOptions, Stream
from hunyuan_webui.models import FORMATTED
from hunyuan_webui.service.translate.strategy import Strategy


class Paragraphs(Strategy):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._format_broken = 0  # paragraphs whose tags came back broken

    def pieces(self) -> Iterator[tuple[str, int, bool]]:
        segments = self.document.segments
        plans = [self._plan(seg) for seg in segments]
        streams = self.reader.submit(self.backend.engine, [p for plan in plans for p in plan[0]],
                                     [o for plan in plans for o in plan[1]])
        index = 0
        for piece in self.document.pieces:
            if not piece.translate:
                yield piece.text, index, False
                continue
            count = len(plans[index][0])
            mine, streams = streams[:count], streams[count:]
            for chunk in self._paragraph(segments[index], plans[index][2], mine):
                yield chunk, index, True
            if self.reader.cancelled.is_set():
                return
            index += 1
        if self._format_broken:
            self.notices.append(modes.FORMAT_BROKEN.format(n=self._format_broken))

    def _plan(self, segment: str) -> tuple[list[str], list[DecodingOptions], Any]:
        """Phase-one prompts and options for one paragraph (all paragraphs batch together)."""
        request, spec = self.request, self.backend.spec
        target, options = request.target_lang, request.options
        if request.mode == "formatted":
            markup = modes.ProtectedMarkup.parse(segment)
            if not markup.has_markup:
                return [self.backend.prompt_for(segment, self.source, request)], [options], None
            if spec.supports(FORMATTED):
                prompt = prompts.formatted_prompt(markup.tagged, target)
            else:
                prompt = prompts.translation_prompt(markup.tagged, self.source, target, spec.family)
            return [prompt], [options], markup
        prompt = self.backend.prompt_for(segment, self.source, request)
        if request.mode == "structured":  # the whole data in one prompt; checked when it is back
            return [prompt], [options], None
        if request.mode == "alternatives":
            variants = [replace(options, deterministic=True)] + [
                replace(options, deterministic=False, temperature=max(options.temperature, 0.9),
                        seed=(options.seed or 0) + i) for i in range(1, request.variants)]
            return [prompt] * request.variants, variants, None
        temperatures = modes.CANDIDATE_TEMPERATURES[:modes.ENSEMBLE_CANDIDATES]
        candidates = [replace(options, deterministic=True) if t is None else
                      replace(options, deterministic=False, temperature=t,
                              seed=(options.seed or 0) + i)
                      for i, t in enumerate(temperatures)]
        return [prompt] * len(candidates), candidates, None

    def _paragraph(self, segment: str, markup: Any, streams: list[Stream]) -> Iterator[str]:
        if self.request.mode == "structured":
            yield self._checked_data(segment, "".join(self.reader.read(streams[0])))
        elif self.request.mode == "formatted":
            yield self._formatted(segment, markup, streams[0])
        elif self.request.mode == "alternatives":
            yield from self.reader.read(streams[0])
            variants = [streams[0].text] + ["".join(self.reader.read(s)) for s in streams[1:]]
            self.alternatives.append(tuple(dict.fromkeys(v for v in variants if v)))
        else:  # ensemble: wait for the candidates, then stream Chimera's fusion
            yield from self._fused(segment, streams)

    def _formatted(self, segment: str, markup: Any, stream: Stream) -> str:
        text = "".join(self.reader.read(stream))
        if markup is None:
            return text
        restored = markup.restore(text)
        if restored is None:  # tags lost or unbalanced: translate the bare text instead
            self._format_broken += 1
            plain = self.backend.prompt_for(modes.strip_markup(segment), self.source, self.request)
            [fallback] = self.reader.submit(self.backend.engine, [plain], [self.request.options])
            restored = "".join(self.reader.read(fallback))
        return restored

    def _fused(self, segment: str, streams: list[Stream]) -> Iterator[str]:
        texts = ("".join(self.reader.read(s)) for s in streams)
        candidates = list(dict.fromkeys(t for t in texts if t))
        self.candidates.append(tuple(candidates))
        fusion = prompts.chimera_prompt(segment, self.source, self.request.target_lang,
                                        candidates or [segment])
        assert self.backend.chimera is not None
        [fused] = self.reader.submit(self.backend.chimera, [fusion],
                                     [replace(self.request.options, deterministic=True)])
        yield from self.reader.read(fused)

    def _checked_data(self, source: str, answer: str) -> str:
        """A structured-data answer if it is still the same data; else each text value translated
        on its own (JSON, XML, CSV, TSV), else the data untranslated, with a notice either way."""
        fmt = self.request.data_format
        answer = structured.unwrap(answer, source)
        why = structured.problem(source, answer, fmt)
        if why is None or self.reader.cancelled.is_set():
            return answer
        split = structured.split_values(source, fmt)
        template = modes.STRUCTURE_BROKEN if split else modes.STRUCTURE_KEPT
        self.notices.append(template.format(format=structured.FORMATS[fmt], why=why))
        if split is None:
            return source
        values, rebuild = split
        plain = replace(self.request, mode=modes.TRANSLATE, glossary=())
        prompts_ = [self.backend.prompt_for(v, self.source, plain) for v in values]
        assert self.request.options is not None  # validated: the model's defaults filled in
        streams = self.reader.submit(self.backend.engine, prompts_,
                                     [self.request.options] * len(prompts_)) if prompts_ else []
        translated = ["".join(self.reader.read(s)) for s in streams]
        # A value whose placeholders did not survive keeps its original text.
        return rebuild([new if new.strip() and structured.same_placeholders(old, new) else old
                        for old, new in zip(values, translated)])
