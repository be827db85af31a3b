"""ASDiv: the XML reader and how its formulas and answers are read.

A formula computes the answer, written as people write it, not as a parser reads it:
- ``7+2=9``: the side that computes (``7+2``) is the expression; the number it equals is only stated;
- unit annotations in brackets: ``2 (dime)*10 (cent/dime)=20`` is ``2*10``. A bracket group is a unit
  when it holds a letter, no digit and no operator but ``/``, and is not ``x`` alone;
- a mixed number ``3 1/2`` is 3+1/2, as in the answers;
- implicit multiplication: ``x=3(75+15+75+15)`` is ``3*(75+15+75+15)`` = 540 (the generic parser would
  read ``3(...)`` as the mixed number 3 + ...), likewise ``(2+3)(4)``, ``)3``, ``3x``;
- several steps separated by ``;``: ``43+19+16=78; 78-77=1``. A number a later step uses that an earlier
  step stated (78) is that step's expression, so the whole is ``(43+19+16)-77``, over the text's
  numbers. A step's stated result is what later steps write, so substitution is by that value (the
  computed value when a step states none); the last step's expression is the answer's.
A formula with x elsewhere than alone on one side is passed on to be solved (one step only). A
remainder (``248/16=15 r8``) is skipped. Whatever cannot be read is a :class:`ProblemError`.
"""
from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Iterator

from mwp.expr import Expr, ExpressionError, Num, Var, evaluate, iter_nodes, rebuild, shorten, to_infix
from mwp.parse import MAX_EXPRESSION_CHARS, MAX_EXPRESSION_TOKENS, parse_expression
from mwp.problem import ProblemError
from mwp.records import DataFormatError, RawRecord, ReadResult, build_all, join_sentences

_REMAINDER_RE = re.compile(r"\d\s*r\s*\d", re.IGNORECASE)
_LEADING_NUMBER_RE = re.compile(r"\s*\$?\s*(-?(?:\d+\s+\d+/\d+|\d[\d,]*(?:\.\d+)?(?:/\d+)?%?|\.\d+%?))")
_UNITS_ONLY_RE = re.compile(r"(?:\([^()]*\)\s*)*")
_BRACKET_GROUP_RE = re.compile(r"\(([^()]*)\)")
_UNIT_RE = re.compile(r"\s*[A-Za-z][A-Za-z\s./']*")  # letters, spaces, . / and ': (cent/dime), (sq. ft.)
_MIXED_NUMBER_RE = re.compile(r"(?<![\d.])(\d+)\s+(\d+/\d+)")  # "3 1/2" is 3+1/2, as in the answers
# Where a multiplication sign is left out: "3(", ")(", ")3", "3x", "x(", "x3", "%(".
_IMPLICIT_TIMES_RE = re.compile(r"(?<=[\d.%)xX])\s*(?=\()|(?<=\))\s*(?=[\d.xX])|(?<=[\d.])\s*(?=[xX])|(?<=[xX])\s*(?=\d)")


def asdiv_answer(text: str) -> str:
    """The number an ASDiv answer starts with: ``9 (apples)`` -> ``9``; a mixed ``1 1/2`` -> ``1+1/2``.
    Raises :class:`ProblemError` (``remainder`` or ``bad_answer``) otherwise, also for several
    answers (``9 (apples); 5 (pears)``)."""
    if _REMAINDER_RE.search(text):
        raise ProblemError("remainder", f"answer {shorten(text)!r} has a remainder")
    m = _LEADING_NUMBER_RE.match(text)
    if not m:
        raise ProblemError("bad_answer", f"answer {shorten(text)!r} does not start with a number")
    if not _UNITS_ONLY_RE.fullmatch(text[m.end():].strip()):
        raise ProblemError("bad_answer", f"answer {shorten(text)!r} is not one number with a unit")
    number = m.group(1).replace(",", "")
    if " " in number:  # mixed number "1 1/2"
        whole, frac = number.split()
        number = f"{whole}+{frac}"
    return number


def asdiv_equation(formula: str) -> str:
    """The equation of an ASDiv formula (module docstring): ``x=<expression>``, or the cleaned formula
    when x must be solved for. Raises only :class:`ProblemError`."""
    if len(formula) > MAX_EXPRESSION_CHARS:
        raise ProblemError("expression_too_long", f"formula of {len(formula)} characters")
    if _REMAINDER_RE.search(formula):
        raise ProblemError("remainder", f"formula {shorten(formula)!r} has a remainder")
    steps = [step for step in _explicit(formula).split(";") if step.strip()]
    if not steps:
        raise ProblemError("unparsable_equation", f"empty formula {formula!r}")
    try:
        sides = [[parse_expression(side) for side in step.split("=")] for step in steps]
    except ExpressionError as err:
        raise ProblemError(err.reason, f"formula {shorten(formula)!r}: {err}") from err
    if any(_is_equation_in_x(step) for step in sides):
        if len(steps) > 1:
            raise ProblemError("unparsable_equation", f"formula {shorten(formula)!r}: x inside a step of several")
        return steps[0].strip()
    return "x=" + to_infix(_substituted(sides, formula))


def _explicit(formula: str) -> str:
    """Units dropped and implicit multiplications written out."""
    def drop_unit(m: re.Match) -> str:
        inner = m.group(1)
        is_unit = _UNIT_RE.fullmatch(inner) and inner.strip() not in ("x", "X")
        return " " if is_unit else m.group(0)

    formula = _MIXED_NUMBER_RE.sub(r"(\1+\2)", _BRACKET_GROUP_RE.sub(drop_unit, formula))
    return _IMPLICIT_TIMES_RE.sub("*", formula)


def _is_equation_in_x(sides: list[Expr]) -> bool:
    """x somewhere other than alone on a side (``x+5=12``)."""
    return any(not isinstance(side, Var) and any(isinstance(n, Var) for n in iter_nodes(side)) for side in sides)


def _substituted(steps: list[list[Expr]], formula: str) -> Expr:
    """The last step's expression, each number an earlier step stated replaced by that step's
    expression; at most MAX_EXPRESSION_TOKENS nodes (a chain of steps that reuse each other can
    double the tree at every step)."""
    results: dict[Fraction, tuple[Expr, int]] = {}  # stated value -> (expression, node count)
    expr: Expr = Num(Fraction(0))
    for sides in steps:
        computing = [s for s in sides if not isinstance(s, (Var, Num))] or [s for s in sides if isinstance(s, Num)]
        if not computing:
            raise ProblemError("unparsable_equation", f"formula {shorten(formula)!r}: a step with nothing to compute")
        expr, size = computing[0], 0
        for node in iter_nodes(expr):
            size += results[node.value][1] if isinstance(node, Num) and node.value in results else 1
        if size > MAX_EXPRESSION_TOKENS:
            raise ProblemError("expression_too_long", f"formula {shorten(formula)!r}: over {MAX_EXPRESSION_TOKENS} nodes")
        if results:
            expr = rebuild(expr, lambda n: results[n.value][0] if isinstance(n, Num) and n.value in results else n)
        stated = [s.value for s in sides if isinstance(s, Num) and s is not computing[0]]
        try:
            value = stated[0] if stated else evaluate(expr)
        except ExpressionError as err:
            raise ProblemError(err.reason, f"formula {shorten(formula)!r}: {err}") from err
        results[value] = (expr, size)
    return expr


def read_asdiv(path) -> ReadResult:
    """ASDiv XML: ``<Problem ID=..><Body/><Question/><Solution-Type/><Answer>9 (apples)</Answer>
    <Formula>7+2=9</Formula></Problem>``."""
    import xml.etree.ElementTree as ET

    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as err:
        raise DataFormatError(f"{path}: not XML: {err}") from err
    elements = list(root.iter("Problem"))
    if not elements and root.tag != "Problem":
        raise DataFormatError(f"{path}: no <Problem> elements")

    def child(el, index: int, tag: str) -> str:
        node = el.find(tag)
        if node is None:
            raise DataFormatError(f"{path}: problem {el.get('ID', '#' + str(index))} (#{index}) has no <{tag}>")
        return (node.text or "").strip()

    def raw() -> Iterator[RawRecord]:
        for i, el in enumerate(elements):
            rid = el.get("ID") or f"#{i}"
            text = join_sentences(child(el, i, "Body"), child(el, i, "Question"))
            formula, answer = child(el, i, "Formula"), child(el, i, "Answer")
            try:
                yield RawRecord(rid, text, asdiv_equation(formula), asdiv_answer(answer))
            except ProblemError as err:
                yield RawRecord(rid, text, formula, answer, error=err)

    return build_all(raw(), "asdiv", "en")
