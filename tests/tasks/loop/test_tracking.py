"""tasks/loop/tracking.py's LoopTracker on a SQLite store of its own: the parent's tags across a resume, the
experiment's kind and saved runs view, the rounds' colours, a store locked while a stop unwinds (no Prefect,
no training)."""
import json

from tasks.loop.tracking import LoopTracker

PARAMS = {"seed": 1, "rounds": 1, "solver": {"name": "gts"}, "augment": {"operators": ["op1"]}}


def _open(tmp_path, flow_run_id, operators=("op1",)):
    params = {**PARAMS, "augment": {"operators": list(operators)}}
    return LoopTracker.open(f"sqlite:///{tmp_path / 'mlflow.db'}", "exp", tmp_path / "run", params, flow_run_id, "name")


def test_a_resumed_run_lists_every_flow_run_once_and_a_fresh_one_only_its_own(tmp_path):
    (tmp_path / "run").mkdir()
    first = _open(tmp_path, "flow-a")
    tags = first.client.get_run(first.parent_run_id).data.tags
    assert tags["prefect.flow_run_id"] == "flow-a" and "prefect.flow_run_ids" not in tags
    assert tags["compaug.run_dir"] == str((tmp_path / "run").resolve())  # absolute, whatever the cwd was
    first.finish("FAILED")
    second = _open(tmp_path, "flow-b")
    assert second.parent_run_id == first.parent_run_id
    tags = second.client.get_run(second.parent_run_id).data.tags
    assert tags["prefect.flow_run_id"] == "flow-b" and tags["prefect.flow_run_ids"] == "flow-a,flow-b"
    third = _open(tmp_path, "flow-c")
    assert third.client.get_run(third.parent_run_id).data.tags["prefect.flow_run_ids"] == "flow-a,flow-b,flow-c"


def test_the_experiment_is_model_development_with_a_view_widened_by_each_run(tmp_path):
    (tmp_path / "run").mkdir()
    tracker = _open(tmp_path, None)
    (tmp_path / "run2").mkdir()
    LoopTracker.open(f"sqlite:///{tmp_path / 'mlflow.db'}", "exp", tmp_path / "run2",
                     {**PARAMS, "augment": {"operators": ["op2"]}}, None, "other")
    exp = tracker.client.get_experiment(tracker.experiment_id)
    assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
    view = json.loads(exp.tags["mlflow.sharedViewState.compaug-rounds"])
    assert {"params.`kept.op1`", "params.`kept.op2`", "metrics.`acc/valid`"} <= set(view["selectedColumns"])


def test_rounds_take_colours_in_order_and_a_child_its_parents_name(tmp_path):
    (tmp_path / "run").mkdir()
    tracker = _open(tmp_path, None)
    children = [tracker.client.get_run(tracker.start_round(r, None)) for r in (0, 1)]
    assert [c.data.tags["mlflow.runColor"] for c in children] == ["#1f77b4", "#ff7f0e"]
    assert [c.info.run_name for c in children] == ["name round-00", "name round-01"]
    assert tracker.client.get_run(tracker.parent_run_id).data.tags["mlflow.runColor"] == "#333333"


def test_a_store_locked_while_a_stop_unwinds_is_a_warning_and_a_resume_ends_the_run(tmp_path):
    import sqlite3

    from tasks.loop.tracking import end_after_error

    (tmp_path / "run").mkdir()
    tracker = _open(tmp_path, "flow-a")
    other = sqlite3.connect(tmp_path / "mlflow.db", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")  # another connection holds the write lock, as a stopped writer can
    # MLflow's SQLite store waits 20 s for the lock (its busy_timeout), then fails
    warning = end_after_error(lambda: tracker.finish("KILLED"), f"MLflow run {tracker.parent_run_id} (KILLED)")
    other.execute("ROLLBACK")
    other.close()
    assert warning is not None and tracker.parent_run_id in warning and "locked" in warning, warning
    assert tracker.client.get_run(tracker.parent_run_id).info.status == "RUNNING"
    resumed = _open(tmp_path, "flow-b")
    assert resumed.parent_run_id == tracker.parent_run_id
    assert end_after_error(lambda: resumed.finish("FINISHED"), "run") is None
    assert resumed.client.get_run(resumed.parent_run_id).info.status == "FINISHED"


def _write_locked(database) -> bool:
    """Whether another writer finds ``database`` locked (waiting 0.1 s, not MLflow's 20)."""
    import sqlite3

    other = sqlite3.connect(database, timeout=0.1, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("ROLLBACK")
        return False
    except sqlite3.OperationalError:
        return True
    finally:
        other.close()


def test_a_stop_inside_a_commit_leaves_no_lock_for_the_writes_that_end_the_run(tmp_path):
    """A stop landing in MLflow's commit (the signal handler raises between two instructions) leaves the write's
    transaction open while the stop unwinds. Unreleased, the round's KILLED write (the first a stopped round
    makes: flows/augment_loop.py run_round) waits 20 s and fails, and a later write commits the stopped one
    (both seen without the release; the first in the suite under load). The ending releases it first."""
    from sqlalchemy import event

    from flows.signals import Stopped
    from tasks.loop.tracking import end_after_error

    (tmp_path / "run").mkdir()
    tracker = _open(tmp_path, "flow-a")
    child = tracker.start_round(0, None)
    engine = tracker.client._tracking_client.store.engine

    def stop_here(connection):
        event.remove(engine, "commit", stop_here)
        raise Stopped(15)

    event.listen(engine, "commit", stop_here)
    try:
        tracker.client.log_metric(child, "epoch/loss", 1.0, step=1)
    except Stopped as stop:
        assert _write_locked(tmp_path / "mlflow.db")  # what the ending would meet without the release
        warnings = [end_after_error(lambda: tracker.end_round(0, "KILLED"), "round 0", stop, tracker.client),
                    end_after_error(lambda: tracker.finish("KILLED"), "run (KILLED)", stop, tracker.client)]
    assert warnings == [None, None]
    assert not _write_locked(tmp_path / "mlflow.db")
    assert [tracker.client.get_run(r).info.status for r in (tracker.parent_run_id, child)] == ["KILLED", "KILLED"]
    assert "epoch/loss" not in tracker.client.get_run(child).data.metrics  # the stopped write was not committed


def test_params_and_metrics_go_in_batches_within_mlflows_limits_and_a_logged_value_stays(tmp_path):
    from mlflow.entities import Metric

    from tasks.loop.tracking import MAX_METRICS_PER_BATCH, MAX_PARAMS_PER_BATCH

    (tmp_path / "run").mkdir()
    many = {f"p{i:03d}": str(i) for i in range(2 * MAX_PARAMS_PER_BATCH + 7)}  # three batches
    tracker = LoopTracker.open(f"sqlite:///{tmp_path / 'mlflow.db'}", "exp", tmp_path / "run", {**PARAMS, **many},
                               None, "name")
    client = tracker.client
    assert {k: v for k, v in client.get_run(tracker.parent_run_id).data.params.items() if k in many} == many
    child = tracker.start_round(0, None)
    client.log_batch(child, metrics=[Metric("epoch/loss", 9.0, 0, 1)])  # a first try's value of epoch 1
    tracker.logged[child] = {("epoch/loss", 1)}
    values = {f"m{i}": float(i) for i in range(MAX_METRICS_PER_BATCH + 5)}  # two batches
    tracker._log_metrics(child, {**values, "epoch/loss": 1.5}, 1)
    data = client.get_run(child).data.metrics
    assert {k: data[k] for k in values} == values
    assert [m.value for m in client.get_metric_history(child, "epoch/loss")] == [9.0]  # the first value stays


def test_a_view_another_process_inserted_between_our_read_and_our_insert_is_widened_not_a_failure(tmp_path):
    """Two Dask workers' cells opening runs of one experiment at once each found the view missing and each inserted
    it: the store refused the second insert (UNIQUE constraint failed: experiment_tags), and that cell failed (seen
    in the suite's two-worker study). Here the other process's insert is made, by a connection of its own, just
    before this client's INSERT runs."""
    import sqlite3

    from mlflow.tracking import MlflowClient
    from sqlalchemy import event

    from tasks.loop.tracking import save_runs_view
    from tasks.loop.tracking_names import VIEW_TAG, runs_view

    db = tmp_path / "mlflow.db"
    client = MlflowClient(tracking_uri=f"sqlite:///{db}")
    experiment = client.create_experiment("exp", artifact_location=(tmp_path / "artifacts").as_uri())
    engine = client._tracking_client.store.engine
    inserts = []

    def the_other_process_first(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("INSERT INTO EXPERIMENT_TAGS") and not inserts:
            other = sqlite3.connect(db)
            other.execute("INSERT INTO experiment_tags (key, value, experiment_id) VALUES (?, ?, ?)",
                          (VIEW_TAG, json.dumps(runs_view(["op2"])), int(experiment)))
            other.commit()
            other.close()
        if statement.lstrip().upper().startswith("INSERT INTO EXPERIMENT_TAGS"):
            inserts.append(statement)

    event.listen(engine, "before_cursor_execute", the_other_process_first)
    save_runs_view(client, experiment, ["op1"])
    event.remove(engine, "before_cursor_execute", the_other_process_first)
    assert len(inserts) == 1  # ours, refused; the second try found the tag and updated it
    view = json.loads(client.get_experiment(experiment).tags[VIEW_TAG])
    assert {"params.`kept.op1`", "params.`kept.op2`"} <= set(view["selectedColumns"])  # both processes' columns
