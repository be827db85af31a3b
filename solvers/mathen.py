"""MathEN (Wang et al. 2018, "Translating a Math Word Problem to an Expression Tree"): an ensemble of
sequence-to-sequence members (by default the ``lstm``, ``convs2s`` and ``transformer`` solvers of this
package) trained on equation-normalized targets (mwp/normalize.py), predicting, per problem, the
expression of the member whose best beam has the highest generation probability.

The Solver interface, member by member:

- ``fit`` normalizes the training problems' expressions (when ``normalize_targets``) and trains each
  member in turn with the same ``TrainConfig`` (each selects its own epoch on validation answer
  accuracy). ``on_epoch`` sees every member's epochs numbered on one axis: member i's epoch e is
  reported as ``i * epochs + e``, so a logger's steps keep rising. The result's
  ``best_valid_answer_acc`` is the ensemble's own validation answer accuracy.
- ``predict``: every member's best beam; the highest summed log-probability wins (ties: the earlier
  member). Its score is that member's beam score.
- ``log_likelihood`` (what the ranker scores with): the selection rule applied to a given
  expression, i.e. the likelihood of the member that gives it the highest probability ("the selected
  member's"). With ``normalize_targets`` it is the likelihood of the expression's normal form, the
  form the members were trained to produce. So ``predict(...).score`` equals the likelihood of the
  predicted expression whenever no member's beam search missed a better-scoring expression.
- ``encode``: the members' pooled vectors side by side, (N, sum of the members' widths).
- ``save``/``load``: one directory, a ``checkpoint.json`` naming ``mathen`` and one sub-directory per
  member holding that member's ordinary checkpoint.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from mwp.normalize import normalize_problem
from mwp.problem import Problem
from solvers import train_state
from solvers.base import EpochStats, Likelihood, Prediction, Solver, TrainConfig, TrainResult
from solvers.checkpoint import FORMAT, META, data_hash, read_meta
from solvers.evaluate import evaluate_predictions


@dataclass(frozen=True)
class MathENConfig:
    members: tuple[str, ...] = ("lstm", "convs2s", "transformer")  # registry names of the member solvers
    # when set, every member's embedding_size / hidden_size (None: each member's own default)
    embedding_size: int | None = None
    hidden_size: int | None = None
    # further config fields per member, e.g. {"lstm": {"encoder_layers": 1}}; they win over the two above
    member_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    normalize_targets: bool = True  # train (and score) on equation-normalized expressions

    def __post_init__(self) -> None:
        object.__setattr__(self, "members", tuple(self.members))  # a list after a JSON round trip
        if not self.members:
            raise ValueError("members must name at least one solver")
        if len(set(self.members)) != len(self.members):
            raise ValueError(f"members must not repeat a solver, got {list(self.members)}")
        if "mathen" in self.members:
            raise ValueError("mathen cannot be a member of itself")
        stray = sorted(set(self.member_options) - set(self.members))
        if stray:
            raise ValueError(f"member_options for {', '.join(stray)}, which are not members {list(self.members)}")
        for size in ("embedding_size", "hidden_size"):
            if getattr(self, size) is not None and not getattr(self, size) > 0:
                raise ValueError(f"{size} must be positive, got {getattr(self, size)}")
        for name in self.members:
            self.member_config(name)  # an unknown member or a refused option fails here, named

    def member_config(self, name: str) -> Any:
        from solvers.registry import solver_config

        options = {k: getattr(self, k) for k in ("embedding_size", "hidden_size") if getattr(self, k) is not None}
        return solver_config(name, {**options, **self.member_options.get(name, {})})


def _shifted_reporter(on_epoch: Callable[[EpochStats], None] | None, offset: int) -> Callable[[EpochStats], None]:
    """``on_epoch`` seeing a member's epochs moved ``offset`` along the ensemble's one epoch axis."""
    def report(stats: EpochStats) -> None:
        if on_epoch is not None:
            on_epoch(dataclasses.replace(stats, epoch=stats.epoch + offset))
    return report


class MathENSolver(Solver):
    name = "mathen"
    config_class = MathENConfig

    def __init__(self, config: MathENConfig | None = None, device: str = "auto", **overrides: Any):
        from solvers.registry import build_solver

        if config is None:
            config = MathENConfig(**overrides)
        elif overrides:
            config = dataclasses.replace(config, **overrides)
        if not isinstance(config, MathENConfig):
            raise TypeError(f"mathen: config must be a MathENConfig, got {type(config).__name__}")
        self.config, self.device = config, device
        self.members: dict[str, Any] = {name: build_solver(name, config=config.member_config(name), device=device)
                                        for name in config.members}
        self.train_data_hash = ""
        self.training_summary: dict[str, Any] = {}

    def _targets(self, problems: Sequence[Problem]) -> list[Problem]:
        return [normalize_problem(p) for p in problems] if self.config.normalize_targets else list(problems)

    def fit(self, train: Sequence[Problem], valid: Sequence[Problem], config: TrainConfig,
            on_epoch: Callable[[EpochStats], None] | None = None, warm_start: bool = False) -> TrainResult:
        """Train every member on the (normalized) training problems; ``warm_start`` continues each
        member from the weights it holds. With ``resume_dir`` each member keeps its state in its own
        sub-directory ``resume_dir/<member>``, so an interrupted ensemble resumes in the member it
        was training (finished members are restored at once); the states are removed once every member
        is trained. A state of another training in any member's directory clears them all before
        :class:`~solvers.train_state.ForeignTrainingState` goes up to the caller."""
        targets = self._targets(train)
        history: list[EpochStats] = []
        members_summary, precision, seconds = {}, "fp32", 0.0
        try:
            for i, (name, member) in enumerate(self.members.items()):
                result = member.fit(targets, valid, self._member_train_config(config, name),
                                    on_epoch=_shifted_reporter(on_epoch, i * config.epochs), warm_start=warm_start)
                history += [dataclasses.replace(e, epoch=e.epoch + i * config.epochs) for e in result.epochs]
                precision, seconds = result.precision, seconds + result.seconds
                members_summary[name] = {"best_epoch": result.best_epoch,
                                         "best_valid_answer_acc": result.best_valid_answer_acc}
        except train_state.ForeignTrainingState:
            self._clear_member_states(config)  # the caller's retry then starts every member afresh
            raise
        ensemble_acc = None
        if valid:
            ensemble_acc = evaluate_predictions(valid, self.predict(valid, config.beam_size, config.batch_size)).answer_acc
        self.train_data_hash = data_hash(train)
        self.training_summary = {"members": members_summary, "ensemble_valid_answer_acc": ensemble_acc,
                                 "train_config": dataclasses.asdict(config)}
        self._clear_member_states(config)  # every member is trained: their states are not needed any more
        return TrainResult(epochs=tuple(history), best_epoch=history[-1].epoch, best_valid_answer_acc=ensemble_acc,
                           seconds=seconds, precision=precision)

    def _member_train_config(self, config: TrainConfig, name: str) -> TrainConfig:
        if config.resume_dir is None:
            return config
        return dataclasses.replace(config, resume_dir=str(Path(config.resume_dir) / name))

    def _clear_member_states(self, config: TrainConfig) -> None:
        for name in self.members:
            train_state.clear(self._member_train_config(config, name).resume_dir)

    def member_predictions(self, problems: Sequence[Problem], beam_size: int = 5,
                           batch_size: int = 64) -> dict[str, list[Prediction]]:
        """Each member's best beam per problem (what :meth:`predict` selects from)."""
        return {name: m.predict(problems, beam_size, batch_size) for name, m in self.members.items()}

    @staticmethod
    def select(per_member: dict[str, list[Prediction]]) -> list[Prediction]:
        """Per problem, the member prediction with the highest score (the first member's on a tie)."""
        return [max(candidates, key=lambda p: p.score) for candidates in zip(*per_member.values())]

    def predict(self, problems: Sequence[Problem], beam_size: int = 5, batch_size: int = 64) -> list[Prediction]:
        return self.select(self.member_predictions(problems, beam_size, batch_size))

    def log_likelihood(self, problems: Sequence[Problem], batch_size: int = 64) -> list[Likelihood]:
        targets = self._targets(problems)
        per_member = [m.log_likelihood(targets, batch_size) for m in self.members.values()]
        return [max(candidates, key=lambda lik: lik.total) for candidates in zip(*per_member)]

    def unreachable_reason(self, problem: Problem) -> str | None:
        """A problem no member can express (the reason the first member gives), else None."""
        target = self._targets([problem])[0]
        reasons = [m.unreachable_reason(target) for m in self.members.values()]
        return None if None in reasons else reasons[0]

    def encode(self, problems: Sequence[Problem], batch_size: int = 64) -> torch.Tensor:
        return torch.cat([m.encode(problems, batch_size) for m in self.members.values()], dim=1)  # (N, sum H)

    def save(self, directory: str | Path) -> Path:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for name, member in self.members.items():
            member.save(directory / name)
        meta = {"solver": self.name, "format": FORMAT, "config": dataclasses.asdict(self.config),
                "members": list(self.members), "train_data_hash": self.train_data_hash,
                "extra": {"training": self.training_summary}}
        (directory / META).write_text(json.dumps(meta, indent=2, sort_keys=True), encoding="utf-8")
        return directory

    @classmethod
    def load(cls, directory: str | Path, device: str = "auto") -> "MathENSolver":
        from solvers.registry import load_solver

        meta = read_meta(directory)
        if meta["solver"] != cls.name:
            raise ValueError(f"{directory} holds a {meta['solver']!r} solver, not {cls.name!r}")
        solver = cls(MathENConfig(**meta["config"]), device=device)
        for name in solver.config.members:
            member = load_solver(Path(directory) / name, device=device)
            if member.name != name:
                raise ValueError(f"{directory}/{name} holds a {member.name!r} solver, not {name!r}")
            solver.members[name] = member
        solver.train_data_hash = meta["train_data_hash"]
        solver.training_summary = meta.get("extra", {}).get("training", {})
        return solver
