"""The loop's own settings (Algorithm 1 of paper 003) as one frozen config: how many rounds, which
score ranks the candidates, which retention keeps how many of them, and how rounds 1..T train.

This is the one place these settings are declared, validated and given their defaults and help texts:
the flows' settings model (``LoopSettings`` in flows/params.py) is made from these fields and builds
this config to validate, as ``TrainSettings`` builds ``TrainConfig``; the command line's options and
the Prefect form are made from that model. A new setting is a field here (and the code that reads it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ranking.retention import POLICIES
from ranking.scores import SCORES
from solvers.base import TrainConfig
from tasks.augment.base import AugmentConfig

MAX_ROUNDS = 50


def _setting(default: Any, help: str, choices: Any = None) -> Any:
    """A LoopConfig field: its default, the help text the settings model, the Prefect form and the
    command line show, and the registry its value is chosen from (Literal choices there)."""
    return field(default=default, metadata={"help": help, "choices": choices})


@dataclass(frozen=True)
class LoopConfig:
    rounds: int = _setting(7, "T, the number of augmentation rounds after round 0")
    retention: str = _setting("top-fraction", "which scored candidates a round keeps: the top fraction of all, "
                              "of each operator, or as many with at most one per original problem", POLICIES)
    keep_fraction: float = _setting(0.2, "share of a round's verified candidates the retention keeps (in (0, 1])")
    score: str = _setting("confidence", "the score that ranks the candidates (ranking/scores.py)", SCORES)
    warm_start: bool = _setting(False, "the fast mode: rounds 1..T continue from the previous round's weights "
                                "instead of retraining from scratch (the paper's way; docs/loop.md)")
    warm_start_epochs: int | None = _setting(None, "with warm_start: epochs of rounds 1..T (round 0 trains "
                                             "train.epochs from scratch); default: train.epochs")
    augment_rounds: bool = _setting(True, "False: rounds 1..T generate and add nothing and only train again on "
                                    "the original pool (with warm_start: the control for the warm-started "
                                    "loop's extra training and learning-rate restarts)")
    control: bool = _setting(True, "after round T, train the equal-update control: the original pool for as "
                             "many optimizer updates as round T had (epochs x final pool / original pool, best "
                             "epoch on validation), so the summary shows what the added problems did beside "
                             "what more updates do; False: the run has no control (its summary says so)")

    def __post_init__(self) -> None:
        if isinstance(self.rounds, bool) or not isinstance(self.rounds, int) or not 0 <= self.rounds <= MAX_ROUNDS:
            raise ValueError(f"rounds must be a whole number in [0, {MAX_ROUNDS}], got {self.rounds!r}")
        if isinstance(self.keep_fraction, bool) or not isinstance(self.keep_fraction, (int, float)) \
                or not 0 < self.keep_fraction <= 1:
            raise ValueError(f"keep_fraction must lie in (0, 1], got {self.keep_fraction!r}")
        if self.retention not in POLICIES:
            raise ValueError(f"retention must be one of {', '.join(POLICIES)}, got {self.retention!r}")
        if self.score not in SCORES:
            raise ValueError(f"score must be one of {', '.join(SCORES)}, got {self.score!r}")
        if self.warm_start_epochs is not None and (isinstance(self.warm_start_epochs, bool)
                                                   or not isinstance(self.warm_start_epochs, int)
                                                   or self.warm_start_epochs < 1):
            raise ValueError(f"warm_start_epochs must be at least 1 (or none), got {self.warm_start_epochs!r}")

    def augments(self, round_index: int) -> bool:
        """Whether round ``round_index`` generates, scores and keeps candidates (round 0 never does)."""
        return round_index > 0 and self.augment_rounds

    def runs_control(self) -> bool:
        """Whether the run ends with the equal-update control (only a loop that adds problems has one)."""
        return self.control and self.rounds > 0 and self.augment_rounds

    def warm_starts(self, round_index: int) -> bool:
        """Whether round ``round_index`` trains on from the previous round's weights."""
        return self.warm_start and round_index > 0

    def round_epochs(self, round_index: int, epochs: int) -> int:
        """Epochs round ``round_index`` trains, ``epochs`` being the training's own: ``warm_start_epochs``
        for a warm-started round 1..T when given, else ``epochs``."""
        if self.warm_starts(round_index) and self.warm_start_epochs:
            return self.warm_start_epochs
        return epochs


@dataclass(frozen=True)
class RunConfigs:
    """The frozen configs of one run, built once from the validated parameters (``LoopParams.configs``)."""

    solver_name: str
    solver: Any  # the solver's config dataclass
    train: TrainConfig
    augment: AugmentConfig
    loop: LoopConfig
