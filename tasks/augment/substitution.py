"""Entity substitution (papers 000/004 NER replacement, 001 knowledge-guided replacement): a person
name or an object noun is replaced consistently throughout a problem by another of the same kind.

Kinds, without a tagger or a knowledge base: person names come from ``mwp/resources/names.txt`` (same
gender, so pronouns still fit); object nouns are the counted nouns of the pool ("36 peaches", "5个苹果"),
and two of them are of one kind when they fill a common environment with a content word (swap.py). Units, money and operation cue
words are never replaced. The swap itself is swap.swap_entity, shared with operation 2.
"""
from __future__ import annotations

from typing import Sequence

from mwp.problem import Problem
from tasks.augment.base import AugmentConfig, CandidateBatch, rng_for
from tasks.augment.entities import lexicon_genders, load_names, names_in
from tasks.augment.swap import nouns_of, pool_entities, swap_entity


def entity_substitution(problems: Sequence[Problem], cfg: AugmentConfig, seed: int, round_: int) -> CandidateBatch:
    batch = CandidateBatch()
    rng = rng_for(seed, round_, "entity_substitution")
    genders = lexicon_genders()
    lexicon = {(lang, g): ["".join(n) for n in group] for (lang, g), group in load_names().items()}
    entities = pool_entities(problems, genders)
    for problem in problems:
        if batch.full(cfg):
            break
        present_names = names_in(problem.tokens, problem.language)
        present_nouns = nouns_of(problem)
        options: list[tuple[str, str, list[str]]] = []
        for name in sorted(present_names):
            if name in genders:
                others = [n for n in lexicon.get((problem.language, genders[name]), []) if n not in present_names]
                options.append(("name", name, others))
        for noun in sorted(present_nouns):
            options.append(("noun", noun, sorted(entities.alternatives.get(("noun", noun), set()) - present_nouns)))
        options = [o for o in options if o[2]]
        if not options:
            batch.rejected["entity_none_replaceable"] += 1
            continue
        rng.shuffle(options)
        for kind, old, others in options[:cfg.per_problem_cap]:
            new = others[rng.randrange(len(others))]
            detail = f"{kind}: {old} -> {new}"
            out = swap_entity(problem, entities.entity(kind, old), entities.entity(kind, new), "entity_substitution",
                              detail, round_, entities.gender, entities.takes)
            if isinstance(out, str):
                batch.rejected["entity_" + out] += 1
            else:
                batch.candidates.append(out)
    return batch
