"""The augmentation operators by name (the one list the settings models and the CLI read):
``OPERATORS[name](problems, config, seed, round)`` returns a :class:`CandidateBatch` of unverified
candidates and counted rejections.

Not offered: paraphrasing and back-translation (papers 000/004) need translation or paraphrase model
weights that cannot be downloaded here; asking for them raises an error that says so."""
from __future__ import annotations

from tasks.augment.base import AugmentConfig, CandidateBatch, Operator
from tasks.augment.substitution import entity_substitution
from tasks.augment.geca import geca_op1, geca_op2
from tasks.augment.literal import geca_op1_literal
from tasks.augment.reorder import problem_reordering
from tasks.augment.reverse import reverse_operation

OPERATORS: dict[str, Operator] = {
    "geca_op1": geca_op1,
    "geca_op2": geca_op2,
    "geca_op1_literal": geca_op1_literal,  # op1 matched on the counted entity alone, for the SD study
    "entity_substitution": entity_substitution,
    "problem_reordering": problem_reordering,
    "reverse_operation": reverse_operation,
}

NOT_OFFERED = {
    "paraphrase": "needs a local paraphrase model (e.g. a T5/PEGASUS checkpoint); none can be downloaded "
                  "here, so it is not offered rather than faked",
    "back_translation": "needs local translation models for both directions; not offered",
}


def check_operators(names) -> None:
    """A ValueError naming an unknown or unoffered operator and the known ones."""
    for name in names:
        get_operator(name)


def get_operator(name: str) -> Operator:
    if name in OPERATORS:
        return OPERATORS[name]
    if name in NOT_OFFERED:
        raise ValueError(f"operator {name!r} is not offered: {NOT_OFFERED[name]}")
    raise ValueError(f"unknown operator {name!r}; known: {', '.join(sorted(OPERATORS))}")


__all__ = ["AugmentConfig", "CandidateBatch", "NOT_OFFERED", "OPERATORS", "Operator", "get_operator"]
