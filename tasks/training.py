"""Training, evaluating and scoring with a solver, from files to files (pure: no Prefect, no MLflow).

Steps hand each other paths: a checkpoint directory in, numbers and JSONL out. Live models never
cross a step boundary.
"""
from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from mwp.problem import Problem, read_problems_jsonl


@dataclass(frozen=True)
class TrainSummary:
    checkpoint: str
    best_epoch: int
    best_valid_answer_acc: float | None
    seconds: float
    epochs: list[dict[str, Any]]  # EpochStats as dicts, one per epoch
    train_size: int


def _train_config(settings: Mapping[str, Any], seed: int, progress: bool):
    from solvers.base import TrainConfig

    return TrainConfig(
        epochs=settings["epochs"], batch_size=settings["batch_size"], lr=settings["lr"],
        weight_decay=settings["weight_decay"], patience=settings["patience"],
        eval_every=settings["eval_every"], beam_size=settings["beam_size"], seed=seed,
        device=settings["device"], progress=progress,
    )


def build_from_settings(settings: Mapping[str, Any]):
    from solvers.registry import build_solver

    options = {"embedding_size": settings["embedding_size"], "hidden_size": settings["hidden_size"]}
    if settings.get("pretrained_path"):
        # Only the solvers built on a pretrained model take a path; for the others it is an error.
        options["pretrained_path"] = settings["pretrained_path"]
    return build_solver(settings["name"], device=settings["device"], **options)


def train_solver(train: Sequence[Problem], valid: Sequence[Problem], settings: Mapping[str, Any],
                 checkpoint_dir: Path, seed: int, progress: bool = True,
                 warm_start_from: Path | None = None) -> TrainSummary:
    """Train a solver (from scratch, or starting from the weights in ``warm_start_from``), select
    the epoch on validation answer accuracy, save it to ``checkpoint_dir``."""
    from solvers.registry import load_solver

    start = time.perf_counter()
    if warm_start_from is not None:
        solver = load_solver(warm_start_from, device=settings["device"])
    else:
        solver = build_from_settings(settings)
    config = _train_config(settings, seed, progress)
    if warm_start_from is not None:
        result = solver.fit(list(train), list(valid), config, warm_start=True)
    else:
        result = solver.fit(list(train), list(valid), config)
    solver.save(checkpoint_dir)
    return TrainSummary(
        checkpoint=str(checkpoint_dir), best_epoch=result.best_epoch,
        best_valid_answer_acc=result.best_valid_answer_acc, seconds=time.perf_counter() - start,
        epochs=[asdict(e) for e in result.epochs], train_size=len(train),
    )


def evaluate_checkpoint(checkpoint_dir: Path, test_sets: Mapping[str, Path], beam_size: int,
                        device: str = "auto") -> dict[str, dict[str, float]]:
    """Answer accuracy, equation accuracy and invalid-prediction rate of a checkpoint on each set."""
    from solvers.evaluate import evaluate_predictions
    from solvers.registry import load_solver

    solver = load_solver(checkpoint_dir, device=device)
    out = {}
    for name, path in test_sets.items():
        problems = read_problems_jsonl(path)
        report = evaluate_predictions(problems, solver.predict(problems, beam_size=beam_size))
        out[name] = {"n": report.n, "answer_acc": report.answer_acc, "equation_acc": report.equation_acc,
                     "invalid_rate": report.invalid_rate}
    return out


def relative_gap(metrics: Mapping[str, Mapping[str, float]]) -> float | None:
    """Acc_iid / Acc_comdiv - 1 (paper 003 Table 1) when both sets were evaluated; the compositional
    set is the one test set that is not ``iid`` (``comdiv`` from a DBCA split, ``sd`` from SD)."""
    others = sorted(name for name in metrics if name != "iid")
    iid, comdiv = metrics.get("iid"), (metrics[others[0]] if len(others) == 1 else metrics.get("comdiv"))
    if not iid or not comdiv or comdiv["answer_acc"] == 0:
        return None
    return iid["answer_acc"] / comdiv["answer_acc"] - 1


def score_with_checkpoint(checkpoint_dir: Path, candidates: Sequence[Problem], score_name: str,
                          pool: Mapping[str, Problem], seed: int, device: str = "auto",
                          chunk: int = 256, on_progress: Callable[[int], None] | None = None) -> tuple[list[float], int]:
    """Scores of the candidates under the solver in ``checkpoint_dir``; candidates the solver cannot
    represent (more quantities than its output slots, an unseen constant) get NaN, never kept, and
    are counted in the second return value."""
    from ranking.scores import score_candidates
    from solvers.registry import load_solver

    solver = None if score_name == "random" else load_solver(checkpoint_dir, device=device)
    scores: list[float] = []
    unscorable = 0
    for start in range(0, len(candidates), chunk):
        part = list(candidates[start:start + chunk])
        try:
            scores.extend(score_candidates(score_name, solver, part, pool=pool, seed=seed))
        except ValueError:
            # Some candidate in the chunk is outside the solver's vocabulary: score one by one.
            for cand in part:
                try:
                    scores.extend(score_candidates(score_name, solver, [cand], pool=pool, seed=seed))
                except ValueError:
                    scores.append(math.nan)
                    unscorable += 1
        if on_progress:
            on_progress(len(part))
    return scores, unscorable


def load_sets(paths: Mapping[str, Path]) -> dict[str, list[Problem]]:
    return {name: read_problems_jsonl(path) for name, path in paths.items()}
