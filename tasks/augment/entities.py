"""Who holds what in a problem, read from its tokens: the counted entity of each quantity ("36 peaches"
-> peach, "$ 11" -> dollar), the entity the question asks for ("How many peaches ...?" -> peach), and
the holder a clause names ("Mary"). Operation 1 composes only where the question asks for the entity a
statement counts (paper 003 Figure 3a, the environment "_ peaches"); swaps use the same forms; the
consistency checks (consistency.py) use all of it.

The rules are small and conservative: an entity is a word that follows a quantity (or an interrogative
"how many/much"), singular and plural folded by lemminflect's tables (morph.py); anything the rules
cannot read is ``None`` and the callers count it as unreadable rather than guess. English is
read word by word; Chinese by the characters after a number or after 多少/几 (a classifier and a noun).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from mwp.expr import BinOp, iter_nodes, quantity_slots
from mwp.problem import Problem
from mwp.text import clause_spans
from tasks.augment import zh
from tasks.augment.zh_reorder import question_clause
from tasks.augment.base import CUE_WORDS_EN, UNIT_WORDS
from tasks.augment.morph import INVARIANT, is_participle, lemma, plural, singular  # noqa: F401 (re-exported)

# Words that end a noun run after a quantity: function words, auxiliaries, prepositions.
_FUNCTION = frozenset(
    "the a an of and or to in on at for with by from into onto over under about after before during "
    "is are was were be been being am has have had do does did will would can could should shall may might "
    "must it its this that these those his her their our your my he she they we you i them him us me "
    "if then than so but as when while there here what which who whom whose how much many each every per "
    "all some any more less fewer most least another other others left total altogether together "
    "now still already also only just not no yet too very currently today yesterday tomorrow tonight out up "
    "down away back off live lives last next first second third times time".split())
_MULTIPLIERS = frozenset("dozen dozens hundred hundreds thousand thousands million millions pair pairs".split())
_MONEY = frozenset({"$", "dollar", "dollars", "money", "cost", "costs", "price", "change", "earn", "earned",
                    "spend", "spent", "pay", "paid", "worth", "buck", "bucks"})
# Money words that are verbs: "had spent 4 dollars" says more than "had 4 dollars".
_MONEY_VERBS = frozenset({"cost", "costs", "earn", "earned", "spend", "spent", "pay", "paid"})
_CAPITALIZED_NOT_HOLDERS = frozenset(
    "How What Which Who Whom Whose Where When Why If Then The A An There This That These Those He She They "
    "It We You I His Her Their Its Our My Your In On At For With By From After Before During Each Every "
    "Of To And Or But So As All Some Any Mr Mrs Ms Dr Find Calculate Compute Write Monday Tuesday Wednesday "
    "Thursday Friday Saturday Sunday January February March April May June July August September October "
    "November December Now Later Then Today Tonight Yesterday Tomorrow Altogether Also Only Last Next Some "
    "Many Most One Two Three Both Another Other Total Here However So Together Suppose Let Given Use".split())


_BE = frozenset("is are was were be been being am".split())
_HAVE = frozenset("has have had having".split())
_AUX = frozenset("do does did will would can could should shall may might must".split())


def entity_key(word: str) -> str:
    """The folded form two mentions of one entity share (plural, case, money words folded)."""
    w = word.lower()
    if w in _MONEY:
        return "dollar"
    if w in ("%", "percent", "percentage", "percents"):
        return "percent"
    return singular(w)


def forms(word: str) -> set[str]:
    """Surface forms of an English noun a consistent swap must replace: as given, singular, plural,
    capitalized, possessive."""
    base = {word, singular(word), plural(singular(word))}
    out = set()
    for w in base:
        out |= {w, w.capitalize(), w + "'s", w.capitalize() + "'s"}
    return out


def predicate(tokens: Sequence[str], start: int, end: int, entity: str | None, language: str = "en") -> frozenset[str]:
    """What a clause says of its entity: the stems of its content words and of its be/have verbs, with
    numbers, names, the entity itself, interrogatives, auxiliaries and function words left out.
    ("Tom has 36 peaches," -> {have}; "How many peaches does Tom have?" -> {have})."""
    if language == "zh":
        return zh.predicate(tuple(tokens), start, end, entity)
    out = set()
    for i in range(start, end):
        tok = tokens[i]
        low = tok.lower()
        if low in ("will", "would", "'ll"):  # a future or a condition is another state than "is"/"has"
            out.add("will" if low != "would" else "would")
        elif low in _HAVE and _perfect(tokens, i + 1, end):
            continue  # "has saved 306 dollars" says what "saves" says: the tense, not a holding
        elif low in _BE or low in _HAVE:
            out.add(lemma(low))
        elif low in CUE_WORDS_EN:  # "left", "more", "each", "total": they decide what is asked
            out.add(low)
        elif (tok.isalpha() and tok[:1].islower() and low not in _FUNCTION and low not in _AUX
              and (entity_key(low) != entity or low in _MONEY_VERBS) and low not in _MULTIPLIERS):
            out.add(lemma(low))
    return frozenset(out)


_SUBJECT_OR_ADVERB = frozenset("he she they it we you i already just also not n't never".split())


def _perfect(tokens: Sequence[str], i: int, end: int) -> bool:
    """tokens[i:] (after has/have/had, a pronoun or adverb skipped) open with a past participle ("has saved",
    "has Sam saved"), so the have is the perfect's auxiliary; "have left" stays a holding."""
    while i < end and (tokens[i].lower() in _SUBJECT_OR_ADVERB or tokens[i][:1].isupper() and tokens[i].isalpha()):
        i += 1
    if i >= end or not tokens[i].isalpha() or tokens[i].lower() in CUE_WORDS_EN:
        return False
    return is_participle(tokens[i].lower())


def predicates_agree(statement: frozenset[str], question: frozenset[str]) -> bool:
    """A statement can stand for a question's answer when it says no more than the question and they
    share at least one word (the verb, usually): "Tom has 36 peaches" for "How many peaches does Tom
    have now?", never "has 15 heads of cabbage in his patch" for "How many heads does he have?"."""
    return bool(statement & question) and statement - NEUTRAL_STATEMENT == question - NEUTRAL


def neutral(language: str) -> tuple[frozenset[str], frozenset[str]]:
    """(words a question may add, words a statement may add) in ``language``."""
    return (zh.NEUTRAL, zh.NEUTRAL_STATEMENT) if language == "zh" else (NEUTRAL, NEUTRAL_STATEMENT)


def agree(statement: frozenset[str], question: frozenset[str], language: str) -> bool:
    """:func:`predicates_agree` with the neutral words of ``language``."""
    q_neutral, s_neutral = neutral(language)
    return bool(statement & question) and statement - s_neutral == question - q_neutral


# Words a question may add without asking for something else ("How many peaches are left/are there now?");
# a statement that says "left" or "remaining" says more than "has" (the amount after some event).
NEUTRAL = frozenset("total all altogether together now then still end left remaining".split())
NEUTRAL_STATEMENT = frozenset("total all altogether together now then still".split())


ABBREVIATIONS = frozenset({"Mr", "Mrs", "Ms", "Dr", "St", "Jr", "Sr", "Prof"})


def rated_nouns(tokens: Sequence[str]) -> set[str]:
    """Nouns a text gives a rate for ("each candle costs 2", "3 pens per box" -> candle, box)."""
    out = set()
    for i, tok in enumerate(tokens[:-1]):
        if tok.lower() in ("each", "every", "per") and _is_noun_word(tokens[i + 1]):
            out.add(entity_key(tokens[i + 1]))
    return out


def has_abbreviation(tokens: Sequence[str]) -> bool:
    """"Mrs. Hilt": the period cuts a false clause, so clause-level edits would break the name."""
    return any(t in ABBREVIATIONS and i + 1 < len(tokens) and tokens[i + 1] == "." for i, t in enumerate(tokens))


def _is_noun_word(token: str) -> bool:
    return token.isalpha() and token.islower() and len(token) > 1 and token not in _FUNCTION


# Bare verbs that follow a counted noun in a question ("How many tarts go in each box?").
_BARE_VERBS = frozenset("go goes went fit fits come comes came".split())


def _verb_like(word: str) -> bool:
    return word in _BARE_VERBS or word.endswith(("ed", "ing")) and word not in (
        "bed", "red", "shed", "sled", "seed", "weed", "string", "ring", "king", "wing", "ceiling", "building", "painting")


def noun_run(tokens: Sequence[str], start: int, limit: int = 4) -> tuple[int, int] | None:
    """The span (start, end) of the noun phrase beginning at ``start`` (adjectives and a head noun, at most
    ``limit`` words, multipliers and cue words such as "more" skipped), or None. Trailing words ending in
    -ed/-ing and a few bare verbs are verbs ("28 passed", "124 students making", "tarts go"), not the head."""
    i = start
    while i < len(tokens) and (tokens[i].lower() in _MULTIPLIERS or tokens[i].lower() in CUE_WORDS_EN
                               or tokens[i] in ("-",)):
        i += 1
    j = i
    while j < len(tokens) and j - i < limit and _is_noun_word(tokens[j]):
        j += 1
    while j > i and _verb_like(tokens[j - 1]):
        j -= 1
    return (i, j) if j > i else None


def _with_complement(tokens: Sequence[str], head: int, key: str) -> str:
    """``head:complement`` when the head is followed by "of NOUN" ("cups of flour" -> cup:flour)."""
    if head + 1 < len(tokens) and tokens[head + 1] == "of":
        span = noun_run(tokens, head + 2, limit=2)
        if span:
            return f"{key}:{entity_key(tokens[span[1] - 1])}"
    return key


def heads(key: str) -> set[str]:
    """The nouns of an entity key (cup:flour -> {cup, flour})."""
    return set(key.split(":"))


def quantity_entity(problem: Problem, slot: int) -> str | None:
    """The folded entity quantity ``slot`` counts, or None when the text does not say."""
    tokens = problem.tokens
    pos = problem.quantity_positions()[slot]
    if problem.language == "zh":
        return zh.quantity_entities(tuple(tokens), problem.quantity_positions())[slot]
    if pos > 0 and tokens[pos - 1] == "$":
        return "dollar"
    surface = tokens[pos]
    if surface.endswith("%"):
        return "percent"
    if pos + 1 < len(tokens):
        nxt = tokens[pos + 1].lower()
        if nxt in ("%", "percent"):
            return "percent"
        if nxt in UNIT_WORDS:
            return _with_complement(tokens, pos + 1, entity_key(nxt))
        if nxt in _MULTIPLIERS:  # "8 dozen books" counts dozens: a narrative computing books cannot replace it
            span = noun_run(tokens, pos + 2)
            return f"{singular(nxt)}:{entity_key(tokens[span[1] - 1])}" if span else singular(nxt)
    span = noun_run(tokens, pos + 1)
    return _with_complement(tokens, span[1] - 1, entity_key(tokens[span[1] - 1])) if span else None


def question_span(problem: Problem) -> tuple[int, int]:
    """Token span of the question clause: the last clause (Chinese: the last clause asking 多少/几, so a
    problem reordered to "...多少天？已知..." is read at its question)."""
    spans = clause_spans(problem.tokens)
    if spans and problem.language == "zh":
        return spans[question_clause(problem.tokens, spans)]
    return spans[-1] if spans else (0, 0)


def question_entity(problem: Problem, elided: bool = False) -> str | None:
    """The folded entity the question asks for ("how many X", "how much money", "what percentage",
    "how old" -> year), or None when it cannot be read. With ``elided``, "How many are left?" (no noun) is
    read too (:func:`_elided_entity`): operation 1 reads its hosts and donors so."""
    tokens = problem.tokens
    start, end = question_span(problem)
    sentence_start = max((i + 1 for i in range(start) if tokens[i] in (".", "?", "!", "。", "？", "！")), default=0)
    words = tokens[sentence_start:end]
    lower = [t.lower() for t in words]
    if problem.language == "zh":
        return zh.question_entity(tuple(tokens), sentence_start, end)
    for i, w in enumerate(lower[:-1]):
        if w == "number" and lower[i + 1] == "of":
            span = noun_run(words, i + 2)
            return _with_complement(words, span[1] - 1, entity_key(words[span[1] - 1])) if span else None
        if w == "how" and lower[i + 1] in ("many", "much") and i + 2 < len(lower) and lower[i + 2] in _MULTIPLIERS:
            span = noun_run(words, i + 3)  # "how many dozen books" asks for dozens
            return f"{singular(lower[i + 2])}:{entity_key(words[span[1] - 1])}" if span else singular(lower[i + 2])
        if w == "how" and lower[i + 1] in ("many", "much"):
            span = noun_run(words, i + 2)
            if span:
                return _with_complement(words, span[1] - 1, entity_key(words[span[1] - 1]))
            if lower[i + 1] == "much" and any(t in _MONEY for t in lower):
                return "dollar"
            if elided and lower[i + 1] == "many" and i + 2 < len(lower) and lower[i + 2] in _BE | _HAVE | _AUX | {"more"}:
                return _elided_entity(problem)  # "How many are left?", "How many did she start with?"
            return None
        if w == "how" and lower[i + 1] == "old":
            return "year"
    if any(t in ("percent", "percentage", "%") for t in lower):
        return "percent"
    if any(t in _MONEY for t in lower) and lower[:1] in (["what"], ["how"], ["find"]):
        return "dollar"
    return None


def _elided_entity(problem: Problem) -> str | None:
    """The entity of "How many are left?" with no noun: the one entity every quantity of the text counts (a
    bare quantity, "gives 5 to Harold", counts it too), when the expression only adds and subtracts (a sum or
    difference of counts of E counts E; "4 tickets a piece, how many could he buy?" divides, and counts candy)."""
    if any(isinstance(node, BinOp) and node.op not in "+-" for node in iter_nodes(problem.expression)):
        return None
    entities = {quantity_entity(problem, j) for j in range(len(problem.quantities)) if not _bare(problem, j)}
    return entities.pop() if len(entities) == 1 and None not in entities else None


def _bare(problem: Problem, slot: int) -> bool:
    """Quantity ``slot`` names nothing after it ("She gives 5 to Harold", "61 are eaten", "7 of them", "35
    more"): in a text that counts one entity, it counts that entity too. A quantity followed by a word that
    may be a noun ("20 M & M's") is not bare."""
    pos = problem.quantity_positions()[slot]
    if pos > 0 and problem.tokens[pos - 1] == "$" or quantity_entity(problem, slot) is not None:
        return False
    nxt = problem.tokens[pos + 1] if pos + 1 < len(problem.tokens) else "."
    return not nxt.isalpha() or nxt in _FUNCTION


SINGULAR_PRONOUNS = frozenset("he she him her his hers himself herself".split())


def holder(tokens: Sequence[str], start: int, end: int, protagonist: str | None = None) -> str | None:
    """The first name-like word of tokens[start:end] (capitalized, not a function word); a singular
    pronoun stands for ``protagonist`` (the problem's first name); else None ("they", "there are")."""
    for i in range(start, end):
        tok = tokens[i].removesuffix("'s")
        if tok[:1].isupper() and tok.isalpha() and tok not in _CAPITALIZED_NOT_HOLDERS and len(tok) > 1:
            return tok
        if tok.lower() in SINGULAR_PRONOUNS:
            return protagonist or UNRESOLVED
    return None


UNRESOLVED = "<someone>"  # a pronoun with no name to stand for: never the same holder as a name


NAMES_FILE = Path(__file__).resolve().parents[2] / "mwp" / "resources" / "names.txt"


@lru_cache(maxsize=4)
def load_names(path: str = str(NAMES_FILE)) -> dict[tuple[str, str], tuple[tuple[str, ...], ...]]:
    """(language, gender) -> names as token tuples (Chinese by character)."""
    out: dict[tuple[str, str], list[tuple[str, ...]]] = defaultdict(list)
    for line_no, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or parts[0] not in ("en", "zh") or parts[1] not in ("f", "m"):
            raise ValueError(f"{path}:{line_no}: expected 'language gender name', got {line!r}")
        out[(parts[0], parts[1])].append(tuple(parts[2]) if parts[0] == "zh" else (parts[2],))
    return {k: tuple(v) for k, v in out.items()}


def lexicon_genders() -> dict[str, str]:
    """Name -> "f" / "m" from the names lexicon (Chinese names joined: 小明)."""
    return {"".join(n): gender for (lang, gender), group in load_names().items() for n in group}


@dataclass(frozen=True)
class Reading:
    """What the entity rules read in one problem."""

    question_entity: str | None
    question_holder: str | None
    quantity_entities: tuple[str | None, ...]  # per slot
    clause_of_slot: tuple[int, ...]  # per slot: index of its clause
    clause_holders: tuple[str | None, ...]  # per clause


@lru_cache(maxsize=65536)
def read(problem: Problem, elided: bool = False) -> Reading:
    """What the entity rules read in ``problem`` (``elided``: see :func:`question_entity`)."""
    tokens = problem.tokens
    spans = clause_spans(tokens)
    positions = problem.quantity_positions()
    clause_of = tuple(next((c for c, (a, b) in enumerate(spans) if a <= p < b), len(spans) - 1) for p in positions)
    q_start, q_end = question_span(problem)
    if problem.language == "zh":
        key = tuple(tokens)
        first = zh.holder(key, 0, len(tokens), None, UNRESOLVED)
        first = None if first == UNRESOLVED else first
        return Reading(
            question_entity=question_entity(problem, elided),
            question_holder=zh.holder(key, q_start, q_end, first, UNRESOLVED),
            quantity_entities=zh.quantity_entities(key, positions),
            clause_of_slot=clause_of,
            clause_holders=tuple(zh.holder(key, a, b, first, UNRESOLVED) for a, b in spans))
    first = holder(tokens, 0, len(tokens))
    return Reading(
        question_entity=question_entity(problem, elided),
        question_holder=holder(tokens, q_start, q_end, first),
        quantity_entities=tuple(quantity_entity(problem, j) for j in range(len(positions))),
        clause_of_slot=clause_of,
        clause_holders=tuple(holder(tokens, a, b, first) for a, b in spans))


def asks_about_used_entity(problem: Problem, elided: bool = False) -> bool:
    """The question's entity occurs in the statements that feed the answer: the clauses holding a quantity
    the expression uses ("each box holds 4 peaches" feeds "How many boxes?"), or counted by such a
    quantity ("$ 5" feeds "How much money?")."""
    reading = read(problem, elided)
    asked = reading.question_entity
    if asked is None:
        return False
    used = set(quantity_slots(problem.expression))
    feeding = {reading.clause_of_slot[j] for j in used if j < len(reading.clause_of_slot)}
    spans = clause_spans(problem.tokens)
    if problem.language == "zh":
        words = set().union(*(zh.clause_words(tuple(problem.tokens), *spans[c]) for c in feeding))
    else:
        words = {entity_key(t) for c in feeding for t in problem.tokens[slice(*spans[c])] if t.isalpha() or t == "$"}
    for e in used_entities(problem):
        words |= heads(e)
    return heads(asked) <= words


def used_entities(problem: Problem) -> set[str]:
    """Folded entities of the quantities the expression uses."""
    reading = read(problem)
    return {reading.quantity_entities[j] for j in set(quantity_slots(problem.expression))
            if j < len(reading.quantity_entities) and reading.quantity_entities[j]}


def names_in(tokens: Sequence[str], language: str = "en") -> set[str]:
    """Every name-like word (see :func:`holder`) of the tokens; Chinese: jieba's person names."""
    if language == "zh":
        return zh.names_in(tuple(tokens))
    out = set()
    for tok in tokens:
        tok = tok.removesuffix("'s")
        if tok[:1].isupper() and tok.isalpha() and tok not in _CAPITALIZED_NOT_HOLDERS and len(tok) > 1:
            out.add(tok)
    return out
