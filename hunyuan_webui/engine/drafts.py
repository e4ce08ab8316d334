"""Draft tokens for speculative decoding, looked up in what the answer is likely to repeat.

A translation copies much of its source (names, numbers, code, URLs, placeholders), and a
re-translation of a text that grew or was corrected (a speech draft, translate-as-you-type) mostly
repeats the previous translation. :class:`Drafter` proposes the tokens that follow the answer so
far by finding its last few tokens (an n-gram, the longest of :data:`MAX_NGRAM` down to one) in
those texts, and taking what followed them there: *prompt lookup* over the prompt, and the same
over a *hint* (the previous translation, passed by the service as ``DecodingOptions.draft``).
The hint is read as if it began where the answer begins, so the answer's first tokens are
proposed from the hint's first ones before anything has been generated.

The model verifies every draft in one forward pass (:mod:`hunyuan_webui.engine.speculative`), so
a wrong draft costs time, never a different answer. Which of several places to continue from: the
one that continues the last accepted draft, else the hint's first, else the prompt's first.

Pure Python over token ids; both of our engines use it (PyTorch and llama.cpp). llama-cpp-python's
``LlamaPromptLookupDecoding`` does the prompt half of this for its high-level ``Llama`` class, one
sequence per context, which our batched llama.cpp engine does not use; and it scans the whole
sequence with numpy at every token, where this builds an index once per request.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MAX_NGRAM = 3  # the longest run of answer tokens looked up
START = -1  # stands before the hint's first token and the answer's: no real token id is negative
MAX_INDEXED = 8192  # tokens of prompt and hint indexed at most (the last ones of a longer prompt)


@dataclass(frozen=True)
class Proposal:
    """Draft tokens and where they came from: the kind of lookup, which predicts how many the
    model will accept (:class:`~hunyuan_webui.engine.speculative.Planner` keeps a record per
    kind)."""

    tokens: list[int]
    hint: bool = False  # from the hint (else the prompt)
    ngram: int = 0  # the length of the answer's tail that matched
    follows: bool = False  # it continues the previous proposal, all of which was accepted

    @property
    def kind(self) -> tuple[bool, int, bool]:
        return self.hint, self.ngram, self.follows


NOTHING = Proposal([])


class Drafter:
    """Proposes continuations of one answer from its prompt and hint (token ids)."""

    def __init__(self, prompt: Sequence[int], hint: Sequence[int] = (), *,
                 banned: frozenset[int] = frozenset()) -> None:
        # Sources in order of preference; the hint starts with START so that it lines up with the
        # start of the answer. Special tokens (the chat format's) are never proposed: they cut
        # each source into runs, so nothing across them is either.
        self.sources: list[list[int]] = []
        if hint:
            self.sources.append([START, *list(hint)[:MAX_INDEXED]])
        self.sources.append(list(prompt)[-MAX_INDEXED:])
        self.banned = banned
        self._index: dict[tuple[int, ...], list[tuple[int, int]]] = {}
        for s, tokens in enumerate(self.sources):
            for end in range(1, len(tokens)):  # an n-gram ending before `end` predicts tokens[end]
                if tokens[end] in banned:
                    continue
                for n in range(1, MAX_NGRAM + 1):
                    if end - n < 0:
                        break
                    gram = tuple(tokens[end - n:end])
                    if banned.intersection(gram):
                        break
                    self._index.setdefault(gram, []).append((s, end))
        self._follow: tuple[int, int] | None = None  # where the last proposal would continue

    def propose(self, answer: Sequence[int], limit: int) -> Proposal:
        """Up to ``limit`` tokens that may follow ``answer`` (the tokens chosen so far, the last
        one included); no tokens when nothing matches."""
        if limit <= 0:
            return NOTHING
        context = [START, *answer[-MAX_NGRAM:]] if len(answer) < MAX_NGRAM else answer[-MAX_NGRAM:]
        for n in range(min(MAX_NGRAM, len(context)), 0, -1):
            places = self._index.get(tuple(context[-n:]))
            if places:
                (source, start), follows = self._pick(places)
                tokens = self.sources[source]
                run = []
                for token in tokens[start:start + limit]:
                    if token in self.banned:
                        break
                    run.append(token)
                # A lookup after this run was all accepted (and the model's own next token
                # continued the text too) ends one token past it.
                self._follow = (source, start + len(run) + 1)
                return Proposal(run, hint=self.hinted and source == 0, ngram=n, follows=follows)
        self._follow = None
        return NOTHING

    @property
    def hinted(self) -> bool:
        return len(self.sources) > 1

    def _pick(self, places: list[tuple[int, int]]) -> tuple[tuple[int, int], bool]:
        """The place continuing the last proposal when it is one of ``places``, else the first
        (hint before prompt: the index lists them in that order); and whether it continues."""
        follow = self._follow
        if follow is not None and follow in places:
            return follow, True
        return places[0], False

    def settle(self, proposed: int, accepted: int) -> None:
        """After a verification: ``accepted`` of the ``proposed`` draft tokens were right."""
        if accepted < proposed:
            self._follow = None  # the answer left the text it was following
