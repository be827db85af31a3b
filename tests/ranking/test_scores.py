"""ranking/scores.py with a tiny real GTS trained on eight hand-written problems."""
import math
from dataclasses import replace

import pytest
import torch

from mwp.expr import from_prefix
from mwp.problem import Provenance, with_expression
from ranking.scores import SCORES, score_candidates
from solvers.base import TrainConfig
from solvers.registry import build_solver
from tests.solvers.toy_problems import toy_problems


@pytest.fixture(scope="module")
def solver():
    # min_count 1: eight toy problems, every word kept so that the solver can learn each of them
    gts = build_solver("gts", embedding_size=16, hidden_size=32, dropout=0.0, min_count=1, device="cpu")
    problems = toy_problems()
    gts.fit(problems, problems, TrainConfig(epochs=40, batch_size=8, lr=1e-2, eval_every=40, beam_size=2,
                                            device="cpu", progress=False))
    return gts


def test_confidence_is_the_length_normalized_probability_of_the_expression(solver):
    problems = toy_problems()
    liks = solver.log_likelihood(problems)
    assert score_candidates("confidence", solver, problems) == pytest.approx([math.exp(l.per_token) for l in liks])
    assert score_candidates("confidence-sum", solver, problems) == pytest.approx([math.exp(l.total) for l in liks])
    # the solver learned the gold expressions: a wrong one for the same text is less probable
    wrong = with_expression(problems[0], from_prefix(["-", "N1", "N0"]))
    assert score_candidates("confidence", solver, [wrong])[0] < score_candidates("confidence", solver, problems[:1])[0]


def test_agreement_puts_candidates_the_solver_solves_above_the_others(solver):
    right = toy_problems()[1]  # 4 * 6 = 24, learned
    wrong = with_expression(right, from_prefix(["+", "N0", "N1"]))  # labelled 4 + 6 = 10: the solver says 24
    s_right, s_wrong = score_candidates("agreement", solver, [right, wrong], beam_size=2)
    assert 1.0 <= s_right <= 1.5 and 0.0 <= s_wrong <= 0.5


def test_loss_similarity_follows_paper_000_by_hand(solver):
    problems = toy_problems()
    source = problems[4]
    cand = replace(with_expression(source, from_prefix(["+", "*", "N0", "N1", "N1"])), id="cand",
                   provenance=Provenance("aug", parents=(source.id,), operator="test"))
    score = score_candidates("loss-similarity", solver, [cand], pool={source.id: source})[0]
    sim = torch.nn.functional.cosine_similarity(solver.encode([cand]), solver.encode([source]), dim=-1).item()
    l_c, l_p = -solver.log_likelihood([cand])[0].per_token, -solver.log_likelihood([source])[0].per_token
    assert score == pytest.approx(sim * (l_c - l_p) / l_p, rel=1e-5)
    assert sim == pytest.approx(1.0, abs=1e-5)  # same text, same encoding
    with pytest.raises(KeyError, match="not in the pool"):
        score_candidates("loss-similarity", solver, [cand], pool={})


def test_uncertainty_ranks_the_least_confident_first(solver):
    problems = toy_problems()
    right = problems[0]
    wrong = replace(with_expression(right, from_prefix(["-", "N1", "N0"])), id="wrong")
    conf = score_candidates("confidence", solver, [right, wrong])
    unsure = score_candidates("uncertainty", solver, [right, wrong])
    assert unsure == pytest.approx([1 - c for c in conf])
    assert unsure[1] > unsure[0]  # the expression the solver did not learn is the less sure one


def test_random_score_is_seeded_and_order_free():
    problems = toy_problems()
    a = score_candidates("random", None, problems, seed=1)
    b = score_candidates("random", None, list(reversed(problems)), seed=1)
    assert a == list(reversed(b)) and a != score_candidates("random", None, problems, seed=2)


def test_unknown_score_and_missing_solver_are_errors():
    with pytest.raises(ValueError, match="unknown score"):
        score_candidates("vibes", None, toy_problems())
    with pytest.raises(ValueError, match="needs a trained solver"):
        score_candidates("confidence", None, toy_problems())
    assert set(SCORES) == {"confidence", "confidence-sum", "agreement", "loss-similarity", "uncertainty", "random"}
