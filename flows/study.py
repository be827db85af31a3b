"""``study``: controlled, multi-seed evidence of what the loop does (paper 003 Tables 1, 4, 5, Figure 6).

The grid is solvers x splits x arms x seeds (tasks/study/grid.py; the arms are the records of
tasks/study/arms.py); each cell is one run of the loop flow
(a Prefect subflow) with its own run directory under ``<out>/<name>/cells/<cell>``, so running the same
study again skips finished cells and a study can be finished across several sittings. One MLflow parent
run per study; each cell's loop run is nested under it. A cell that fails is marked in the report and
the other cells still run. The report (markdown + PNG) is written to the study directory and logged to
the study's MLflow run.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.settings import PREFECT_API_URL

from flows.params import LoopParams, lift_legacy_loop_keys
from flows.study_params import StudyParams
from flows.signals import is_stop, remember_crash
from tasks.loop.tracking import end_after_error, end_open_runs_below
from tasks.loop.sharding import local_cluster_kwargs
from tasks.study.arms import ARMS, budget_arm
from tasks.study.grid import Cell, control_epochs

def _study_run(params: StudyParams) -> str:
    """The study's MLflow parent run (kept in the study directory, so a resumed study reuses it)."""
    from mwp.durable import write_json_durable
    from tasks.loop.startup import prepare_experiment, tracking_client

    state_path = params.directory() / "mlflow.json"
    uri = params.tracking()
    state = json.loads(state_path.read_text()) if state_path.exists() else {}
    client = tracking_client(uri)
    if state.get("tracking_uri") == uri:
        client.update_run(state["run_id"], status="RUNNING")
        return state["run_id"]
    experiment = prepare_experiment(client, f"compaug-study-{params.name}", uri)
    run = client.create_run(experiment, run_name=params.name, tags={"compaug.study_dir": str(params.directory())})
    client.log_dict(run.info.run_id, params.model_dump(mode="json"), "study_params.json")
    write_json_durable(state_path, {"tracking_uri": uri, "run_id": run.info.run_id})
    return run.info.run_id


@task(name="run_cell", cache_policy=NO_CACHE)
def run_cell(loop_params: LoopParams, torch_threads: int, through_round: int | None = None) -> dict[str, Any]:
    """One cell: a loop run (a subflow) with a fixed number of torch threads, in whichever process the
    task runner puts it (this one, or a Dask worker); ``through_round``: only that far, for now."""
    import torch

    from flows.augment_loop import augment_loop

    torch.set_num_threads(torch_threads)
    out = augment_loop(loop_params, through_round)
    return {"run_dir": str(out["run_dir"]), "mlflow_run_id": out["mlflow_run_id"], "rounds": loop_params.loop.rounds}


def _cell_params(params: StudyParams, cell: Cell, results: dict, parent: str) -> LoopParams:
    """A cell's loop parameters; a cell of an arm with a budget (the control) gets as many optimizer
    updates as its seed's cell of the budget's arm had in its final round."""
    budget = budget_arm(cell.arm, params.arms)
    if budget is None:
        return params.loop_params(cell, None, parent)
    reference = results.get(Cell(cell.solver, cell.split, budget, cell.seed))
    epochs = None
    if reference is not None and reference.status == "done":
        epochs = control_epochs(params.train.epochs, reference.records[0].pool_size, reference.final.pool_size)
    return params.loop_params(cell, epochs, parent)


def _collect(cell: Cell, outcome: Any, results: dict, logger) -> None:
    from tasks.study.cells import CellResult, load_cell

    if isinstance(outcome, BaseException):  # the cell is marked failed; the others still run
        logger.error("cell %s failed: %s: %s", cell.key, type(outcome).__name__, outcome)
        results[cell] = CellResult(cell, "failed", error=f"{type(outcome).__name__}: {outcome}")
    else:
        results[cell] = load_cell(cell, Path(outcome["run_dir"]), outcome["mlflow_run_id"], outcome["rounds"])


def finished_cell(params: StudyParams, cell: Cell, results: dict | None = None, logger=None):
    """The records of a cell that already reached its final round, else None: a resumed study reads
    them instead of running the cell again (no checkpoint needed). Only the run of the parameters the
    cell has now is reused (its directory is named by their hash, LoopParams.fingerprint): a run that
    finished with other ones (the study's settings edited, a control whose budget changed) is named in a
    warning and left in place, and the cell runs again. ``results``: the cells finished so far, from
    which a control's budget is read."""
    from tasks.study.cells import load_cell

    wanted = ARMS[cell.arm].loop.get("rounds", params.loop.rounds)
    expected_params = _expected_params(params, cell, results or {})
    expected = expected_params.run_dir() if expected_params is not None else None
    if expected is not None and expected.is_dir() and wanted in _completed(expected):
        return load_cell(cell, expected, _mlflow_run_id(expected), wanted)
    if logger is not None:
        for other, changes in _other_finished_runs(params, cell, expected_params):
            logger.warning("cell %s: not reusing %s, which finished with other parameters (%s); the cell "
                           "runs with the study's", cell.key, other.name, "; ".join(changes) or "unreadable")
    return None


def _expected_params(params: StudyParams, cell: Cell, results: dict) -> LoopParams | None:
    try:
        return _cell_params(params, cell, results, None)
    except ValueError:  # parameters that do not validate: the cell's run fails, naming the error
        return None


def _other_finished_runs(params: StudyParams, cell: Cell, expected: LoopParams | None) -> list[tuple[Path, list[str]]]:
    """The cell's finished runs under parameters other than ``expected`` (its own now), each with what differs."""
    from tasks.loop.rundir import parameter_changes

    cell_dir = params.directory() / "cells" / cell.key
    wanted = ARMS[cell.arm].loop.get("rounds", params.loop.rounds)
    now = _comparable(expected.model_dump(mode="json")) if expected is not None else {}
    out = []
    for run in sorted(p for p in cell_dir.glob("*") if p.is_dir()) if cell_dir.is_dir() else []:
        if (expected is None or run.name != expected.run_dir().name) and wanted in _completed(run):
            saved = run / "params.json"
            before = _comparable(lift_legacy_loop_keys(json.loads(saved.read_text(encoding="utf-8")))) if saved.exists() else {}
            out.append((run, parameter_changes(before, now) if before and now else []))
    return out


def _comparable(document: dict) -> dict:
    """A run's parameters without where it is written and who tracks it, nor T (which only extends a run)."""
    out = {k: v for k, v in document.items() if k not in _NOT_COMPARED}
    if isinstance(out.get("loop"), dict):
        out["loop"] = {k: v for k, v in out["loop"].items() if k != "rounds"}
    return out


# where a run is written and who tracks it: not what it computes
_NOT_COMPARED = {"out_dir", "tracking_uri", "experiment", "mlflow_parent_run_id", "round0_from"}


def _run_here(params: StudyParams, parent: str, logger) -> dict:
    results: dict = {}
    cells = params.cells()
    for i, cell in enumerate(cells, 1):
        logger.info("cell %d/%d: %s", i, len(cells), cell.key)
        done = finished_cell(params, cell, results, logger)
        if done is not None:
            results[cell] = done
            continue
        try:
            outcome = run_cell(_cell_params(params, cell, results, parent), params.cell_threads())
        except Exception as err:
            outcome = err
        _collect(cell, outcome, results, logger)
    return results


def _submit(params: StudyParams, cells: list[Cell], results: dict, parent: str, logger) -> list:
    submitted = []
    for cell in cells:
        done = finished_cell(params, cell, results, logger)
        if done is not None:
            results[cell] = done
            continue
        try:
            submitted.append((cell, run_cell.submit(_cell_params(params, cell, results, parent), params.cell_threads())))
        except Exception as err:
            submitted.append((cell, err))
    return submitted


def _round_zero_first(params: StudyParams, cells: list[Cell], parent: str, logger) -> None:
    """The round 0 of each cell the others of its seed adopt (StudyParams.round_zero_source), trained first
    and alone (the cell's own run, stopped after round 0 and continued later), so that every arm of the
    seed finds it finished when it starts."""
    from tasks.loop import rundir

    sources = {params.round_zero_source(c) for c in cells} - {None}
    pending = []
    for cell in [c for c in cells if c in sources]:
        try:
            loop_params = _cell_params(params, cell, {}, parent)  # a source has no budget: no results needed
        except ValueError:
            continue  # parameters that do not validate: the cell fails in its wave, naming the error
        if loop_params.run_dir().is_dir() and 0 in rundir.completed_rounds(loop_params.run_dir()):
            continue
        logger.info("round 0 of %s first: the other arms of its seed adopt it", cell.key)
        pending.append((cell, run_cell.submit(loop_params, params.cell_threads(), through_round=0)))
    for cell, future in pending:
        try:
            future.result()
        except Exception as err:  # the cell runs again in its wave and fails there, named in the report
            logger.error("round 0 of %s failed: %s: %s; its seed's arms train their own", cell.key,
                         type(err).__name__, err)


@flow(name="study-cells", on_crashed=[remember_crash])
def run_cells_on_dask(params: StudyParams, parent: str) -> dict:
    """Every cell as a task on the flow's Dask task runner: the round 0 the arms of each seed share first
    (one cell of each seed, stopped after round 0); then the arms without a budget, all at once; then those with one
    (the controls), whose budget is read from the finished cells of its arm."""
    logger = get_run_logger()
    results: dict = {}
    cells = params.cells()
    _round_zero_first(params, cells, parent, logger)
    later = [c for c in cells if ARMS[c.arm].budget is not None]
    for wave in ([c for c in cells if ARMS[c.arm].budget is None], later):
        for cell, future in _submit(params, wave, results, parent, logger):
            try:
                outcome = future if isinstance(future, BaseException) else future.result()
            except Exception as err:
                outcome = err
            _collect(cell, outcome, results, logger)
    return results


def dask_runner(params: StudyParams):
    from prefect_dask import DaskTaskRunner

    if params.dask_address:
        return DaskTaskRunner(address=params.dask_address)
    # The workers report to this process's Prefect server (also one set only in a settings context, as in
    # tests) instead of each starting a temporary server of its own that would outlive a stopped study.
    api_url = PREFECT_API_URL.value()
    return DaskTaskRunner(cluster_kwargs={**local_cluster_kwargs(params.workers),  # 127.0.0.1 only, no dashboard
                                          **({"env": {"PREFECT_API_URL": api_url}} if api_url else {})})


@flow(name="study", on_crashed=[remember_crash])
def study_flow(params: StudyParams) -> dict[str, Any]:
    from mlflow.tracking import MlflowClient

    logger = get_run_logger()
    directory = params.directory()
    directory.mkdir(parents=True, exist_ok=True)
    parent = _study_run(params)
    try:
        if params.workers > 1 or params.dask_address:
            results = run_cells_on_dask.with_options(task_runner=dask_runner(params))(params, parent)
        else:
            results = _run_here(params, parent, logger)
    except BaseException as err:  # the cells' runs a stop or a crash left open end with the study's run
        status = "KILLED" if is_stop(err) else "FAILED"
        client = MlflowClient(tracking_uri=params.tracking())

        def end() -> None:
            end_open_runs_below(client, client.get_run(parent).info.experiment_id, parent, status)
            client.set_terminated(parent, status)

        warning = end_after_error(end, f"study run {parent} ({status})", err if status == "KILLED" else None, client)
        if warning:
            logger.warning(warning)
        raise
    ordered = [results[cell] for cell in params.cells()]
    summary = _report(params, ordered)
    client = MlflowClient(tracking_uri=params.tracking())
    client.log_artifact(parent, summary["report"])
    for path in summary["figures"]:
        client.log_artifact(parent, path)
    client.set_terminated(parent, "FAILED" if summary["failed"] else "FINISHED")
    return {**summary, "directory": str(directory), "mlflow_run_id": parent, "tracking_uri": params.tracking()}


def _report(params: StudyParams, results) -> dict[str, Any]:
    from tasks.study.report import write_report

    return write_report(results, params.directory(), _header(params), params.tracking(), _sd_labels(params),
                        _divergences(params))


def report_finished_cells(params: StudyParams) -> dict[str, Any]:
    """The report of the cells finished so far (a study still running, or stopped between sittings), from
    their run directories alone; cells not run yet are marked so. No training, no MLflow run."""
    from tasks.study.cells import CellResult

    results: dict = {}
    for cell in params.cells():  # grid order: a control after the arm its budget is read from
        done = finished_cell(params, cell, results)
        cell_dir = params.directory() / "cells" / cell.key
        results[cell] = done or CellResult(cell, "pending", error=_progress(params, cell, results)
                                           if cell_dir.is_dir() else "not run yet")
    return _report(params, list(results.values()))


def _progress(params: StudyParams, cell: Cell, results: dict) -> str:
    """What an unfinished cell has so far: its completed rounds and each one's test accuracies (a study
    between sittings; these are not results: the cell is read at round T only once it is finished),
    and any run of it that finished with other parameters, which is not reused."""
    from tasks.loop import rundir

    parts = []
    expected_params = _expected_params(params, cell, results)
    expected = expected_params.run_dir() if expected_params is not None else None
    if expected is not None and expected.is_dir():
        for r in rundir.completed_rounds(expected):
            record = rundir.read_record(expected, r)
            accs = ", ".join(f"{name} {m.answer_acc:.3f}" for name, m in record.tests.items())
            parts.append(f"round {r}: {accs} (pool {record.pool_size})")
    text = "not finished yet" + (f"; done so far: {'; '.join(parts)}" if parts else "")
    for other, changes in _other_finished_runs(params, cell, expected_params):
        text += f"; {other.name} finished with other parameters ({'; '.join(changes) or 'unreadable'}), not reused"
    return text


def _completed(run_dir: Path) -> list[int]:
    from tasks.loop import rundir

    return rundir.completed_rounds(run_dir)


def _mlflow_run_id(run_dir: Path) -> str | None:
    state = run_dir / "mlflow.json"
    return json.loads(state.read_text()).get("parent_run_id") if state.exists() else None


def _header(params: StudyParams) -> list[str]:
    matched = budget_arm("control", params.arms) if "control" in params.arms else None
    if matched:
        control = (f"The control arm trains on the original pool for epochs x ({matched}'s final pool / original "
                   f"pool) epochs, as many optimizer updates as the same seed's {matched} cell in its final round, "
                   "best epoch on validation; its validation curves are in control_validation_curve.png. ")
    else:
        control = ("The control arm, with no augmenting arm in the study to match, trains the study's own epochs. "
                   if "control" in params.arms else "")
    return [f"# Study `{params.name}`", "",
            f"Grid: solvers {[s.name for s in params.solvers]} x splits {[s.name for s in params.splits]} x arms "
            f"{params.arms} x seeds {params.seeds}; T = {params.loop.rounds}; keep {params.loop.keep_fraction:.0%}; "
            f"{params.train.epochs} epochs (best epoch on validation).",
            "",
            "Accuracies are answer accuracy on each split's own test set at the cell's final round (round T for "
            "the loop arms, never the best round by test). " + control +
            "Intervals: paired bootstrap (2,000 resamples of seeds, then test problems, the same draw for both "
            "arms) of the mean over seeds of the accuracy difference; \"includes 0\" marks a difference the "
            "interval does not separate from zero.",
            "", "Settings: `" + json.dumps(params.model_dump(mode="json")) + "`"]


def _sd_labels(params: StudyParams) -> dict[str, str]:
    for spec in params.splits:
        if spec.split_file is not None:
            document = json.loads(spec.split_file.read_text(encoding="utf-8"))
            if document.get("method") == "sd":
                return {str(k): v for k, v in document.get("labels", {}).items()}
    return {}


def _divergences(params: StudyParams) -> dict[str, float]:
    out = {}
    for spec in params.splits:
        if spec.split_file is not None:
            stats = json.loads(spec.split_file.read_text(encoding="utf-8")).get("stats", {})
            if isinstance(stats.get("compound_divergence"), (int, float)):
                out[spec.name] = float(stats["compound_divergence"])
    return out
