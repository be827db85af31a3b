"""Parsing equations and numbers as written in data, into the trees of :mod:`mwp.expr`.

Data is parsed, never evaluated as code: the tokenizer accepts only numbers, the variable ``x``,
quantity slots ``N0``, ``N1``, ... and the operators ``+ - * / ^`` with ``( ) [ ]``. Everything else
raises :class:`ExpressionParseError`. Equations with the unknown elsewhere than alone on one side
are solved for x with sympy, from the parsed tree (never from the string).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

from mwp.expr import (BinOp, Expr, ExpressionError, ExpressionParseError, NotSolvableError, Num, Qty,
                      UnbalancedBracketsError, UnknownSymbolError, Var, evaluate, iter_nodes, to_infix)

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


