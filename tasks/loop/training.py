"""Training, evaluating and scoring with a solver, from files to files (pure: no Prefect, no MLflow).

Steps hand each other paths: a checkpoint directory in, numbers and JSONL out. Live models never
cross a step boundary.
"""
from __future__ import annotations

import json
import logging
import math
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from mwp.problem import Problem, read_problems_jsonl
from solvers import train_state
from solvers.base import EpochStats, TrainConfig
from tasks.loop.record import SetMetrics

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainSummary:
    checkpoint: str
    best_epoch: int
    best_valid_answer_acc: float | None
    seconds: float
    epochs: list[dict[str, Any]]  # EpochStats as dicts, one per epoch
    train_size: int
    precision: str  # what the training's products ran in (TrainConfig.precision resolved)


def train_solver(train: Sequence[Problem], valid: Sequence[Problem], solver_name: str, solver_config: Any,
                 train_config: TrainConfig, checkpoint_dir: Path, warm_start_from: Path | None = None,
                 on_epoch: Callable[[EpochStats], None] | None = None) -> TrainSummary:
    """Train solver ``solver_name`` built from ``solver_config`` (or continue from the weights in
    ``warm_start_from``), select the epoch on validation answer accuracy, save it to ``checkpoint_dir``.
    ``on_epoch`` gets each epoch's :class:`EpochStats` as soon as the epoch ends (the flow logs it).
    With ``train_config.resume_dir``, an interrupted training continues there from its last epoch; the
    state is removed once the checkpoint is saved, and a state of another training (the round's pool
    or code changed) is discarded with a warning."""
    from solvers.registry import build_solver, load_solver

    start = time.perf_counter()

    def fit():
        if warm_start_from is not None:
            solver = load_solver(warm_start_from, device=train_config.device)
            return solver, solver.fit(list(train), list(valid), train_config, on_epoch, warm_start=True)
        solver = build_solver(solver_name, config=solver_config, device=train_config.device)
        return solver, solver.fit(list(train), list(valid), train_config, on_epoch)

    try:
        solver, result = fit()
    except train_state.ForeignTrainingState as exc:
        # The round's inputs changed since the state was saved (other code, other data): its training
        # starts over rather than continuing someone else's.
        logger.warning("%s was saved by another training (differs in: %s); training from the first epoch",
                       exc.path, ", ".join(exc.differs))
        train_state.clear(train_config.resume_dir)
        solver, result = fit()
    solver.save(checkpoint_dir)
    train_state.clear(train_config.resume_dir)  # the saved checkpoint is the result now
    return TrainSummary(
        checkpoint=str(checkpoint_dir), best_epoch=result.best_epoch,
        best_valid_answer_acc=result.best_valid_answer_acc, seconds=time.perf_counter() - start,
        epochs=[asdict(e) for e in result.epochs], train_size=len(train), precision=result.precision,
    )


def evaluate_checkpoint(checkpoint_dir: Path, test_sets: Mapping[str, Path], beam_size: int,
                        device: str = "auto", correct_dir: Path | None = None) -> dict[str, SetMetrics]:
    """Answer accuracy, equation accuracy and invalid-prediction rate of a checkpoint on each set; with
    ``correct_dir``, each problem's answer correctness to ``correct_<set>.json`` (id -> bool), which paired
    comparisons of two runs on the same problems need."""
    from solvers.evaluate import evaluate_predictions
    from solvers.registry import load_solver

    solver = load_solver(checkpoint_dir, device=device)
    out = {}
    for name, path in test_sets.items():
        problems = read_problems_jsonl(path)
        report = evaluate_predictions(problems, solver.predict(problems, beam_size=beam_size))
        unreachable = sum(solver.unreachable_reason(p) is not None for p in problems)
        out[name] = SetMetrics(report.n, report.answer_acc, report.equation_acc, report.invalid_rate, unreachable)
        if correct_dir is not None:
            correct = {p.id: bool(ok) for p, ok in zip(problems, report.per_problem)}
            (correct_dir / f"correct_{name}.json").write_text(json.dumps(correct), encoding="utf-8")
    return out


SCORE_CHUNK = 256  # candidates scored together; fixed, so sharded scoring batches them exactly as here


def chunk_bounds(n: int, chunk: int = SCORE_CHUNK) -> list[tuple[int, int]]:
    """The fixed chunks ``[start, stop)`` of ``n`` candidates, counted from the first one. Scoring (in
    one process or on Dask workers) always uses these, so a candidate sits in the same batches beside
    the same neighbours whatever the number of workers (padding and batch size change the last bits)."""
    if chunk < 1:
        raise ValueError(f"chunk must be >= 1, got {chunk}")
    return [(start, min(start + chunk, n)) for start in range(0, n, chunk)]


def score_chunk(solver: Any, part: Sequence[Problem], score_name: str, pool: Mapping[str, Problem],
                seed: int) -> tuple[list[float], Counter[str]]:
    """Scores of one chunk; a candidate the solver cannot represent gets NaN and is counted by the
    reason its encoding gives (``unseen_constant``, ``no_slot_for_quantity``, ...)."""
    from ranking.scores import score_candidates

    try:
        return score_candidates(score_name, solver, list(part), pool=pool, seed=seed), Counter()
    except ValueError:
        pass
    # Some candidate in the chunk is outside the solver's vocabulary: score one by one.
    scores: list[float] = []
    unscorable: Counter[str] = Counter()
    for cand in part:
        try:
            scores.extend(score_candidates(score_name, solver, [cand], pool=pool, seed=seed))
        except ValueError as err:
            scores.append(math.nan)
            unscorable[getattr(err, "reason", "unknown")] += 1
    return scores, unscorable


def load_scorer(checkpoint_dir: Path, score_name: str, device: str = "auto") -> Any:
    """The solver a score needs (none for ``random``), loaded from its checkpoint directory."""
    from solvers.registry import load_solver

    return None if score_name == "random" else load_solver(checkpoint_dir, device=device)


def score_with_checkpoint(checkpoint_dir: Path, candidates: Sequence[Problem], score_name: str,
                          pool: Mapping[str, Problem], seed: int, device: str = "auto",
                          chunk: int = SCORE_CHUNK) -> tuple[list[float], Counter[str]]:
    """Scores of the candidates under the solver in ``checkpoint_dir``; candidates the solver cannot
    represent (an unseen constant, a quantity past a learned-slot solver's slots) get NaN, never kept,
    and are counted by reason in the second return value."""
    solver = load_scorer(checkpoint_dir, score_name, device)
    scores: list[float] = []
    unscorable: Counter[str] = Counter()
    for start, stop in chunk_bounds(len(candidates), chunk):
        part_scores, part_unscorable = score_chunk(solver, candidates[start:stop], score_name, pool, seed)
        scores.extend(part_scores)
        unscorable += part_unscorable
    return scores, unscorable
