"""The loop's own settings (Algorithm 1 of paper 003) as one frozen config: how many rounds, which
score ranks the candidates, which retention keeps how many of them, and how rounds 1..T train.

This is the one place these settings are validated and given their defaults: the settings model of
the flows (``LoopSettings`` in flows/params.py) takes its field names and defaults from here and
builds this config to validate, as ``TrainSettings`` builds ``TrainConfig``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from solvers.base import TrainConfig
from tasks.augment.base import AugmentConfig

MAX_ROUNDS = 50


@dataclass(frozen=True)
class LoopConfig:
    rounds: int = 7  # T, the augmentation rounds after round 0
    retention: str = "top-fraction"  # the policy of ranking/retention.py that keeps scored candidates
    keep_fraction: float = 0.2  # the share of a round's verified candidates the policy keeps (paper: 20%)
    score: str = "confidence"  # the score of ranking/scores.py that ranks the candidates
    warm_start: bool = False  # rounds 1..T continue from the previous round's weights, not from scratch
    warm_start_epochs: int | None = None  # with warm_start: epochs of rounds 1..T (None: the training's epochs)
    augment_rounds: bool = True  # False: rounds 1..T add nothing and train again on the original pool

    def __post_init__(self) -> None:
        from ranking.retention import POLICIES
        from ranking.scores import SCORES

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
