"""English refusals of operation 1 (geca.py) that read the host around the replaced statement: a
verbless clause leaning on it, an "I" who would do what a named donor did, a donor narrative that
repeats an event of the host, one that is not whole sentences or carries a number its answer ignores, and
a statement that sums what other clauses of the host count."""
from __future__ import annotations

from fractions import Fraction
from typing import Sequence

from lemminflect import getLemma

from mwp.expr import BinOp, iter_nodes, quantity_slots
from mwp.problem import Problem
from tasks.augment.base import CUE_WORDS_EN, Units
from tasks.augment.entities import _FUNCTION, names_in, read
from tasks.augment.holding import _TIME_WORDS
from tasks.augment.morph import lemma, singular


def en_refusal(host: Problem, u: Units, c: int, donor: Problem, narrative: Sequence[str]) -> str | None:
    """English clauses that lean on the statement ("Mike worked 3 hours, each day, for 5 days") and an
    "I" who would do what the donor's named person did ("Spencer walked ... How long did it take me?")."""
    if c + 1 < len(u.spans) - 1:
        a, b = u.spans[c + 1]
        if host.tokens[a].lower() in ("each", "every", "per") and b - a <= 3:  # ", each day," has no verb
            return "op1_next_clause_leans_on_the_statement"
    if any(t in ("I", "we", "We") for t in host.tokens) and names_in(narrative):
        return "op1_holder_differs"
    if narrative[-1] not in (".", "!"):  # "Sally paid ... for cherries. In total," + ", how much did she spend?"
        return "op1_donor_question_shares_its_sentence"
    used = set(quantity_slots(donor.expression))
    if any(pos < len(narrative) and j not in used for j, pos in enumerate(donor.quantity_positions())):
        return "op1_donor_has_an_unused_quantity"  # "Bruce has 13 apples." would take the host's next "takes 9 away"
    q_words = {t.lower() for t in host.tokens[u.spans[-1][0]:]}
    if len(names_in(narrative)) > 1 and q_words & {"they", "together", "both", "combined"}:
        return "op1_donor_adds_someone_to_they"  # "Sandy has 8 dozen. Fred has 5 times more." into "... do they have?"
    start, end = u.spans[c]
    if host.tokens[start] in ("If", "if") and host.tokens[end - 1] == ",":
        return "op1_statement_is_a_condition"  # "If he works for 8 hours," -> "Fred worked 8 hours ..., how much ...?"
    if any(t in (".", "!") for t in narrative[:-1]) and (start > 0 and host.tokens[start - 1] not in (".", "!", "?")
                                                        or host.tokens[end - 1] == ","):
        return "op1_statement_inside_a_sentence"  # "After paying for the pie, [two sentences], her friend"
    words = {t.lower() for t in host.tokens[start:end]}
    if "than" in words:
        return "op1_statement_compares_with_another"  # "Juan has 175 more marbles than Connie", Connie's told before
    if c > 0 and _follows_the_asked_event(host, u, c):
        return "op1_statement_is_what_is_left"  # "She gave Alyssa some of her seashells. She has 69 seashells."
    if c > 0 and words & {"left", "remaining", "now"}:
        return "op1_statement_is_what_is_left"  # "He has 32 dollars left over", "He now has 56": the host's own outcome
    if words & _TOTAL and _counted_elsewhere(host, u, c):
        return "op1_statement_sums_other_clauses"  # "He spent a total of 27 dollars" on the drink and bars named before
    if _ties_its_amount_to_another_thing(host, u, c, narrative):
        return "op1_statement_ties_its_amount_to_another_thing"  # "spends 30 dollars on markers" ... "each marker"
    later = {t.lower() for t in host.tokens[end:u.spans[-1][0]]}
    if {t.lower() for t in host.tokens[start:end]} & _TIME_WORDS and later & _TIME_WORDS:
        return "op1_later_clause_leans_on_the_statements_time"  # "had 45 dollars in January. By March he had spent"
    if _takes_more_than_there_is(host, u, c, donor.answer):
        return "op1_host_takes_more_than_the_donor_gives"  # "sold 26 of 33 books" then "If he sold 19 of them"
    if _repeats_the_asked_event(host, u, c, narrative):
        return "op1_donor_repeats_the_asked_event"  # "He bought 9 books." before "He buys some books ... did he buy?"
    rest = [t for k, (a, b) in enumerate(u.spans) if k != c for t in host.tokens[a:b]]
    told, others = _without_entities(narrative, host), _without_entities(rest, host)
    if _verbs(told) & _verbs(others) and _nouns(told, host) & _nouns(others, host):
        return "op1_donor_restates_the_host"  # "For his birthday he got ..." after "received 67 dollars for his birthday"
    return None


_BEFORE = frozenset("start starts started begin begins began originally initially before".split())


def asks_what_came_before(question: Sequence[str]) -> bool:
    """A donor question asking what there was before its narrative's events ("How many did she start with?",
    "... to begin with", "originally"): its narrative ends after the amount it computes, so it cannot stand
    for a statement of that amount."""
    return any(t.lower() in _BEFORE for t in question)


def _takes_more_than_there_is(host: Problem, u: Units, c: int, value: Fraction) -> bool:
    """The donor's value breaks an order the host's text relies on: a later clause takes out of the statement
    more than the donor's narrative leaves ("He sold 26 books" of 33, then "If he sold 19 of them"), or the
    statement, now the donor's value, takes out more than the text had before it ("Luke had 48 dollars"
    then 60 dollars of tickets). Read on each subtraction of the host's expression, in text order."""
    start, end = u.spans[c]
    positions = host.quantity_positions()
    slot = next((j for j in set(quantity_slots(host.expression)) if start <= positions[j] < end), None)
    if slot is None:
        return False
    old = host.values[slot]
    for node in iter_nodes(host.expression):
        if not isinstance(node, BinOp) or node.op != "-":
            continue
        left, right = set(quantity_slots(node.left)), set(quantity_slots(node.right))
        if slot in left and any(positions[j] > positions[slot] and old >= host.values[j] > value for j in right):
            return True
        before = sum((host.values[j] for j in left if positions[j] < positions[slot]), Fraction(0))
        if slot in right and before and old <= before < value:
            return True
    return False


_TOTAL = frozenset({"total", "altogether", "all", "together", "combined"})
_TIED_BY = frozenset({"on", "for"})
_DETERMINERS = frozenset("the a an his her their its my our your some each every this that these those".split())


def _ties_its_amount_to_another_thing(host: Problem, u: Units, c: int, narrative: Sequence[str]) -> bool:
    """Statement ``c`` ties its amount to a thing by "on"/"for" ("Adam spends 30 dollars on markers") that
    another clause of the host names ("Adam buys 3 markers. How much does each marker cost?"), and the
    donor's narrative never names it: the composition would no longer say what the amount was for ("Adam
    buys 10 candles. Each candle costs 6 dollars. Adam buys 3 markers. How much does each marker cost?")."""
    start, end = u.spans[c]
    tokens = host.tokens
    tied = set()
    for i in range(start, end - 1):
        if tokens[i].lower() not in _TIED_BY:
            continue
        j = i + 1
        while j < end and tokens[j].lower() in _DETERMINERS:
            j += 1
        if j < end and tokens[j].isalpha():
            tied.add(singular(tokens[j].lower()))
    if not tied:
        return False
    elsewhere = {singular(t.lower()) for k, (a, b) in enumerate(u.spans) if k != c for t in tokens[a:b] if t.isalpha()}
    told = {singular(t.lower()) for t in narrative if t.isalpha()}
    return bool(tied & (elsewhere - told))


def _counted_elsewhere(host: Problem, u: Units, c: int) -> bool:
    """Another statement of the host counts the entity that statement ``c`` counts."""
    reading = read(host)
    mine = {e for j, e in enumerate(reading.quantity_entities) if reading.clause_of_slot[j] == c}
    return any(e in mine for j, e in enumerate(reading.quantity_entities)
               if reading.clause_of_slot[j] not in (c, len(u.spans) - 1))


def _nouns(tokens: Sequence[str], host: Problem) -> set[str]:
    """Content words that are not verbs, cue words or the host's counted entities."""
    counted = set(read(host).quantity_entities)
    return {singular(t) for t in tokens if t.isalpha() and t[:1].islower() and t.lower() not in _FUNCTION
            and t.lower() not in CUE_WORDS_EN and getLemma(t.lower(), upos="NOUN", lemmatize_oov=False)
            and lemma(t.lower()) == t.lower() and singular(t) not in counted}


def _without_entities(tokens: Sequence[str], host: Problem) -> list[str]:
    """The tokens with the host's counted entities and the words naming their kind blanked ("8 bottle caps"):
    every composition shares them by construction, and "caps" would read as a verb, "bottle" as a noun."""
    counted = {e for e in read(host).quantity_entities if e}
    out = list(tokens)
    for i, t in enumerate(tokens):
        if t.isalpha() and singular(t.lower()) in counted:
            j = i
            while j > 0 and out[j - 1].isalpha() and out[j - 1].islower() and out[j - 1] not in _FUNCTION:
                j -= 1
            out[j:i + 1] = [""] * (i + 1 - j)
    return out


_PLAIN_VERBS = frozenset({"be", "have", "do", "will", "would", "can", "could"})


def _verbs(tokens: Sequence[str]) -> set[str]:
    """Lemmas of the inflected verbs of the tokens (spent, got, gives), be/have/do left out."""
    out = set()
    for t in tokens:
        low = t.lower()
        if low.isalpha() and t[:1].islower() and getLemma(low, upos="VERB", lemmatize_oov=False):
            lem = lemma(low)
            if lem != low and lem not in _PLAIN_VERBS:
                out.add(lem)
    return out


def _asked_events(host: Problem, u: Units) -> list[int]:
    """The clauses that tell, without a number, an event of a verb the host's question asks about ("She gave
    Alyssa some of her seashells." for "How many seashells did she give to Alyssa?")."""
    asked = {lemma(t.lower()) for t in host.tokens[u.spans[-1][0]:] if t.isalpha()}
    positions = set(u.qty_pos)
    return [k for k, (a, b) in enumerate(u.spans[:-1])
            if not positions & set(range(a, b)) and _verbs(host.tokens[a:b]) & asked]


def _follows_the_asked_event(host: Problem, u: Units, c: int) -> bool:
    """Statement ``c`` comes after the event the question asks about, so it states what that event left: a
    narrative told in its place would put its own events after the asked one ("She gave Alyssa some of her
    seashells. Joan has 53 seashells. She gets 16 more from Steve. How many did she give?" is not 72 - 69)."""
    return any(k < c for k in _asked_events(host, u))


def _repeats_the_asked_event(host: Problem, u: Units, c: int, narrative: Sequence[str]) -> bool:
    """The host asks for the amount of an event its narrative tells without a number ("He buys some books
    at a yard sale. ... How many books did he buy?") and the donor's narrative tells an event of the same
    verb with one: the question could then ask for either."""
    q_start = u.spans[-1][0]
    asked = {lemma(t.lower()) for t in host.tokens[q_start:] if t.isalpha()} & _verbs(narrative)
    if not asked:
        return False
    positions = set(u.qty_pos)
    return any(_verbs(host.tokens[a:b]) & asked for k, (a, b) in enumerate(u.spans[:-1])
               if k != c and not positions & set(range(a, b)))
