"""Speculative decoding that keeps every answer: which drafts to verify, and which to accept.

A decoding step on a CPU (and at small batches on a GPU) costs about the same for one token per
row as for a few, because it is spent reading the weights. So a row can be given its next token
*and* the tokens that are likely to follow it (drafts: :mod:`hunyuan_webui.engine.drafts`) in one
forward pass, which returns the model's logits after each of them; every draft that agrees with
what the model would have chosen is a token won without a step of its own.

**Acceptance** (:func:`verify`): at each drafted position the model's logits go through exactly
the processing plain decoding applies (:func:`~hunyuan_webui.engine.sampling.choose`: repetition
penalty over everything seen so far, the drafts accepted before it included, then temperature,
top-k, top-p), a token is chosen from them, and the draft is accepted if it is that token. For a
greedy row that is the argmax: the answer is token for token the one decoding without drafts
gives. For a sampled row it is the standard rule (Leviathan et al. 2023, Chen et al. 2023) for a
draft that is one token with certainty: accept the draft ``x`` with probability ``p(x)``, and on
rejection draw from ``p`` with ``x`` removed and renormalised. Drawing ``y ~ p`` and accepting
when ``y == x`` is that rule (``P(accept) = p(x)``; given a rejection, ``y`` is distributed as
``p`` without ``x``), and it draws exactly once per produced token, as plain decoding does: a
seeded request gets the answer it gets without drafts. ``tests/test_speculative.py`` checks the
distribution on a toy vocabulary.

**Which drafts** (:class:`Planner`): a verification forward with more tokens costs more, the more
so when the batch is already large or the machine is short of arithmetic (fp32 on a CPU). The
planner keeps a running fit of what a forward of ``n`` tokens costs here (:class:`CostModel`,
``t = a + b·n``, fitted to every decoding step as it runs, so a busy machine, a GPU and a CPU
each get their own), and the engine's record of how often each kind of draft was accepted
(:class:`Record`: by source, hint or prompt, by the length of the n-gram that matched, and
whether it continues a run that was all accepted). It adds draft tokens, most likely first, only
while each one's chance of being accepted raises the expected tokens per second, and sends none
unless the whole raises it by :data:`GAIN`; so a full batch on a CPU, or a text that copies
nothing, decodes plainly: speculation turns itself down under load. A kind whose record fades
(:data:`RECORD_FORGET`) is tried again now and then, as the text may have changed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch

from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.engine.drafts import NOTHING, Drafter, Proposal
from hunyuan_webui.engine.sampling import choose

MAX_DRAFT = 8  # draft tokens per row and step, at most
GAIN = 1.05  # drafts are sent only where they are expected to raise tokens/s by this much
FORGET = 0.98  # weight of the past in the cost model, per step (about 50 steps of memory)
PRIOR_ACCEPTANCE = 0.5  # a kind of draft's chance of acceptance before any was verified
PRIOR_WEIGHT = 2.0  # how many trials that prior counts as
RECORD_FORGET = 0.995  # weight of the acceptance record's past, per step (half of it in ~140)


def verify(logits: torch.Tensor, drafts: Sequence[Sequence[int]], seen: torch.Tensor,
           options: Sequence[DecodingOptions], generators: Sequence[torch.Generator | None]
           ) -> list[list[int]]:
    """The tokens each row produces in a verification step: its accepted drafts, then the token
    the model chose where it stopped agreeing (or after the last draft).

    ``logits``: float32 ``[rows, 1 + most drafts, vocab]``, position ``j`` read after the row's
    ``j``-th input (its next token, then its drafts); ``seen``: ``[rows, vocab]``, each row's
    prompt and answer ids, marked as tokens are chosen (as plain decoding marks them)."""
    produced: list[list[int]] = [[] for _ in drafts]
    active = list(range(len(drafts)))
    for depth in range(logits.shape[1]):
        if not active:
            break
        index = torch.tensor(active, device=logits.device)
        tokens = choose(logits[index, depth], seen[index], [options[i] for i in active],
                        [generators[i] for i in active])
        seen[index, torch.tensor(tokens, device=seen.device)] = True
        still = []
        for row, token in zip(active, tokens):
            produced[row].append(token)
            if depth < len(drafts[row]) and drafts[row][depth] == token:
                still.append(row)
        active = still
    return produced


class CostModel:
    """Seconds a forward of ``n`` tokens takes here: ``a + b·n``, a least-squares fit over the
    steps seen, older ones weighing less (:data:`FORGET` per step)."""

    def __init__(self) -> None:
        self._w = self._n = self._nn = self._t = self._nt = 0.0

    def observe(self, tokens: int, seconds: float) -> None:
        for name in ("_w", "_n", "_nn", "_t", "_nt"):
            setattr(self, name, getattr(self, name) * FORGET)
        self._w += 1.0
        self._n += tokens
        self._nn += tokens * tokens
        self._t += seconds
        self._nt += tokens * seconds

    def known(self) -> bool:
        """Whether steps of different sizes have been seen (else the slope is unknown)."""
        return self._w > 0 and self._nn * self._w - self._n ** 2 > 0.25 * self._w ** 2

    def slope(self) -> tuple[float, float]:
        """``(a, b)``; both at least 0. Before :meth:`known`, b is taken as 0."""
        if self._w == 0:
            return 0.0, 0.0
        mean_n, mean_t = self._n / self._w, self._t / self._w
        spread = self._nn / self._w - mean_n ** 2
        b = (self._nt / self._w - mean_n * mean_t) / spread if self.known() else 0.0
        b = max(0.0, b)
        return max(0.0, mean_t - b * mean_n), b

    def seconds(self, tokens: int) -> float:
        a, b = self.slope()
        return a + b * tokens


@dataclass
class RowDrafts:
    """One row's proposal: its drafter and what the answer can still take."""

    drafter: Drafter
    answer: Sequence[int]  # the tokens chosen so far, the next input included
    room: int  # tokens the row may still produce after the next input


class Record:
    """How often drafts of one kind were accepted: successes and trials, older ones counting
    less (:data:`RECORD_FORGET` per step, so that a kind that failed is tried again later)."""

    def __init__(self) -> None:
        self.hits = self.trials = 0.0

    def rate(self) -> float:
        return (self.hits + PRIOR_ACCEPTANCE * PRIOR_WEIGHT) / (self.trials + PRIOR_WEIGHT)

    def add(self, hits: float, trials: float) -> None:
        self.hits += hits
        self.trials += trials

    def fade(self) -> None:
        self.hits *= RECORD_FORGET
        self.trials *= RECORD_FORGET


class Planner:
    """Chooses the drafts of each decoding step (see the module's docstring).

    A draft's chance of acceptance is estimated from the engine's record: for its first token,
    per kind of lookup (hint or prompt, the length of the n-gram that matched, whether it
    continues a run that was all accepted); for each further token, the record of tokens that
    followed an accepted one, per source. A run's ``d``-th token is accepted with the first's
    chance times the others' to the power ``d - 1``."""

    def __init__(self, max_draft: int = MAX_DRAFT) -> None:
        self.max_draft = max_draft
        self.cost = CostModel()
        self.first: dict[tuple[bool, int, bool], Record] = {}
        self.rest: dict[bool, Record] = {}
        self.proposed = 0  # engine-wide: draft tokens verified, and accepted
        self.accepted = 0
        self.steps = 0  # verification steps (with at least one draft)

    def plan(self, rows: Sequence[RowDrafts | None]) -> list[Proposal]:
        """The drafts to verify with each row's next token (no tokens: a plain step)."""
        for record in [*self.first.values(), *self.rest.values()]:
            record.fade()
        proposals: list[Proposal] = []
        chances: list[tuple[float, int]] = []  # (chance the draft is accepted, row)
        for i, row in enumerate(rows):
            proposal = NOTHING
            if row is not None:
                proposal = row.drafter.propose(row.answer, min(self.max_draft, row.room - 1))
                first = self.first.setdefault(proposal.kind, Record()).rate()
                rest = self.rest.setdefault(proposal.hint, Record()).rate()
                chances += [(first * rest ** depth, i) for depth in range(len(proposal.tokens))]
            proposals.append(proposal)
        if not chances:
            return proposals
        taken = [0] * len(rows)
        for _, i in self._worth(len(rows), sorted(chances, reverse=True)):
            taken[i] += 1
        return [replace(p, tokens=p.tokens[:n]) if n < len(p.tokens) else p
                for p, n in zip(proposals, taken)]

    def _worth(self, rows: int, chances: list[tuple[float, int]]) -> list[tuple[float, int]]:
        """The most likely drafts while each raises the expected tokens per second; none unless
        the whole raises it by :data:`GAIN` over the plain step."""
        expected, tokens = float(rows), rows
        plain = self.cost.seconds(rows)
        if plain <= 0:
            return []  # nothing measured yet: plain steps first
        best, taken = expected / plain, 0
        for count, (chance, _) in enumerate(chances, 1):
            expected += chance
            tokens += 1
            rate = expected / self.cost.seconds(tokens)
            if rate <= best:
                break
            best, taken = rate, count
        if best < GAIN * rows / plain:
            return []
        return chances[:taken]

    def settle(self, drafter: Drafter, proposal: Proposal, accepted: int) -> None:
        """After a verification: ``accepted`` of ``proposal``'s tokens were right."""
        proposed = len(proposal.tokens)
        if not proposed:
            return
        drafter.settle(proposed, accepted)
        self.first.setdefault(proposal.kind, Record()).add(min(1, accepted), 1)
        self.rest.setdefault(proposal.hint, Record()).add(max(0, accepted - 1),
                                                          min(accepted, proposed - 1))
        self.proposed += proposed
        self.accepted += accepted


def speculation_status(planner: Planner | None) -> dict[str, object]:
    """What the engine's status says of it: on or off, draft tokens verified and accepted."""
    if planner is None:
        return {"on": False}
    return {"on": True, "verify_steps": planner.steps, "draft_tokens": planner.proposed,
            "accepted": planner.accepted}
