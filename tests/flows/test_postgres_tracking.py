"""MLflow on a real PostgreSQL 15 server: the test starts its own server on 127.0.0.1 (a free port, a
temporary data directory), runs the real augment_loop flow with a tiny GTS against it, reads the
parent run, the per-round child runs and the stepped metrics back, and stops the server.

PostgreSQL refuses to run as root, so as root its commands run as the ``postgres`` user through
``runuser`` (../shared/STACK.md); as any other user they run directly."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from flows.augment_loop import augment_loop
from tasks.loop.tracking import check_tracking
from tests.flows.test_augment_loop import tiny_params

PG_BIN = Path("/usr/lib/postgresql/15/bin")
AS_ROOT = os.geteuid() == 0


def _missing() -> str | None:
    """Why this machine cannot run the server, or None."""
    absent = [name for name in ("initdb", "pg_ctl") if not (PG_BIN / name).is_file()]
    if absent or not shutil.which("psql"):
        return f"PostgreSQL 15 binaries not installed ({PG_BIN}/{{initdb,pg_ctl}} and psql)"
    if AS_ROOT and not shutil.which("runuser"):
        return "running as root (PostgreSQL refuses root) and runuser is not installed to run it as 'postgres'"
    return None


def _run(argv: list[str], cwd: Path) -> None:
    """One PostgreSQL command, as 'postgres' when we are root; its output in the error when it fails."""
    argv = (["runuser", "-u", "postgres", "--"] + argv) if AS_ROOT else argv
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_uri():
    """``postgresql://mlflow@127.0.0.1:PORT/mlflow`` on a server of our own, stopped at teardown."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    # Not under pytest's tmp_path: its parents are private to root, and the server runs as 'postgres'.
    directory = Path(tempfile.mkdtemp(prefix="compaug-pg-"))
    data, port = directory / "data", _free_port()
    try:
        if AS_ROOT:
            shutil.chown(directory, "postgres", "postgres")
        _run([str(PG_BIN / "initdb"), "-D", str(data), "-A", "trust", "-U", "mlflow"], directory)
        _run([str(PG_BIN / "pg_ctl"), "-D", str(data), "-w", "-l", str(directory / "log"),
              "-o", f"-c listen_addresses=127.0.0.1 -p {port} -k {directory}", "start"], directory)
        _run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", "mlflow", "-d", "postgres",
              "-c", "create database mlflow;"], directory)
        yield f"postgresql://mlflow@127.0.0.1:{port}/mlflow"
    finally:
        if (data / "postmaster.pid").exists():  # stops the server of this pid file, ours
            _run([str(PG_BIN / "pg_ctl"), "-D", str(data), "-w", "-m", "fast", "stop"], directory)
        shutil.rmtree(directory)


@pytest.fixture(scope="module")
def finished_run(prefect_harness, postgres_uri, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pg-loop")
    params = tiny_params(tmp, tracking_uri=postgres_uri, experiment="compaug-postgres")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(tmp)  # a database store keeps artifacts in ./mlruns of the working directory (MLflow's default)
        return params, augment_loop(params)


def test_check_tracking_passes_a_live_server_and_names_a_missing_database(postgres_uri):
    check_tracking(postgres_uri)
    missing = postgres_uri.rsplit("/", 1)[0] + "/no_such_db"
    with pytest.raises(ValueError, match=r'is not reachable: .*database "no_such_db" does not exist'):
        check_tracking(missing)


def test_parent_children_and_stepped_metrics_are_in_postgres(finished_run, postgres_uri):
    from mlflow.tracking import MlflowClient

    params, result = finished_run
    assert result["tracking_uri"] == postgres_uri
    client = MlflowClient(tracking_uri=postgres_uri)
    exp = client.get_experiment_by_name("compaug-postgres")
    runs = client.search_runs([exp.experiment_id])
    parents = [r for r in runs if "mlflow.parentRunId" not in r.data.tags]
    children = {r.data.tags["compaug.round"]: r for r in runs
                if r.data.tags.get("mlflow.parentRunId") == result["mlflow_run_id"]}
    assert [p.info.run_id for p in parents] == [result["mlflow_run_id"]]
    assert parents[0].info.status == "FINISHED" and parents[0].data.params["rounds"] == "2"
    assert sorted(children) == ["0", "1", "2"] and all(c.info.status == "FINISHED" for c in children.values())
    assert sorted(m.step for m in client.get_metric_history(result["mlflow_run_id"], "pool/size")) == [0, 1, 2]
    assert sorted(m.step for m in client.get_metric_history(result["mlflow_run_id"], "kept/total")) == [0, 1, 2]
    for round_name, child in children.items():
        assert sorted(m.step for m in client.get_metric_history(child.info.run_id, "epoch/train_loss")) == [1, 2]
        assert child.data.params["pool_size"] == str(result["rounds"][int(round_name)].pool_size)
    assert "rounds.json" in {a.path for a in client.list_artifacts(result["mlflow_run_id"])}


def test_the_rows_are_in_postgres_tables(finished_run, postgres_uri):
    """The same records read with plain SQL: they live in this server, not in a fallback store."""
    import psycopg2

    _, result = finished_run
    with psycopg2.connect(postgres_uri, connect_timeout=5) as connection, connection.cursor() as cursor:
        cursor.execute("select count(*) from tags where key = 'mlflow.parentRunId' and value = %s",
                       (result["mlflow_run_id"],))
        assert cursor.fetchone()[0] == 3  # a child per round, round 0 included
        cursor.execute("select step from metrics where run_uuid = %s and key = 'pool/size' order by step",
                       (result["mlflow_run_id"],))
        assert [row[0] for row in cursor.fetchall()] == [0, 1, 2]
    connection.close()
