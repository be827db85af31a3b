"""Expression trees for math word problems: the tree, exact evaluation, prefix and infix notation.

Values are exact :class:`fractions.Fraction` wherever possible. Text becomes a tree only through
:mod:`mwp.parse`, a parser of our own: data is parsed, never evaluated as code.

Bounds. Every walk over a tree here is iterative, so a tree of any depth (a flat chain of thousands of
terms is a tree thousands deep) is evaluated, printed and rebuilt without a ``RecursionError``. Numbers
are bounded instead: a value, written or computed, whose numerator or denominator has more than
:data:`MAX_EXACT_BITS` bits (about 1,233 decimal digits) raises :class:`NumberTooLargeError`, so exact
arithmetic never stalls on million-digit values and every value can be printed (Python refuses to print
integers of more than 4,300 digits). Slot indices are at most :data:`MAX_SLOT_INDEX`. The only error
types raised are :class:`ExpressionError` and its subclasses.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator, Sequence, Union

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


class NumberTooLargeError(EvaluationError):
    """A number, as written or as computed, beyond :data:`MAX_EXACT_BITS` (or too many digits)."""

    reason = "number_too_large"


class NotSolvableError(ExpressionError):
    reason = "equation_not_solvable"


class EquationTooHardError(NotSolvableError):
    """An equation beyond the size or degree :mod:`mwp.parse` hands to sympy, or a solve over time."""

    reason = "equation_too_hard"


class ExpressionTooLongError(ExpressionParseError):
    """Text beyond the parser's length or nesting limits (:mod:`mwp.parse`)."""

    reason = "expression_too_long"


# An exact value (numerator or denominator) of more bits than this is refused: 4096 bits is about 1,233
# decimal digits, far beyond any quantity of a word problem, far below Python's 4,300-digit printing
# limit, and small enough that exact arithmetic on it takes microseconds.
MAX_EXACT_BITS = 4096
MAX_SLOT_INDEX = 999_999  # N0..N999999: an index is at most six digits


def check_size(value: Fraction) -> Fraction:
    """``value`` itself, or :class:`NumberTooLargeError` when it has more than MAX_EXACT_BITS bits."""
    if max(value.numerator.bit_length(), value.denominator.bit_length()) > MAX_EXACT_BITS:
        raise NumberTooLargeError(f"a number of more than {MAX_EXACT_BITS} bits")
    return value


# ---------------------------------------------------------------- the tree


@dataclass(frozen=True)
class Num:
    """A literal number; ``text`` is how it was written (``"40%"``, ``"3.0"``)."""

    value: Fraction
    text: str = ""

    def __post_init__(self) -> None:
        check_size(self.value)
        if not self.text:
            object.__setattr__(self, "text", format_number(self.value))


@dataclass(frozen=True)
class Qty:
    """Slot ``N{index}``: the index-th quantity of the problem, in order of appearance."""

    index: int

    def __post_init__(self) -> None:
        if not 0 <= self.index <= MAX_SLOT_INDEX:
            raise UnknownSymbolError(f"slot index {self.index} outside 0..{MAX_SLOT_INDEX}")


@dataclass(frozen=True)
class Var:
    """The unknown of an equation (``x``)."""

    name: str = "x"


@dataclass(frozen=True, eq=False, repr=False)
class BinOp:
    """An operator node. Equality, hash and repr are written out iteratively: the ones a dataclass
    generates recurse, and a flat chain of thousands of terms is a tree thousands deep."""

    op: str
    left: "Expr"
    right: "Expr"

    def __post_init__(self) -> None:
        if self.op not in OPERATORS:
            raise UnknownSymbolError(f"unknown operator {self.op!r}")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BinOp):
            return NotImplemented
        pairs: list[tuple[Expr, Expr]] = [(self, other)]
        while pairs:
            a, b = pairs.pop()
            if a is b:
                continue
            if not (isinstance(a, BinOp) and isinstance(b, BinOp)):
                if a != b:  # leaves (dataclass equality), or a leaf against an operator
                    return False
            elif a.op != b.op:
                return False
            else:
                pairs.extend(((a.right, b.right), (a.left, b.left)))
        return True

    def __hash__(self) -> int:
        return hash(tuple(node.op if isinstance(node, BinOp) else node for node in iter_nodes(self)))

    def __repr__(self) -> str:
        return render(self, repr, lambda node: (f"BinOp(op={node.op!r}, left=", node.left, ", right=", node.right, ")"))


Expr = Union[Num, Qty, Var, BinOp]


def format_number(value: Fraction) -> str:
    """Shortest exact decimal text of ``value`` when it has at most 12 decimals, else ``p/q``.
    Computed with integers (a float cannot hold a 400-digit quantity)."""
    check_size(value)
    if value.denominator == 1:
        return str(value.numerator)
    den, twos, fives = value.denominator, 0, 0
    while den % 2 == 0:
        den, twos = den // 2, twos + 1
    while den % 5 == 0:
        den, fives = den // 5, fives + 1
    places = max(twos, fives)  # a terminating decimal in lowest terms needs exactly this many
    if den == 1 and places <= 12:
        digits = str(abs(value.numerator) * 10**places // value.denominator).rjust(places + 1, "0")
        return f"{'-' if value < 0 else ''}{digits[:-places]}.{digits[-places:]}"
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


def evaluate(expr: Expr, quantities: Sequence[Fraction] = ()) -> Fraction:
    """Exact value; ``quantities[i]`` fills slot ``N{i}``. Non-integer powers fall back to floats.
    Iterative (left operand first), so a tree of any depth evaluates; every intermediate value is
    bounded by MAX_EXACT_BITS (:class:`NumberTooLargeError`)."""
    return fold(expr, lambda leaf: _leaf_value(leaf, quantities),
                lambda op, left, right: check_size(_apply(op, left, right)))


def step_values(expr: Expr, quantities: Sequence[Fraction] = ()) -> list[Fraction]:
    """The value of every operator node, operands before the node (the root's last), in one pass."""
    steps: list[Fraction] = []

    def combine(op: str, left: Fraction, right: Fraction) -> Fraction:
        steps.append(check_size(_apply(op, left, right)))
        return steps[-1]

    fold(expr, lambda leaf: _leaf_value(leaf, quantities), combine)
    return steps


def _leaf_value(node: Expr, quantities: Sequence[Fraction]) -> Fraction:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Qty):
        if node.index >= len(quantities):
            raise EvaluationError(f"slot N{node.index} but only {len(quantities)} quantities")
        return quantities[node.index]
    raise EvaluationError("cannot evaluate the unknown x")


def _apply(op: str, a: Fraction, b: Fraction) -> Fraction:
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
            raise NumberTooLargeError("power too large to evaluate")
        return a ** b.numerator
    if a < 0:
        raise EvaluationError("fractional power of a negative number")
    try:
        return Fraction(float(a) ** float(b))
    except (OverflowError, ValueError, ZeroDivisionError) as err:
        # a beyond the float range, a result beyond it, or a tiny a that is 0.0 as a float
        raise EvaluationError(f"power outside the float range: {err}") from err


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
    :func:`leaf_from_token`), called on the operands in order. Raises :class:`ExpressionParseError`
    on malformed input. Iterative: any number of tokens."""
    make_leaf = leaf or leaf_from_token
    pending: list[list] = []  # operators still missing an operand: [op, left operand or None]
    root: Expr | None = None
    for tok in tokens:
        if root is not None:
            raise ExpressionParseError(f"trailing tokens in prefix expression {_shown(tokens)!r}")
        if tok in OPERATORS:
            pending.append([tok, None])
            continue
        node = make_leaf(tok)
        while pending and pending[-1][1] is not None:  # this operand completes operators
            op, left = pending.pop()
            node = BinOp(op, left, node)
        if pending:
            pending[-1][1] = node
        else:
            root = node
    if root is None:
        raise ExpressionParseError(f"prefix expression ends early: {_shown(tokens)!r}")
    return root


def _shown(tokens: Sequence[str]) -> str:
    """Tokens for a message, cut short."""
    return shorten(" ".join(str(t) for t in tokens[:60]) + (" ..." if len(tokens) > 60 else ""), 300)


def shorten(text: str, size: int = 80) -> str:
    """Text for a message, cut short: a message must not hold a megabyte of input."""
    return text if len(text) <= size else text[:size] + "..."


# A number as format_number writes it (and the plain decimals a prefix file holds): no exponent, so
# "1e999999999" cannot ask Fraction for a billion-digit integer.
_PREFIX_NUMBER_RE = re.compile(r"[-+]?(?:\d+/\d+|\d+(?:\.\d*)?|\.\d+)")
_PREFIX_NUMBER_CHARS = 2 * 1240 + 2  # p/q of two MAX_EXACT_BITS integers (1,233 digits each)
_SLOT_RE = re.compile(r"N(\d{1,6})")


def leaf_from_token(tok: str) -> Expr:
    """``N3`` -> slot, ``x`` -> the unknown, a number -> :class:`Num`; :class:`UnknownSymbolError`
    otherwise, :class:`NumberTooLargeError` beyond MAX_EXACT_BITS."""
    if not isinstance(tok, str):
        raise UnknownSymbolError(f"prefix token {tok!r} is not a string")
    if m := _SLOT_RE.fullmatch(tok):
        return Qty(int(m.group(1)))
    if tok == "x":
        return Var()
    if not _PREFIX_NUMBER_RE.fullmatch(tok):
        raise UnknownSymbolError(f"unknown prefix token {tok[:40]!r}")
    if len(tok) > _PREFIX_NUMBER_CHARS:
        raise NumberTooLargeError(f"prefix number of {len(tok)} characters")
    try:
        return Num(Fraction(tok), tok)
    except ZeroDivisionError as err:
        raise UnknownSymbolError(f"prefix number {tok!r} divides by zero") from err


def is_valid_prefix(tokens: Sequence[str]) -> bool:
    """True when the tokens form exactly one complete binary prefix expression."""
    need = 1
    for tok in tokens:
        if need == 0:
            return False
        need += 1 if tok in OPERATORS else -1
    return need == 0 and len(tokens) > 0


def to_infix(expr: Expr) -> str:
    """Infix text with only the brackets that precedence needs. Iterative: any depth."""
    def pieces(node: BinOp) -> tuple:
        wrap_left, wrap_right = _needs_brackets(node)
        return (*(("(", node.left, ")") if wrap_left else (node.left,)), node.op,
                *(("(", node.right, ")") if wrap_right else (node.right,)))

    return render(expr, _infix_leaf, pieces)


def _infix_leaf(node: Expr) -> str:
    """A leaf as infix text: a number that is a fraction or negative in brackets, so that the text reads back as
    the tree (Num(2/3) right of "/" is "24/(2/3)", not "24/2/3", which is 4)."""
    text = _leaf_token(node)
    return f"({text})" if isinstance(node, Num) and ("/" in text or text.startswith("-")) else text


def render(expr: Expr, leaf_text: Callable[[Expr], str], operator_pieces: Callable[[BinOp], tuple]) -> str:
    """Text of a tree, without recursion: ``leaf_text(leaf)`` for a leaf, and for an operator node its
    pieces in order, ``operator_pieces(node)``, each a string or an operand to render in its place."""
    out: list[str] = []
    stack: list[Expr | str] = [expr]  # a str is text to emit as it is
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, BinOp):
            stack.extend(reversed(operator_pieces(item)))
        else:
            out.append(leaf_text(item))
    return "".join(out)


def _needs_brackets(expr: BinOp) -> tuple[bool, bool]:
    """Whether the left and the right operand of ``expr`` need brackets in infix."""
    prec = _PRECEDENCE[expr.op]
    left = isinstance(expr.left, BinOp) and (_PRECEDENCE[expr.left.op] < prec or expr.op == "^")
    right = isinstance(expr.right, BinOp) and (
        _PRECEDENCE[expr.right.op] < prec
        or (_PRECEDENCE[expr.right.op] == prec and expr.op not in COMMUTATIVE)
        or (_PRECEDENCE[expr.right.op] == prec and expr.right.op != expr.op)
    )
    return left, right


def depth(expr: Expr) -> int:
    """Number of operator levels: a leaf has depth 0. Iterative: any depth."""
    deepest = 0
    stack = [(expr, 0)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, BinOp):
            stack.extend(((node.left, level + 1), (node.right, level + 1)))
        else:
            deepest = max(deepest, level)
    return deepest


def operator_count(expr: Expr) -> int:
    return sum(isinstance(n, BinOp) for n in iter_nodes(expr))


def quantity_slots(expr: Expr) -> list[int]:
    """Slot indices used, in prefix order (with repeats)."""
    return [n.index for n in iter_nodes(expr) if isinstance(n, Qty)]


def substitute(expr: Expr, mapping: dict[int, Expr]) -> Expr:
    """Replace slots ``N{i}`` by ``mapping[i]`` (slots not in the mapping are kept). Iterative."""
    return rebuild(expr, lambda node: mapping.get(node.index, node) if isinstance(node, Qty) else node)


def rebuild(expr: Expr, leaf: Callable[[Expr], Expr], node_first: Callable[[BinOp], Expr | None] | None = None) -> Expr:
    """A copy of ``expr`` with every leaf replaced by ``leaf(node)``, built bottom-up without recursion.
    ``node_first(op_node)``, when given, may return a replacement for a whole operator node (its
    operands are then not visited) or None to go on into it."""
    return fold(expr, leaf, BinOp, node_first)


def fold(expr: Expr, leaf: Callable[[Expr], Any], combine: Callable[[str, Any, Any], Any],
         node_first: Callable[[BinOp], Any | None] | None = None) -> Any:
    """Bottom-up over a tree without recursion, left operand first: ``leaf(node)`` for a leaf,
    ``combine(op, left_result, right_result)`` for an operator node; ``node_first(op_node)`` may give
    a whole operator node's result before its operands are visited (None: visit them)."""
    results: list[Any] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, operands_done = stack.pop()
        if not isinstance(node, BinOp):
            results.append(leaf(node))
        elif operands_done:
            right = results.pop()
            results.append(combine(node.op, results.pop(), right))
        elif node_first is not None and (replacement := node_first(node)) is not None:
            results.append(replacement)
        else:
            stack.extend(((node, True), (node.right, False), (node.left, False)))
    return results[0]


def template(expr: Expr) -> str:
    """Prefix text with slots renumbered by first use (``* N3 N1`` -> ``* n0 n1``): the template key."""
    order: dict[int, int] = {}
    out = []
    for tok in to_prefix(expr):
        if _SLOT_RE.fullmatch(tok):
            idx = int(tok[1:])
            order.setdefault(idx, len(order))
            out.append(f"n{order[idx]}")
        else:
            out.append(tok)
    return " ".join(out)
