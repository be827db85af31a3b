"""Entity substitution (papers 000/004 NER replacement, 001 knowledge-guided replacement): a person
name or an object noun is replaced consistently throughout a problem by another of the same kind.

Kinds, without a tagger or a knowledge base: person names come from ``mwp/resources/names.txt``
(same language and gender, so pronouns still fit); object nouns are the words counted right after a
quantity in the pool ("36 peaches"), and two of them are of the same kind when they are alternatives,
i.e. occur in a common environment (the clause with the noun removed, quantities left out). English
only for nouns; Chinese problems get name swaps only. Quantities, units and operation cue words
("times", "more", "each", "left", "total", ...) are never replaced.
"""
from __future__ import annotations

from collections import defaultdict
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import (UNIT_WORDS, AugmentConfig, CandidateBatch, Slot, Units, assemble,
                                  clause_units, is_cue, rng_for)
from tasks.augment.geca import replace_fragment
from tasks.augment.geca_index import skeleton

NAMES_FILE = Path(__file__).resolve().parents[2] / "mwp" / "resources" / "names.txt"
_STOP = frozenset("the a an of and or to in on at for with by from is are was were be has have had it "
                  "this that these those his her their its he she they we you i them him".split())


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


def _contains(tokens: Sequence[str], seq: tuple[str, ...]) -> bool:
    n = len(seq)
    return any(tuple(tokens[i:i + n]) == seq for i in range(len(tokens) - n + 1))


def counted_nouns(problem: Problem) -> list[str]:
    """English words right after a quantity that can name an object ("36 peaches" -> peaches)."""
    tokens = problem.tokens
    out = []
    for pos in problem.quantity_positions():
        if pos + 1 < len(tokens):
            word = tokens[pos + 1]
            if (word.isalpha() and word.islower() and len(word) > 2 and word not in _STOP
                    and word not in UNIT_WORDS and not is_cue(word, "en")):
                out.append(word)
    return out


def noun_kinds(problems: Sequence[Problem]) -> dict[str, set[str]]:
    """noun -> the other counted nouns sharing an environment with it somewhere in the pool."""
    by_env: dict[tuple[str, ...], set[str]] = defaultdict(set)
    for problem in problems:
        if problem.language != "en":
            continue
        nouns = set(counted_nouns(problem))
        if not nouns:
            continue
        units = clause_units(problem)
        for c in range(len(units.spans)):
            tokens, _ = skeleton(units, c)
            for i, tok in enumerate(tokens):
                if tok in nouns:
                    by_env[tokens[:i] + ("<0>",) + tokens[i + 1:]].add(tok)
    kinds: dict[str, set[str]] = defaultdict(set)
    for group in by_env.values():
        for noun in group:
            kinds[noun] |= group - {noun}
    return kinds


def singular(word: str) -> str:
    """Rough English singular of a plural noun (peaches -> peach, berries -> berry, apples -> apple)."""
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def substitute(problem: Problem, units: Units, old: tuple[str, ...], new: tuple[str, ...], kind: str,
               round_: int) -> Problem | str:
    """Every occurrence of ``old`` replaced by ``new``; in English also the possessive ("Tom's") and,
    for a plural noun, its singular ("peach"). Same expression."""
    pairs = [(old, new)]
    if len(old) == 1 and problem.language == "en":
        pairs.append(((old[0] + "'s",), (new[0] + "'s",)))
        if kind == "noun" and singular(old[0]) != old[0] and singular(new[0]) != new[0]:
            pairs.append(((singular(old[0]),), (singular(new[0]),)))
    tokens, qty_pos, count = list(units.tokens), list(units.qty_pos), 0
    for a, b in pairs:
        tokens, moved, n = replace_fragment(Units(tokens, [(0, len(tokens))], qty_pos), (a,), (b,))
        qty_pos = [moved[p] for p in qty_pos]
        count += n
    if count == 0:
        return "entity_not_found"
    joiner = "" if problem.language == "zh" else " "
    detail = f"{kind}: {joiner.join(old)} -> {joiner.join(new)}"
    slots = [Slot(pos, j, q.value, q.surface) for j, (pos, q) in enumerate(zip(qty_pos, problem.quantities))]
    return assemble(tokens, slots, problem.expression, problem.language, (problem.id,), "entity_substitution",
                    detail, round_, problem.provenance.source)


def entity_substitution(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "entity_substitution")
    names = load_names()
    kinds = noun_kinds(problems)
    for problem in problems:
        if batch.full(cfg):
            break
        tokens = problem.tokens
        options: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = []
        for (lang, gender), group in names.items():
            if lang != problem.language:
                continue
            for name in group:
                if _contains(tokens, name):
                    others = [n for n in group if not _contains(tokens, n)]
                    options.append((f"name/{gender}", name, others))
        present = set(tokens)
        for noun in dict.fromkeys(counted_nouns(problem)):
            others = sorted(m for m in kinds.get(noun, ()) if m not in present)
            options.append(("noun", (noun,), [(m,) for m in others]))
        options = [o for o in options if o[2]]
        if not options:
            batch.rejected["entity_none_replaceable"] += 1
            continue
        rng.shuffle(options)
        units = clause_units(problem)
        for kind, old, others in options[:cfg.per_problem_cap]:
            out = substitute(problem, units, old, others[rng.randrange(len(others))], kind, round_)
            if isinstance(out, str):
                batch.rejected[out] += 1
            else:
                batch.candidates.append(out)
    return batch
