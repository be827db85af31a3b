"""The Prefect edge of the loop's steps: thin ``@task`` wrappers (verb_noun names) around the pure
functions of tasks/loop, tasks/augment and tasks/dbca. Each takes paths and frozen config objects,
calls the pure code, logs, and returns paths or small records. Only the step that reads the files
the user gave retries.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Callable

from prefect import task
from prefect.cache_policies import NO_CACHE
from prefect.logging import get_run_logger

from mwp.problem import read_problems_jsonl, write_jsonl
from mwp.readers import DataSpec
from solvers.base import EpochStats, TrainConfig
from tasks.augment.base import AugmentConfig
from tasks.loop import datasets, rundir, training
from tasks.loop.config import LoopConfig
from tasks.loop.record import Generation, SetMetrics


def _transient(task, task_run, state) -> bool:
    """Retry only what may succeed on retry (a file system hiccup), never bad data or parameters."""
    try:
        state.result()
    except OSError as err:
        return not isinstance(err, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError))
    except Exception:
        return False
    return False


@task(name="prepare_data", retries=2, retry_delay_seconds=2, retry_condition_fn=_transient, cache_policy=NO_CACHE)
def prepare_data(data: DataSpec, run_dir: Path, seed: int, test_fraction: float, valid_fraction: float,
                 split_file: Path | None, iid_holdout_fraction: float) -> tuple[datasets.DataSets, dict[str, Any]]:
    """The run's train / validation / test files in ``run_dir/data`` and the data report."""
    sets, report = datasets.prepare_sets(data, run_dir / "data", seed, test_fraction, valid_fraction, split_file,
                                         iid_holdout_fraction)
    logger = get_run_logger()
    logger.info("data: %d usable of %d records (skipped %s); sets %s", report["usable"],
                report["records"], report["skipped"] or "none",
                {"train": report["train"], "valid": report["valid"], **report["tests"]})
    if report.get("split_sides_share_duplicates"):
        logger.warning("split file %s puts %d pairs of identical problems on both sides (made before duplicates "
                       "were dropped); the copies were dropped, so re-make the split for sizes it promised",
                       split_file, report["split_sides_share_duplicates"])
    return sets, report


@task(name="prepare_gap_measure", cache_policy=NO_CACHE)
def prepare_gap_measure(data: DataSpec, split_file: Path, run_dir: Path) -> datasets.GapMeasure:
    """``run_dir/data/quantity_labeler.json``: the split file's own atom labeler (JSON, never a
    pickle), so every round measures DBCA^c under the labels the split was made with."""
    measure, fitted = datasets.gap_measure(split_file, data, run_dir / "data" / "quantity_labeler.json")
    if fitted:
        get_run_logger().warning("split file %s carries no quantity labeler (written before compaug stored it): "
                                 "fitted once as the split did, kept in %s", split_file, measure.labeler)
    return measure


@task(name="train_solver", cache_policy=NO_CACHE)
def train_solver(pool_path: Path, valid_path: Path, solver_name: str, solver_config: Any, train_config: TrainConfig,
                 checkpoint_dir: Path, warm_start_from: Path | None = None,
                 on_epoch: Callable[[EpochStats], None] | None = None) -> training.TrainSummary:
    """Train on the pool, select the epoch on validation; ``on_epoch`` (a plain callable from the flow)
    sees each epoch as it ends."""
    train = read_problems_jsonl(pool_path)
    summary = training.train_solver(train, read_problems_jsonl(valid_path), solver_name, solver_config, train_config,
                                    checkpoint_dir, warm_start_from, on_epoch)
    acc = summary.best_valid_answer_acc
    get_run_logger().info("trained %s (%s) on %d problems in %.1fs; best epoch %d (valid acc %s)", solver_name,
                          summary.precision, len(train), summary.seconds, summary.best_epoch,
                          "none" if acc is None else f"{acc:.4f}")
    return summary


@task(name="evaluate_solver", cache_policy=NO_CACHE)
def evaluate_solver(checkpoint_dir: Path, test_sets: dict[str, Path], beam_size: int,
                    device: str, correct_dir: Path | None = None) -> dict[str, SetMetrics]:
    metrics = training.evaluate_checkpoint(checkpoint_dir, test_sets, beam_size, device, correct_dir)
    get_run_logger().info("evaluation: %s", {k: round(v.answer_acc, 4) for k, v in metrics.items()})
    return metrics


@task(name="generate_candidates", cache_policy=NO_CACHE)
def generate_candidates(pool_path: Path, out_path: Path, config: AugmentConfig, round_index: int,
                        held_out: dict[str, Path]) -> dict[str, Any]:
    """Run the augmentation operators over the pool; verified, checked, deduplicated candidates that match
    no held-out problem (``held_out``: set name -> file) to JSONL."""
    from tasks.augment.generate import generate_candidates as generate
    from tasks.augment.leakage import HeldOut

    index = HeldOut.build({name: read_problems_jsonl(path) for name, path in held_out.items()})
    batch = generate(read_problems_jsonl(pool_path), config, round_index, index)
    write_jsonl(batch.candidates, out_path)
    by_operator = Counter(c.provenance.operator for c in batch.candidates)
    rejected = dict(sorted(batch.rejected.items(), key=lambda kv: (-kv[1], kv[0])))  # the largest first
    get_run_logger().info("round %d: %d verified candidates (%s), rejected %s", round_index, len(batch.candidates),
                          dict(by_operator), rejected or "none")
    return {"candidates": len(batch.candidates) + sum(batch.rejected.values()), "verified": len(batch.candidates),
            "rejected": dict(batch.rejected), "verified_by_operator": dict(by_operator)}


@task(name="score_candidates", cache_policy=NO_CACHE)
def score_candidates(candidates_path: Path, pool_path: Path, checkpoint_dir: Path, score_name: str, seed: int,
                     device: str, scored_path: Path, dask_address: str | None = None,
                     threads: int | None = None) -> dict[str, int]:
    """Scores of the candidates to ``scored_path``; returns how many could not be scored, by reason. With
    ``dask_address``, the fixed chunks are scored on that scheduler's workers (``threads`` torch threads
    each), with the same scores as here (tasks/loop/sharding.py)."""
    candidates = read_problems_jsonl(candidates_path)
    if dask_address:
        from tasks.loop.sharding import score_on_dask

        scores, unscorable = score_on_dask(dask_address, checkpoint_dir, candidates_path, pool_path,
                                           [c.id for c in candidates], score_name, seed, device, threads)
        get_run_logger().info("scored %d candidates in %d chunks on Dask (%s)", len(candidates),
                              len(training.chunk_bounds(len(candidates))), dask_address)
    else:
        pool = {p.id: p for p in read_problems_jsonl(pool_path)}
        scores, unscorable = training.score_with_checkpoint(checkpoint_dir, candidates, score_name, pool, seed,
                                                            device)
    rundir.write_scored(scored_path, candidates, scores)
    return dict(unscorable)


@task(name="keep_candidates", cache_policy=NO_CACHE)
def keep_candidates(scored_path: Path, loop: LoopConfig, kept_path: Path,
                    pool_path: Path | None = None) -> dict[str, Any]:
    """The loop's retention policy and keep fraction over the scored candidates; the kept ones to
    ``kept_path``. ``pool_path``,
    the pool the candidates were made from, traces each candidate to its original problems."""
    from mwp.problem import origins, read_problems_jsonl
    from ranking.retention import Scored, retain

    scored = rundir.read_scored(scored_path)
    by_id = {p.id: p for p, _ in scored}
    origin = origins(list(by_id.values()), read_problems_jsonl(pool_path) if pool_path else [])
    kept, cut = retain(loop.retention, [Scored(p.id, s, p.provenance.operator, origin[p.id]) for p, s in scored],
                       loop.keep_fraction)
    rundir.write_scored(kept_path, [by_id[k.id] for k in kept], [k.score for k in kept])
    finite = [s for _, s in scored if s == s]
    return {"kept": len(kept), "confidence_cut": cut, "kept_by_operator": dict(Counter(k.group for k in kept)),
            "confidence_mean": sum(finite) / len(finite) if finite else None,
            "kept_origins": len(set().union(*(k.origin for k in kept)))}


def generation_record(generated: dict[str, Any], unscorable: dict[str, int], kept: dict[str, Any]) -> Generation:
    return Generation(candidates=generated["candidates"], verified=generated["verified"],
                      unscorable=sum(unscorable.values()), unscorable_by_reason=dict(unscorable),
                      kept=kept["kept"], confidence_mean=kept["confidence_mean"],
                      confidence_cut=kept["confidence_cut"], rejected=generated["rejected"],
                      verified_by_operator=generated["verified_by_operator"],
                      kept_by_operator=kept["kept_by_operator"], kept_origins=kept["kept_origins"])


@task(name="write_pool", cache_policy=NO_CACHE)
def write_pool(train_path: Path, run_dir: Path, round_index: int, out_path: Path) -> int:
    """Materialize the training pool after ``round_index`` (original train + every kept set)."""
    return write_jsonl(rundir.current_pool(train_path, run_dir, round_index), out_path)


@task(name="measure_compound_divergence", cache_policy=NO_CACHE)
def measure_compound_divergence(measure: datasets.GapMeasure, pool_path: Path, test_path: Path) -> float:
    """DBCA^c between the current pool and the compositional test set, under the split's atom labels."""
    value = datasets.compound_divergence(measure, read_problems_jsonl(pool_path), read_problems_jsonl(test_path))
    get_run_logger().info("compound divergence pool -> %s: %.4f", test_path.stem, value)
    return value
