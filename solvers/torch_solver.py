"""`TorchSolver`: the Solver contract implemented once for every torch model in solvers/.

A concrete solver sets ``name`` and ``config_class`` (a frozen dataclass of model hyperparameters,
JSON-serializable fields only; a ``min_count`` field, when present, sets the input vocabulary's
minimum word count) and implements ``build_model(encoding) -> nn.Module`` following
:class:`solvers.trainer.SolverModel`. Everything else (fit, predict, log_likelihood, encode, save,
load) is shared::

    class GTSSolver(TorchSolver):
        name = "gts"
        config_class = GTSConfig
        def build_model(self, encoding): return GTSModel(self.config, encoding)
"""
from __future__ import annotations

import dataclasses
from dataclasses import replace
from abc import abstractmethod
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from mwp.problem import Problem
from solvers.base import EpochStats, Likelihood, Prediction, Solver, TrainConfig, TrainResult
from solvers.checkpoint import data_hash, load_checkpoint, read_meta, save_checkpoint
from solvers.trainer import encode_problems, log_likelihoods, predict, resolve_device, train_model
from solvers.vocab import Encoding, EncodingError, build_encoding


class TorchSolver(Solver):
    config_class: type = object  # a frozen dataclass; set by subclasses
    # True for a solver that scores each quantity by its encoded context (GTS, bert-gts): it has a slot
    # for every quantity of any problem. Otherwise slots are learned tokens, as many as the config's
    # ``quantity_slots`` (raised to the training maximum).
    points_at_quantities: bool = False
    # True for a solver whose model has the trainer's shape-fixed pass (``shape_fixed_loss``: TrainConfig.step
    # dense, graphed, graphed-whole); the others train with step rowwise only.
    shape_fixed_steps: bool = False
    # True for a solver whose model counts its decoder's steps a problem (``decoder_steps``: TrainConfig.bucketing
    # "steps"); the others batch by text length only.
    counts_decoder_steps: bool = False

    def __init__(self, config: Any = None, device: str = "auto", **overrides: Any):
        if config is None:
            config = self.config_class(**overrides)  # unknown keys raise TypeError: no silent defaults
        elif overrides:
            config = dataclasses.replace(config, **overrides)
        if not isinstance(config, self.config_class):
            raise TypeError(f"{self.name}: config must be a {self.config_class.__name__}, got {type(config).__name__}")
        self.config = config
        self.device = resolve_device(device)
        self.encoding: Encoding | None = None
        self.model: torch.nn.Module | None = None
        self.train_data_hash = ""
        self.training_summary: dict[str, Any] = {}

    @abstractmethod
    def build_model(self, encoding: Encoding) -> torch.nn.Module:
        """A fresh model for these vocabularies."""

    def build_encoding(self, train: Sequence[Problem]) -> Encoding:
        """The vocabularies this solver trains with (see solvers/vocab.py on the two kinds of slots)."""
        slots = None if self.points_at_quantities else getattr(self.config, "quantity_slots", None)
        if slots is None and not self.points_at_quantities:
            raise TypeError(f"{self.name}: a solver with learned quantity slots needs a quantity_slots field in "
                            f"{type(self.config).__name__} (or points_at_quantities = True)")
        return build_encoding(train, min_count=getattr(self.config, "min_count", 1), n_slots=slots)

    def unreachable_reason(self, problem: Problem) -> str | None:
        """Why this solver's vocabularies cannot express ``problem``'s expression (an ``EncodingError``
        reason such as ``unseen_constant``), or None when it can: such a problem can never be solved."""
        if self.encoding is None:
            raise RuntimeError(f"{self.name}: the solver is not trained or loaded yet")
        try:
            self.encoding.target_ids(problem)
        except EncodingError as err:
            return err.reason
        return None

    def _ready(self) -> torch.nn.Module:
        if self.model is None or self.encoding is None:
            raise RuntimeError(f"{self.name}: the solver is not trained or loaded yet")
        return self.model

    def fit(self, train: Sequence[Problem], valid: Sequence[Problem], config: TrainConfig,
            on_epoch: Callable[[EpochStats], None] | None = None, warm_start: bool = False) -> TrainResult:
        """Train from scratch, or with ``warm_start`` continue from the weights and vocabularies this
        solver already holds (a loaded checkpoint): the augmentation loop's warm-start option. Every
        training problem must then be encodable with the existing vocabularies (the loop's kept
        problems are, since the same solver scored them); unknown words map to <unk>."""
        torch.manual_seed(config.seed)
        if warm_start:
            self._ready()
        else:
            self.encoding = self.build_encoding(train)
            self.model = self.build_model(self.encoding)
        self.device = resolve_device(config.device)
        result = train_model(self.model, self.encoding, train, valid, config, on_epoch)
        self.train_data_hash = data_hash(train)
        self.training_summary = {"best_epoch": result.best_epoch, "best_valid_answer_acc": result.best_valid_answer_acc,
                                 "epochs_run": len(result.epochs), "train_config": dataclasses.asdict(config)}
        return result

    def predict(self, problems: Sequence[Problem], beam_size: int = 5, batch_size: int = 64) -> list[Prediction]:
        return predict(self._ready(), self.encoding, problems, beam_size, batch_size)  # type: ignore[arg-type]

    def log_likelihood(self, problems: Sequence[Problem], batch_size: int = 64) -> list[Likelihood]:
        return log_likelihoods(self._ready(), self.encoding, problems, batch_size)  # type: ignore[arg-type]

    def encode(self, problems: Sequence[Problem], batch_size: int = 64) -> torch.Tensor:
        return encode_problems(self._ready(), self.encoding, problems, batch_size)  # type: ignore[arg-type]

    def save(self, directory: str | Path) -> Path:
        model = self._ready()
        return save_checkpoint(directory, self.name, dataclasses.asdict(self.config), self.encoding,  # type: ignore[arg-type]
                               model.state_dict(), self.train_data_hash, {"training": self.training_summary})

    @classmethod
    def load(cls, directory: str | Path, device: str = "auto") -> "TorchSolver":
        meta = read_meta(directory)
        if meta["solver"] != cls.name:
            raise ValueError(f"{directory} holds a {meta['solver']!r} solver, not {cls.name!r}")
        resolved = resolve_device(device)
        ckpt = load_checkpoint(directory, device=resolved)
        solver = cls(cls.config_class(**ckpt.config), device=str(resolved))
        # A checkpoint written when pointer solvers were capped at the training maximum gets a slot for
        # every quantity too: the model's weights do not depend on the slot count.
        solver.encoding = (replace(ckpt.encoding, output=replace(ckpt.encoding.output, n_slots=None))
                           if cls.points_at_quantities else ckpt.encoding)
        solver.model = solver.build_model(ckpt.encoding).to(resolved)
        solver.model.load_state_dict(ckpt.state_dict)
        solver.model.eval()
        solver.train_data_hash = ckpt.train_data_hash
        solver.training_summary = ckpt.extra.get("training", {})
        return solver
