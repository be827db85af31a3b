"""The product's main job: Algorithm 1 of paper 003 as a Prefect flow tracked in MLflow.

Round 0 trains the solver on the training pool and evaluates it. Each round r = 1..T generates
candidates from the pool (GECA-style operations and the other operators), verifies them, scores them
with the solver of round r-1, keeps the top fraction, adds them to the pool, retrains and evaluates.
Every completed round leaves its files on disk; running the same parameters again resumes after the
last completed round.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.artifacts import create_table_artifact
from prefect.logging import get_run_logger

from flows.environment import apply_defaults
from flows.params import LoopParams
from flows.tracking import LoopTracker
from tasks import pool as pool_io
from tasks import steps
from tasks.training import relative_gap

# A deployment's worker imports this module first: the defaults (passive OpenMP waiting above all)
# must be set before torch loads.
apply_defaults()

FAULT_ENV = "COMPAUG_FAIL_AT_ROUND"  # fault injection for resume tests: fail when this round starts


def _flow_run_id() -> str | None:
    from prefect.runtime import flow_run

    return flow_run.id


def _kept_sample(kept_path: Path, limit: int = 20) -> list[dict]:
    sample = []
    for problem, score in pool_io.read_scored(kept_path)[:limit]:
        sample.append({"id": problem.id, "text": problem.text, "expression": " ".join(problem.prefix()),
                       "answer": float(problem.answer), "confidence": score,
                       "operator": problem.provenance.operator, "parents": list(problem.provenance.parents),
                       "detail": problem.provenance.detail})
    return sample


def _round_table(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"metric": k, "value": (round(v, 4) if isinstance(v, float) else v)} for k, v in record.items()]


def run_round(r: int, params: LoopParams, run_dir: Path, sets: pool_io.DataSets, tracker: LoopTracker) -> dict:
    logger = get_run_logger()
    if os.environ.get(FAULT_ENV) == str(r):
        raise RuntimeError(f"injected failure at the start of round {r} ({FAULT_ENV})")
    rd = pool_io.round_dir(run_dir, r)
    rd.mkdir(parents=True, exist_ok=True)
    settings = params.solver.model_dump()
    record: dict[str, Any] = {"round": r}
    start = time.perf_counter()
    pool_path = rd / "pool.jsonl"
    if r == 0:
        pool_size = steps.write_pool(sets, str(run_dir), 0, str(pool_path))
        kept = 0
    else:
        prev = pool_io.round_dir(run_dir, r - 1)
        gen = steps.generate_candidates(str(prev / "pool.jsonl"), str(rd / "candidates.jsonl"),
                                        params.augment.model_dump(), params.seed * 1000 + r, r)
        scored = steps.score_candidates(str(rd / "candidates.jsonl"), str(prev / "pool.jsonl"),
                                        str(prev / "checkpoint"), params.score, params.seed, settings["device"],
                                        str(rd / "scored.jsonl"))
        keep = steps.keep_top_candidates(str(rd / "scored.jsonl"), params.keep_fraction, str(rd / "kept.jsonl"))
        pool_size = steps.write_pool(sets, str(run_dir), r, str(pool_path))
        kept = keep["kept"]
        record.update({"candidates": gen["candidates"], "verified": gen["verified"],
                       "unscorable": scored["unscorable"], "kept": kept,
                       "confidence_mean": keep["confidence_mean"], "confidence_cut": keep["confidence_cut"]})
        record.update({f"rejected_{k}": v for k, v in gen["rejected"].items()})
        record.update({f"verified_{k}": v for k, v in gen["by_operator"].items()})
    record["pool_size"] = pool_size
    checkpoint = rd / "checkpoint"
    epochs: list[dict] = []
    if r > 0 and kept == 0:
        # Nothing new in the pool: the previous solver is this round's solver.
        logger.warning("round %d kept no candidates; reusing the round %d solver", r, r - 1)
        shutil.copytree(pool_io.round_dir(run_dir, r - 1) / "checkpoint", checkpoint, dirs_exist_ok=True)
        prev_metrics = pool_io.read_metrics(run_dir, r - 1)
        record["train_seconds"] = 0.0
        record["best_epoch"] = prev_metrics.get("best_epoch")
        record["valid_answer_acc"] = prev_metrics.get("valid_answer_acc")
    else:
        warm = str(pool_io.round_dir(run_dir, r - 1) / "checkpoint") if (params.warm_start and r > 0) else None
        summary = steps.train_solver(str(pool_path), str(sets.valid), settings, str(checkpoint), params.seed, warm)
        epochs = summary.epochs
        record.update({"train_seconds": summary.seconds, "best_epoch": summary.best_epoch,
                       "valid_answer_acc": summary.best_valid_answer_acc})
    metrics = steps.evaluate_solver(str(checkpoint), {k: str(v) for k, v in sets.tests.items()},
                                    params.solver.beam_size, settings["device"])
    for name, m in metrics.items():
        record[f"{name}_answer_acc"] = m["answer_acc"]
        record[f"{name}_equation_acc"] = m["equation_acc"]
        record[f"{name}_invalid_rate"] = m["invalid_rate"]
    record["relative_gap"] = relative_gap(metrics)
    compositional = [name for name in sets.tests if name != "iid"]
    if params.split_file and compositional:
        # How much of the compositional gap the pool has filled so far (DBCA^c, pool vs. test).
        record["compound_divergence"] = steps.measure_compound_divergence(
            params.data.model_dump(), params.split_file, str(pool_path), str(sets.tests[compositional[0]]), str(run_dir))
    record["round_seconds"] = time.perf_counter() - start
    sample = _kept_sample(rd / "kept.jsonl") if r > 0 else None
    tracker.log_round(r, record, epochs, sample, _flow_run_id())
    create_table_artifact(table=_round_table(record), key=f"compaug-{params.fingerprint()}-round-{r}",
                          description=f"Round {r} of {params.rounds}: pool, candidates, kept, accuracies")
    pool_io.write_json_atomic(rd / "metrics.json", record)  # written last: the round is complete
    logger.info("round %d done: %s", r, {k: (round(v, 4) if isinstance(v, float) else v) for k, v in record.items()})
    return record


@flow(name="augment-loop", log_prints=True)
def augment_loop(params: LoopParams = LoopParams()) -> dict[str, Any]:
    """Iterative data augmentation with a solver-confidence data ranker (paper 003, Algorithm 1)."""
    logger = get_run_logger()
    run_dir = params.run_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    pool_io.write_json_atomic(run_dir / "params.json", params.model_dump())
    tracker = LoopTracker.open(params.tracking(), params.experiment_name(), run_dir, params.model_dump(),
                               _flow_run_id(), run_name=run_dir.name)
    try:
        sets, report = steps.prepare_data(params.data.model_dump(), str(run_dir), params.seed, params.test_fraction,
                                          params.valid_fraction, params.split_file, params.iid_holdout_fraction)
        done = set(pool_io.completed_rounds(run_dir))
        if done:
            logger.info("resuming %s: rounds %s already complete", run_dir, sorted(done))
        rows = []
        for r in range(params.rounds + 1):
            rows.append(pool_io.read_metrics(run_dir, r) if r in done else run_round(r, params, run_dir, sets, tracker))
        tracker.log_plot(rows)
        final_checkpoint = pool_io.round_dir(run_dir, params.rounds) / "checkpoint"
        tracker.log_final(final_checkpoint, rows)
        create_table_artifact(
            table=[{k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()
                    if k in ("round", "pool_size", "candidates", "verified", "kept", "confidence_cut",
                             "train_seconds") or k.endswith("_answer_acc")} for row in rows],
            key=f"compaug-{params.fingerprint()}-rounds", description=f"All rounds of {run_dir.name}")
    except BaseException:
        tracker.finish("FAILED")
        raise
    tracker.finish("FINISHED")
    return {"run_dir": str(run_dir), "rounds": rows, "data": report, "tracking_uri": params.tracking(),
            "experiment": params.experiment_name(), "mlflow_run_id": tracker.parent_run_id,
            "final_checkpoint": str(final_checkpoint), "flow_run_id": _flow_run_id()}
