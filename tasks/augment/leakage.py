"""No held-out problem reaches training in any form: every candidate is compared with every held-out
problem (validation, each test set, the I.I.D. holdout) before a round keeps anything, on three keys:

- the normalized text (lower-cased tokens);
- the multiset of quantities with the expression written over their values, the operands of ``+`` and
  ``*`` ordered (the same problem told in other words);
- the set of clauses (SD builds a test problem from the clauses of its two training parts, so operation 1
  on those parts can give the test problem back in another clause order).

A match is dropped and counted per set (``matches_<set>`` in the round's rejections).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from mwp.expr import COMMUTATIVE, BinOp, Expr, Qty, format_number, to_prefix
from mwp.problem import Problem
from mwp.text import clause_spans


def _over_values(expr: Expr, values: Sequence) -> str:
    if isinstance(expr, Qty):
        return format_number(values[expr.index]) if expr.index < len(values) else f"N{expr.index}"
    if isinstance(expr, BinOp):
        left, right = _over_values(expr.left, values), _over_values(expr.right, values)
        if expr.op in COMMUTATIVE and right < left:
            left, right = right, left
        return f"({left} {expr.op} {right})"
    return to_prefix(expr)[0]


def keys(problem: Problem) -> tuple[str, tuple, frozenset]:
    tokens = [t.lower() for t in problem.tokens]
    text = " ".join(tokens)
    quantities = (tuple(sorted(problem.values)), _over_values(problem.expression, problem.values))
    clauses = frozenset(" ".join(tokens[a:b]) for a, b in clause_spans(problem.tokens))
    return text, quantities, clauses


@dataclass
class HeldOut:
    """The keys of every held-out problem, each naming its set."""

    by_key: dict = field(default_factory=dict)  # key -> set name

    @classmethod
    def build(cls, sets: Mapping[str, Iterable[Problem]]) -> "HeldOut":
        index = cls()
        for name, problems in sets.items():
            for problem in problems:
                for kind, key in zip(("text", "quantities", "clauses"), keys(problem)):
                    index.by_key.setdefault((kind, key), name)
        return index

    def match(self, candidate: Problem) -> str | None:
        """The name of a held-out set holding this problem in any of the three forms, else None."""
        for kind, key in zip(("text", "quantities", "clauses"), keys(candidate)):
            name = self.by_key.get((kind, key))
            if name is not None:
                return name
        return None

    def drop_matches(self, candidates: Iterable[Problem]) -> tuple[list[Problem], Counter]:
        kept, rejected = [], Counter()
        for candidate in candidates:
            name = self.match(candidate)
            if name is None:
                kept.append(candidate)
            else:
                rejected[f"matches_{name}"] += 1
        return kept, rejected
