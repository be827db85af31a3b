"""Solving an equation for x with sympy, from the parsed tree (never from a string), in bounded time.

Every literal becomes a positive sympy symbol, so the solution is an expression tree over the same
literals. Limits, checked before sympy sees the equation: at most :data:`MAX_SOLVE_LEAVES` literals
and x's, degree at most :data:`MAX_SOLVE_DEGREE` in x after clearing denominators, no x in an exponent
or under a fractional power, no exponent beyond :data:`MAX_SOLVE_EXPONENT`; the solve itself gets
:data:`SOLVE_CPU_SECONDS` of CPU time (:mod:`mwp.timelimit`). Beyond any of these: :class:`EquationTooHardError` (``equation_too_hard``).
Whatever else sympy raises (``NotImplementedError`` on an equation it has no method for, ...) becomes
:class:`NotSolvableError`. sympy is imported lazily: the CLI's data commands must not pay for it.
"""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass
from fractions import Fraction

from mwp.expr import (BinOp, EquationTooHardError, Expr, ExpressionError, NotSolvableError, Num, Qty, Var,
                      evaluate, format_number, iter_nodes, shorten)
from mwp.timelimit import OutOfTime, cpu_time_limit


@dataclass(frozen=True)
class Equation:
    """A parsed equation: both sides as trees (``x`` is :class:`mwp.expr.Var`)."""

    lhs: Expr
    rhs: Expr


# The data's equations to solve (19 in MAWPS, none in Math23K) have at most 8 leaves, degree 2, and
# solve in at most 0.16 s of CPU time once sympy is warm.
MAX_SOLVE_LEAVES = 16  # literals and occurrences of x
MAX_SOLVE_DEGREE = 2  # linear and quadratic; sympy's closed forms beyond are huge and slow
# Any exponent, of x or of a constant: sympy computes 231^-28032429 exactly, in one C call no time
# limit interrupts. 64 is also the largest exact power mwp.expr.evaluate computes.
MAX_SOLVE_EXPONENT = 64
SOLVE_CPU_SECONDS = 0.5  # CPU time, not wall time: a loaded machine must not change what a data set reads


def solve_for_x(eq: Equation, answer: Fraction | None = None) -> Expr:
    """Solve an equation in x symbolically: every literal becomes a sympy symbol, so the solution is
    an expression tree over the same literals (``(7*x)+4=(3*x)-20`` gives ``(-20-4)/(7-3)``-like).
    Bounded (module docstring): :class:`EquationTooHardError` beyond the limits, :class:`NotSolvableError`
    for no, several (with no ``answer`` to choose) or inexpressible solutions."""
    _check_solvable(eq)
    import sympy  # outside the time limit: importing is not solving

    _warm_up_sympy()
    from sympy.core.parameters import global_parameters

    # An interruption may land inside sympy's own "with evaluate(False):" before it restores the flag.
    flags = (global_parameters.evaluate, global_parameters.distribute, global_parameters.exp_is_pow)
    try:
        with cpu_time_limit(SOLVE_CPU_SECONDS):
            return _solve(eq, answer, sympy)
    except OutOfTime as err:
        raise EquationTooHardError(f"solving took over {SOLVE_CPU_SECONDS} s of CPU time") from err
    except ExpressionError:
        raise
    except Exception as err:  # sympy's NotImplementedError, TypeError on a complex root, ...
        raise NotSolvableError(f"sympy cannot solve it: {type(err).__name__}: {shorten(str(err))}") from err
    finally:
        global_parameters.evaluate, global_parameters.distribute, global_parameters.exp_is_pow = flags


@functools.cache
def _warm_up_sympy() -> None:
    """The first solve of a process pays for sympy's lazy set-up (a cold quadratic takes 0.26 s of CPU,
    a warm one 0.1 s); paid once here, outside the time limit, so the limit measures an equation's own
    work and a data set reads the same whichever record comes first."""
    import sympy

    def frac(a: Expr, b: Expr) -> Expr:
        return BinOp("/", a, b)

    sixty, x = Num(Fraction(60)), Var()
    warm = Equation(BinOp("+", frac(Num(Fraction(40)), BinOp("+", sixty, x)), frac(Num(Fraction(40)), BinOp("-", sixty, x))),
                    Num(Fraction(3, 2)))  # (40/(60+x))+(40/(60-x))=1.5
    _solve(warm, Fraction(20), sympy)


def _check_solvable(eq: Equation) -> None:
    """Refuse, before sympy sees it, an equation beyond MAX_SOLVE_LEAVES or MAX_SOLVE_DEGREE."""
    leaves = 0
    for node in itertools.chain(iter_nodes(eq.lhs), iter_nodes(eq.rhs)):
        if isinstance(node, Qty):
            raise NotSolvableError("quantity slot inside an equation to solve")
        leaves += not isinstance(node, BinOp)
        if leaves > MAX_SOLVE_LEAVES:
            raise EquationTooHardError(f"equation to solve has more than {MAX_SOLVE_LEAVES} numbers and x's")
    (lhs_num, lhs_den), (rhs_num, rhs_den) = _degrees(eq.lhs), _degrees(eq.rhs)
    degree = max(lhs_num + rhs_den, rhs_num + lhs_den)  # lhs_num/lhs_den = rhs_num/rhs_den, cross-multiplied
    if degree > MAX_SOLVE_DEGREE:
        raise EquationTooHardError(f"equation of degree {degree} in x (limit {MAX_SOLVE_DEGREE})")


def _degrees(node: Expr) -> tuple[int, int]:
    """Upper bounds on the degrees in x of the numerator and denominator of ``node`` as a rational
    function. Recursive: called only on trees of at most MAX_SOLVE_LEAVES leaves."""
    if isinstance(node, Var):
        return 1, 0
    if not isinstance(node, BinOp):
        return 0, 0
    (ln, ld), (rn, rd) = _degrees(node.left), _degrees(node.right)
    if node.op in ("+", "-"):
        return max(ln + rd, rn + ld), ld + rd
    if node.op == "*":
        return ln + rn, ld + rd
    if node.op == "/":
        return ln + rd, ld + rn
    if rn or rd:
        raise EquationTooHardError("x in an exponent")
    power = evaluate(node.right)  # x-free, slot-free: bounded like any evaluation
    if abs(power) > MAX_SOLVE_EXPONENT:
        raise EquationTooHardError(f"power {format_number(power)} (limit {MAX_SOLVE_EXPONENT})")
    if not (ln or ld):
        return 0, 0
    if not isinstance(node.right, Num) or power.denominator != 1:
        raise EquationTooHardError("x under a fractional or computed power")
    if abs(power) > MAX_SOLVE_DEGREE:
        raise EquationTooHardError(f"x to the power {power}")
    power = int(power)
    return (ln * power, ld * power) if power >= 0 else (ld * -power, ln * -power)


def _solve(eq: Equation, answer: Fraction | None, sympy) -> Expr:
    x = sympy.Symbol("x")
    literals: dict = {}

    def literal(node: Expr):
        if isinstance(node, Var):
            return x
        sym = sympy.Symbol(f"c{len(literals)}", positive=True)
        literals[sym] = node
        return sym

    lhs, rhs = to_sympy(eq.lhs, literal, integer_exponents=True), to_sympy(eq.rhs, literal, integer_exponents=True)
    # check=False: sympy's own check of each root under the symbols' assumptions took most of the time
    # (0.3 s a quadratic; minutes for a long equation). Roots are checked at the literals' values instead.
    candidates = sympy.solve(sympy.Eq(lhs, rhs), x, check=False)
    values = {sym: sympy.Rational(n.value.numerator, n.value.denominator) for sym, n in literals.items()}
    at_values = (lhs.subs(values), rhs.subs(values))
    roots = [(s, v) for s in candidates if (v := _numeric(s.subs(values))) is not None and _is_root(at_values, x, v)]
    if len(roots) > 1 and answer is not None:
        # Several roots (a quadratic): keep the one the record's answer names.
        roots = [(s, v) for s, v in roots if abs(v - float(answer)) <= 1e-4 * max(1.0, abs(float(answer)))]
    if len(roots) != 1:
        raise NotSolvableError(f"{len(roots)} solutions for x")
    return from_sympy(roots[0][0], literals)


def _numeric(value) -> complex | None:
    """A sympy number as a finite complex, or None (zoo, nan, a leftover symbol)."""
    import cmath

    try:
        number = complex(value.evalf(30))
    except (TypeError, ValueError):
        return None
    return number if cmath.isfinite(number) else None


def _is_root(sides, x, value: complex) -> bool:
    """Both sides finite at x=value (no denominator vanishes: sympy does not check, with check=False)
    and equal to 1e-6 relative."""
    import sympy

    point = sympy.Float(value.real, 30) + sympy.I * sympy.Float(value.imag, 30) if value.imag else sympy.Float(value.real, 30)
    lhs, rhs = (_numeric(side.subs(x, point)) for side in sides)
    return lhs is not None and rhs is not None and abs(lhs - rhs) <= 1e-6 * max(1.0, abs(lhs), abs(rhs))


def to_sympy(expr: Expr, leaf, integer_exponents: bool = False):
    """The sympy expression of a tree; ``leaf(node)`` gives the sympy object of each leaf. Built from
    the tree, never from a string. ``integer_exponents``: an integer literal exponent stays a number
    (``x^2`` is a square, not x to a symbol's power, which sympy cannot solve)."""
    if isinstance(expr, BinOp):
        left = to_sympy(expr.left, leaf, integer_exponents)
        if expr.op == "^" and integer_exponents and isinstance(expr.right, Num) and expr.right.value.denominator == 1:
            import sympy

            return left ** sympy.Integer(expr.right.value.numerator)
        right = to_sympy(expr.right, leaf, integer_exponents)
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
