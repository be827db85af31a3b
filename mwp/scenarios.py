"""The scenario grammars of the built-in corpus (see :mod:`mwp.builtin`): kinds of quantities, the
sentences that state them, the rules that derive one kind from two others, and the word pools.

Adding a scenario is adding an entry here; :func:`mwp.builtin.check_scenarios` checks that every
kind can be stated or derived and every question is reachable.
"""
from __future__ import annotations

from dataclasses import dataclass

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
