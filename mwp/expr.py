"""Expression trees for math word problems: the tree, exact evaluation, prefix and infix notation.

Values are exact :class:`fractions.Fraction` wherever possible. Text becomes a tree only through
:mod:`mwp.parse`, a parser of our own: data is parsed, never evaluated as code.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Iterator, Sequence, Union

OPERATORS = ("+", "-", "*", "/", "^")
COMMUTATIVE = frozenset({"+", "*"})
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "^": 3}


class ExpressionError(ValueError):
    """Base class of every error about an equation or expression; ``reason`` is a short skip label."""

    reason = "bad_expression"


class ExpressionParseError(ExpressionError):
    reason = "unparsable_equation"


class UnknownSymbolError(ExpressionParseError):
    reason = "unknown_symbol"


class UnbalancedBracketsError(ExpressionParseError):
    reason = "unbalanced_brackets"


class EvaluationError(ExpressionError):
    reason = "evaluation_error"


class DivisionByZeroError(EvaluationError):
    reason = "division_by_zero"


class NotSolvableError(ExpressionError):
    reason = "equation_not_solvable"


# ---------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Num:
    """A literal number; ``text`` is how it was written (``"40%"``, ``"3.0"``)."""

    value: Fraction
    text: str = ""

    def __post_init__(self) -> None:
        if not self.text:
            object.__setattr__(self, "text", format_number(self.value))


@dataclass(frozen=True)
class Qty:
    """Slot ``N{index}``: the index-th quantity of the problem, in order of appearance."""

    index: int


@dataclass(frozen=True)
class Var:
    """The unknown of an equation (``x``)."""

    name: str = "x"


@dataclass(frozen=True)
class BinOp:
    op: str
    left: "Expr"
    right: "Expr"

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise UnknownSymbolError(f"unknown operator {self.op!r}")


Expr = Union[Num, Qty, Var, BinOp]


def format_number(value: Fraction) -> str:
    """Shortest exact decimal text of ``value`` when it has one, else ``p/q``."""
    if value.denominator == 1:
        return str(value.numerator)
    den = value.denominator
    for p in (2, 5):
        while den % p == 0:
            den //= p
    if den == 1:
        text = f"{float(value):.12f}".rstrip("0").rstrip(".")
        if Fraction(text) == value:
            return text
    return f"{value.numerator}/{value.denominator}"


# ---------------------------------------------------------------- evaluation


def iter_nodes(expr: Expr) -> Iterator[Expr]:
    """Nodes in prefix order."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, BinOp):
            stack.append(node.right)
            stack.append(node.left)


MAX_EXACT_BITS = 4096  # an exact power with more bits than this is an EvaluationError


def evaluate(expr: Expr, quantities: Sequence[Fraction] = ()) -> Fraction:
    """Exact value; ``quantities[i]`` fills slot ``N{i}``. Non-integer powers fall back to floats."""
    if isinstance(expr, Num):
        return expr.value
    if isinstance(expr, Qty):
        if expr.index >= len(quantities):
            raise EvaluationError(f"slot N{expr.index} but only {len(quantities)} quantities")
        return quantities[expr.index]
    if isinstance(expr, Var):
        raise EvaluationError("cannot evaluate the unknown x")
    a = evaluate(expr.left, quantities)
    b = evaluate(expr.right, quantities)
    op = expr.op
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            raise DivisionByZeroError("division by zero")
        return a / b
    # power
    if a == 0 and b < 0:
        raise DivisionByZeroError("zero to a negative power")
    if b.denominator == 1 and abs(b.numerator) <= 64:
        # Exact, unless the result would be huge: nested powers of a predicted expression such as
        # (N0^N1)^N1 otherwise grow to millions of digits and stall an evaluation for minutes.
        if max(a.numerator.bit_length(), a.denominator.bit_length()) * abs(b.numerator) > MAX_EXACT_BITS:
            raise EvaluationError("power too large to evaluate")
        return a ** b.numerator
    if a < 0:
        raise EvaluationError("fractional power of a negative number")
    try:
        return Fraction(float(a) ** float(b))
    except (OverflowError, ValueError) as err:
        raise EvaluationError(f"power overflow: {err}") from err


_TINY_GOLD, _ABS_TOL = Fraction(1, 10**12), Fraction(1, 10**9)


def answers_match(predicted: Fraction | float, gold: Fraction | float, rel_tol: float = 1e-4) -> bool:
    """Relative tolerance 1e-4 (absolute for gold 0). Compared exactly: a predicted expression can
    evaluate to a Fraction beyond the float range (a chain of powers), which float() cannot hold."""
    if any(isinstance(v, float) and not math.isfinite(v) for v in (predicted, gold)):
        return False
    diff = abs(Fraction(predicted) - Fraction(gold))
    return diff <= Fraction(rel_tol) * max(abs(Fraction(gold)), _TINY_GOLD) or diff < _ABS_TOL


# ---------------------------------------------------------------- notation


def to_prefix(expr: Expr) -> list[str]:
    out: list[str] = []
    for node in iter_nodes(expr):
        out.append(_leaf_token(node) if not isinstance(node, BinOp) else node.op)
    return out


def _leaf_token(node: Expr) -> str:
    if isinstance(node, Num):
        return format_number(node.value)
    if isinstance(node, Qty):
        return f"N{node.index}"
    return "x"


def from_prefix(tokens: Sequence[str], leaf: Callable[[str], Expr] | None = None) -> Expr:
    """Inverse of :func:`to_prefix`; ``leaf`` turns an operand token into a leaf (default
    :func:`leaf_from_token`). Raises :class:`ExpressionParseError` on malformed input."""
    make_leaf = leaf or leaf_from_token
    pos = 0

    def build() -> Expr:
        nonlocal pos
        if pos >= len(tokens):
            raise ExpressionParseError(f"prefix expression ends early: {' '.join(tokens)!r}")
        tok = tokens[pos]
        pos += 1
        if tok in OPERATORS:
            left = build()
            return BinOp(tok, left, build())
        return make_leaf(tok)

    node = build()
    if pos != len(tokens):
        raise ExpressionParseError(f"trailing tokens in prefix expression {' '.join(tokens)!r}")
    return node


def leaf_from_token(tok: str) -> Expr:
    if re.fullmatch(r"N\d+", tok):
        return Qty(int(tok[1:]))
    if tok == "x":
        return Var()
    try:
        return Num(Fraction(tok), tok)
    except (ValueError, ZeroDivisionError) as err:
        raise UnknownSymbolError(f"unknown prefix token {tok!r}") from err


def is_valid_prefix(tokens: Sequence[str]) -> bool:
    """True when the tokens form exactly one complete binary prefix expression."""
    need = 1
    for tok in tokens:
        if need == 0:
            return False
        need += 1 if tok in OPERATORS else -1
    return need == 0 and len(tokens) > 0


def to_infix(expr: Expr) -> str:
    """Infix text with only the brackets that precedence needs."""
    if not isinstance(expr, BinOp):
        return _leaf_token(expr)
    prec = _PRECEDENCE[expr.op]
    left, right = to_infix(expr.left), to_infix(expr.right)
    if isinstance(expr.left, BinOp) and (_PRECEDENCE[expr.left.op] < prec or (expr.op == "^")):
        left = f"({left})"
    if isinstance(expr.right, BinOp) and (
        _PRECEDENCE[expr.right.op] < prec
        or (_PRECEDENCE[expr.right.op] == prec and expr.op not in COMMUTATIVE)
        or (_PRECEDENCE[expr.right.op] == prec and expr.right.op != expr.op)
    ):
        right = f"({right})"
    return f"{left}{expr.op}{right}"


def depth(expr: Expr) -> int:
    """Number of operator levels: a leaf has depth 0."""
    if isinstance(expr, BinOp):
        return 1 + max(depth(expr.left), depth(expr.right))
    return 0


def operator_count(expr: Expr) -> int:
    return sum(isinstance(n, BinOp) for n in iter_nodes(expr))


def quantity_slots(expr: Expr) -> list[int]:
    """Slot indices used, in prefix order (with repeats)."""
    return [n.index for n in iter_nodes(expr) if isinstance(n, Qty)]


def substitute(expr: Expr, mapping: dict[int, Expr]) -> Expr:
    """Replace slots ``N{i}`` by ``mapping[i]`` (slots not in the mapping are kept)."""
    if isinstance(expr, Qty):
        return mapping.get(expr.index, expr)
    if isinstance(expr, BinOp):
        return BinOp(expr.op, substitute(expr.left, mapping), substitute(expr.right, mapping))
    return expr


def template(expr: Expr) -> str:
    """Prefix text with slots renumbered by first use (``* N3 N1`` -> ``* n0 n1``): the template key."""
    order: dict[int, int] = {}
    out = []
    for tok in to_prefix(expr):
        if re.fullmatch(r"N\d+", tok):
            idx = int(tok[1:])
            order.setdefault(idx, len(order))
            out.append(f"n{order[idx]}")
        else:
            out.append(tok)
    return " ".join(out)
