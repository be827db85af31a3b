"""Parsing equations and numbers as written in data, into the trees of :mod:`mwp.expr`.

Data is parsed, never evaluated as code: the tokenizer accepts only numbers, the variable ``x``,
quantity slots ``N0``, ``N1``, ... and the operators ``+ - * / ^`` with ``( ) [ ]``. Everything else
raises :class:`ExpressionParseError`. Equations with the unknown elsewhere than alone on one side
are solved for x with sympy, from the parsed tree (never from the string).

Limits (every entry point raises only :class:`~mwp.expr.ExpressionError` subclasses, in bounded time):

- text of more than :data:`MAX_EXPRESSION_CHARS` characters or :data:`MAX_EXPRESSION_TOKENS` tokens, or
  brackets nested deeper than :data:`MAX_BRACKET_DEPTH`: :class:`ExpressionTooLongError`
  (``expression_too_long``). The parser recurses only per bracket level; chains of operators, powers
  and signs are read in loops.
- a written number of more than :data:`MAX_NUMBER_DIGITS` digits, a value beyond
  :data:`mwp.expr.MAX_EXACT_BITS`: :class:`NumberTooLargeError` (``number_too_large``).
- solving for x (:mod:`mwp.solve`, re-exported here): bounded in size, degree and CPU time,
  :class:`EquationTooHardError` (``equation_too_hard``) beyond; whatever else sympy raises becomes
  :class:`NotSolvableError`.
"""
from __future__ import annotations

import re
from fractions import Fraction

from mwp.expr import (BinOp, Expr, ExpressionError, ExpressionParseError, ExpressionTooLongError,
                      NotSolvableError, Num, NumberTooLargeError, Qty, UnbalancedBracketsError,
                      UnknownSymbolError, Var, evaluate, iter_nodes, shorten, to_infix)
from mwp.solve import Equation, from_sympy, solve_for_x, to_sympy  # noqa: F401 (re-exported)

# The data sets' longest equation has 102 characters and 97 tokens (Math23K), brackets 4 deep and
# numbers of 18 digits (MAWPS): these limits leave a wide margin and still bound every tree a reader
# builds (at most 300 tokens: depth at most 150, safe for the recursive code of the other layers).
MAX_EXPRESSION_CHARS = 1000
MAX_EXPRESSION_TOKENS = 300
MAX_BRACKET_DEPTH = 30  # the parser recurses 5 calls a bracket level: 150 frames at most
MAX_NUMBER_DIGITS = 30  # digits of one written number (digits after the point included)

# ---------------------------------------------------------------- numbers

_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?%?|\.\d+%?")


def parse_number(text: str) -> Fraction:
    """Exact value of a number as written in data: ``12``, ``3.50``, ``40%``, ``1,000``, ``3/4``,
    ``(3/4)``, mixed ``3((2)/(3))``. Raises :class:`ExpressionParseError` otherwise
    (:class:`NumberTooLargeError`, :class:`ExpressionTooLongError` beyond the limits above)."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise NumberTooLargeError(f"a number of {len(text)} characters")
    cleaned = text.strip().replace(",", "").replace("，", "")
    if not cleaned:
        raise ExpressionParseError("empty number")
    try:
        expr = parse_expression(cleaned)
        value = evaluate(expr)
    except (NumberTooLargeError, ExpressionTooLongError):  # keep their own skip reasons
        raise
    except ExpressionError as err:
        raise ExpressionParseError(f"not a number: {shorten(text)!r}") from err
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
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionTooLongError(f"expression of {len(text)} characters (limit {MAX_EXPRESSION_CHARS})")
    text = text.translate(_FULLWIDTH).replace("**", "^")
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TOKEN_RE.match(text, pos)
        if not m or m.end() == pos:
            raise UnknownSymbolError(f"unknown symbol {text[pos]!r} at {pos} in {shorten(text)!r}")
        kind = m.lastgroup
        assert kind is not None
        tokens.append((kind, m.group(kind)))
        pos = m.end()
        if len(tokens) > MAX_EXPRESSION_TOKENS:
            raise ExpressionTooLongError(f"expression of more than {MAX_EXPRESSION_TOKENS} tokens: {shorten(text)!r}")
    return tokens


class _Parser:
    """Recursive descent: expr := term (('+'|'-') term)*; term := power (('*'|'/') power)*;
    power := unary ('^' power)?; unary := '-' unary | atom; atom := number [mixed] | N_i | x | (expr).
    Chains (``1+2+...``, ``2^2^...``, ``--...1``) are loops; only a bracket level recurses."""

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
        operands = [self.unary()]
        while (tok := self.peek()) and tok[1] == "^":
            self.i += 1
            operands.append(self.unary())
        node = operands.pop()
        while operands:  # right associative: 2^3^2 is 2^(3^2)
            node = BinOp("^", operands.pop(), node)
        return node

    def unary(self) -> Expr:
        signs = []
        while (tok := self.peek()) and tok[1] in ("-", "+"):
            self.i += 1
            signs.append(tok[1])
        node = self.atom()
        for sign in reversed(signs):  # the innermost sign first
            if sign == "+":
                continue
            if isinstance(node, Num):
                node = Num(-node.value, "-" + node.text)
            else:
                node = BinOp("-", Num(Fraction(0)), node)
        return node

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
            if len(text) > 7:  # N and at most six digits (mwp.expr.MAX_SLOT_INDEX)
                raise UnknownSymbolError(f"slot {shorten(text, 20)!r} out of range in {self.source!r}")
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
    digits = len(text) - text.count(".") - text.count("%")
    if digits > MAX_NUMBER_DIGITS:
        raise NumberTooLargeError(f"a number of {digits} digits (limit {MAX_NUMBER_DIGITS}): {shorten(text, 40)!r}")
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
    node = parser.expr()
    if parser.peek() is not None:
        raise ExpressionParseError(f"unexpected {parser.peek()[1]!r} in {text!r}")  # type: ignore[index]
    return node


def _check_brackets(tokens: list[tuple[str, str]], text: str) -> None:
    """Every ``(`` closes with ``)`` and every ``[`` with ``]``, at most MAX_BRACKET_DEPTH deep."""
    expected: list[str] = []
    for kind, tok in tokens:
        if kind == "open":
            expected.append(")" if tok == "(" else "]")
            if len(expected) > MAX_BRACKET_DEPTH:
                raise ExpressionTooLongError(f"brackets nested more than {MAX_BRACKET_DEPTH} deep in {shorten(text)!r}")
        elif kind == "close" and (not expected or expected.pop() != tok):
            raise UnbalancedBracketsError(f"unbalanced brackets in {text!r}")
    if expected:
        raise UnbalancedBracketsError(f"unbalanced brackets in {text!r}")


def parse_equation(text: str) -> Equation:
    """Parse ``lhs=rhs`` or a bare expression (read as ``x=expr``)."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionTooLongError(f"equation of {len(text)} characters (limit {MAX_EXPRESSION_CHARS})")
    # MAWPS names the unknown now and then ("hours=4.0*0.5/3.0"): a bare word left of '=' is x.
    parts = re.sub(r"^\s*[A-Za-z_]+\s*=", "x=", text.translate(_FULLWIDTH)).split("=")
    if len(parts) == 1:
        return Equation(Var("x"), parse_expression(parts[0]))
    if len(parts) != 2:
        raise ExpressionParseError(f"more than one '=' in {shorten(text)!r}")
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
