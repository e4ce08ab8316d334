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
seeded request gets the answer it gets without drafts. ``tests/fast/test_speculative.py`` checks the
distribution on a toy vocabulary.

**Bit for bit.** All this holds for the logits; the logits of a verification step are the model's
own, but are they the very numbers a one-token step would have had? On a CPU, our direct step
(:mod:`hunyuan_webui.engine.decode`) makes them so and checks it at load: the matrix kernels give
each row the same numbers from two rows on (a single bf16 row is multiplied as two), and each
drafted position is attended with the one-token call. So in bf16 (a single row included) and in
fp32 batches of two rows or more, drafts change no answer, bit for bit; the engine's status says
from how many rows (``exact_from_rows``). Elsewhere (fp32 one row, the model's forward on a GPU,
llama.cpp) they are equal up to rounding: where two tokens' scores are within rounding of each
other an answer can go another way, as it can between a row decoded alone and in a batch.

**Which drafts** (:class:`Planner`): a verification forward with more tokens costs more, the more
so when the batch is already large or the machine is short of arithmetic (fp32 on a CPU). The
planner keeps a running fit of what a forward of ``n`` tokens costs here (:class:`CostModel`,
straight lines through the median step of each size, from every decoding step as it runs, so a
busy machine, a GPU and a CPU each get their own, plus what each token produced costs beyond the
forward: streaming its text), and the engine's record of how often each kind of draft was accepted
(:class:`Record`: by source, hint or prompt, by the length of the n-gram that matched, and
whether it continues a run that was all accepted). In our padded PyTorch batch every row reads as
many tokens as the row with the most drafts, so it chooses how deep to draft (every row its first
``d`` drafts) for the best expected tokens per second; llama.cpp's batch reads each row's own, so
there it adds draft tokens, most likely first, while each raises the expected tokens per second.
Either way it sends none unless they raise it by :data:`GAIN`; so a full batch on a CPU, or a text that copies
nothing, decodes plainly: speculation turns itself down under load. A kind whose record fades
(:data:`RECORD_FORGET`) is tried again now and then, as the text may have changed.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import torch

from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.engine.drafts import NOTHING, Drafter, Proposal
from hunyuan_webui.engine.sampling import choose

MAX_DRAFT = 8  # draft tokens per row and step, at most
GAIN = 1.05  # drafts are sent only where they are expected to raise tokens/s by this much
COST_WINDOW = 16  # steps of each size the cost model keeps
COST_AGE = 400  # steps after which a size not seen again no longer counts
TOKEN_COST_WEIGHT = 0.05  # the newest step's weight in the running per-token cost
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
    """Seconds a forward of ``n`` tokens takes here, from the steps as they run.

    A shared machine makes single steps noisy (one took twice the next, of the same size, while
    another process ran), and a plain least-squares slope over them came out at zero, which made
    drafts look free. So steps are kept by size (bucketed by powers of two: 1, 2-3, 4-7...), the
    last :data:`COST_WINDOW` of each, and the cost between sizes is read off straight lines
    through each bucket's median, never falling. A bucket counts once it holds two steps, and until its newest is
    :data:`COST_AGE` steps old: one slow first step of a size must not stop drafts for good.
    With one size counted, the slope is unknown and taken as 0: drafts get tried, and their
    steps measured."""

    def __init__(self) -> None:
        self._seen: dict[int, deque[tuple[int, int, float]]] = {}
        self._steps = 0
        # Seconds per token produced, beyond the forward (streaming its text, bookkeeping):
        # paid per token whatever the drafts, it shrinks what they can win.
        self.token_seconds = 0.0

    def per_token(self, tokens: int, seconds: float) -> None:
        if tokens:
            self.token_seconds += (seconds / tokens - self.token_seconds) * TOKEN_COST_WEIGHT

    def observe(self, tokens: int, seconds: float, rows: int | None = None) -> None:
        """A decoding step read ``tokens`` tokens (over ``rows`` rows) in ``seconds``."""
        self._steps += 1
        self._seen.setdefault(tokens.bit_length(), deque(maxlen=COST_WINDOW)).append(
            (self._steps, tokens, seconds))

    def _points(self) -> list[tuple[float, float]]:
        return [(statistics.fmean(n for _, n, _ in steps),
                 statistics.median(t for _, _, t in steps))
                for steps in self._seen.values()
                if len(steps) >= 2 and self._steps - steps[-1][0] < COST_AGE]

    def known(self) -> bool:
        """Whether steps of different sizes have been seen (else the slope is unknown)."""
        return len(self._points()) > 1

    def curve(self, rows: int = 1) -> Callable[[int], float]:
        """The cost of a step of ``n`` tokens: straight lines between the sizes seen (each at its
        median), never falling; past the largest, its last line goes on (flat with one size
        seen: the slope is unknown, and drafts get tried). ``rows``, the rows the step's tokens
        are spread over, is not used here: a cost model that knows more (the benchmark's table
        of a real model's steps, ``benchmarks/speculative.py``) reads it."""
        points = sorted(self._points())
        for i in range(1, len(points)):  # never falling
            points[i] = (points[i][0], max(points[i][1], points[i - 1][1]))

        def seconds(tokens: int) -> float:
            if not points:
                return 0.0
            if tokens <= points[0][0] or len(points) == 1:
                return points[0][1] if tokens <= points[0][0] else points[-1][1]
            for (n0, t0), (n1, t1) in zip(points, points[1:]):
                if tokens <= n1:
                    return t0 + (t1 - t0) * (tokens - n0) / (n1 - n0)
            (n0, t0), (n1, t1) = points[-2], points[-1]
            return t1 + (t1 - t0) * (tokens - n1) / (n1 - n0)

        return seconds

    def seconds(self, tokens: int) -> float:
        return self.curve()(tokens)


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

    def rate(self, prior: float = PRIOR_ACCEPTANCE) -> float:
        """The chance of acceptance: the record, with ``prior`` counted as
        :data:`PRIOR_WEIGHT` trials (what a kind not tried yet is taken to have)."""
        return (self.hits + prior * PRIOR_WEIGHT) / (self.trials + PRIOR_WEIGHT)

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
    chance times the others' to the power ``d - 1``. A kind with little record of its own is
    taken to do as all kinds together do (:attr:`pooled`), not as well as an even chance: on
    text that copies nothing, once a few drafts have failed, the kinds not tried yet are no
    longer tried each in turn at 50%."""

    def __init__(self, max_draft: int = MAX_DRAFT, max_step_tokens: int | None = None,
                 padded: bool = True) -> None:
        self.max_draft = max_draft
        # Whether the engine's batch is padded (PyTorch: every row reads as many tokens as the
        # one with the most drafts, so a step costs rows x (1 + most drafts)) or not (llama.cpp:
        # each row reads its own).
        self.padded = padded
        # The most tokens a verification step may read in all (None: no limit); the PyTorch
        # engine on a CPU sets what its direct step serves (engine/decode.py).
        self.max_step_tokens = max_step_tokens
        self.cost = CostModel()
        self.first: dict[tuple[bool, int, bool], Record] = {}
        self.rest: dict[bool, Record] = {}
        self.pooled = Record()  # every kind's first tokens together: each kind's prior
        self.proposed = 0  # engine-wide: draft tokens verified, and accepted
        self.accepted = 0
        self.steps = 0  # verification steps (with at least one draft)

    def plan(self, rows: Sequence[RowDrafts | None]) -> list[Proposal]:
        """The drafts to verify with each row's next token (no tokens: a plain step)."""
        for record in [*self.first.values(), *self.rest.values(), self.pooled]:
            record.fade()
        prior = self.pooled.rate()
        proposals: list[Proposal] = []
        chances: list[list[float]] = []  # per row: the chance each of its drafts is accepted
        for row in rows:
            proposal, odds = NOTHING, []
            if row is not None:
                proposal = row.drafter.propose(row.answer, min(self.max_draft, row.room - 1))
                first = self.first.setdefault(proposal.kind, Record()).rate(prior)
                rest = self.rest.setdefault(proposal.hint, Record()).rate(prior)
                odds = [first * rest ** depth for depth in range(len(proposal.tokens))]
            proposals.append(proposal)
            chances.append(odds)
        if not any(chances):
            return proposals
        taken = self._padded(chances) if self.padded else self._each(chances)
        return [replace(p, tokens=p.tokens[:n]) if n < len(p.tokens) else p
                for p, n in zip(proposals, taken)]

    def _padded(self, chances: list[list[float]]) -> list[int]:
        """Drafts per row for a padded batch, where every row reads as many tokens as the one with
        the most drafts: the depth ``d`` (each row its first ``d`` drafts, or fewer if it has
        fewer) with the best expected tokens per second."""
        rows = len(chances)
        cost, c = self.cost.curve(rows), self.cost.token_seconds
        plain = cost(rows) + c * rows
        if plain <= 0:
            return [0] * rows  # nothing measured yet: plain steps first
        expected, best, depth = float(rows), rows / plain, 0
        for d in range(1, max(map(len, chances)) + 1):
            tokens = rows * (1 + d)
            if self.max_step_tokens is not None and tokens > self.max_step_tokens:
                break
            expected += sum(odds[d - 1] for odds in chances if len(odds) >= d)
            rate = expected / (cost(tokens) + c * expected)
            if rate > best:
                best, depth = rate, d
        if best < GAIN * rows / plain:
            return [0] * rows
        return [min(depth, len(odds)) for odds in chances]

    def _each(self, chances: list[list[float]]) -> list[int]:
        """Drafts per row where each row reads only its own (llama.cpp's batch): the most likely
        drafts first while each raises the expected tokens per second."""
        rows = len(chances)
        cost, c = self.cost.curve(rows), self.cost.token_seconds
        plain = cost(rows) + c * rows
        if plain <= 0:
            return [0] * rows
        ranked = sorted(((c, i) for i, odds in enumerate(chances) for c in odds), reverse=True)
        expected, tokens, best, count = float(rows), rows, rows / plain, 0
        for n, (chance, _) in enumerate(ranked, 1):
            expected += chance
            tokens += 1
            if self.max_step_tokens is not None and tokens > self.max_step_tokens:
                break
            rate = expected / (cost(tokens) + c * expected)
            if rate <= best:
                break
            best, count = rate, n
        taken = [0] * rows
        if best >= GAIN * rows / plain:
            for _, i in ranked[:count]:
                taken[i] += 1
        return taken

    def settle(self, drafter: Drafter, proposal: Proposal, accepted: int) -> None:
        """After a verification: ``accepted`` of ``proposal``'s tokens were right."""
        proposed = len(proposal.tokens)
        if not proposed:
            return
        drafter.settle(proposed, accepted)
        self.first.setdefault(proposal.kind, Record()).add(min(1, accepted), 1)
        self.pooled.add(min(1, accepted), 1)
        self.rest.setdefault(proposal.hint, Record()).add(max(0, accepted - 1),
                                                          min(accepted, proposed - 1))
        self.proposed += proposed
        self.accepted += accepted


def speculation_status(planner: Planner | None, exact_rows: int | None = None
                       ) -> dict[str, object]:
    """What the engine's status says of it: on or off, draft tokens verified and accepted, and
    from how many rows a verification step's logits are bit for bit those of plain steps
    (``exact_from_rows``; None: equal only up to rounding, as a row's in a batch of another
    size is)."""
    if planner is None:
        return {"on": False}
    return {"on": True, "verify_steps": planner.steps, "draft_tokens": planner.proposed,
            "accepted": planner.accepted, "exact_from_rows": exact_rows}
