"""Equation normalization (Wang et al. 2018, "Translating a Math Word Problem to an Expression Tree",
section 3): one canonical expression per class of equivalent targets, so that a sequence model
trained on them does not see the same solution spelled several ways.

Three kinds of duplicates are merged:

- **operand order** of commutative operators: ``+ N1 N0`` and ``+ N0 N1``;
- **brackets** (associativity): ``(N0 + N1) + N2`` and ``N0 + (N1 + N2)``, and likewise the signs of a
  sum and difference chain (``N0 - (N1 - N2)`` is ``N0 + N2 - N1``) and the factors of a product and
  quotient chain (``N0 / (N1 * N2)`` is ``N0 / N1 / N2``);
- **repeated quantities** (only with the problem's values): a slot whose value an earlier slot holds is
  replaced by that earlier slot, so ``N2`` in a problem whose ``N0`` and ``N2`` are both 3 becomes ``N0``.

The normal form of a ``+``/``-`` chain is ``((p1 + p2) + ...) - n1 - n2 ...``: its added terms, then its
subtracted terms, each sorted; a ``*``/``/`` chain is ``((f1 * f2) * ...) / d1 / d2 ...``. Terms are
sorted by their prefix tokens with slots before constants before operators, slots by index (the order
the quantities appear in the text, as Wang et al. order them) and constants by value. ``^`` is kept as
it is (operands normalized).

Every rewrite is an identity of exact arithmetic, so a normal form evaluates to the same
:class:`~fractions.Fraction` as the expression it came from. A divisor that is itself a quotient
(``N0 / (N1 / N2)``) is kept whole: flattening it would move ``N2`` into the numerator and turn a division
by zero into a value. Sorting runs bottom-up over the tree without recursion (:func:`mwp.expr.fold`).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Sequence

from mwp.expr import OPERATORS, BinOp, Expr, Num, Qty, Var, fold, iter_nodes
from mwp.problem import Problem


@dataclass(frozen=True)
class _Chain:
    """A flattened ``+``/``-`` (``kind`` "sum") or ``*``/``/`` (``kind`` "product") chain: the terms
    combined with the chain's first operator (``up``) and those combined with its inverse (``down``)."""

    kind: str
    up: tuple[Expr, ...]
    down: tuple[Expr, ...]


_Part = Expr | _Chain
_CHAIN_OPS = {"sum": ("+", "-"), "product": ("*", "/")}


def _token_key(node: Expr) -> tuple:
    if isinstance(node, Qty):
        return (0, node.index)
    if isinstance(node, Num):
        return (1, node.value)
    if isinstance(node, Var):
        return (2, node.name)
    return (3, OPERATORS.index(node.op))


def sort_key(expr: Expr) -> tuple:
    """The order of terms in a normal form: prefix tokens compared one by one (slots by index,
    constants by value, then unknowns, then operators)."""
    return tuple(_token_key(node) for node in iter_nodes(expr))


def _as_expr(part: _Part) -> Expr:
    if not isinstance(part, _Chain):
        return part
    add, sub = _CHAIN_OPS[part.kind]
    up, down = sorted(part.up, key=sort_key), sorted(part.down, key=sort_key)
    out = up[0]
    for term in up[1:]:
        out = BinOp(add, out, term)
    for term in down:
        out = BinOp(sub, out, term)
    return out


def _terms(part: _Part, kind: str) -> tuple[tuple[Expr, ...], tuple[Expr, ...]]:
    if isinstance(part, _Chain) and part.kind == kind:
        return part.up, part.down
    return (_as_expr(part),), ()


def _combine(op: str, left: _Part, right: _Part) -> _Part:
    if op in ("+", "-"):
        l_up, l_down = _terms(left, "sum")
        r_up, r_down = _terms(right, "sum")
        if op == "+":
            return _Chain("sum", l_up + r_up, l_down + r_down)
        return _Chain("sum", l_up + r_down, l_down + r_up)
    if op in ("*", "/"):
        l_up, l_down = _terms(left, "product")
        if op == "*":
            r_up, r_down = _terms(right, "product")
            return _Chain("product", l_up + r_up, l_down + r_down)
        if isinstance(right, _Chain) and right.kind == "product" and right.down:
            return _Chain("product", l_up, l_down + (_as_expr(right),))  # a quotient divisor stays whole
        r_up, _ = _terms(right, "product")
        return _Chain("product", l_up, l_down + r_up)
    return BinOp(op, _as_expr(left), _as_expr(right))


def merge_repeated_slots(expr: Expr, values: Sequence[Fraction]) -> Expr:
    """Each slot ``N{i}`` whose value an earlier slot ``N{j}`` (j < i) also holds becomes ``N{j}``
    (the first such). Slots beyond ``values`` are left as they are."""
    first = {}
    for i, value in enumerate(values):
        first.setdefault(value, i)

    def leaf(node: Expr) -> Expr:
        if isinstance(node, Qty) and node.index < len(values):
            return Qty(first[values[node.index]])
        return node

    return fold(expr, leaf, BinOp)


def normalize_expression(expr: Expr, values: Sequence[Fraction] | None = None) -> Expr:
    """The normal form of ``expr`` (see the module docstring); with the problem's quantity ``values``
    repeated quantities are merged too. Idempotent, and evaluates exactly as ``expr`` does."""
    if values is not None:
        expr = merge_repeated_slots(expr, values)
    return _as_expr(fold(expr, lambda node: node, _combine))


def normalize_problem(problem: Problem) -> Problem:
    """A copy of ``problem`` whose expression is its normal form (repeated quantities merged with the
    problem's values); the stored answer is kept as it is."""
    return replace(problem, expression=normalize_expression(problem.expression, problem.values))
