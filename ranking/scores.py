"""Confidence scores of candidate problems, all behind one interface.

A score function takes the current solver, the candidates and (for scores that compare a candidate
with where it came from) the problems of the pool by id, and returns one float per candidate:
higher means keep it sooner. Solvers enter only through the contract in ``solvers/base.py``.
"""
from __future__ import annotations

import math
import random
from typing import Callable, Mapping, Sequence

from mwp.expr import EvaluationError, evaluate, answers_match
from mwp.problem import Problem
from solvers.base import Solver

ScoreFn = Callable[..., list[float]]


def confidence(solver: Solver, candidates: Sequence[Problem], *, normalize: bool = True,
               batch_size: int = 64, **_: object) -> list[float]:
    """The solver's probability of the candidate's expression given its text (paper 003's data
    ranker): the geometric mean of the token probabilities by default (length-normalized), the
    product of them with ``normalize=False``."""
    likelihoods = solver.log_likelihood(candidates, batch_size=batch_size)
    return [math.exp(l.per_token if normalize else l.total) for l in likelihoods]


def agreement(solver: Solver, candidates: Sequence[Problem], *, beam_size: int = 5,
              batch_size: int = 64, **_: object) -> list[float]:
    """1 when the solver's beam prediction evaluates to the candidate's answer, else 0; the
    length-normalized confidence / 2 is added so that ties within each group are ordered."""
    predictions = solver.predict(candidates, beam_size=beam_size, batch_size=batch_size)
    conf = confidence(solver, candidates, batch_size=batch_size)
    scores = []
    for cand, pred, c in zip(candidates, predictions, conf):
        agree = 0.0
        if pred.expression is not None:
            try:
                agree = float(answers_match(evaluate(pred.expression, cand.values), cand.answer))
            except EvaluationError:
                agree = 0.0
        scores.append(agree + c / 2)
    return scores


def loss_similarity(solver: Solver, candidates: Sequence[Problem], *, pool: Mapping[str, Problem],
                    batch_size: int = 64, **_: object) -> list[float]:
    """Paper 000's candidate-selection score: cosine similarity between the candidate and its source
    problem (``provenance.parents[0]``) in the solver's own encoder space, times the relative loss
    increase (L(C) - L(P)) / L(P) with L the per-token negative log-likelihood. It prefers
    candidates close to their source that the solver still finds hard."""
    import torch

    sources = []
    for cand in candidates:
        if not cand.provenance.parents or cand.provenance.parents[0] not in pool:
            raise KeyError(f"candidate {cand.id}: source problem {cand.provenance.parents[:1]} is not in the pool")
        sources.append(pool[cand.provenance.parents[0]])
    cand_vec = solver.encode(candidates, batch_size=batch_size)  # (B, H)
    src_vec = solver.encode(sources, batch_size=batch_size)  # (B, H)
    similarity = torch.nn.functional.cosine_similarity(cand_vec, src_vec, dim=-1).tolist()
    cand_loss = [-l.per_token for l in solver.log_likelihood(candidates, batch_size=batch_size)]
    src_loss = [-l.per_token for l in solver.log_likelihood(sources, batch_size=batch_size)]
    return [s * (lc - ls) / max(ls, 1e-8) for s, lc, ls in zip(similarity, cand_loss, src_loss)]


def uncertainty(solver: Solver, candidates: Sequence[Problem], *, batch_size: int = 64, **_: object) -> list[float]:
    """Active learning's least-confidence score: 1 - the length-normalized probability of the
    candidate's expression, so that a top fraction keeps the verified candidates the solver is least
    sure of. Verification already guarantees each candidate's label, so the ranker need not filter
    nonsense; the least sure are the ones a retraining learns most from."""
    return [1.0 - c for c in confidence(solver, candidates, batch_size=batch_size)]


def random_score(solver: Solver | None, candidates: Sequence[Problem], *, seed: int = 0, **_: object) -> list[float]:
    """The "- DataRanker" ablation: a seeded random score per candidate (by id, so order-free)."""
    return [random.Random(f"{seed}:{c.id}").random() for c in candidates]


SCORES: dict[str, ScoreFn] = {
    "confidence": confidence,
    "confidence-sum": lambda solver, cands, **kw: confidence(solver, cands, normalize=False, **kw),
    "agreement": agreement,
    "loss-similarity": loss_similarity,
    "uncertainty": uncertainty,
    "random": random_score,
}
POOL_SCORES = frozenset({"loss-similarity"})  # the scores that read the candidates' source problems from the pool


def score_candidates(name: str, solver: Solver | None, candidates: Sequence[Problem], **kwargs) -> list[float]:
    if name not in SCORES:
        raise ValueError(f"unknown score {name!r}; choose one of {sorted(SCORES)}")
    if not candidates:
        return []
    if name != "random" and solver is None:
        raise ValueError(f"score {name!r} needs a trained solver")
    return SCORES[name](solver, candidates, **kwargs)
