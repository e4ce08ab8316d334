"""Speculative decoding's parts, without a model (the fast lane): the drafts an answer gets
(hunyuan_webui.engine.drafts), the acceptance rule on a toy distribution, and the planner that
sends drafts only where they pay (hunyuan_webui.engine.speculative).

The engines' answers with drafts on and off are compared on the demo models in
tests/service/test_speculative_engine.py.
"""

from __future__ import annotations

import math
from collections import Counter

import pytest
import torch

from hunyuan_webui.core.decoding import DecodingOptions
from hunyuan_webui.engine.drafts import Drafter, Proposal
from hunyuan_webui.engine.speculative import CostModel, Planner, RowDrafts, verify

# -- drafts -----------------------------------------------------------------------------------


def test_the_hint_is_proposed_from_the_start_of_the_answer() -> None:
    drafter = Drafter(prompt=[1, 2, 3], hint=[40, 41, 42, 43])
    assert drafter.propose([], 3).tokens == [40, 41, 42]
    proposal = drafter.propose([40], 8)
    assert proposal.tokens == [41, 42, 43] and proposal.hint


def test_the_longest_matching_ngram_wins_and_its_continuation_is_proposed() -> None:
    prompt = [9, 3, 4, 70, 71, 72, 5, 3, 4, 80, 81]
    drafter = Drafter(prompt=prompt)
    # "3 4" occurs twice; "5 3 4" once: the longer match decides.
    proposal = drafter.propose([1, 5, 3, 4], 2)
    assert proposal.tokens == [80, 81] and proposal.ngram == 3 and not proposal.hint
    # Nothing ends with 99: no proposal.
    assert drafter.propose([1, 2, 99], 4).tokens == []


def test_a_run_that_was_accepted_is_followed_on() -> None:
    """The same n-gram occurs twice; after a run from the second place was accepted, the next
    lookup continues there rather than jumping back to the first place."""
    prompt = [7, 8, 1, 2, 3, 4, 7, 8, 5, 6, 7, 8, 9, 10]
    drafter = Drafter(prompt=prompt)
    first = drafter.propose([0, 5, 6], 2)  # "5 6" occurs once: 7 8 follow
    assert first.tokens == [7, 8] and not first.follows
    drafter.settle(2, 2)
    # The answer took 7, 8 and then the model's own 9: "7 8 9" occurs only after "5 6 7 8".
    after = drafter.propose([5, 6, 7, 8, 9], 2)
    assert after.tokens == [10] and after.follows


def test_special_tokens_are_never_drafted() -> None:
    eos = 100
    drafter = Drafter(prompt=[1, 2, 3, eos, 4], hint=[5, 6, eos, 7], banned=frozenset({eos}))
    assert drafter.propose([], 8).tokens == [5, 6]
    assert drafter.propose([1, 2], 8).tokens == [3]
    assert drafter.propose([9, 3], 8).tokens == []  # what follows 3 is the banned token


# -- the acceptance rule ----------------------------------------------------------------------

SAMPLES = 20000
P_VALUE = 1e-3  # a correct rule fails a check this unlikely; a wrong one, with these counts, always


def _chi_square_p(observed: Counter[int], expected: dict[int, float]) -> float:
    """The p-value of Pearson's chi-square test of ``observed`` counts against ``expected``
    probabilities (the regularized upper incomplete gamma function gives the chi-square
    survival function)."""
    total = sum(observed.values())
    assert set(observed) <= set(expected), f"drew {set(observed) - set(expected)}, impossible"
    statistic = sum((observed.get(k, 0) - total * p) ** 2 / (total * p)
                    for k, p in expected.items())
    df = len(expected) - 1
    return float(torch.special.gammaincc(torch.tensor(df / 2), torch.tensor(statistic / 2)))


def _processed(logits: torch.Tensor, seen: torch.Tensor, opts: DecodingOptions) -> dict[int, float]:
    """The distribution plain decoding draws from, written out independently of the engine:
    repetition penalty on seen ids, temperature, top-k, then the smallest top-p prefix."""
    values = torch.where(seen, torch.where(logits < 0, logits * opts.repetition_penalty,
                                           logits / opts.repetition_penalty), logits)
    order = sorted(range(len(values)), key=lambda i: -float(values[i]))
    order = order[:opts.top_k or len(order)]
    weights = [math.exp(float(values[i]) / opts.temperature) for i in order]
    total, kept, mass = sum(weights), {}, 0.0
    for i, w in zip(order, weights):
        if mass >= opts.top_p:
            break
        kept[i] = w / total
        mass += w / total
    norm = sum(kept.values())
    return {i: p / norm for i, p in kept.items()}


TOY = torch.log(torch.tensor([0.35, 0.25, 0.2, 0.1, 0.06, 0.04]))
NEXT = torch.log(torch.tensor([0.05, 0.45, 0.2, 0.13, 0.1, 0.07]))  # after the draft, if accepted
PLAIN = DecodingOptions(temperature=1.0, top_p=1.0, top_k=0, repetition_penalty=1.0)
CARD = DecodingOptions(temperature=0.7, top_p=0.9, top_k=4, repetition_penalty=1.3)


@pytest.mark.parametrize(("opts", "draft"), [(PLAIN, 1), (CARD, 1), (CARD, 0), (CARD, 5)],
                         ids=["plain", "card-sampling", "card-likeliest", "card-outside-top-k"])
def test_a_sampled_draft_is_accepted_with_the_models_probability_and_keeps_its_distribution(
        opts: DecodingOptions, draft: int) -> None:
    """A deterministic draft ``x``: accepted with probability ``p(x)``; on rejection the token
    is drawn from ``p`` without ``x``, renormalised; so the first token is distributed as ``p``.
    ``p`` is what plain decoding draws from (the model card's processing included; token 0 was
    seen before, so the repetition penalty applies to it). After an accepted draft, the next
    token follows the next position's distribution, with the draft counted as seen."""
    generator = torch.Generator().manual_seed(1234)
    seen = torch.zeros(len(TOY), dtype=torch.bool)
    seen[0] = True
    logits = torch.stack([TOY, NEXT]).unsqueeze(0)
    p = _processed(TOY, seen, opts)
    first, rejected, second = Counter(), Counter(), Counter()
    accepted = 0
    rows = 1000  # independent rows of one step: the same draws as one row at a time, faster
    produced = []
    for _ in range(SAMPLES // rows):
        produced += verify(logits.expand(rows, -1, -1), [[draft]] * rows,
                           seen.repeat(rows, 1), [opts] * rows, [generator] * rows)
    for tokens in produced:
        first[tokens[0]] += 1
        if len(tokens) == 2:
            assert tokens[0] == draft
            accepted += 1
            second[tokens[1]] += 1
        else:
            assert tokens[0] != draft
            rejected[tokens[0]] += 1
    chance = p.get(draft, 0.0)
    spread = 5 * math.sqrt(SAMPLES * chance * (1 - chance)) + 1
    assert abs(accepted - SAMPLES * chance) <= spread, (accepted, SAMPLES * chance)
    assert _chi_square_p(first, p) > P_VALUE
    rest = {k: v / (1 - chance) for k, v in p.items() if k != draft}
    assert _chi_square_p(rejected, rest) > P_VALUE
    if accepted:
        seen_after = seen.clone()
        seen_after[draft] = True
        assert _chi_square_p(second, _processed(NEXT, seen_after, opts)) > P_VALUE


def test_the_chi_square_check_can_fail() -> None:
    """The check above rejects a rule that is wrong by a little: accepting the draft whenever a
    fair coin says so (here p(x) = 0.25), with these many samples."""
    generator = torch.Generator().manual_seed(1)
    p = {i: float(v) for i, v in enumerate(TOY.exp())}
    wrong: Counter[int] = Counter()
    for _ in range(SAMPLES):
        if torch.rand((), generator=generator) < 0.5:
            wrong[1] += 1
        else:
            wrong[int(torch.multinomial(TOY.exp(), 1, generator=generator))] += 1
    assert _chi_square_p(wrong, p) < P_VALUE


def test_greedy_rows_accept_exactly_the_argmax_run() -> None:
    logits = torch.full((2, 4, 10), -5.0)
    for depth, best in enumerate([3, 4, 5, 6]):
        logits[0, depth, best] = 5.0
        logits[1, depth, best + 1] = 5.0
    seen = torch.zeros((2, 10), dtype=torch.bool)
    greedy = DecodingOptions(deterministic=True, repetition_penalty=1.0)
    produced = verify(logits, [[3, 4, 9], [4, 5]], seen, [greedy, greedy], [None, None])
    assert produced == [[3, 4, 5], [4, 5, 6]]  # row 0: two accepted, then the argmax 5 for 9
    assert seen[0, [3, 4, 5]].all() and not seen[0, 9] and seen[1, [4, 5, 6]].all()


# -- the planner ------------------------------------------------------------------------------


def _cost(per_step: float, per_token: float) -> CostModel:
    cost = CostModel()
    for tokens in (1, 2, 1, 2, 1, 2):
        cost.observe(tokens, per_step + per_token * tokens)
    return cost


def test_the_cost_model_reads_the_steps_median_of_each_size() -> None:
    cost = _cost(0.2, 0.05)
    for _ in range(2):  # spikes from another process move no median
        cost.observe(2, 5.0)
    assert cost.seconds(1) == pytest.approx(0.25) and cost.seconds(2) == pytest.approx(0.3)
    assert cost.seconds(5) == pytest.approx(0.45)  # past the largest size: its line goes on


def _rows(count: int) -> list[RowDrafts | None]:
    return [RowDrafts(Drafter(prompt=[], hint=list(range(50, 60))), [], 64) for _ in range(count)]


def test_drafts_go_where_a_step_costs_the_same_for_more_tokens() -> None:
    planner = Planner()
    planner.cost = _cost(0.3, 0.001)  # memory-bound: the weights read once for any tokens
    plans = planner.plan(_rows(1))
    assert len(plans[0].tokens) >= 4


def test_a_full_batch_on_a_compute_bound_machine_decodes_plainly() -> None:
    planner = Planner()
    planner.cost = _cost(0.05, 0.1)  # each token costs twice the step's fixed part
    assert all(not p.tokens for p in planner.plan(_rows(8)))


def test_a_kind_of_draft_that_fails_is_dropped_and_tried_again_later() -> None:
    planner = Planner()
    planner.cost = _cost(0.3, 0.02)
    rows = _rows(1)
    for _ in range(20):  # the hint's first token is never right
        [proposal] = planner.plan(rows)
        if proposal.tokens:
            planner.settle(rows[0].drafter, proposal, 0)  # type: ignore[union-attr]
    assert not planner.plan(rows)[0].tokens
    for _ in range(600):  # plain steps: the record fades, and the kind is tried again
        if planner.plan(rows)[0].tokens:
            break
    else:
        pytest.fail("the failed kind of draft was never tried again")


def test_after_one_kind_fails_a_kind_never_tried_is_not_taken_for_an_even_chance() -> None:
    """On text that copies nothing, the drafts of one kind (the hint's first tokens) failed ten
    times; a proposal of another kind (a prompt lookup, never verified) is then weighed by how
    drafts have done here, not by an even chance, and is not sent; an engine with no record
    sends it."""
    planner, fresh = Planner(), Planner()
    planner.cost = fresh.cost = _cost(0.3, 0.02)
    hinted = Drafter(prompt=[], hint=list(range(50, 60)))
    failed = Proposal([50, 51, 52], hint=True, ngram=1)
    for _ in range(10):
        planner.settle(hinted, failed, 0)
    other = [RowDrafts(Drafter(prompt=[7, 8, 9, 10, 11, 12], hint=[]), [7], 64)]
    [tried] = fresh.plan(other)
    assert tried.tokens[:1] == [8] and tried.kind != failed.kind
    [weighed] = planner.plan(other)
    assert weighed.kind == tried.kind and not weighed.tokens
