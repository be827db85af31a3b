"""The product's main job: Algorithm 1 of paper 003 as a Prefect flow tracked in MLflow.

Round 0 trains the solver on the training pool and evaluates it. Each round r = 1..T generates
candidates from the pool (GECA-style operations and the other operators), verifies them, scores them
with the solver of round r-1, keeps the top fraction, adds them to the pool, retrains and evaluates.
Every completed round leaves its files on disk; running the same parameters again resumes after the
last completed round.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Optional

from prefect import flow
from prefect.artifacts import create_table_artifact
from prefect.logging import get_run_logger
from prefect.states import Cancelled

from flows.params import LoopParams, lift_legacy_loop_keys
from tasks.loop.progress import LoopProgress
from flows.signals import crash_abandoned, is_stop, remember_crash
from tasks.loop.tracking import LoopTracker, end_after_error
from tasks.loop.tracking_names import loop_run_name
from solvers.base import EpochStats
from solvers.trainer import check_step_runs_here
from tasks.loop import rundir, steps
from tasks.loop.config import RunConfigs
from tasks.loop.datasets import DataSets, GapMeasure
from tasks.loop.record import RoundRecord, relative_gap, table_row
from tasks.loop.round_zero import adopt_round_zero, adopted_from
from tasks.loop.sharding import ScoringWorkers
from tasks.loop.startup import lock_run

FAULT_ENV = "COMPAUG_FAIL_AT_ROUND"  # fault injection for resume tests: fail when this round starts
EPOCH_FAULT_ENV = "COMPAUG_FAIL_AFTER_EPOCH"  # "R:E": fail in round R once epoch E is trained and logged


def _flow_run_id() -> str | None:
    from prefect.runtime import flow_run

    return flow_run.id


def _kept_sample(kept_path: Path, limit: int = 20) -> list[dict]:
    sample = []
    for problem, score in rundir.read_scored(kept_path)[:limit]:
        sample.append({"id": problem.id, "text": problem.text, "expression": " ".join(problem.prefix()),
                       "answer": float(problem.answer), "confidence": score,
                       "operator": problem.provenance.operator, "parents": list(problem.provenance.parents),
                       "detail": problem.provenance.detail})
    return sample


def _rounded(value: Any) -> Any:
    return round(value, 4) if isinstance(value, float) else value


def round_done_line(r: int, metrics: dict[str, float]) -> str:
    """The log line that ends round ``r``: its figures, with the rejections by reason (already logged by the
    round's generation, and kept in MLflow and the round's metrics.json) summed into one count."""
    shown = {k: _rounded(v) for k, v in metrics.items() if not k.startswith("rejected_")}
    reasons = {k: v for k, v in metrics.items() if k.startswith("rejected_")}
    line = f"round {r} done: {shown}"
    if reasons:
        line += (f"; {int(sum(reasons.values()))} candidates rejected for {len(reasons)} reasons "
                 f"(by reason: the generation's line, MLflow, round_{r:02d}/metrics.json)")
    return line


def _epoch_callback(r: int, tracker: LoopTracker, progress: LoopProgress) -> Callable[[EpochStats], None]:
    """The trainer's ``on_epoch``: each epoch to the round's MLflow child as it ends, and to the user."""
    show = progress.training(r)

    def on_epoch(stats: EpochStats) -> None:
        tracker.log_epoch(r, stats)
        show(stats)
        if os.environ.get(EPOCH_FAULT_ENV) == f"{r}:{stats.epoch}":
            raise RuntimeError(f"injected failure after epoch {stats.epoch} of round {r} ({EPOCH_FAULT_ENV})")

    return on_epoch


def run_round(r: int, params: LoopParams, configs: RunConfigs, run_dir: Path, sets: DataSets,
              gap: GapMeasure | None, tracker: LoopTracker, scoring: ScoringWorkers,
              progress: LoopProgress) -> RoundRecord:
    """Round ``r`` inside its MLflow child run, which starts first and ends last (FAILED, or KILLED on
    an interrupt, when the round raises), so the child's duration is the round's wall time."""
    tracker.start_round(r, _flow_run_id())
    progress.round_started(r)
    try:
        record = _round(r, params, configs, run_dir, sets, gap, tracker, scoring, progress)
    except BaseException as err:
        status = "FAILED" if isinstance(err, Exception) else "KILLED"
        # a store failure here is not raised over ``err``: the parent's end (augment_loop) ends this child too,
        # and warns if the store still fails
        end_after_error(lambda: tracker.end_round(r, status), f"round {r}", err if status == "KILLED" else None,
                        tracker.client)
        raise
    tracker.end_round(r, "FINISHED")
    progress.round_finished(r)
    return record


def _round(r: int, params: LoopParams, configs: RunConfigs, run_dir: Path, sets: DataSets,
           gap: GapMeasure | None, tracker: LoopTracker, scoring: ScoringWorkers,
           progress: LoopProgress) -> RoundRecord:
    logger = get_run_logger()
    if os.environ.get(FAULT_ENV) == str(r):
        raise RuntimeError(f"injected failure at the start of round {r} ({FAULT_ENV})")
    rd = rundir.round_dir(run_dir, r)
    rd.mkdir(parents=True, exist_ok=True)
    device = configs.train.device
    start = time.perf_counter()
    pool_path = rd / "pool.jsonl"
    generation = None
    loop = configs.loop
    if not loop.augments(r):  # round 0, or a loop without augmentation: the original pool
        pool_size = steps.write_pool(sets.train, run_dir, 0, pool_path)
    else:
        prev = rundir.round_dir(run_dir, r - 1)
        held_out = {"valid": sets.valid, **sets.tests}  # nothing held out may reach training, in any form
        generated = steps.generate_candidates(prev / "pool.jsonl", rd / "candidates.jsonl", configs.augment, r,
                                              held_out)
        unscorable = steps.score_candidates(rd / "candidates.jsonl", prev / "pool.jsonl", prev / "checkpoint",
                                            loop.score, configs.train.seed, device, rd / "scored.jsonl",
                                            scoring.address(), scoring.threads)
        kept = steps.keep_candidates(rd / "scored.jsonl", loop, rd / "kept.jsonl", prev / "pool.jsonl")
        pool_size = steps.write_pool(sets.train, run_dir, r, pool_path)
        generation = steps.generation_record(generated, unscorable, kept)
    checkpoint = rd / "checkpoint"
    if generation is not None and generation.kept == 0:
        # Nothing new in the pool: the previous solver is this round's solver.
        logger.warning("round %d kept no candidates; reusing the round %d solver", r, r - 1)
        shutil.copytree(rundir.round_dir(run_dir, r - 1) / "checkpoint", checkpoint, dirs_exist_ok=True)
        previous = rundir.read_record(run_dir, r - 1)
        train_seconds, best_epoch, valid_acc = 0.0, previous.best_epoch, previous.valid_answer_acc
        precision = previous.precision
    else:
        warm = rundir.round_dir(run_dir, r - 1) / "checkpoint" if loop.warm_starts(r) else None
        # A round's training saves its state after every epoch: a run killed mid-training continues
        # from its last epoch when started again, not from the round's first.
        train_config = replace(configs.train, epochs=loop.round_epochs(r, configs.train.epochs),
                               resume_dir=str(rd / "train_state"))
        summary = steps.train_solver(pool_path, sets.valid, configs.solver_name, configs.solver, train_config,
                                     checkpoint, warm, _epoch_callback(r, tracker, progress))
        rundir.write_json_atomic(rd / "epochs.json", summary.epochs)  # the validation curve, for reports
        train_seconds, best_epoch, valid_acc = summary.seconds, summary.best_epoch, summary.best_valid_answer_acc
        precision = summary.precision
    tests = steps.evaluate_solver(checkpoint, sets.tests, configs.train.beam_size, device, rd)
    divergence = None
    compositional = [name for name in sets.tests if name not in ("iid", "iid_holdout")]
    if gap is not None and compositional:
        # How much of the compositional gap the pool has filled so far (DBCA^c, pool vs. test).
        divergence = steps.measure_compound_divergence(gap, pool_path, sets.tests[compositional[0]])
    record = RoundRecord(round=r, pool_size=pool_size, train_seconds=train_seconds, best_epoch=best_epoch,
                         valid_answer_acc=valid_acc, tests=tests, relative_gap=relative_gap(tests),
                         round_seconds=time.perf_counter() - start, generation=generation,
                         compound_divergence=divergence, precision=precision)
    sample = _kept_sample(rd / "kept.jsonl") if generation is not None else None
    tracker.log_round(record, sample)
    create_table_artifact(table=[{"metric": k, "value": _rounded(v)} for k, v in record.metrics().items()],
                          key=f"compaug-{params.fingerprint()}-round-{r}",
                          description=f"Round {r} of {loop.rounds}: pool, candidates, kept, accuracies")
    rundir.write_record(run_dir, record)  # written last: the round is complete
    logger.info(round_done_line(r, record.metrics()))
    return record


@flow(name="augment-loop", log_prints=True, on_crashed=[remember_crash])
def augment_loop(params: LoopParams = LoopParams(), through_round: Optional[int] = None) -> dict[str, Any]:
    """Iterative data augmentation with a solver-confidence data ranker (paper 003, Algorithm 1).
    ``through_round``: stop after that round (a study trains the round 0 its arms share first); the run,
    tracked with its own T, continues when started again without it."""
    logger = get_run_logger()
    run_dir = params.run_dir()
    # a step this machine cannot take fails now, not after the data and round 0's set-up (a deployment's worker)
    check_step_runs_here(params.train.step, params.train.graph_fusion, params.solver.device)
    # An existing scheduler is checked here, before any training; a local cluster starts at the first scoring.
    scoring = ScoringWorkers(params.score_workers, params.score_dask_address, params.score_threads)
    try:
        # a second run on this directory, or a resume whose data changed, is refused before anything is
        # written or tracked; the command line refuses it before the flow, a deployment's flow run here
        held = lock_run(params)
    except rundir.RunRefused as refused:
        scoring.close()
        logger.warning("refused: %s", refused)
        return Cancelled(message=f"refused: {refused}")  # not Failed: nothing ran, nothing was changed
    except BaseException:
        scoring.close()
        raise
    try:
        return _run_locked(params, run_dir, logger, scoring, through_round)
    finally:
        scoring.close()
        held.close()  # released even when a failure's traceback keeps this frame alive


def _run_locked(params: LoopParams, run_dir: Path, logger, scoring: ScoringWorkers,
                through_round: int | None = None) -> dict[str, Any]:
    configs = params.configs(progress=sys.stderr.isatty())
    rundir.write_json_atomic(run_dir / "params.json", params.model_dump(mode="json"))
    tracker = LoopTracker.open(params.tracking(), params.experiment_name(), run_dir, params.flat_dump(),
                               _flow_run_id(), run_name=loop_run_name(params.flat_dump(), params.fingerprint()))
    crash_abandoned(tracker.client, tracker.parent_run_id, _flow_run_id(), logger)  # Running after kill -9
    try:
        data = params.data.spec()
        sets, report = steps.prepare_data(data, run_dir, params.seed, params.test_fraction, params.valid_fraction,
                                          params.split_file, params.iid_holdout_fraction)
        gap = steps.prepare_gap_measure(data, params.split_file, run_dir) if params.split_file else None
        for line in rundir.redo_unreadable(run_dir):  # a damaged marker: that round and later ones again
            logger.warning(line)
        if params.round0_from is not None:
            _adopt_round_zero(params, run_dir, logger)
        done = set(rundir.completed_rounds(run_dir))
        if done:
            logger.info("resuming %s: rounds %s already complete", run_dir, sorted(done))
        for r in sorted(done):  # an adopted round's numbers on this run's MLflow run too, once
            source = adopted_from(run_dir, r)
            if source is not None and str(r) not in tracker.state["children"]:
                tracker.log_adopted_round(rundir.read_record(run_dir, r), _epochs(run_dir, r), source)
        last = configs.loop.rounds if through_round is None else min(through_round, configs.loop.rounds)
        wanted = range(last + 1)
        epochs = [configs.loop.round_epochs(r, configs.train.epochs) for r in wanted]
        with LoopProgress(len(wanted), len(done.intersection(wanted)), epochs) \
                as progress:
            records = [rundir.read_record(run_dir, r) if r in done
                       else run_round(r, params, configs, run_dir, sets, gap, tracker, scoring, progress)
                       for r in wanted]
        complete = last == configs.loop.rounds  # else the run stops early and continues later
        control = _equal_update_control(configs, run_dir, sets, records, logger) \
            if complete and configs.loop.runs_control() else None
        if control is not None:
            tracker.log_control(control, records[-1].round)
        tracker.log_plot(records)
        final_checkpoint = rundir.round_dir(run_dir, last) / "checkpoint"
        if complete:
            tracker.log_final(final_checkpoint, records)
        test_sets = sorted(sets.tests)
        create_table_artifact(
            table=[{k: _rounded(v) for k, v in table_row(r, test_sets, configs.augment.operators,
                                                          ["valid", *test_sets]).items()} for r in records],
            key=f"compaug-{params.fingerprint()}-rounds", description=f"All rounds of {run_dir.name}")
    except BaseException as err:
        status = "KILLED" if is_stop(err) else "FAILED"  # KILLED: Ctrl-C or SIGTERM (flows/signals.py)
        warning = end_after_error(lambda: tracker.finish(status), f"MLflow run {tracker.parent_run_id} ({status})",
                                  err if status == "KILLED" else None, tracker.client)
        if warning:
            logger.warning(warning)
        raise
    tracker.finish("FINISHED")
    return {"run_dir": run_dir, "rounds": records, "data": report, "tracking_uri": params.tracking(),
            "experiment": params.experiment_name(), "mlflow_run_id": tracker.parent_run_id,
            "mlflow_experiment_id": tracker.experiment_id,
            "final_checkpoint": final_checkpoint, "flow_run_id": _flow_run_id(), "control": control}


def _adopt_round_zero(params: LoopParams, run_dir: Path, logger) -> None:
    """Round 0 from ``params.round0_from`` (a study's other arm of the same seed), when it trained round 0
    with every parameter round 0 depends on equal to this run's (tasks/loop/round_zero.py); else round 0
    is trained here and the reason is logged."""
    source = Path(params.round0_from)
    saved = source / "params.json"
    theirs = lift_legacy_loop_keys(json.loads(saved.read_text(encoding="utf-8"))) if saved.exists() else None
    adopted, message = adopt_round_zero(run_dir, source, params.model_dump(mode="json"), theirs)
    if adopted:
        logger.info("%s", message)
    elif not rundir.record_path(run_dir, 0).exists():
        logger.warning("round 0 is trained here: %s", message)


def _epochs(run_dir: Path, r: int) -> list[EpochStats]:
    path = rundir.round_dir(run_dir, r) / "epochs.json"
    return [EpochStats(**e) for e in json.loads(path.read_text(encoding="utf-8"))] if path.exists() else []


def _equal_update_control(configs: RunConfigs, run_dir: Path, sets: DataSets, records: list[RoundRecord],
                          logger) -> RoundRecord:
    """The control of the run, trained once after round T into ``control/round_TT/`` (or read back when a
    resumed run has it):
    the original pool for as many optimizer updates as round T's training had (epochs x final pool /
    original pool, ``control_epochs``), best epoch on validation, evaluated on every test set. Without
    it a rising accuracy over rounds cannot be told from the effect of more gradient steps."""
    from tasks.study.grid import control_epochs

    # keyed by the round it matches: asking the same run for more rounds later trains a new control
    directory = run_dir / "control" / rundir.round_dir(run_dir, records[-1].round).name
    marker = directory / "metrics.json"
    if marker.exists():
        return RoundRecord.from_dict(json.loads(marker.read_text(encoding="utf-8")))
    directory.mkdir(parents=True, exist_ok=True)
    epochs = control_epochs(configs.train.epochs, records[0].pool_size, records[-1].pool_size)
    logger.info("equal-update control: the original %d problems for %d epochs (round %d: %d problems for %d)",
                records[0].pool_size, epochs, records[-1].round, records[-1].pool_size, configs.train.epochs)
    start = time.perf_counter()
    train_config = replace(configs.train, epochs=epochs, resume_dir=str(directory / "train_state"))
    summary = steps.train_solver(rundir.round_dir(run_dir, 0) / "pool.jsonl", sets.valid, configs.solver_name,
                                 configs.solver, train_config, directory / "checkpoint", None, None)
    tests = steps.evaluate_solver(directory / "checkpoint", sets.tests, configs.train.beam_size,
                                  configs.train.device, directory)
    record = RoundRecord(round=0, pool_size=records[0].pool_size, train_seconds=summary.seconds,
                         best_epoch=summary.best_epoch, valid_answer_acc=summary.best_valid_answer_acc, tests=tests,
                         relative_gap=relative_gap(tests), round_seconds=time.perf_counter() - start,
                         precision=summary.precision)
    rundir.write_json_atomic(marker, record.to_dict())
    return record
