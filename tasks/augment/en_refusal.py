"""English refusals of operation 1 (geca.py) that read the host around the replaced statement: a
verbless clause leaning on it, an "I" who would do what a named donor did, and a donor narrative that
repeats an event of the host."""
from __future__ import annotations

from typing import Sequence

from lemminflect import getLemma

from mwp.problem import Problem
from tasks.augment.base import CUE_WORDS_EN, Units
from tasks.augment.entities import _FUNCTION, names_in, read
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
    rest = [t for k, (a, b) in enumerate(u.spans) if k != c for t in host.tokens[a:b]]
    if _verbs(narrative) & _verbs(rest) and _nouns(narrative, host) & _nouns(rest, host):
        return "op1_donor_restates_the_host"  # "For his birthday he got ..." after "received 67 dollars for his birthday"
    return None


def _nouns(tokens: Sequence[str], host: Problem) -> set[str]:
    """Content words that are not verbs, cue words or the host's counted entities."""
    counted = set(read(host).quantity_entities)
    return {singular(t) for t in tokens if t.isalpha() and t[:1].islower() and t.lower() not in _FUNCTION
            and t.lower() not in CUE_WORDS_EN and getLemma(t.lower(), upos="NOUN", lemmatize_oov=False)
            and lemma(t.lower()) == t.lower() and singular(t) not in counted}


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
