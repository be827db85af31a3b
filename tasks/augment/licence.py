"""Which counted nouns a selective verb can take (English): a noun swap (operation 2, entity substitution)
must not put a noun where the problem's verb cannot have it ("Sara grew 43 pumpkins" -> "Sara grew 43
pencils"). Environments (swap.py) license pumpkin ~ pencil when the two fill some other clause alike
("How many <0> does <name> have?"), so the verb of the clause being rewritten has to be asked as well.

Most verbs of word problems take anything a story can hold (buy, give, find, put, collect, take, sell): no
licence for them. A few select their object: what is grown, planted, harvested or picked is a crop, what is
baked, cooked, eaten or drunk is food, what is read is a text, what is spent is money or a currency
(arcade tickets: "spent 12 of her peanuts on a hat" is no purchase). ``SELECTIVE`` names these verbs, a list chosen
by reading the MAWPS pool's verb-object table, where their objects are nouns of one kind (with a few
containers: "picked 3 bags", "harvest 83 sacks") while "buy" and "give" take things of every kind. Which
nouns of the kind a verb takes is not listed here: it is what the pool shows. A swap to X in a problem
where the noun being replaced is the object of a selective verb V is licensed only when some original
problem of the pool writes X as the object of V or of a verb of V's kind (``_SHARES``: a crop grown can be
picked, planted or harvested; what is baked can be cooked; what is baked, cooked, grown or picked can be
eaten): "Keith grew 6 turnips" licenses pumpkin -> turnip under "grew", "Fred picked 36 limes" pumpkin ->
lime. Else it is refused with a counted reason, never silently.
Only original problems (round 0) attest: a kept swap that slipped through would otherwise license more.

The reading is by position, as the entity rules read (entities.py): a verb before a quantity ("grew 43
pumpkins", "grew 23 watermelons and 18 turnips", "ate 3 of the pumpkins"), a passive after it ("23
pumpkins were eaten"), and a question's verb after do-support ("How many pumpkins did they grow?").
"""
from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from mwp.problem import Problem
from mwp.text import is_number_token
from tasks.augment.entities import _AUX, _BE, entity_key, noun_run, question_span, read
from tasks.augment.morph import lemma

SELECTIVE = frozenset("grow plant harvest pick bake cook eat drink read spend".split())
_CROP = ("grow", "plant", "harvest", "pick")
# verb -> the verbs whose attested objects it may take as well (its own included)
_SHARES = {**{v: _CROP for v in _CROP}, "bake": ("bake", "cook"), "cook": ("bake", "cook"),
           "eat": ("eat", "bake", "cook") + _CROP, "drink": ("drink",), "read": ("read",),
           "spend": ("spend",)}  # what is spent is money or what stands for it ("spent 12 of her tickets")

# Words that may stand between a verb and its quantity ("ate another 3", "picked a total of 12").
_BETWEEN = frozenset("another more only also just a an the total of about over nearly all exactly some "
                     "his her their its my our your".split())
_OF_DETERMINERS = frozenset("the his her their its my our your these those".split())
REASON = "verb_does_not_take_noun"


def _selective_verb(word: str) -> str | None:
    """The lemma of ``word`` when it is a form of a selective verb ("grew" -> grow), else None."""
    w = word.lower()
    if not w.isalpha():
        return None
    lem = lemma(w)
    return lem if lem in SELECTIVE else None


def _phrasal(tokens: Sequence[str], i: int) -> bool:
    """"picked up 292 shells", "did he pick up": a particle makes another verb (to pick up is to collect)."""
    return i + 1 < len(tokens) and tokens[i + 1].lower() in ("up", "out", "off")


def _verb_before(tokens: Sequence[str], pos: int) -> str | None:
    """The selective verb whose object the quantity at ``pos`` counts: the word before it, skipping
    determiners and adverbs ("ate another 3") and an earlier coordinated object ("grew 23 watermelons and
    18 turnips"), at most eight words back."""
    i, floor = pos - 1, max(pos - 8, 0)
    while i >= floor:
        low = tokens[i].lower()
        if low in _BETWEEN:
            i -= 1
        elif low in ("and", ",") and i >= 2 and tokens[i - 1].isalpha():
            k = i - 1  # "23 watermelons and": back over the noun (and its adjectives) to its quantity
            while k > floor and tokens[k].isalpha() and tokens[k].islower() and not _selective_verb(tokens[k]):
                k -= 1
            if not is_number_token(tokens[k]):
                return None
            i = k - 1
        else:
            return _selective_verb(tokens[i])
    return None


def _counted_after(tokens: Sequence[str], pos: int) -> str | None:
    """"3 of the pumpkins": the noun the quantity counts when the entity rules read none."""
    if pos + 3 < len(tokens) and tokens[pos + 1] == "of" and tokens[pos + 2].lower() in _OF_DETERMINERS:
        span = noun_run(tokens, pos + 3)
        return entity_key(tokens[span[1] - 1]) if span else None
    return None


def _passive_after(tokens: Sequence[str], pos: int) -> str | None:
    """"23 pumpkins were eaten": the selective verb of a passive right after the counted noun."""
    span = noun_run(tokens, pos + 1)
    if span is None or span[1] + 1 >= len(tokens) or tokens[span[1]].lower() not in _BE:
        return None
    if _phrasal(tokens, span[1] + 1):
        return None
    return _selective_verb(tokens[span[1] + 1])


def _question_verb(tokens: Sequence[str], start: int, end: int) -> str | None:
    """"How many pumpkins did they grow": the base-form selective verb after the auxiliary, within four
    words of it; "How many pies were baked": the participle after a be-form."""
    lower = [t.lower() for t in tokens]
    for i in range(start, end - 2):
        if lower[i] == "how" and lower[i + 1] in ("many", "much"):
            span = noun_run(tokens, i + 2)
            if span is None:
                return None
            k = span[1]
            if k < end and lower[k] in _BE and k + 1 < end and not _phrasal(tokens, k + 1):
                return _selective_verb(tokens[k + 1])
            if k < end and lower[k] in _AUX:
                for j in range(k + 1, min(k + 6, end)):
                    verb = _selective_verb(tokens[j])
                    if verb and lower[j] == verb:
                        return None if _phrasal(tokens, j) else verb
            return None
    return None


def verb_objects(problem: Problem) -> set[tuple[str, str]]:
    """(selective verb lemma, noun key) for each counted noun the problem writes as such a verb's object
    ("Sara grew 43 pumpkins, but the rabbits ate 23 pumpkins. How many pumpkins does Sara have?" ->
    {(grow, pumpkin), (eat, pumpkin)}). English only; empty for any other language."""
    if problem.language != "en":
        return set()
    tokens = problem.tokens
    reading = read(problem)
    out = set()
    for j, pos in enumerate(problem.quantity_positions()):
        noun = reading.quantity_entities[j] if j < len(reading.quantity_entities) else None
        noun = noun or _counted_after(tokens, pos)
        if not noun or ":" in noun or not noun.isalpha():
            continue
        for verb in (_verb_before(tokens, pos), _passive_after(tokens, pos)):
            if verb:
                out.add((verb, noun))
    asked = reading.question_entity
    if asked and ":" not in asked:
        verb = _question_verb(tokens, *question_span(problem))
        if verb:
            out.add((verb, asked))
    return out


def attested(problems: Sequence[Problem]) -> dict[str, frozenset[str]]:
    """Selective verb -> the nouns the pool's original (round 0) English problems write as its object."""
    takes: dict[str, set[str]] = defaultdict(set)
    for problem in problems:
        if problem.provenance.round != 0:
            continue
        for verb, noun in verb_objects(problem):
            takes[verb].add(noun)
    return {verb: frozenset(nouns) for verb, nouns in takes.items()}


def verb_refusal(problem: Problem, old: str, new: str, takes: dict[str, frozenset[str]]) -> str | None:
    """``REASON`` when ``old`` is the object of a selective verb of ``problem`` that the pool never shows
    with ``new``, itself or through a verb of its kind ("grew 43 pumpkins" -> pencil: no original problem
    grows, picks, plants or harvests pencils), else None."""
    verbs = {verb for verb, noun in verb_objects(problem) if noun == old}
    return REASON if any(not any(new in takes.get(v, ()) for v in _SHARES[verb]) for verb in verbs) else None
