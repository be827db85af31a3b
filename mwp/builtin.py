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


@dataclass(frozen=True)
class Rule:
    """``kind = left op right``; ``ask`` is the question when this rule is the root; ``link`` a
    sentence without a quantity said after both children (``"Tom shares them equally."``)."""

    op: str
    left: str
    right: str
    ask: str = ""
    link: str = ""


@dataclass(frozen=True)
class Kind:
    say: tuple[str, ...] = ()  # sentences stating one quantity {n} of this kind; empty: never a leaf
    rules: tuple[Rule, ...] = ()
    lo: int = 2  # range of a stated value
    hi: int = 50
    cap: int = 100_000  # largest value a derived quantity of this kind may take
    repeat: bool = False  # an event that may happen twice in a problem; other kinds are stated once


@dataclass(frozen=True, eq=False)  # hashed by identity: the feasibility cache is keyed on it
class Scenario:
    name: str
    kinds: dict[str, Kind]
    roles: dict[str, str]  # placeholder -> word pool; roles sharing a pool get distinct words


# Word pools: a (singular, plural) pair fills {role} and {role}s.
POOLS: dict[str, tuple] = {
    "goods": (("pen", "pens"), ("notebook", "notebooks"), ("marker", "markers"), ("ball", "balls"),
              ("toy car", "toy cars"), ("comic", "comics"), ("candle", "candles"), ("mug", "mugs")),
    "fruit": (("apple", "apples"), ("peach", "peaches"), ("pear", "pears"), ("orange", "oranges"),
              ("plum", "plums"), ("lemon", "lemons"), ("mango", "mangoes"), ("banana", "bananas")),
    "container": (("basket", "baskets"), ("box", "boxes"), ("bag", "bags"), ("crate", "crates")),
    "baked": (("cookie", "cookies"), ("muffin", "muffins"), ("cupcake", "cupcakes"), ("bun", "buns"),
              ("tart", "tarts")),
    "place": ("the lake", "the city", "the farm", "the museum", "the beach", "the zoo", "the camp"),
    "vehicle": ("car", "bus", "bike", "train", "boat"),
    "room": ("kitchen", "garden", "hall", "bedroom", "yard", "classroom", "patio"),
    "supply": (("crayon", "crayons"), ("sticker", "stickers"), ("pencil", "pencils"), ("eraser", "erasers"),
               ("ruler", "rulers")),
    "thing": ("bike", "camera", "guitar", "tent", "watch", "scooter"),
    "chore": ("washing cars", "walking dogs", "mowing lawns", "selling lemonade"),
    "book": ("novel", "storybook", "history book", "comic book"),
}

S = Scenario
SCENARIOS: tuple[Scenario, ...] = (
    S("shopping", {
        "money": Kind(("{name} has {n} dollars.", "{name} takes {n} dollars to the store."), (
            Rule("-", "money", "cost", "How many dollars does {name} have left?"),
            Rule("+", "money", "income", "How many dollars does {name} have now?")), 20, 400),
        "cost": Kind(("{name} spends {n} dollars on {items}.",), (
            Rule("*", "count", "price", "How many dollars does {name} spend?"),), 2, 60),
        "count": Kind(("{name} buys {n} {items}.",), (
            Rule("*", "packs", "per_pack", "How many {items} does {name} buy?"),
            Rule("/", "budget", "price", "How many {items} can {name} buy?")), 2, 12),
        "price": Kind(("Each {item} costs {n} dollars.",), (
            Rule("/", "cost", "count", "How many dollars does each {item} cost?"),), 2, 15),
        "packs": Kind(("{name} buys {n} packs of {items}.",), (), 2, 9),
        "per_pack": Kind(("Each pack holds {n} {items}.",), (), 2, 12),
        "budget": Kind(("{name} wants to spend {n} dollars on {items}.",), (), 10, 120),
        "income": Kind(("{name} earns {n} dollars by {chore}.",), (), 3, 60, repeat=True),
    }, {"name": "names", "item": "goods", "chore": "chore"}),
    S("sharing", {
        "have": Kind(("{name} has {n} {items}.", "{name} picks {n} {items}."), (
            Rule("+", "have", "gain", "How many {items} does {name} have now?"),
            Rule("-", "have", "loss", "How many {items} does {name} have left?"),
            Rule("*", "boxes", "per_box", "How many {items} does {name} have?")), 5, 90),
        "gain": Kind(("{other} gives {name} {n} {items}.", "{name} picks {n} more {items}."), (), 2, 30, repeat=True),
        "loss": Kind(("{name} gives {n} {items} to {other}.", "{name} eats {n} {items}."), (), 2, 30, repeat=True),
        "boxes": Kind(("{name} fills {n} {containers} with {items}.",), (), 2, 9),
        "per_box": Kind(("Each {container} holds {n} {items}.",), (), 2, 12),
        "have2": Kind(("{name} has {n} {other_items}.",), (), 2, 40),
        "total": Kind((), (Rule("+", "have", "have2", "How many {items} and {other_items} does {name} have altogether?"),)),
        "more": Kind((), (Rule("-", "have", "have2", "How many more {items} than {other_items} does {name} have?"),)),
        "times": Kind((), (Rule("/", "have", "have2", "How many times as many {items} as {other_items} does {name} have?"),)),
        "share": Kind((), (Rule("/", "have", "friends", "How many {items} does each friend get?"),)),
        "friends": Kind(("{name} shares the {items} equally among {n} friends.",), (), 2, 9),
    }, {"name": "names", "other": "names", "item": "fruit", "other_item": "fruit", "container": "container"}),
    S("baking", {
        "baked": Kind(("{name} bakes {n} {treats}.",), (
            Rule("*", "trays", "per_tray", "How many {treats} does {name} bake?"),
            Rule("-", "baked", "eaten", "How many {treats} are left?"),
            Rule("+", "baked", "bought", "How many {treats} does {name} have now?")), 6, 80),
        "trays": Kind(("{name} bakes {n} trays of {treats}.",), (), 2, 8),
        "per_tray": Kind(("Each tray holds {n} {treats}.",), (), 3, 12),
        "eaten": Kind(("The family eats {n} of the {treats}.",), (), 2, 20, repeat=True),
        "bought": Kind(("{name} buys {n} more {treats} at the bakery.",), (), 2, 24, repeat=True),
        "per_box": Kind((), (Rule("/", "baked", "boxes", "How many {treats} go in each box?"),)),
        "boxes": Kind(("{name} packs the {treats} equally into {n} boxes.",), (), 2, 8),
    }, {"name": "names", "treat": "baked"}),
    S("travel", {
        "distance": Kind(("{name} drives {n} miles.",), (
            Rule("*", "speed", "hours", "How many miles does {name} drive?"),
            Rule("+", "distance", "more_miles", "How many miles does {name} drive in all?")), 10, 300),
        "speed": Kind(("{name} drives at {n} miles per hour.",), (
            Rule("/", "distance", "hours", "How many miles per hour does {name} drive?"),), 20, 70),
        "hours": Kind(("{name} drives for {n} hours.",), (
            Rule("/", "distance", "speed", "How many hours does {name} drive?"),), 2, 9),
        "more_miles": Kind(("After a break, {name} drives {n} more miles.",), (), 5, 90, repeat=True),
        "left": Kind((), (Rule("-", "trip", "distance", "How many miles does {name} still have to drive to {place}?"),)),
        "trip": Kind(("The road to {place} is {n} miles long.",), (), 50, 900),
    }, {"name": "names", "place": "place"}),
    S("ages", {
        "age": Kind(("{name} is {n} years old.",), (
            Rule("+", "age2", "older", "How old is {name}?"),
            Rule("*", "age2", "times", "How old is {name}?")), 3, 60, cap=100),
        "age2": Kind(("{other} is {n} years old.",), (
            Rule("-", "age", "older", "How old is {other}?"),
            Rule("/", "age", "times", "How old is {other}?")), 2, 40, cap=100),
        "older": Kind(("{name} is {n} years older than {other}.",), (), 2, 30),
        "times": Kind(("{name} is {n} times as old as {other}.",), (), 2, 5),
        "later": Kind((), (Rule("+", "age", "wait", "How old will {name} be then?"),)),
        "wait": Kind(("In {n} years, {name} will visit {place}.",), (), 2, 20),
        "sum": Kind((), (Rule("+", "age", "age2", "What is the sum of the ages of {name} and {other}?"),)),
    }, {"name": "names", "other": "names", "place": "place"}),
    S("areas", {
        "area": Kind(("The {room} has an area of {n} square meters.",), (
            Rule("*", "length", "width", "What is the area of the {room} in square meters?"),), 12, 400),
        "length": Kind(("The {room} is {n} meters long.",), (
            Rule("/", "area", "width", "How many meters long is the {room}?"),), 3, 25),
        "width": Kind(("The {room} is {n} meters wide.",), (), 2, 15),
        "uncovered": Kind((), (Rule("-", "area", "covered", "How many square meters of the {room} are not covered?"),)),
        "covered": Kind(("{name} covers {n} square meters of the {room} with a rug.",), (), 2, 40),
        "tiles": Kind((), (Rule("/", "area", "per_tile", "How many tiles does {name} need for the {room}?"),)),
        "per_tile": Kind(("Each tile covers {n} square meters.",), (), 2, 6),
        "cost": Kind((), (Rule("*", "area", "price", "How many dollars does the carpet for the {room} cost?"),)),
        "price": Kind(("Carpet costs {n} dollars per square meter.",), (), 2, 30),
    }, {"name": "names", "room": "room"}),
    S("school", {
        "students": Kind(("There are {n} students in the class of {name}.",), (
            Rule("*", "groups", "per_group", "How many students are in the class?"),
            Rule("+", "students", "new", "How many students are in the class now?"),
            Rule("-", "students", "absent", "How many students are at school today?")), 8, 40),
        "groups": Kind(("The students of {name} sit in {n} groups.",), (), 2, 8),
        "per_group": Kind(("Each group has {n} students.",), (), 2, 6),
        "new": Kind(("{n} new students join the class.",), (), 2, 9, repeat=True),
        "absent": Kind(("{n} students are absent today.",), (), 2, 9, repeat=True),
        "supplies": Kind(("{name} has {n} {tools}.",), (
            Rule("+", "supplies", "bought", "How many {tools} does {name} have now?"),), 10, 300),
        "bought": Kind(("{name} buys {n} more {tools}.",), (), 5, 60),
        "each": Kind((), (Rule("/", "supplies", "students", "How many {tools} does each student get?",
                               "{name} hands out the {tools} equally."),)),
    }, {"name": "names", "tool": "supply"}),
    S("savings", {
        "saved": Kind(("{name} has saved {n} dollars.",), (
            Rule("*", "weekly", "weeks", "How many dollars does {name} save?"),), 10, 300),
        "weekly": Kind(("{name} saves {n} dollars every week.",), (
            Rule("/", "saved", "weeks", "How many dollars does {name} save every week?"),), 2, 30),
        "weeks": Kind(("{name} saves for {n} weeks.",), (
            Rule("/", "goal", "weekly", "How many weeks does {name} need to save?"),), 2, 20),
        "have": Kind((), (Rule("+", "saved", "gift", "How many dollars does {name} have now?"),)),
        "gift": Kind(("{other} gives {name} {n} dollars.",), (), 5, 80, repeat=True),
        "goal": Kind(("{name} wants a {thing} that costs {n} dollars.",), (), 40, 600),
        "need": Kind((), (Rule("-", "goal", "saved", "How many more dollars does {name} need for the {thing}?"),
                          Rule("-", "goal", "have", "How many more dollars does {name} need for the {thing}?"))),
    }, {"name": "names", "other": "names", "thing": "thing"}),
    S("reading", {
        "book": Kind(("The {book} has {n} pages.",), (), 40, 600),
        "left": Kind((), (Rule("-", "book", "read", "How many pages of the {book} are left to read?"),)),
        "read": Kind(("{name} reads {n} pages of the {book}.",), (
            Rule("*", "per_day", "days", "How many pages does {name} read?"),
            Rule("+", "read", "read_more", "How many pages does {name} read in all?")), 5, 200),
        "read_more": Kind(("Later {name} reads {n} more pages.",), (), 5, 60, repeat=True),
        "per_day": Kind(("{name} reads {n} pages every day.",), (
            Rule("/", "read", "days", "How many pages does {name} read every day?"),), 5, 40),
        "days": Kind(("{name} reads for {n} days.",), (
            Rule("/", "book", "per_day", "How many days does {name} need to finish the {book}?"),), 2, 20),
    }, {"name": "names", "book": "book"}),
)
del S


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
