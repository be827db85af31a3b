"""MLflow records of a loop run: one parent run per run directory, one nested child run per round.

Everything goes through ``MlflowClient`` with explicit run ids, so parent and child metrics never
depend on which run happens to be "active". The ids live in ``run_dir/mlflow.json`` so that a
resumed run keeps adding rounds to the same parent and a retried round reuses its child.

Two kinds of metric, never under one key (one key, one step axis):

- round metrics, the names of ``RoundRecord.metrics()`` (``pool_size``, ``kept``, ``valid_answer_acc``,
  ``<set>_answer_acc``, ``train_seconds``, ...), step = round, on the parent and on the round's child;
- epoch metrics, ``epoch/<name>`` (``epoch/train_loss``, ``epoch/train_seconds``,
  ``epoch/valid_answer_acc``, ``epoch/valid_equation_acc``, ``epoch/lr``), step = epoch, on the round's
  child only, logged when the epoch ends (the trainer's ``on_epoch``), not when the round does.

Every round, round 0 included, has a child created when the round starts and ended when it ends
(FINISHED, or FAILED/KILLED when the round raised), so the child's duration is the round's wall
time. A retried round (a re-run after a failure) reopens the same child, counts the attempt in the
tag ``compaug.attempts`` and logs its epochs again: MLflow keeps both points at each epoch step
(the later ones are the retry's; ``round_NN/epochs.json`` holds only the retry's).
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping, Sequence

from mwp.durable import write_json_durable
from solvers.base import EpochStats
from tasks.loop.record import RoundRecord

PARENT_TAG = "mlflow.parentRunId"
EPOCH_PREFIX = "epoch/"
# EpochStats field -> epoch metric name (the key says what was timed: the training pass alone)
EPOCH_METRICS = {"train_loss": "train_loss", "seconds": "train_seconds", "valid_answer_acc": "valid_answer_acc",
                 "valid_equation_acc": "valid_equation_acc", "lr": "lr"}


def epoch_metrics(stats: EpochStats) -> dict[str, float]:
    """One epoch's numbers under their ``epoch/`` keys; an epoch without validation has no accuracies."""
    values = {EPOCH_PREFIX + name: getattr(stats, field) for field, name in EPOCH_METRICS.items()}
    return {key: float(value) for key, value in values.items() if value is not None}


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
    """The id of experiment ``name``, created (with a local artifact root) when missing."""
    exp = client.get_experiment_by_name(name)
    if exp is not None:
        return exp.experiment_id
    return client.create_experiment(name, artifact_location=local_artifact_root(tracking_uri))


REACHABLE_TIMEOUT_S = 5  # one bounded try: MLflow's own client retries an unreachable server for minutes


def check_tracking(uri: str, timeout: float = REACHABLE_TIMEOUT_S) -> None:
    """Fail fast, before any training, when the tracking server of ``uri`` cannot be reached: one
    request to an MLflow server's ``/health`` (``http(s)://``), one connection to a PostgreSQL store
    (``postgresql://``, ``postgresql+psycopg2://``), each bounded by ``timeout`` seconds. Other
    schemes (a local SQLite file, ...) have no server and pass. Raises ``ValueError`` in one line."""
    scheme = uri.partition("://")[0].lower()
    if scheme in ("http", "https"):
        reason = _http_unreachable(uri.rstrip("/") + "/health", timeout)
    elif scheme.split("+")[0] in ("postgresql", "postgres"):
        reason = _postgres_unreachable("postgresql://" + uri.partition("://")[2], timeout)
    else:
        return
    if reason:
        raise ValueError(f"tracking server {_without_password(uri)} is not reachable: {' '.join(reason.split())}")


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
    """Answer accuracy of every evaluated set by round (and the pool's compound divergence to the
    compositional test set, when measured), as a matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(6.5, 4))
    names = sorted({name for r in records for name in r.tests})
    for name in names:
        pts = [(r.round, r.tests[name].answer_acc) for r in records if name in r.tests]
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    divergence = [(r.round, r.compound_divergence) for r in records if r.compound_divergence is not None]
    if divergence:
        ax.plot([p[0] for p in divergence], [p[1] for p in divergence], linestyle="--", marker="x", color="gray",
                label="DBCA^c pool -> test")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("round")
    ax.set_ylabel("answer accuracy / divergence")
    ax.set_title("Answer accuracy by round")
    ax.grid(alpha=0.3)
    if names or divergence:
        ax.legend(fontsize="small")
    fig.tight_layout()
    return fig


class LoopTracker:
    def __init__(self, client, experiment_id: str, parent_run_id: str, state_path: Path, state: dict):
        self.client = client
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
            previous = client.get_run(parent).data.tags.get("prefect.flow_run_ids", "")
            client.set_tag(parent, "prefect.flow_run_ids", ",".join(filter(None, [previous, flow_run_id or ""])))
        else:
            tags = {"prefect.flow_run_ids": flow_run_id or "", "compaug.run_dir": str(run_dir)}
            if params.get("mlflow_parent_run_id"):  # a study's cell: nested under the study's run
                tags[PARENT_TAG] = params["mlflow_parent_run_id"]
            run = client.create_run(experiment_id, run_name=run_name, tags=tags)
            parent = run.info.run_id
            flat: dict[str, str] = {}
            _flatten("", params, flat)
            for key, value in flat.items():
                client.log_param(parent, key, value[:6000])
            state = {"tracking_uri": tracking_uri, "experiment_id": experiment_id, "parent_run_id": parent,
                     "children": {}}
        if flow_run_id:
            client.set_tag(parent, "prefect.flow_run_id", flow_run_id)
        # Parameters are logged once; a continued run may ask for more rounds than it started with.
        client.set_tag(parent, "compaug.rounds_requested", str(params.get("rounds")))
        tracker = cls(client, experiment_id, parent, state_path, state)
        if state.get("children"):  # a continued run: its parent already holds metrics
            tracker.logged[parent] = logged_steps(client, parent)
        tracker._save()
        return tracker

    def _save(self) -> None:
        write_json_durable(self.state_path, self.state, indent=2)

    def _log_metric(self, run_id: str, key: str, value: float, step: int) -> None:
        """Log unless the run already holds a value of ``key`` at ``step`` (then the first one stays)."""
        if (key, step) not in self.logged.get(run_id, ()):
            self.client.log_metric(run_id, key, value, step=step)

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
        run = self.client.create_run(self.experiment_id, run_name=f"round-{round_index}",
                                     tags={PARENT_TAG: self.parent_run_id, "compaug.round": key,
                                           "compaug.attempts": "1", "prefect.flow_run_id": flow_run_id or ""})
        self.state["children"][key] = run.info.run_id
        self._save()
        return run.info.run_id

    def log_epoch(self, round_index: int, stats: EpochStats) -> None:
        """One epoch's metrics on the round's child, step = epoch, as the epoch ends."""
        child = self.state["children"][str(round_index)]
        for key, value in epoch_metrics(stats).items():
            self._log_metric(child, key, value, stats.epoch)

    def log_round(self, record: RoundRecord, kept_sample: list[dict] | None) -> None:
        """The round's numbers on the parent and on its child, step = round; its record (and, for
        rounds 1..T, a sample of the kept problems) as artifacts of the child."""
        round_index = record.round
        child = self.state["children"][str(round_index)]
        for key, value in record.metrics().items():
            if value == value:  # NaN is not a metric
                self._log_metric(self.parent_run_id, key, value, round_index)
                self._log_metric(child, key, value, round_index)
        self.client.log_dict(child, record.to_dict(), f"round_{round_index:02d}/metrics.json")
        if record.precision is not None:
            self.client.set_tag(child, "compaug.precision", record.precision)
        if kept_sample is not None:
            self.client.log_dict(child, {"kept_sample": kept_sample}, f"round_{round_index:02d}/kept_sample.json")

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

    def finish(self, status: str = "FINISHED") -> None:
        """End the parent run; a failure or a stop (KILLED) also ends any child run it left open."""
        if status != "FINISHED":
            end_open_runs_below(self.client, self.experiment_id, self.parent_run_id, status)
        self.client.set_terminated(self.parent_run_id, status)


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
