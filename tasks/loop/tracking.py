"""MLflow records of a loop run: one parent run per run directory, one nested child run per round.

Everything goes through ``MlflowClient`` with explicit run ids, so parent and child metrics never
depend on which run happens to be "active". The ids live in ``run_dir/mlflow.json`` so that a
resumed run keeps adding rounds to the same parent and a retried round reuses its child.

Metric names carry a section prefix, so the MLflow UI groups its charts (tasks/loop/tracking_names.py):
``acc/`` (answer accuracy of validation and every test set: the headline), ``pool/``, ``kept/``,
``verify/``, ``reject/``, ``score/``, ``eval/`` (equation accuracy, invalid rate, relative gap),
``time/``; step = round, on the parent only. A round's child holds the per-epoch curves
``epoch/<name>`` (step = epoch, logged as each epoch ends, from the trainer's ``on_epoch``), its
answer accuracies ``acc/<set>`` (so the runs table has an accuracy per round) and, as parameters, what
differs between rounds (``round``, ``pool_size``, ``kept``, ``kept.<operator>``, ``best_epoch``), so
children compare. ``round_NN/metrics.json`` on disk keeps the ``RoundRecord`` (docs/loop.md maps the
earlier flat MLflow names to these).

Every round, round 0 included, has a child created when the round starts and ended when it ends
(FINISHED, or FAILED/KILLED when the round raised), so the child's duration is the round's wall
time. A retried round (a re-run after a failure) reopens the same child, counts the attempt in the
tag ``compaug.attempts`` and logs each (metric, step) the run does not hold yet: the first value logged
stays (``round_NN/epochs.json`` holds the retry's).
"""
from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from tasks.loop.tracking_names import (EXPERIMENT_KIND_TAG, MODEL_DEVELOPMENT, PARENT_COLOR, ROUND_COLORS, RUN_COLOR_TAG,
                                  VIEW_TAG, accuracy_metrics, child_run_name, epoch_metrics, round_metrics,
                                  round_params, runs_view)
from mwp.durable import write_json_durable
from solvers.base import EpochStats
from tasks.loop.record import RoundRecord

PARENT_TAG = "mlflow.parentRunId"
# MLflow's limits on one log_batch (mlflow/utils/validation.py): 1,000 metrics, 100 parameters.
MAX_METRICS_PER_BATCH, MAX_PARAMS_PER_BATCH = 1000, 100


def log_params(client, run_id: str, params: Mapping[str, str]) -> None:
    """Log the parameters in as few writes as MLflow allows (one a hundred), not one a parameter: each write
    is a transaction of the store (on SQLite, a commit to disk)."""
    from mlflow.entities import Param

    items = [Param(key, value) for key, value in params.items()]
    for start in range(0, len(items), MAX_PARAMS_PER_BATCH):
        client.log_batch(run_id, params=items[start:start + MAX_PARAMS_PER_BATCH])


def save_runs_view(client, experiment_id: str, operators: Sequence[str]) -> None:
    """Write (or widen) the experiment's saved runs view; a view that cannot be read is replaced."""
    def widened(current: str | None) -> str:
        try:
            earlier = json.loads(current or "{}")
        except ValueError:
            earlier = {}
        return json.dumps(runs_view(operators, earlier))

    set_experiment_tag(client, experiment_id, VIEW_TAG, widened)


def set_experiment_tag(client, experiment_id: str, key: str, value_of: Callable[[str | None], str],
                       tries: int = 3) -> None:
    """Set the experiment's tag ``key`` to ``value_of(its value now, None when missing)``. Processes that open runs
    of one experiment at once (a study's cells on Dask workers) can each find the tag missing and each insert it;
    the store refuses all inserts but the first (a unique key), and a refused one reads the tag again and updates
    it. A failure with the tag already there is not that race and is raised."""
    from mlflow.exceptions import MlflowException

    for attempt in range(tries):
        current = client.get_experiment(experiment_id).tags.get(key)
        try:
            client.set_experiment_tag(experiment_id, key, value_of(current))
            return
        except MlflowException:
            if current is not None or attempt == tries - 1:
                raise


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    else:
        out[prefix] = json.dumps(value) if isinstance(value, (list, tuple)) else str(value)


def local_artifact_root(tracking_uri: str) -> str | None:
    """Artifacts beside a local SQLite store (``<dir>/mlartifacts``), not in ``./mlruns`` of
    whatever directory the command ran in; a tracking server keeps its own artifact root."""
    if tracking_uri.startswith("sqlite:///"):
        return (Path(tracking_uri.removeprefix("sqlite:///")).parent / "mlartifacts").resolve().as_uri()
    return None


def ensure_experiment(client, name: str, tracking_uri: str) -> str:
    """The id of experiment ``name``, created (with a local artifact root) when missing, tagged as model
    development."""
    exp = client.get_experiment_by_name(name)
    if exp is None:
        return client.create_experiment(name, artifact_location=local_artifact_root(tracking_uri),
                                        tags={EXPERIMENT_KIND_TAG: MODEL_DEVELOPMENT})
    if EXPERIMENT_KIND_TAG not in exp.tags:  # an experiment made before the tag existed
        set_experiment_tag(client, exp.experiment_id, EXPERIMENT_KIND_TAG, lambda current: MODEL_DEVELOPMENT)
    return exp.experiment_id


# Every flow run of a resumed run directory, oldest first (flows/signals.py crashes the abandoned ones);
# set once a second flow run resumes it, so a run of one flow run shows only ``prefect.flow_run_id``.
FLOW_RUNS_TAG = "prefect.flow_run_ids"
REACHABLE_TIMEOUT_S = 5  # one bounded try: MLflow's own client retries an unreachable server for minutes


def check_tracking(uri: str, timeout: float = REACHABLE_TIMEOUT_S) -> None:
    """Fail fast, before any training, when the tracking server of ``uri`` cannot be reached: one
    request to an MLflow server's ``/health`` (``http(s)://``), one connection to a PostgreSQL store
    (``postgresql://``, ``postgresql+psycopg2://``), each bounded by ``timeout`` seconds. Other
    schemes (a local SQLite file, ...) have no server and pass. Raises ``ValueError`` in one line."""
    scheme = uri.partition("://")[0].lower() if "://" in uri else ""
    if scheme.split("+")[0] not in _known_store_schemes():
        raise ValueError(f"tracking URI {_without_password(uri)}: MLflow has no store for the scheme {scheme!r} (use "
                         "sqlite:///PATH, a folder, http(s)://HOST:PORT or postgresql://USER@HOST/DB)")
    if scheme in ("http", "https"):
        reason = _http_unreachable(uri.rstrip("/") + "/health", timeout)
    elif scheme.split("+")[0] in ("postgresql", "postgres"):
        reason = _postgres_unreachable("postgresql://" + uri.partition("://")[2], timeout)
    else:
        return
    if reason:
        raise ValueError(f"tracking server {_without_password(uri)} is not reachable: {' '.join(reason.split())}")


def _known_store_schemes() -> set[str]:
    """The URI schemes MLflow's tracking stores take (SQLAlchemy's dialects without their driver), and those of
    installed tracking-store plugins (the ``mlflow.tracking_store`` entry points)."""
    from importlib.metadata import entry_points

    builtin = {"", "file", "sqlite", "http", "https", "postgresql", "postgres", "mysql", "mssql", "databricks",
               "databricks-uc", "uc"}
    return builtin | {e.name.lower() for e in entry_points(group="mlflow.tracking_store")}


def _without_password(uri: str) -> str:
    """``scheme://user:***@host/...``: an error message is no place for a password."""
    return re.sub(r"^([a-z0-9+.-]+://[^:/@]*):[^@/]*@", r"\1:***@", uri, flags=re.IGNORECASE)


def _http_unreachable(url: str, timeout: float) -> str | None:
    """Why ``url`` (an MLflow server's ``/health``) gave no healthy answer, or None. 401 and 403 count
    as healthy: an authenticating proxy is for MLflow's client and its credentials to settle."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return None
    except urllib.error.HTTPError as err:
        if err.code in (401, 403):
            return None
        return f"GET /health answered HTTP {err.code} {err.reason}" + ("; is it an MLflow server?" if err.code < 500 else "")
    except urllib.error.URLError as err:  # refused, no such host, a connection that timed out
        return f"GET /health: {err.reason}"
    except OSError as err:  # a read that timed out, a reset connection
        return f"GET /health: {err or type(err).__name__}"


def _postgres_unreachable(dsn: str, timeout: float) -> str | None:
    import psycopg2

    try:
        psycopg2.connect(dsn, connect_timeout=max(1, round(timeout))).close()
    except psycopg2.Error as err:
        return str(err) or type(err).__name__
    return None


def accuracy_figure(records: Sequence[RoundRecord]):
    """Answer accuracy by round of validation and of every test set, each named and said what it is
    (and the pool's compound divergence to the compositional test set, when measured), with the pool
    size and the problems kept in the round on a second axis, as a matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    from tasks.loop.record import set_label

    fig, ax = plt.subplots(figsize=(7.5, 5.5))
    counts = ax.twinx()
    rounds = [r.round for r in records]
    counts.bar(rounds, [r.pool_size for r in records], width=0.6, color="0.85", label="pool size (right axis)")
    counts.bar(rounds, [r.generation.kept if r.generation else 0 for r in records], width=0.3, color="0.55",
               label="kept this round (right axis)")
    counts.set_ylabel("problems (pool, kept)")
    ax.set_zorder(counts.get_zorder() + 1)  # lines over the bars
    ax.patch.set_visible(False)
    valid = [(r.round, r.valid_answer_acc) for r in records if r.valid_answer_acc is not None]
    if valid:
        ax.plot(*zip(*valid), marker="s", linestyle=":", color="black", label=set_label("valid"))
    for name in sorted({name for r in records for name in r.tests}):
        pts = [(r.round, r.tests[name].answer_acc) for r in records if name in r.tests]
        ax.plot(*zip(*pts), marker="o", label=set_label(name))
    divergence = [(r.round, r.compound_divergence) for r in records if r.compound_divergence is not None]
    if divergence:
        ax.plot(*zip(*divergence), linestyle="--", marker="x", color="gray", label="DBCA^c divergence, pool -> test")
    for axis in (ax, counts):
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("round (0: before augmentation)")
    ax.set_ylabel("answer accuracy" + (" / compound divergence" if divergence else ""))
    ax.set_ylim(0, 1.02)  # the whole scale: a change of 0.01 looks like one
    ax.set_title("Answer accuracy by round")
    ax.grid(alpha=0.3)
    handles = [h for a in (ax, counts) for h in a.get_legend_handles_labels()[0]]
    if handles:
        ax.legend(handles=handles, fontsize="small", loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    fig.tight_layout()
    return fig


class LoopTracker:
    def __init__(self, client, experiment_id: str, parent_run_id: str, state_path: Path, state: dict,
                 operators: Sequence[str] = ()):
        self.client = client
        self.operators = tuple(operators)  # round 0's per-operator counts are 0 under these names
        self.experiment_id = experiment_id
        self.parent_run_id = parent_run_id
        self.state_path = state_path
        self.state = state
        # (key, step) already logged on each reopened run: a round that is redone (its marker was
        # unreadable, or it failed after logging) reopens its child and logs each value once.
        self.logged: dict[str, set[tuple[str, int]]] = {}

    @classmethod
    def open(cls, tracking_uri: str, experiment: str, run_dir: Path, params: Mapping[str, Any],
             flow_run_id: str | None, run_name: str) -> "LoopTracker":
        from tasks.loop.startup import prepare_experiment, tracking_client

        client = tracking_client(tracking_uri)  # a new SQLite store is created by one process at a time
        state_path = run_dir / "mlflow.json"
        state = json.loads(state_path.read_text()) if state_path.exists() else {}
        experiment_id = prepare_experiment(client, experiment, tracking_uri)
        parent = state.get("parent_run_id") if state.get("tracking_uri") == tracking_uri else None
        if parent:
            client.update_run(parent, status="RUNNING")
            tags = client.get_run(parent).data.tags
            ids = [i for i in tags.get(FLOW_RUNS_TAG, tags.get("prefect.flow_run_id", "")).split(",") if i]
            if flow_run_id and flow_run_id not in ids:
                client.set_tag(parent, FLOW_RUNS_TAG, ",".join([*ids, flow_run_id]))
        else:
            tags = {"compaug.run_dir": str(run_dir.resolve()), RUN_COLOR_TAG: PARENT_COLOR}
            if params.get("mlflow_parent_run_id"):  # a study's cell: nested under the study's run
                tags[PARENT_TAG] = params["mlflow_parent_run_id"]
            run = client.create_run(experiment_id, run_name=run_name, tags=tags)
            parent = run.info.run_id
            flat: dict[str, str] = {}
            _flatten("", params, flat)
            log_params(client, parent, {key: value[:6000] for key, value in flat.items()})
            state = {"tracking_uri": tracking_uri, "experiment_id": experiment_id, "parent_run_id": parent,
                     "children": {}}
        if flow_run_id:
            client.set_tag(parent, "prefect.flow_run_id", flow_run_id)
        # Parameters are logged once; a continued run may ask for more rounds than it started with.
        client.set_tag(parent, "compaug.rounds_requested", str(params.get("rounds")))
        operators = (params.get("augment") or {}).get("operators") or []
        save_runs_view(client, experiment_id, operators)
        tracker = cls(client, experiment_id, parent, state_path, state, operators)
        if state.get("children"):  # a continued run: its parent already holds metrics
            tracker.logged[parent] = logged_steps(client, parent)
        tracker._save()
        return tracker

    def _save(self) -> None:
        write_json_durable(self.state_path, self.state, indent=2)

    def _log_metrics(self, run_id: str, values: Mapping[str, float], step: int) -> None:
        """Log each value unless the run already holds a value of its key at ``step`` (then the first one
        stays): one write to the store for all of them (MLflow's log_batch), not one a metric."""
        from mlflow.entities import Metric

        logged = self.logged.get(run_id, ())
        timestamp = int(time.time() * 1000)
        metrics = [Metric(key, value, timestamp, step) for key, value in values.items() if (key, step) not in logged]
        for start in range(0, len(metrics), MAX_METRICS_PER_BATCH):
            self.client.log_batch(run_id, metrics=metrics[start:start + MAX_METRICS_PER_BATCH])

    def start_round(self, round_index: int, flow_run_id: str | None) -> str:
        """The child run of a round, created as the round starts; a retried round reopens its child."""
        key = str(round_index)
        child = self.state["children"].get(key)
        if child:
            self.client.update_run(child, status="RUNNING")
            attempts = int(self.client.get_run(child).data.tags.get("compaug.attempts", "1")) + 1
            self.client.set_tag(child, "compaug.attempts", str(attempts))
            self.logged[child] = logged_steps(self.client, child)
            return child
        parent_name = self.client.get_run(self.parent_run_id).info.run_name
        run = self.client.create_run(self.experiment_id, run_name=child_run_name(parent_name, round_index),
                                     tags={PARENT_TAG: self.parent_run_id, "compaug.round": key,
                                           "compaug.attempts": "1", "prefect.flow_run_id": flow_run_id or "",
                                           RUN_COLOR_TAG: ROUND_COLORS[round_index % len(ROUND_COLORS)]})
        self.state["children"][key] = run.info.run_id
        self._save()
        return run.info.run_id

    def log_epoch(self, round_index: int, stats: EpochStats) -> None:
        """One epoch's metrics on the round's child, step = epoch, as the epoch ends."""
        child = self.state["children"][str(round_index)]
        self._log_metrics(child, epoch_metrics(stats), stats.epoch)

    def log_round(self, record: RoundRecord, kept_sample: list[dict] | None) -> None:
        """The round's sectioned metrics on the parent (step = round); on its child, the answer
        accuracies (step = round), what differs between rounds as parameters, and ``metrics.json``
        (the record) and ``kept_sample.json`` (empty where the round kept nothing) at the same path
        in every child, so children compare."""
        round_index = record.round
        child = self.state["children"][str(round_index)]
        self._log_metrics(self.parent_run_id, round_metrics(record, self.operators), round_index)
        self._log_metrics(child, accuracy_metrics(record), round_index)
        self._log_params_once(child, round_params(record, self.operators))
        self.client.log_dict(child, record.to_dict(), "metrics.json")
        if record.precision is not None:
            self.client.set_tag(child, "compaug.precision", record.precision)
        self.client.log_dict(child, {"kept_sample": kept_sample or []}, "kept_sample.json")

    def log_adopted_round(self, record: RoundRecord, epochs: Sequence[EpochStats], source: str) -> None:
        """A round this run adopted from another run directory (a study's shared round 0,
        tasks/loop/round_zero.py) logged as if trained here: its child with its epochs and numbers, tagged
        ``compaug.adopted_from`` with the source."""
        child = self.start_round(record.round, None)
        self.client.set_tag(child, "compaug.adopted_from", source)
        for stats in epochs:
            self.log_epoch(record.round, stats)
        self.log_round(record, None)
        self.end_round(record.round)

    def _log_params_once(self, run_id: str, params: Mapping[str, str]) -> None:
        """Parameters are write-once in MLflow: a retried round logs the ones it has not, and a value
        that differs from its first try goes to the tag ``compaug.retry.<key>`` instead."""
        logged = self.client.get_run(run_id).data.params
        log_params(self.client, run_id, {key: value for key, value in params.items() if key not in logged})
        for key, value in params.items():
            if key in logged and logged[key] != value:
                self.client.set_tag(run_id, f"compaug.retry.{key}", value)

    def end_round(self, round_index: int, status: str = "FINISHED") -> None:
        self.client.set_terminated(self.state["children"][str(round_index)], status)

    def log_plot(self, records: Sequence[RoundRecord]) -> None:
        import matplotlib.pyplot as plt

        fig = accuracy_figure(records)
        self.client.log_figure(self.parent_run_id, fig, "accuracy_by_round.png")
        plt.close(fig)

    def log_final(self, checkpoint_dir: Path, records: Sequence[RoundRecord]) -> None:
        self.client.log_artifacts(self.parent_run_id, str(checkpoint_dir), "final_solver")
        self.client.log_dict(self.parent_run_id, {"rounds": [r.to_dict() for r in records]}, "rounds.json")

    def log_control(self, control: RoundRecord, last_round: int) -> None:
        """The equal-update control's accuracies on the parent (``control/acc/<set>``, at the last
        round's step, beside ``acc/<set>``) and its record as ``control.json``."""
        values = {f"control/acc/{name}": round(m.answer_acc, 4) for name, m in control.tests.items()}
        if control.valid_answer_acc is not None:
            values["control/acc/valid"] = round(control.valid_answer_acc, 4)
        self._log_metrics(self.parent_run_id, values, last_round)
        self.client.log_dict(self.parent_run_id, control.to_dict(), "control.json")

    def finish(self, status: str = "FINISHED") -> None:
        """End the parent run; a failure or a stop (KILLED) also ends any child run it left open."""
        if status != "FINISHED":
            end_open_runs_below(self.client, self.experiment_id, self.parent_run_id, status)
        self.client.set_terminated(self.parent_run_id, status)


def release_interrupted_write(client, err: BaseException) -> None:
    """Let go of what a write of this process that ``err`` interrupted still holds on ``client``'s store.

    A stop (Ctrl-C, SIGTERM: a KeyboardInterrupt raised between two instructions) that lands inside an MLflow
    write to SQLite can leave that write's transaction open, holding the database's write lock: SQLAlchemy
    invalidates the connection, but a statement the unwinding frames still reference keeps it open, or the
    connection goes back to the pool mid-transaction. The writes that end the runs KILLED then wait MLflow's
    20 s busy timeout and fail ("database is locked"; seen in the test suite under load, and made every time by
    interrupting a commit: tests/tasks/loop/test_tracking.py). So the finished frames of ``err``'s traceback
    (and of the exceptions it chains) drop their locals, the garbage collector finalizes what they held, and
    the store's connection pool is replaced: its connections close, and closing ends an open transaction.
    Frames still running and generator frames are left alone; a store without an SQLAlchemy engine (a
    tracking server) only has its frames cleared."""
    import gc
    import inspect

    seen: set[int] = set()
    while err is not None and id(err) not in seen:
        seen.add(id(err))
        tb = err.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if not frame.f_code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
                try:
                    frame.clear()
                except RuntimeError:  # still running: this function's callers
                    pass
            tb = tb.tb_next
        err = err.__cause__ or err.__context__
    gc.collect()
    engine = getattr(getattr(getattr(client, "_tracking_client", None), "store", None), "engine", None)
    if engine is not None:
        engine.dispose()


def end_after_error(end, what: str, stop: BaseException | None = None, client=None) -> str | None:
    """Runs ``end`` (marking MLflow runs FAILED or KILLED while an error or a stop unwinds), after
    :func:`release_interrupted_write` of ``stop`` on ``client``'s store when the run is being stopped. A tracking store
    that fails then (an SQLite database another connection holds locked, a server gone) must not replace
    the error being raised: the stop would end as a crash. Returns the message to warn with, None when
    ``end`` succeeded; the run dir stays the record, and resuming the run ends its MLflow run."""
    try:
        if stop is not None and client is not None:
            release_interrupted_write(client, stop)
        end()
    except Exception as err:  # noqa: BLE001: any store failure; the error already unwinding is the one to raise
        return f"compaug: {what} could not be marked in MLflow ({type(err).__name__}: {err}); it stays RUNNING there"
    return None


def logged_steps(client, run_id: str) -> set[tuple[str, int]]:
    """Every (metric key, step) the run holds a value for."""
    keys = client.get_run(run_id).data.metrics
    return {(key, m.step) for key in keys for m in client.get_metric_history(run_id, key)}


def end_open_runs_below(client, experiment_id: str, run_id: str, status: str) -> None:
    """Set ``status`` on every run nested below ``run_id`` (at any depth) that is still RUNNING: what a
    failure or a stop left open, e.g. the cells of a study whose Dask workers were stopped."""
    below = client.search_runs([experiment_id], f"tags.`{PARENT_TAG}` = '{run_id}' and attributes.status = 'RUNNING'")
    for run in below:
        end_open_runs_below(client, experiment_id, run.info.run_id, status)
        client.set_terminated(run.info.run_id, status)
