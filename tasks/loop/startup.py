"""Starting runs that share an output folder: the tracking store is created by one process at a time,
and a run that must be refused (its run directory is in use, its data changed since it started) is
refused in one line before a Prefect flow run exists or an MLflow run changes status.

Two runs on one new ``--out`` share ``--out/mlflow.db``. MLflow creates a SQLite store's tables with
alembic migrations when a client first opens it; two processes doing so at once make one of them fail
(``alembic.util.exc.CommandError: Online migration expected to match one row``), and two creating the
same experiment at once make one fail on its unique name. :func:`tracking_client` opens the store and
:func:`prepare_experiment` creates the experiment under an exclusive lock on ``mlflow.db.lock`` beside
the database, so the second process waits for the first (seconds) and then finds both made.
"""
from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Iterator
from urllib.parse import unquote, urlparse


def sqlite_file(uri: str) -> Path | None:
    """The database file of a ``sqlite:///`` tracking URI; None for any other store (a server, PostgreSQL),
    which creates its own schema once."""
    if not uri.lower().startswith("sqlite:"):
        return None
    path = unquote(urlparse(uri).path)
    return Path(path) if path and path != "/:memory:" else None


@contextlib.contextmanager
def store_lock(uri: str) -> Iterator[None]:
    """Hold an exclusive lock on the SQLite store of ``uri`` (no lock for other stores). Blocking: the
    holder only creates tables or an experiment."""
    import fcntl

    database = sqlite_file(uri)
    if database is None:
        yield
        return
    database.parent.mkdir(parents=True, exist_ok=True)
    with open(database.with_name(database.name + ".lock"), "a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def tracking_client(uri: str):
    """An ``MlflowClient`` of ``uri``; its construction opens the store (and creates a new SQLite store's
    tables), which happens under :func:`store_lock`."""
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    from mlflow.tracking import MlflowClient

    with store_lock(uri):
        return MlflowClient(tracking_uri=uri)


def prepare_experiment(client, name: str, uri: str) -> str:
    """The id of experiment ``name``, created under :func:`store_lock` when missing."""
    from tasks.loop.tracking import ensure_experiment

    with store_lock(uri):
        return ensure_experiment(client, name, uri)


def lock_run(params):
    """Take the run directory's lock (held until the returned lock is closed; shared within a process) and
    refuse a resume whose data or split file changed: a :class:`~tasks.loop.rundir.RunRefused` in one line,
    before anything is written or tracked. The flow's own start (a deployment's run) needs no more: its
    tracker opens the store and experiment under the store lock itself."""
    from tasks.loop import rundir
    from tasks.loop.datasets import check_unchanged, source_fingerprint

    run_dir = params.run_dir()
    run_dir.mkdir(parents=True, exist_ok=True)
    held = rundir.lock(run_dir)
    try:
        if (run_dir / "data" / "report.json").exists():
            check_unchanged(run_dir / "data", source_fingerprint(params.data.spec(), params.split_file))
    except BaseException:
        held.close()
        raise
    return held


def claim_run(params):
    """What ``compaug run`` does before its flow starts: :func:`lock_run`, then create the tracking store and
    experiment (so that runs sharing an ``--out`` start safely). Each refusal is a ValueError in one line;
    nothing is tracked before it."""
    held = lock_run(params)
    try:
        uri = params.tracking()
        prepare_experiment(tracking_client(uri), params.experiment_name(), uri)
    except BaseException:
        held.close()
        raise
    return held
