"""English morphology for the entity rules, from lemminflect's tables (shipped with the package, nothing
downloaded): the singular a noun's mentions fold to, the plural a swap writes, and the lemma two
predicates compare ("makes" and "make" -> make, "children" and "child" -> child).

lemminflect gives more than one lemma for some words; the first is its most frequent reading
(``cookies`` -> ``cookie`` before ``cooky``). ``_NOUN_OVERRIDES`` and ``_PLURAL_OVERRIDES`` hold the few
words where its first answer is wrong for word problems; each is pinned by a test.
"""
from __future__ import annotations

from functools import lru_cache

from lemminflect import getInflection, getLemma

# Nouns written the same way in both numbers (or mass nouns a swap writes unchanged).
INVARIANT = frozenset("people fish sheep deer police cattle series species money water juice milk sand rice "
                      "flour sugar candy".split())
# The library's first lemma is wrong for word problems: "dice" are the plural of "die" (not the verb),
# "pants"/"scissors"/"glasses" (of water) are counted as written, "oxen" has no entry.
_NOUN_OVERRIDES = {"oxen": "ox", "pants": "pants", "scissors": "scissors", "dice": "die"}
_PLURAL_OVERRIDES = {"die": "dice", "ox": "oxen", "fish": "fish", "money": "money", "candy": "candies"}


@lru_cache(maxsize=65536)
def singular(word: str) -> str:
    """The singular of an English noun, lower-cased (cookies -> cookie, shelves -> shelf, children ->
    child, feet -> foot, buses -> bus); a word already singular comes back as it is."""
    w = word.lower()
    if w in _NOUN_OVERRIDES:
        return _NOUN_OVERRIDES[w]
    if not w.isalpha():
        return w
    lemmas = getLemma(w, upos="NOUN")
    return lemmas[0] if lemmas else w


@lru_cache(maxsize=65536)
def plural(word: str) -> str:
    """The plural of an English noun given in the singular (shelf -> shelves, child -> children)."""
    w = word.lower()
    if w in _PLURAL_OVERRIDES:
        return _PLURAL_OVERRIDES[w]
    if w in INVARIANT:
        return w
    forms = getInflection(w, tag="NNS") if w.isalpha() else ()
    return forms[0] if forms else w + "s"


def is_plural(word: str) -> bool:
    """True when the word is written in the plural (singular and plural differ and it is not the singular)."""
    w = word.lower()
    return singular(w) != w


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The form two predicates compare: the verb lemma from lemminflect's dictionary (makes, made, making
    -> make; has/had -> have; is/was -> be), else the noun lemma, else the word lower-cased."""
    w = word.lower()
    if not w.isalpha():
        return w
    for upos in ("VERB", "AUX", "NOUN", "ADJ"):
        lemmas = getLemma(w, upos=upos, lemmatize_oov=False)
        if lemmas:
            return lemmas[0]
    return w


@lru_cache(maxsize=65536)
def is_participle(word: str) -> bool:
    """True when ``word`` is the past participle of a verb other than itself (saved, spent, given, read as
    the participle of read), from lemminflect's inflection tables."""
    w = word.lower()
    lemmas = getLemma(w, upos="VERB", lemmatize_oov=False) if w.isalpha() else ()
    return any(w in getInflection(lem, tag="VBN") for lem in lemmas if lem != w or w in ("read", "put", "cut", "set"))
