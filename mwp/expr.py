"""Expression trees for math word problems: a parser of our own, exact evaluation, prefix notation.

Data is parsed, never evaluated as code: the tokenizer accepts only numbers, the variable ``x``,
quantity slots ``N0``, ``N1``, ... and the operators ``+ - * / ^`` with ``( ) [ ]``. Everything else
raises :class:`ExpressionParseError`. Values are exact :class:`fractions.Fraction` wherever possible.
"""
from __future__ import annotations

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


# ---------------------------------------------------------------- numbers

_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?%?|\.\d+%?")


def parse_number(text: str) -> Fraction:
    """Exact value of a number as written in data: ``12``, ``3.50``, ``40%``, ``1,000``, ``3/4``,
    ``(3/4)``, mixed ``3((2)/(3))``. Raises :class:`ExpressionParseError` otherwise."""
    cleaned = text.strip().replace(",", "").replace("，", "")
    if not cleaned:
        raise ExpressionParseError("empty number")
    try:
        expr = parse_expression(cleaned)
        value = evaluate(expr)
    except ExpressionError as err:
        raise ExpressionParseError(f"not a number: {text!r}") from err
    if _contains(expr, (Var, Qty)):
        raise ExpressionParseError(f"not a number: {text!r}")
    return value


def _contains(expr: Expr, kinds: tuple) -> bool:
    return any(isinstance(node, kinds) for node in iter_nodes(expr))


# ---------------------------------------------------------------- tokenizer + parser

_TOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?%?|\.\d+%?)|(?P<qty>N\d+)|(?P<var>[xX])|(?P<op>[-+*/^=])"
    r"|(?P<open>[(\[])|(?P<close>[)\]]))"
)
_FULLWIDTH = str.maketrans({"（": "(", "）": ")", "［": "[", "］": "]", "＋": "+", "－": "-",
                            "×": "*", "÷": "/", "＊": "*", "／": "/", "＝": "=", "％": "%",
                            "．": "."})


def _tokenize(text: str) -> list[tuple[str, str]]:
    text = text.translate(_FULLWIDTH).replace("**", "^")
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise UnknownSymbolError(f"unknown symbol {text[pos]!r} at {pos} in {text!r}")
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


class _Parser:
    """Recursive descent: expr := term (('+'|'-') term)*; term := power (('*'|'/') power)*;
    power := unary ('^' power)?; unary := '-' unary | atom; atom := number [mixed] | N_i | x | (expr)."""

    def __init__(self, tokens: list[tuple[str, str]], source: str):
        self.tokens = tokens
        self.i = 0
        self.source = source

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ExpressionParseError(f"unexpected end of {self.source!r}")
        self.i += 1
        return tok

    def expr(self) -> Expr:
        node = self.term()
        while (tok := self.peek()) and tok[1] in ("+", "-"):
            self.i += 1
            node = BinOp(tok[1], node, self.term())
        return node

    def term(self) -> Expr:
        node = self.power()
        while (tok := self.peek()) and tok[1] in ("*", "/"):
            self.i += 1
            node = BinOp(tok[1], node, self.power())
        return node

    def power(self) -> Expr:
        node = self.unary()
        if (tok := self.peek()) and tok[1] == "^":
            self.i += 1
            node = BinOp("^", node, self.power())
        return node

    def unary(self) -> Expr:
        tok = self.peek()
        if tok and tok[1] == "-":
            self.i += 1
            operand = self.unary()
            if isinstance(operand, Num):
                return Num(-operand.value, "-" + operand.text)
            return BinOp("-", Num(Fraction(0)), operand)
        if tok and tok[1] == "+":
            self.i += 1
            return self.unary()
        return self.atom()

    def atom(self) -> Expr:
        kind, text = self.take()
        if kind == "num":
            value = _number_token_value(text)
            nxt = self.peek()
            if nxt and nxt[0] == "open" and not text.endswith("%"):
                # A number directly followed by a bracket is a mixed number: 3((2)/(3)) = 3 + 2/3.
                self.i += 1
                frac = self.expr()
                self.close()
                if _contains(frac, (Var, Qty)):
                    raise ExpressionParseError(f"implicit multiplication in {self.source!r}")
                return Num(value + evaluate(frac), f"{text}({to_infix(frac)})")
            return Num(value, text)
        if kind == "qty":
            return Qty(int(text[1:]))
        if kind == "var":
            return Var("x")
        if kind == "open":
            node = self.expr()
            self.close()
            return node
        if kind == "close":
            raise UnbalancedBracketsError(f"unexpected closing bracket in {self.source!r}")
        raise ExpressionParseError(f"unexpected {text!r} in {self.source!r}")

    def close(self) -> None:
        tok = self.peek()
        if tok is None:
            raise UnbalancedBracketsError(f"unclosed bracket in {self.source!r}")
        if tok[0] != "close":
            raise ExpressionParseError(f"expected a closing bracket, got {tok[1]!r} in {self.source!r}")
        self.i += 1


def _number_token_value(text: str) -> Fraction:
    if text.endswith("%"):
        return Fraction(text[:-1]) / 100
    return Fraction(text)


def parse_expression(text: str) -> Expr:
    """Parse one infix expression (no ``=``)."""
    tokens = _tokenize(text)
    if not tokens:
        raise ExpressionParseError("empty expression")
    _check_brackets(tokens, text)
    parser = _Parser(tokens, text)
    try:
        node = parser.expr()
    except RecursionError as err:  # "((((...1))))" or "----1" thousands deep: not an equation of ours
        raise ExpressionParseError(f"expression nested too deeply: {text[:40]!r}...") from err
    if parser.peek() is not None:
        raise ExpressionParseError(f"unexpected {parser.peek()[1]!r} in {text!r}")  # type: ignore[index]
    return node


def _check_brackets(tokens: list[tuple[str, str]], text: str) -> None:
    """Every ``(`` closes with ``)`` and every ``[`` with ``]``."""
    expected: list[str] = []
    for kind, tok in tokens:
        if kind == "open":
            expected.append(")" if tok == "(" else "]")
        elif kind == "close" and (not expected or expected.pop() != tok):
            raise UnbalancedBracketsError(f"unbalanced brackets in {text!r}")
    if expected:
        raise UnbalancedBracketsError(f"unbalanced brackets in {text!r}")


@dataclass(frozen=True)
class Equation:
    lhs: Expr
    rhs: Expr


def parse_equation(text: str) -> Equation:
    """Parse ``lhs=rhs`` or a bare expression (read as ``x=expr``)."""
    # MAWPS names the unknown now and then ("hours=4.0*0.5/3.0"): a bare word left of '=' is x.
    parts = re.sub(r"^\s*[A-Za-z_]+\s*=", "x=", text.translate(_FULLWIDTH)).split("=")
    if len(parts) == 1:
        return Equation(Var("x"), parse_expression(parts[0]))
    if len(parts) != 2:
        raise ExpressionParseError(f"more than one '=' in {text!r}")
    return Equation(parse_expression(parts[0]), parse_expression(parts[1]))


def equation_to_expression(text: str, answer: Fraction | None = None) -> Expr:
    """The expression that computes x: ``x=e`` gives ``e``; ``e=x`` gives ``e``; an equation with x
    elsewhere (``(7*x)+4=(3*x)-20``) is solved for x with sympy from the parsed tree and the
    solution returned as a constant. Never evaluates the raw string."""
    eq = parse_equation(text)
    lhs_x, rhs_x = _contains(eq.lhs, (Var,)), _contains(eq.rhs, (Var,))
    if isinstance(eq.lhs, Var) and not rhs_x:
        return eq.rhs
    if isinstance(eq.rhs, Var) and not lhs_x:
        return eq.lhs
    if not lhs_x and not rhs_x:
        raise NotSolvableError(f"no unknown in {text!r}")
    return solve_for_x(eq, answer)


def solve_for_x(eq: Equation, answer: Fraction | None = None) -> Expr:
    """Solve an equation in x symbolically: every literal becomes a sympy symbol, so the solution is
    an expression tree over the same literals (``(7*x)+4=(3*x)-20`` gives ``(-20-4)/(7-3)``-like)."""
    import sympy

    x = sympy.Symbol("x")
    literals: dict = {}

    def literal(node: Expr):
        if isinstance(node, Var):
            return x
        if isinstance(node, Qty):
            raise NotSolvableError("quantity slot inside an equation to solve")
        sym = sympy.Symbol(f"c{len(literals)}", positive=True)
        literals[sym] = node
        return sym

    lhs, rhs = to_sympy(eq.lhs, literal), to_sympy(eq.rhs, literal)
    solutions = sympy.solve(sympy.Eq(lhs, rhs), x)
    if len(solutions) > 1 and answer is not None:
        # Several roots (a quadratic): keep the one the record's answer names.
        values = {sym: sympy.Rational(n.value.numerator, n.value.denominator) for sym, n in literals.items()}
        solutions = [s for s in solutions if abs(complex(s.subs(values).evalf()) - float(answer)) <= 1e-4 * max(1.0, abs(float(answer)))]
    if len(solutions) != 1:
        raise NotSolvableError(f"{len(solutions)} solutions for x")
    return from_sympy(solutions[0], literals)


def to_sympy(expr: Expr, leaf):
    """The sympy expression of a tree; ``leaf(node)`` gives the sympy object of each leaf. Built from
    the tree, never from a string."""
    if isinstance(expr, BinOp):
        left, right = to_sympy(expr.left, leaf), to_sympy(expr.right, leaf)
        if expr.op == "+":
            return left + right
        if expr.op == "-":
            return left - right
        if expr.op == "*":
            return left * right
        if expr.op == "/":
            return left / right
        return left ** right
    return leaf(expr)


def from_sympy(e, literals) -> Expr:
    """A tree for the sympy expression ``e``; ``literals`` maps its symbols back to leaves. Raises
    :class:`NotSolvableError` for what arithmetic trees cannot write (roots, functions)."""
    import sympy

    if e in literals:
        return literals[e]
    if e.is_Rational:
        return Num(Fraction(int(e.p), int(e.q)))
    if e.is_Add:
        pos, neg = [], []
        for term in e.as_ordered_terms():
            coeff, rest = term.as_coeff_Mul()
            (neg if coeff < 0 else pos).append(-term if coeff < 0 else term)
        node = from_sympy(pos[0], literals) if pos else Num(Fraction(0))
        for term in pos[1:]:
            node = BinOp("+", node, from_sympy(term, literals))
        for term in neg:
            node = BinOp("-", node, from_sympy(term, literals))
        return node
    if e.is_Mul:
        coeff, rest = e.as_coeff_Mul()
        if coeff < 0:
            # -(a+b)/(c-d) is written (a+b)/(d-c) (or with the sign moved into the numerator), so
            # the tree needs no literal 0 that the text does not hold.
            num, den = sympy.fraction(-e)
            if den.is_Add:
                return BinOp("/", from_sympy(num, literals), from_sympy(sympy.expand(-den), literals))
            if num.is_Add:
                return BinOp("/", from_sympy(sympy.expand(-num), literals), from_sympy(den, literals))
            return BinOp("-", Num(Fraction(0)), from_sympy(-e, literals))
        num, den = sympy.fraction(e)
        if den != 1 and num.is_Add and all(t.as_coeff_Mul()[0] < 0 for t in num.args):
            num, den = sympy.expand(-num), sympy.expand(-den)
        if den != 1:
            return BinOp("/", from_sympy(num, literals), from_sympy(den, literals))
        factors = e.as_ordered_factors()
        node = from_sympy(factors[0], literals)
        for f in factors[1:]:
            node = BinOp("*", node, from_sympy(f, literals))
        return node
    if e.is_Pow:
        base, exp = e.as_base_exp()
        if exp.is_negative:
            return BinOp("/", Num(Fraction(1)), from_sympy(base ** -exp, literals))
        return BinOp("^", from_sympy(base, literals), from_sympy(exp, literals))
    raise NotSolvableError(f"cannot express the solution {e} as an arithmetic tree")


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


def answers_match(predicted: Fraction | float, gold: Fraction | float, rel_tol: float = 1e-4) -> bool:
    """Relative tolerance 1e-4 (absolute for gold 0)."""
    p, g = float(predicted), float(gold)
    return abs(p - g) <= rel_tol * max(abs(g), 1e-12) or abs(p - g) < 1e-9


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
