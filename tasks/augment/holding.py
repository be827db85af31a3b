"""Holdings for operation 1 (English): a statement that says only that someone has, or that there are,
N of a thing, and a question that asks only how many of it someone has after the events of its
narrative.

Operation 1 pairs a host statement with a donor question whose predicates are equal (geca.py). A
holding statement often adds a modifier after its entity ("Betty has 24 oranges stored in boxes",
"Warren has 12 guests coming to his party", "There are 390 students at a school"), and a donor's
question about a holding adds the tense of its events ("How many oranges will Melissa have?", "How many
blocks does Carol end with?", "How many blocks are left?"), so the exact match never pairs them: in the
MAWPS SD training side no host of a division (``/ N0 N1``, whose dividend is such a holding) got a donor.
Here a holding statement pairs with a holding question when the statement says nothing before its
quantity but the holder and has/are, its modifier is a place or a participle phrase (no verb of its
own), and no later clause of the host refers back to a noun of the dropped modifier ("the school").
The donor's narrative then states how many the holder has, which is what the statement said. A
statement of an event ("Mary bakes 62 tarts") pairs with a holding question whose narrative opens with
the same statement of the same holder ("Anna bakes 66 tarts. The family eats 4 of the tarts. How many
tarts are left?"): its narrative is the statement with an event after it.
"""
from __future__ import annotations

from typing import Sequence

from mwp.expr import to_prefix
from mwp.problem import Problem
from tasks.augment.entities import _BE, _FUNCTION, _HAVE, NEUTRAL, UNRESOLVED, entity_key, names_in, noun_run, predicate
from tasks.augment.morph import lemma

# What a holding question may say of its entity besides the neutral words: has / will have / are (left).
HOLDING_ASKS = frozenset({"have", "be", "will"})
_PLACE_PREPOSITIONS = frozenset({"in", "at", "on", "inside"})
_DEFINITE = frozenset({"the", "this", "that", "his", "her", "their", "its", "my", "our"})
_CLAUSE_WORDS = frozenset({"and", "but", "which", "that", "who", "so", "because", "if", "when", "then"})
_OPENERS = frozenset({"there", "here"})
_ARTICLES = frozenset({"a", "an", "the"})
_TIME_WORDS = frozenset("january february march april may june july august september october november december "
                        "monday tuesday wednesday thursday friday saturday sunday morning afternoon evening night "
                        "day week month year summer winter spring fall".split())


def is_holding_question(asks: frozenset[str], neutral_q: frozenset[str]) -> bool:
    """The question asks how many its holder has (now, in the end, left), nothing else."""
    return asks - neutral_q <= HOLDING_ASKS and "would" not in asks


def holding_modifier(tokens: Sequence[str], start: int, end: int, qty_pos: int, entity: str) -> list[str] | None:
    """The words a holding statement says besides its holder, has/is and amount ([] if none): the modifier
    after the entity and a common-noun holder ("A florist had 11 roses" -> [florist]); or None when
    ``tokens[start:end]`` is not a holding: the words before the quantity are a holder (a name, "he",
    "there", "a florist") and has/is or "starts with"; the entity follows the quantity, after at most two
    words of its kind ("51 bottle caps": the caller pairs it with questions of that kind); what follows the
    entity is a place ("in a library") or a participle phrase ("stored in boxes", "coming to his party")
    with no verb or clause word of its own. A common-noun holder is dropped only where no later "they"
    or "it" could have stood for it."""
    if ":" in entity:
        return None  # "18 cups of flour": the words after the quantity are the entity
    before = [t for t in tokens[start:qty_pos] if t not in (",",)]
    starts = [t.lower() for t in before[-2:]] in (["starts", "with"], ["start", "with"], ["started", "with"])
    if not before or not starts and not any(t.lower() in _HAVE or t.lower() in _BE for t in before):
        return None
    subject: list[str] = []
    for i, t in enumerate(before):
        low = t.lower()
        if low in _HAVE or low in _BE or low in _OPENERS or low in ("he", "she", "they", "i", "we") \
                or t in names_in([t]) or starts and i >= len(before) - 2:
            continue
        if i == 0 and low in _ARTICLES:
            continue
        if before[0].lower() in _ARTICLES and i == len(subject) + 1 and len(subject) < 2 and t.isalpha() \
                and t.islower() and low not in _FUNCTION:
            subject.append(t)  # "A pet store had 102 puppies"
            continue
        return None  # "found out that she has", "The junior ranger asked ...": more than a holding
    if subject and any(t.lower() in ("they", "them", "their", "it", "its") for t in tokens[end:]):
        return None  # "The cafeteria had 86 apples. If they used 20": whose "they" after a new holder?
    k = qty_pos + 1  # the entity after the quantity and its adjectives ("51 bottle caps"): entity_adjectives
    while k < end and k - qty_pos <= 2 and entity_key(tokens[k]) != entity and tokens[k].isalpha() \
            and tokens[k].islower() and tokens[k] not in _FUNCTION:
        k += 1
    if k >= end or entity_key(tokens[k]) != entity:
        return None
    modifier = [t for t in tokens[k + 1:end] if t.isalpha() or t == "'s"]
    if not modifier:
        return subject
    first = modifier[0].lower()
    if first not in _PLACE_PREPOSITIONS and not (first.endswith("ed") or first.endswith("ing")):
        return None  # "to buy candy", "and eats 3": a purpose or an event, not where they are
    if any(t.lower() in _HAVE or t.lower() in _BE or t.lower() in _CLAUSE_WORDS or t.lower() in ("will", "would")
           or t.lower() in _TIME_WORDS for t in modifier):
        return None  # "in January" is a time a later "By March" leans on, not a place
    return modifier + subject


def entity_adjectives(tokens: Sequence[str], start: int, end: int, entity: str) -> frozenset[str]:
    """The words before the first mention of ``entity`` in ``tokens[start:end]`` that name its kind ("51 bottle
    caps", "How many baseball cards" -> {bottle}, {baseball}), as :func:`predicate` writes them. A holding
    pairs only with a question of the same kind: "93 baseball cards" is not "82 cards"."""
    head = next((i for i in range(start, end) if tokens[i].isalpha() and entity_key(tokens[i]) == entity), None)
    if head is None:
        return frozenset()
    i = head
    while i > start and tokens[i - 1].isalpha() and tokens[i - 1].islower() and tokens[i - 1].lower() not in _FUNCTION:
        i -= 1
    return frozenset(lemma(t.lower()) for t in tokens[i:head])


def refers_to_dropped(tokens: Sequence[str], later: int, modifier: Sequence[str]) -> bool:
    """A clause from ``later`` on refers back to a noun of the dropped modifier ("at a school" ...
    "needed at the school"): the composition would leave that reference without its antecedent."""
    nouns = {entity_key(t) for t in modifier if t.isalpha() and t.lower() not in _FUNCTION and t[:1].islower()
             and not t.lower().endswith(("ed", "ing"))}
    return any(entity_key(tokens[i]) in nouns and tokens[i - 1].lower() in _DEFINITE
               for i in range(max(later, 1), len(tokens)))


def opening(problem: Problem, spans: Sequence[tuple[int, int]], qty_pos: Sequence[int], reading) -> tuple | None:
    """(entity, predicate, holder) of the first clause of a narrative when it states one quantity
    ("Anna bakes 66 tarts ." -> ("tart", {bake}, "Anna")), else None. A donor whose narrative opens with
    the host statement's own predicate and then asks what is left of it restates that statement with an
    event added ("Mary bakes 62 tarts" <- "Mary bakes 66 tarts. The family eats 4 of the tarts.")."""
    start, end = spans[0]
    inside = [j for j, pos in enumerate(qty_pos) if start <= pos < end]
    if len(spans) < 2 or len(inside) != 1 or reading.quantity_entities[inside[0]] is None:
        return None
    entity = reading.quantity_entities[inside[0]]
    return entity, predicate(problem.tokens, start, end, entity, problem.language), reading.clause_holders[0]


def introduced_as_known(problem: Problem, reading) -> bool:
    """The question's entity is counted by no quantity and first comes as "the X" ("Emma bakes 20 buns.
    Emma packs the cupcakes equally into 2 boxes. How many cupcakes go in each box?"): a spliced problem
    whose question is about something its narrative never states."""
    asked = reading.question_entity
    if asked is None or asked in reading.quantity_entities:
        return False
    tokens = problem.tokens
    first = next((i for i, t in enumerate(tokens) if t.isalpha() and entity_key(t) == asked), None)
    return first is not None and first > 0 and tokens[first - 1].lower() in _DEFINITE


def host_refusal(host: Problem, spans: Sequence[tuple[int, int]], reading, clause: int, entity: str) -> str | None:
    """Why the host's statement ``clause`` may not take a holding donor, else None: the host's question
    names people and not the statement's holder ("Robert has saved 273 dollars. Amy gives Jason 66
    dollars. How many dollars does Jason have now?"), or the host adds or subtracts another thing than it
    asks for ("Jack bakes 18 muffins. Jack buys 14 more tarts. How many tarts does Jack have now?"). Both
    are spliced hosts (SD's decomposed parts) that a longer narrative would only make worse."""
    q_start, q_end = spans[-1]
    asked_of = names_in(host.tokens[q_start:q_end]) | {reading.question_holder}
    asked_of -= {None, UNRESOLVED}
    if asked_of and reading.clause_holders[clause] not in asked_of:
        return "op1_host_question_about_someone_else"
    if to_prefix(host.expression)[0] in ("+", "-") and entity != reading.question_entity:
        return "op1_host_adds_another_thing"
    return None


def asks_what_the_event_made(host: Problem, spans: Sequence[tuple[int, int]], reading, states: frozenset[str]) -> bool:
    """The host's question asks with the verb of the statement a restated-event donor replaces ("Nancy grew N
    watermelons ... How many watermelons did they grow?"): the donor's narrative ends with what is left
    ("Sam grew 4 watermelons, but the rabbits ate 3"), which is not what was grown."""
    q_start, q_end = spans[-1]
    asks = predicate(host.tokens, q_start, q_end, reading.question_entity, host.language)
    return bool((states & asks) - HOLDING_ASKS)


_EVENT_PREPOSITIONS = frozenset({"of", "in", "on", "at", "from", "into", "for", "during"})


def event_core(tokens: Sequence[str], start: int, end: int, qty_pos: int,
               entity: str) -> tuple[frozenset[str], list[str]] | None:
    """(what the statement says up to its entity, the dropped modifier) when ``tokens[start:end]`` is a
    statement whose entity follows its quantity and is followed only by a prepositional phrase with no
    verb or clause word ("Luke reads 216 pages of the comic book" -> ({read}, [of, the, comic, book]),
    "Jessica found 5 seashells on the beach"), else None. The donor's narrative then states how many were
    read or found; where a later clause refers to the phrase ("the beach") the caller refuses."""
    span = noun_run(tokens, qty_pos + 1)
    if ":" in entity or span is None or span[0] != qty_pos + 1 or entity_key(tokens[span[1] - 1]) != entity:
        return None
    modifier = [t for t in tokens[span[1]:end] if t not in (",", ".", "!", ";")]
    if not modifier or modifier[0].lower() not in _EVENT_PREPOSITIONS or len(modifier) > 6:
        return None
    for t in modifier[1:]:
        low = t.lower()
        if not (t.isalpha() or t == "'s") or low in _HAVE or low in _BE or low in _CLAUSE_WORDS \
                or low in ("will", "would", "to") or lemma(low) != low and not low.endswith("s"):
            return None  # a number, a verb ("spent"), a clause: more than where or of what
    return predicate(tokens, start, span[1], entity), modifier


_ACQUIRE = frozenset("find pick buy get collect receive bake make catch grow win gather".split())


def acquires_what_is_held(host: Problem, spans: Sequence[tuple[int, int]], reading, states: frozenset[str]) -> bool:
    """The statement says only that its holder came by the entity ("Sam found 35 seashells", "Fred picked 36
    limes") and the host asks what is held in the end ("How many seashells does he have now?"): the events
    after it treat the amount as a holding, so a narrative ending in what its holder has may stand for it."""
    q_start, q_end = spans[-1]
    asks = predicate(host.tokens, q_start, q_end, reading.question_entity, host.language)
    return len(states) == 1 and next(iter(states)) in _ACQUIRE and "have" in asks \
        and is_holding_question(asks, NEUTRAL) and not states & asks
