"""One round of candidate generation: run the named operators, verify labels, deduplicate against
the pool and within the round, cap, and stamp provenance. Pure: the Prefect task wraps it."""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from mwp.problem import Problem
from tasks.operators import OPERATORS, get_operator
from tasks.operators.base import AugmentConfig, CandidateBatch, rng_for
from tasks.verify import dedupe, verify

__all__ = ["AugmentConfig", "CandidateBatch", "OPERATORS", "generate_candidates"]


def generate_candidates(pool: Sequence[Problem], operators: Sequence[str] = ("geca_op1", "geca_op2"),
                        config: AugmentConfig = AugmentConfig(), seed: int | None = None,
                        round: int = 1) -> CandidateBatch:  # noqa: A002 (the lead's keyword)
    """Candidates of one round, verified, unique and capped; ``rejected`` counts every drop by reason
    (operator reasons, verification reasons, ``duplicate``, ``round_cap``). ``seed`` defaults to
    ``config.seed``; each operator gets an equal share of ``per_round_cap``."""
    seed = config.seed if seed is None else seed
    names = list(dict.fromkeys(operators))
    share = None if config.per_round_cap is None else -(-config.per_round_cap // max(len(names), 1))
    out = CandidateBatch()
    for name in names:
        operator = get_operator(name)
        batch = operator(pool, replace(config, per_round_cap=share), seed, round)
        out.rejected.update(batch.rejected)
        kept, rejected = verify(batch.candidates, config.allow_unused_quantities, config.reject_negative_answers)
        out.rejected.update(rejected)
        out.candidates.extend(replace(p, provenance=replace(p.provenance, round=round, operator=name)) for p in kept)
    unique, rejected = dedupe(out.candidates, pool)
    out.rejected.update(rejected)
    if config.per_round_cap is not None and len(unique) > config.per_round_cap:
        rng = rng_for(seed, round, "round_cap")
        chosen = sorted(rng.sample(range(len(unique)), config.per_round_cap))
        out.rejected["round_cap"] += len(unique) - len(chosen)
        unique = [unique[i] for i in chosen]
    out.candidates = unique
    return out
