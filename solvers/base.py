"""The one interface every solver implements; the loop, the ranker and the benchmarks use only this.

Solvers know nothing of Prefect or MLflow: ``fit`` returns per-epoch statistics and the caller logs.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from mwp.expr import Expr
from mwp.problem import Problem


def check_config(config: object, positive: Sequence[str] = (), non_negative: Sequence[str] = (),
                 dropout: Sequence[str] = ()) -> None:
    """Refuse a config whose named fields are out of range, with a message naming the field: sizes
    and counts >= 1 (``positive``), ``non_negative`` >= 0, dropout rates in [0, 1)."""
    for name in positive:
        if not getattr(config, name) > 0:
            raise ValueError(f"{name} must be positive, got {getattr(config, name)}")
    for name in non_negative:
        if not getattr(config, name) >= 0:
            raise ValueError(f"{name} must be >= 0, got {getattr(config, name)}")
    for name in dropout:
        if not 0 <= getattr(config, name) < 1:
            raise ValueError(f"{name} must lie in [0, 1), got {getattr(config, name)}")


def check_device(device: str) -> None:
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``; CUDA only where it is available."""
    import re

    if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
        raise ValueError(f"device must be auto, cpu, cuda or cuda:N, got {device!r}")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} asked for, but CUDA is not available here (use auto or cpu)")


def check_heads(width: int, heads: int, width_name: str, heads_name: str) -> None:
    if width % heads:
        raise ValueError(f"{width_name} ({width}) must be a multiple of {heads_name} ({heads})")


PRECISIONS = ("auto", "fp32", "bf16", "fp16")
TIE_BREAKS = ("valid-loss", "first")
# TrainConfig.step: the trainer's row-wise teacher forcing, or GTS's shape-fixed pass eager or as CUDA graphs
STEPS = ("rowwise", "dense", "graphed", "graphed-whole")
GRAPHED_STEPS = ("graphed", "graphed-whole")  # the steps that capture CUDA graphs
GRAPH_ROUNDINGS = ("coarse", "fine")  # how the shape-fixed steps round a batch's shape (solvers/gts_graphs.py)
GRAPH_FUSIONS = ("none", "inductor")  # whether the shape-fixed steps fuse elementwise chains (solvers/fusion.py)
BUCKETINGS = ("length", "steps")  # how the trainer groups a shuffled pool of problems into batches (solvers/trainer.py)


@dataclass(frozen=True)
class TrainConfig:
    epochs: int = 80  # maximum number of epochs
    batch_size: int = 64
    lr: float = 1e-3  # Adam learning rate
    weight_decay: float = 1e-5
    lr_halving_epochs: int = 20  # the learning rate halves every this many epochs
    patience: int = 0  # early stopping after this many epochs without a better validation accuracy (0: never)
    eval_every: int = 1  # validate every this many epochs (and at the last)
    beam_size: int = 5  # beam used for validation predictions
    seed: int = 0
    device: str = "auto"  # "auto" picks CUDA when available, else CPU
    progress: bool = True  # show a progress bar
    grad_clip: float = 5.0  # gradient norm clipping
    # "auto": mixed precision on CUDA (bf16, else fp16 with a gradient scaler), float32 on CPU;
    # "fp32": float32 everywhere; "bf16": bfloat16 autocast on CPU too (matrix products in bf16; the
    # recurrent state, losses, gradients and the optimizer stay float32; a GTS gains from hidden 256 on
    # a CPU with AVX512-BF16 or AMX); "fp16": float16 autocast with a gradient scaler (what "auto"
    # picks on a GPU without bfloat16; on CPU it runs, slowly, which lets tests check that path).
    # Inference and scoring stay float32. TrainResult.precision says what ran.
    precision: str = "auto"
    # Which of the epochs tied at the best validation answer accuracy is kept. "valid-loss": the one with
    # the lowest validation loss (teacher-forced negative log-likelihood of the expression, mean over the
    # validation problems the vocabularies can express); "first": the earliest, the only rule before this
    # setting existed. A validation set that saturates (an SD split's, at 1.000 within a few epochs) makes
    # every later epoch a tie, and the first of them is an undertrained model. Validation only either way.
    tie_break: str = "valid-loss"
    # Save the training's state here after every epoch and, when a state of this same training is
    # there already, continue from it (solvers/train_state.py). None: nothing saved.
    resume_dir: str | None = None
    # The training step of a tree decoder (GTS; solvers/gts_graphs.py). "rowwise": each decoder step on the
    # rows that need it, few operations but each a kernel launched from Python. "graphed": batches padded
    # to a rounded shape and the decoder's loss pass captured as one CUDA graph a shape and replayed
    # (CUDA and fp32 only; docs/solvers.md says what it was measured to gain). The padded pass follows the
    # model's teacher_pass: a step a tree level (waves, the default) or a step a prefix position (positions).
    # "graphed-whole": the same with the encoder inside the captured pass too (its masked recurrence).
    # "dense": that padded pass run eagerly, slower everywhere: what tests run on the CPU.
    step: str = "rowwise"
    # How those steps round a batch's shape by tree levels (solvers/gts_graphs.py WAVE_ROUNDINGS): "coarse",
    # fewer shapes to capture (a capture costs tenths of a second and keeps its memory) for more padding;
    # "fine", the rounding of the H200 runs of 2026-11-27 (Math23K: 473 shapes over 80 epochs; coarse: 118, 169
    # with graphed-whole).
    graph_rounding: str = "coarse"
    # Whether those steps run the elementwise chains of their hand-written passes (the encoder recurrence's gates,
    # the decoder's gated layers and attention) as kernels generated by torch.compile (solvers/fusion.py):
    # "none", each operation its own kernel; "inductor", each chain one (Triton on CUDA, which must be installed;
    # C++ on the CPU). Each chain compiles about twice a process (seconds each), before the first capture.
    graph_fusion: str = "none"
    # How a training batches its problems: each epoch shuffles them, cuts the order into pools of 16 batches and
    # sorts each pool before cutting it into batches. "length": by text length (less padding of the encoder's
    # tokens); "steps": by the decoder's sequential steps a problem needs, then by text length, so that the few
    # problems of deep trees share batches instead of making one batch each as long as themselves (a batch's
    # decoder steps are its deepest problem's: GTS's tree waves, each some 60 to 150 kernels on a GPU by the CPU's
    # counts; an epoch's fall by about 40% on MAWPS and Math23K, its tokens rise by 15-26%, and on the CPU at
    # hidden 128 three seeds lost 1.2 points [-2.7, +0.1], each seed lower: docs/solvers.md). A model says its
    # steps by a ``decoder_steps(encoding, problems)`` method (GTS and bert-gts have one; the others refuse "steps").
    bucketing: str = "length"

    def __post_init__(self) -> None:
        check_config(self, positive=("epochs", "batch_size", "lr", "lr_halving_epochs", "eval_every", "beam_size",
                                     "grad_clip"), non_negative=("weight_decay", "patience", "seed"))
        check_device(self.device)
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {', '.join(TIE_BREAKS)}, got {self.tie_break!r}")
        if self.step not in STEPS:
            raise ValueError(f"step must be one of {', '.join(STEPS)}, got {self.step!r}")
        if self.graph_rounding not in GRAPH_ROUNDINGS:
            raise ValueError(f"graph_rounding must be one of {', '.join(GRAPH_ROUNDINGS)}, got {self.graph_rounding!r}")
        if self.graph_fusion not in GRAPH_FUSIONS:
            raise ValueError(f"graph_fusion must be one of {', '.join(GRAPH_FUSIONS)}, got {self.graph_fusion!r}")
        if self.bucketing not in BUCKETINGS:
            raise ValueError(f"bucketing must be one of {', '.join(BUCKETINGS)}, got {self.bucketing!r}")
        if self.graph_fusion != "none" and self.step == "rowwise":
            raise ValueError(f"graph_fusion {self.graph_fusion} fuses the shape-fixed steps' passes (step dense, "
                             "graphed or graphed-whole); step rowwise has none to fuse")
        if self.step in GRAPHED_STEPS and (self.precision != "fp32" or self.device == "cpu"):
            raise ValueError(f"step {self.step} captures CUDA graphs in float32 only so far: it needs precision fp32 "
                             f"(got {self.precision}) and a CUDA device (got {self.device})")


@dataclass(frozen=True)
class EpochStats:
    epoch: int
    train_loss: float
    seconds: float
    valid_answer_acc: float | None = None  # None on epochs without validation
    valid_equation_acc: float | None = None
    lr: float = 0.0
    valid_loss: float | None = None  # on validated epochs, when the tie-break reads it
    # a step that captures CUDA graphs (steps "graphed", "graphed-whole"): shapes captured this epoch and the seconds of
    # ``seconds`` those captures took (None with any other step)
    captures: int | None = None
    capture_seconds: float | None = None


@dataclass(frozen=True)
class TrainResult:
    epochs: tuple[EpochStats, ...]
    best_epoch: int  # chosen on validation only: answer accuracy, ties by TrainConfig.tie_break
    best_valid_answer_acc: float | None
    seconds: float
    precision: str  # what the training's products ran in: fp32, bf16 or fp16 ("auto" resolved)


@dataclass(frozen=True)
class Prediction:
    tokens: tuple[str, ...]  # prefix tokens over N0.., constants and operators
    expression: Expr | None  # None when the tokens do not form a valid expression
    score: float  # beam log-probability (summed)


@dataclass(frozen=True)
class Likelihood:
    total: float  # summed log-probability of the expression's prefix tokens
    per_token: float  # total / n_tokens
    n_tokens: int


@dataclass(frozen=True)
class EvalReport:
    n: int
    answer_acc: float  # prediction evaluates to the gold answer within 1e-4 relative
    equation_acc: float  # normalized prefix equals the gold prefix
    invalid_rate: float  # predictions that fail to evaluate (malformed, division by zero)
    per_problem: tuple[bool, ...] = field(default=(), repr=False)  # answer correctness per problem


class Solver(ABC):
    """A trainable MWP solver. Implementations live one file each in solvers/."""

    name: str = "solver"

    @abstractmethod
    def fit(self, train: Sequence[Problem], valid: Sequence[Problem], config: TrainConfig,
            on_epoch: Callable[[EpochStats], None] | None = None) -> TrainResult:
        """Train (the vocabulary is built from ``train``); keep the weights of the best validation epoch."""

    @abstractmethod
    def predict(self, problems: Sequence[Problem], beam_size: int = 5, batch_size: int = 64) -> list[Prediction]:
        """Best beam hypothesis per problem; ``problem.expression`` is not looked at."""

    @abstractmethod
    def log_likelihood(self, problems: Sequence[Problem], batch_size: int = 64) -> list[Likelihood]:
        """Teacher-forced log-probability of each ``problem.expression`` given its text (batched)."""

    @abstractmethod
    def encode(self, problems: Sequence[Problem], batch_size: int = 64):
        """A (B, H) float tensor: one pooled encoder vector per problem (for similarity scores)."""

    @abstractmethod
    def unreachable_reason(self, problem: Problem) -> str | None:
        """Why the trained solver can never produce ``problem.expression`` (e.g. ``unseen_constant``), or
        None when its vocabularies can express it."""

    @abstractmethod
    def save(self, directory: str | Path) -> Path:
        """Write weights, config, vocabulary and the training-data hash into ``directory``."""

    @classmethod
    @abstractmethod
    def load(cls, directory: str | Path, device: str = "auto") -> "Solver":
        """Inverse of :meth:`save`."""
