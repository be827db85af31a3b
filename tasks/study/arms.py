"""The arms of a study, as data: each arm is one record of what it changes in a loop run and where the
report shows it. The study flow, the cost estimate, the report and the figures read these records and
match no arm by name, so adding an arm is one record here (and its line in tests/tasks/test_study_arms.py).

An arm's record holds:

- ``loop``: the ``LoopConfig`` fields it sets (tasks/loop/config.py), over the study's own loop settings;
- ``train``: the ``TrainConfig`` fields it sets (solvers/base.py), over the study's training settings;
- ``drop_operators``: augmentation operators it leaves out of the study's list;
- ``budget``: the arm whose final round's optimizer updates its single training matches, seed by seed
  (the control's rule: epochs x that arm's final pool / the original pool, best epoch on validation, so
  that "more data" is not confused with "more gradient steps"); its cells run after that arm's;
- ``tables``: the report tables it appears in, each with the baselines of its paired differences
  (tasks/study/report.py: ``TABLES`` names them).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

# The report's tables (tasks/study/report.py) an arm can belong to.
TABLE1 = "table1"  # paper 003 Table 1: the loop against no augmentation, per split, and the relative gap
TABLE5 = "table5"  # paper 003 Table 5: every arm against the control (the ablations)
RETENTION = "retention"  # which problems each ranking or retention keeps, against the loop's
WARM_START = "warm-start"  # warm-started rounds against retraining from scratch, and against warm-control
PER_ROUND = "per-round"  # per round of the first seed: test compounds in the pool, DBCA^c, kept problems
TABLES = (TABLE1, TABLE5, RETENTION, WARM_START, PER_ROUND)


@dataclass(frozen=True)
class Arm:
    name: str
    meaning: str  # one sentence for the documentation and the report's reader
    loop: Mapping[str, Any] = field(default_factory=dict)  # LoopConfig field -> value
    train: Mapping[str, Any] = field(default_factory=dict)  # TrainConfig field -> value
    drop_operators: tuple[str, ...] = ()  # operators left out of the study's augmentation
    budget: str | None = None  # the arm whose final-round optimizer updates this arm's training matches
    tables: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # report table -> baselines

    @property
    def trains_once(self) -> bool:
        """Round 0 only: no rounds to plot by round, one validation curve to show."""
        return self.loop.get("rounds") == 0

    def baselines(self, table: str) -> tuple[str, ...]:
        return tuple(self.tables.get(table, ()))


def _arms(*arms: Arm) -> dict[str, Arm]:
    return {arm.name: arm for arm in arms}


ARMS: dict[str, Arm] = _arms(
    Arm("loop", "the loop with the study's settings (paper 003: the top 20% of all verified candidates by "
        "solver confidence), read at round T",
        tables={TABLE1: ("control",), TABLE5: ("control",), RETENTION: (), WARM_START: (), PER_ROUND: ()}),
    Arm("control", "no augmentation (round 0 only), trained for as many optimizer updates as the same seed's "
        "loop cell in its final round", loop={"rounds": 0}, budget="loop", tables={TABLE1: (), TABLE5: ()}),
    Arm("random-ranker", "candidates kept at random, the same count (the '- DataRanker' ablation)",
        loop={"score": "random"}, tables={TABLE5: ("control",), RETENTION: ("loop",)}),
    Arm("no-op1", "the loop without GECA operation 1", drop_operators=("geca_op1",), tables={TABLE5: ("control",)}),
    Arm("no-op2", "the loop without GECA operation 2", drop_operators=("geca_op2",), tables={TABLE5: ("control",)}),
    Arm("per-operator", "the top fraction of each operator's candidates (retention per-operator)",
        loop={"retention": "per-operator"}, tables={TABLE5: ("control",), RETENTION: ("loop",)}),
    Arm("per-origin", "as many as the top fraction, at most one per original problem a round (retention "
        "per-origin), against the confidence ranker's renamings of a few easy problems",
        loop={"retention": "per-origin"}, tables={TABLE5: ("control",), RETENTION: ("loop",)}),
    Arm("least-confident", "the active-learning arm: the top fraction by uncertainty (1 - confidence), the "
        "verified candidates the solver is least sure of", loop={"score": "uncertainty"},
        tables={TABLE5: ("control",), RETENTION: ("loop",)}),
    Arm("loss-similarity", "the top fraction by loss similarity to the candidate's source problems (paper 000)",
        loop={"score": "loss-similarity"}, tables={TABLE5: ("control",), RETENTION: ("loop",)}),
    Arm("warm-start", "rounds 1..T trained on from the previous round's weights (for the study's "
        "warm_start_epochs, default its epochs) instead of from scratch: the fast mode",
        loop={"warm_start": True}, tables={TABLE5: ("control",), WARM_START: ("loop", "warm-control")}),
    Arm("warm-control", "the warm-start arm's trainings with nothing added (rounds 1..T continue on the original "
        "pool): the same updates and learning-rate restarts, so warm-start - warm-control is what the added "
        "problems do in the fast mode", loop={"warm_start": True, "augment_rounds": False},
        tables={TABLE5: ("control",), WARM_START: ()}),
)


def arm(name: str) -> Arm:
    if name not in ARMS:
        raise ValueError(f"unknown arm {name!r}; known: {', '.join(ARMS)}")
    return ARMS[name]


def budget_arm(name: str, study_arms) -> str | None:
    """The arm whose final-round optimizer updates the arm ``name`` matches in a study of ``study_arms``: its
    record's ``budget`` when the study runs that arm, else the study's first arm that adds problems over
    rounds (no budget of its own, rounds, augmenting), so the control of a study of least-confident alone
    matches least-confident. None for an arm without a budget, or when the study has no such arm (the
    control then trains the study's own epochs)."""
    budget = arm(name).budget
    if budget is None or budget in study_arms:
        return budget
    return next((a for a in study_arms if a in ARMS and ARMS[a].budget is None and not ARMS[a].trains_once
                 and ARMS[a].loop.get("augment_rounds", True)), None)


def in_table(table: str, names) -> list[Arm]:
    """The arms of ``names`` (a study's, in its order) that belong to ``table``."""
    return [ARMS[n] for n in names if n in ARMS and table in ARMS[n].tables]


def check_arms(arms: Mapping[str, Arm] = ARMS) -> None:
    """Each record names fields the configs have, tables the report has and arms that exist."""
    from dataclasses import fields

    from solvers.base import TrainConfig
    from tasks.loop.config import LoopConfig

    loop_fields = {f.name for f in fields(LoopConfig)}
    train_fields = {f.name for f in fields(TrainConfig)} - {"seed", "device", "progress", "resume_dir"}
    for a in arms.values():
        problems = [f"loop field {k!r}" for k in a.loop if k not in loop_fields]
        problems += [f"train field {k!r}" for k in a.train if k not in train_fields]
        problems += [f"table {t!r}" for t in a.tables if t not in TABLES]
        problems += [f"arm {b!r}" for t in a.tables for b in a.tables[t] if b not in arms]
        if a.budget is not None and a.budget not in arms:
            problems.append(f"budget arm {a.budget!r}")
        if problems:
            raise ValueError(f"arm {a.name!r} names an unknown {', '.join(problems)}")
