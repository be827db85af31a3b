"""The built-in corpus: English math word problems generated from small scenario grammars.

A scenario (shopping, sharing, baking, ...) names kinds of quantities. Each kind has sentences that
state one quantity of that kind ("Tom buys 4 pens."), and rules that derive it from two other kinds
(cost = count * price). A problem is a derivation tree whose leaves are stated in the order they are
used and whose root is asked about in a last question sentence. So a deeper problem is literally a
shallower one with a stated quantity replaced by the sentences that compute it (the paper's Figure 1
and GECA operation 1), and every template occurs across scenarios, names and objects.

Values are chosen so that answers are exact positive integers: no division by zero, no remainder,
no negative count, every leaf value distinct in its problem (so number mapping is unambiguous).
Problems go through :func:`mwp.problem.build_problem` like real data, with provenance source
``builtin`` and the scenario in ``provenance.detail``.
"""
from __future__ import annotations

import random
import string
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import lru_cache
from pathlib import Path

from mwp.expr import BinOp, Expr, Num, evaluate
from mwp.problem import Problem, ProblemError, build_problem


from mwp.scenarios import POOLS, SCENARIOS, Kind, Rule, Scenario  # noqa: F401 (part of this API)


@lru_cache(maxsize=1)
def names() -> tuple[str, ...]:
    """English person names from the list shared with entity substitution (lines ``lang gender name``)."""
    text = (Path(__file__).parent / "resources" / "names.txt").read_text(encoding="utf-8")
    rows = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return tuple(row[-1] for row in rows if row[0] == "en")


# ---------------------------------------------------------------- derivation trees


class _Reject(Exception):
    """This draw breaks a constraint; the caller draws again."""


@dataclass
class _Node:
    kind: str
    rule: Rule | None = None
    left: "_Node | None" = None
    right: "_Node | None" = None
    value: int = 0


@lru_cache(maxsize=None)
def _can_expand(scenario: Scenario, kind: str, ops: int) -> bool:
    """Whether ``kind`` has a derivation with exactly ``ops`` operators (ignoring value constraints)."""
    spec = scenario.kinds[kind]
    if ops == 0:
        return bool(spec.say)
    return any(_can_expand(scenario, r.left, k) and _can_expand(scenario, r.right, ops - 1 - k)
               for r in spec.rules for k in range(ops))


def _draw_shape(rng: random.Random, scenario: Scenario, kind: str, ops: int,
                ancestors: tuple[str, ...], used: list[str], self_chain: bool = False) -> _Node:
    """A random derivation of ``kind`` with ``ops`` operators. A kind never derives from itself
    through others (price from cost from price), and a kind that is not a repeatable event is stated
    at most once, except along a chain ``money = money - cost`` that continues the same quantity."""
    spec = scenario.kinds[kind]
    if not self_chain:
        if kind in ancestors:
            raise _Reject
        if kind in used and not spec.repeat:
            raise _Reject
        used.append(kind)
    if ops == 0:
        return _Node(kind)
    choices = [(r, k) for r in spec.rules for k in range(ops)
               if _can_expand(scenario, r.left, k) and _can_expand(scenario, r.right, ops - 1 - k)]
    if not choices:
        raise _Reject
    rule, left_ops = rng.choice(choices)
    inner = ancestors + (kind,)
    left = _draw_shape(rng, scenario, rule.left, left_ops, inner if rule.left != kind else ancestors, used,
                       self_chain=rule.left == kind)
    right = _draw_shape(rng, scenario, rule.right, ops - 1 - left_ops, inner, used)
    return _Node(kind, rule, left, right)


def _assign(rng: random.Random, scenario: Scenario, node: _Node, need: tuple[str, int] | None = None) -> int:
    """Draw values bottom-up so every intermediate result is a positive integer within its kind's
    cap; ``need`` constrains this node: ("below", x), ("divisor_of", x) or ("multiple_of", x)."""
    spec = scenario.kinds[node.kind]
    if node.rule is None:
        node.value = _draw_leaf(rng, spec, need)
        return node.value
    op, left, right = node.rule.op, node.left, node.right
    assert left is not None and right is not None
    if op == "/" and left.rule is None and right.rule is not None:
        b = _assign(rng, scenario, right)
        a = _assign(rng, scenario, left, ("multiple_of", b))
    else:
        a = _assign(rng, scenario, left)
        b = _assign(rng, scenario, right, {"-": ("below", a), "/": ("divisor_of", a)}.get(op))
    if op == "-" and b >= a or op == "/" and a % b:
        raise _Reject
    value = {"+": a + b, "-": a - b, "*": a * b, "/": a // max(b, 1)}[op]
    if not 1 <= value <= spec.cap or not _meets(value, need):
        raise _Reject
    node.value = value
    return value


def _draw_leaf(rng: random.Random, spec: Kind, need: tuple[str, int] | None) -> int:
    lo, hi = spec.lo, spec.hi
    if need is None:
        return rng.randint(lo, hi)
    how, x = need
    if how == "below":
        if min(hi, x - 1) < lo:
            raise _Reject
        return rng.randint(lo, min(hi, x - 1))
    if how == "divisor_of":
        divisors = [d for d in range(lo, min(hi, x) + 1) if x % d == 0]
        if not divisors:
            raise _Reject
        return rng.choice(divisors)
    low_q, high_q = -(-lo // x), hi // x  # multiples of x inside [lo, hi]
    if high_q < max(low_q, 1):
        raise _Reject
    return x * rng.randint(max(low_q, 1), high_q)


def _meets(value: int, need: tuple[str, int] | None) -> bool:
    if need is None:
        return True
    how, x = need
    return {"below": value < x, "divisor_of": x % value == 0, "multiple_of": value % x == 0}[how]


def _leaves(node: _Node) -> list[_Node]:
    if node.rule is None:
        return [node]
    assert node.left is not None and node.right is not None
    return _leaves(node.left) + _leaves(node.right)


def _expression(node: _Node) -> Expr:
    if node.rule is None:
        return Num(Fraction(node.value))
    assert node.left is not None and node.right is not None
    return BinOp(node.rule.op, _expression(node.left), _expression(node.right))


def _sentences(rng: random.Random, scenario: Scenario, node: _Node, roles: dict[str, str]) -> list[str]:
    if node.rule is None:
        return [rng.choice(scenario.kinds[node.kind].say).format(n=node.value, **roles)]
    assert node.left is not None and node.right is not None
    out = _sentences(rng, scenario, node.left, roles) + _sentences(rng, scenario, node.right, roles)
    if node.rule.link:
        out.append(node.rule.link.format(**roles))
    return out


def _draw_roles(rng: random.Random, scenario: Scenario) -> dict[str, str]:
    roles: dict[str, str] = {}
    taken: dict[str, list] = {}
    for role, pool_name in scenario.roles.items():
        pool = names() if pool_name == "names" else POOLS[pool_name]
        word = rng.choice([w for w in pool if w not in taken.get(pool_name, [])])
        taken.setdefault(pool_name, []).append(word)
        if isinstance(word, tuple):
            roles[role], roles[role + "s"] = word
        else:
            roles[role] = word
    return roles


# ---------------------------------------------------------------- the corpus

_SCENARIO_BY_NAME = {s.name: s for s in SCENARIOS}
OPERATOR_COUNT_WEIGHTS = {1: 0.4, 2: 0.35, 3: 0.25}


def generate_problem(rng: random.Random, scenario: Scenario, ops: int, pid: str, tries: int = 40) -> Problem:
    """One problem of ``scenario`` with ``ops`` operators; raises :class:`ProblemError`
    (``generation_failed``) when ``tries`` draws all break a constraint."""
    roots = [k for k, spec in scenario.kinds.items() if spec.rules and _can_expand(scenario, k, ops)]
    for _ in range(tries if roots else 0):
        try:
            root = _draw_shape(rng, scenario, rng.choice(roots), ops, (), [])
            _assign(rng, scenario, root)
        except _Reject:
            continue
        values = [leaf.value for leaf in _leaves(root)]
        if len(set(values)) != len(values):  # equal values would make number mapping ambiguous
            continue
        roles = _draw_roles(rng, scenario)
        assert root.rule is not None
        text = " ".join(_sentences(rng, scenario, root, roles) + [root.rule.ask.format(**roles)])
        expr = _expression(root)
        problem = build_problem(pid, text, expr, evaluate(expr), "builtin", "en")
        return replace(problem, provenance=replace(problem.provenance, detail=f"scenario={scenario.name}"))
    raise ProblemError("generation_failed", f"no {ops}-operator problem for scenario {scenario.name!r}")


def generate_corpus(n: int = 3000, seed: int = 0, operator_weights: dict[int, float] | None = None,
                    scenarios: tuple[str, ...] | None = None) -> list[Problem]:
    """``n`` distinct problems, the same for the same arguments. Scenarios are drawn uniformly, the
    operator count (1 to 3) by ``operator_weights``; ``scenarios`` restricts the scenario names."""
    if n < 0:
        raise ValueError("n must be >= 0")
    weights = OPERATOR_COUNT_WEIGHTS if operator_weights is None else operator_weights
    if not weights or any(k < 1 or w < 0 for k, w in weights.items()) or sum(weights.values()) <= 0:
        raise ValueError(f"operator_weights must map operator counts >= 1 to weights: {weights!r}")
    unknown = set(scenarios or ()) - set(_SCENARIO_BY_NAME)
    if unknown:
        raise ValueError(f"unknown scenarios {sorted(unknown)}; known: {sorted(_SCENARIO_BY_NAME)}")
    pool = [_SCENARIO_BY_NAME[s] for s in scenarios] if scenarios else list(SCENARIOS)
    combos = [(s, k) for s in pool for k in weights if weights[k] > 0]
    combo_weights = [weights[k] for _, k in combos]
    rng = random.Random(seed)
    problems: list[Problem] = []
    keys: set[str] = set()
    failures = 0
    while len(problems) < n:
        scenario, ops = rng.choices(combos, combo_weights)[0]
        try:
            problem = generate_problem(rng, scenario, ops, f"builtin-{seed}-{len(problems):05d}")
        except ProblemError as err:
            if err.reason != "generation_failed":
                raise  # a generated problem that build_problem refuses is a bug in the grammar
            failures += 1
            if failures > 100 + n:
                raise RuntimeError(f"the scenario grammars cannot make {n} problems with {weights!r}")
            continue
        if problem.key() in keys:
            continue
        keys.add(problem.key())
        problems.append(problem)
    return problems


def check_scenarios() -> list[str]:
    """Problems with the grammars: unknown kinds in rules, placeholders without a role, roots
    without a question. Empty when all is well (a test checks it)."""
    errors = []
    fields = {"n"}
    for scenario in SCENARIOS:
        role_fields = set(scenario.roles) | {r + "s" for r in scenario.roles}
        for name, spec in scenario.kinds.items():
            texts = list(spec.say) + [t for r in spec.rules for t in (r.ask, r.link) if t]
            for text in texts:
                for _, field_name, _, _ in string.Formatter().parse(text):
                    if field_name and field_name not in role_fields | fields:
                        errors.append(f"{scenario.name}.{name}: unknown placeholder {{{field_name}}}")
            for r in spec.rules:
                for child in (r.left, r.right):
                    if child not in scenario.kinds:
                        errors.append(f"{scenario.name}.{name}: rule uses unknown kind {child!r}")
                if not r.ask:
                    errors.append(f"{scenario.name}.{name}: rule {r.op} has no question")
            if not spec.say and not spec.rules:
                errors.append(f"{scenario.name}.{name}: neither stated nor derived")
    return errors
