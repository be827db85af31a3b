"""What a loop run's records are called and how they read in MLflow's UI: the sectioned metric names
of a round and of an epoch, the round parameters of a child run, run names and colours, the saved
runs view and the UI's links. Pure: no MLflow import (tasks/loop/tracking.py logs them)."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from solvers.base import EpochStats
from tasks.loop.record import Generation, RoundRecord

# What the experiment is: model development, not GenAI. MLflow 3.17.2's UI picks its mode from the URL's
# ``workflowType`` or the browser's stored choice before this tag, so ``ui_urls`` carry the mode too.
EXPERIMENT_KIND_TAG, MODEL_DEVELOPMENT = "mlflow.experimentKind", "custom_model_development"
EPOCH_PREFIX = "epoch/"
# EpochStats field -> epoch metric name (the key says what was timed: the training pass alone)
EPOCH_METRICS = {"train_loss": "train_loss", "seconds": "train_seconds", "valid_answer_acc": "valid_answer_acc",
                 "valid_equation_acc": "valid_equation_acc", "valid_loss": "valid_loss",
                 "captures": "captures", "capture_seconds": "capture_seconds"}  # the last two: step graphed only
# The learning rate in thousandths: MLflow's chart draws a flat 0.001 as 0 on a +-0.5 axis, 1.0 reads as itself.
LR_METRIC, LR_SCALE = "epoch/lr_x1000", 1000.0


def epoch_metrics(stats: EpochStats) -> dict[str, float]:
    """One epoch's numbers under their ``epoch/`` keys; an epoch without validation has no accuracies."""
    values = {EPOCH_PREFIX + name: getattr(stats, field) for field, name in EPOCH_METRICS.items()}
    values[LR_METRIC] = stats.lr * LR_SCALE if stats.lr is not None else None
    return {key: float(f"{value:.5g}") for key, value in values.items() if value is not None}  # 0.6667, not 0.66666...


def accuracy_metrics(record: RoundRecord) -> dict[str, float]:
    """The round's answer accuracies, ``acc/valid`` then ``acc/<test set>``: the headline numbers."""
    out = {"acc/valid": record.valid_answer_acc} if record.valid_answer_acc is not None else {}
    out.update({f"acc/{name}": m.answer_acc for name, m in sorted(record.tests.items())})
    return {k: _shown(v) for k, v in out.items() if v == v}  # NaN is not a metric


def _shown(value: float) -> float:
    """Four decimals: the runs table prints a value as stored (0.48958333...); metrics.json keeps it whole."""
    return round(float(value), 4)


def round_metrics(record: RoundRecord, operators: Sequence[str] = ()) -> dict[str, float]:
    """Every number of a round under its sectioned MLflow name (the parent's metrics, step = round).
    Counts of what a round without augmentation did not do (round 0's candidates, kept, and per
    operator of ``operators``) are 0, so the count charts start at round 0; a score that round 0 has
    none of (confidence) and rejection reasons (known only once candidates exist) are left out."""
    out: dict[str, Any] = dict(accuracy_metrics(record))
    for name, m in sorted(record.tests.items()):
        out[f"eval/{name}_equation_acc"] = m.equation_acc
        out[f"eval/{name}_invalid_rate"] = m.invalid_rate
    out["eval/relative_gap"] = record.relative_gap
    out["pool/size"] = record.pool_size
    out["pool/compound_divergence"] = record.compound_divergence
    g = record.generation
    out["verify/candidates"] = g.candidates if g else 0
    out["verify/verified"] = g.verified if g else 0
    out["kept/total"] = g.kept if g else 0
    if not g:
        out.update({f"{section}/{op}": 0 for op in operators for section in ("verify", "kept")})
        out["kept/origins"] = 0 if operators else None
    else:
        out.update({f"verify/{op}": n for op, n in g.verified_by_operator.items()})
        out.update({f"kept/{op}": n for op, n in _kept_by_operator(g).items()})
        out.update({f"reject/{reason}": n for reason, n in g.rejected.items()})
        out.update({"kept/origins": g.kept_origins, "score/unscorable": g.unscorable,
                    "score/confidence_mean": g.confidence_mean, "score/confidence_cut": g.confidence_cut})
    out["time/train_seconds"] = record.train_seconds
    out["time/round_seconds"] = record.round_seconds
    return {k: _shown(v) for k, v in out.items() if v is not None and v == v}


def _kept_by_operator(g: Generation) -> dict[str, int]:
    """Kept problems of every operator that made verified ones, 0 included (a chart and a column each)."""
    return {op: g.kept_by_operator.get(op, 0) for op in {**g.verified_by_operator, **g.kept_by_operator}}


def round_params(record: RoundRecord, operators: Sequence[str] = ()) -> dict[str, str]:
    """What differs between rounds, as parameters of the round's child (the compare view lines them up);
    a round without augmentation kept 0 of each of ``operators``."""
    g = record.generation
    out = {"round": record.round, "pool_size": record.pool_size, "kept": g.kept if g else 0,
           "best_epoch": record.best_epoch if record.best_epoch is not None else "-"}
    kept = _kept_by_operator(g) if g else dict.fromkeys(operators, 0)
    out.update({f"kept.{op}": n for op, n in sorted(kept.items())})
    return {k: str(v) for k, v in out.items()}


def loop_run_name(params: Mapping[str, Any], fingerprint: str) -> str:
    """The parent's name in the runs table: solver, operators, seed, then the parameter hash that tells
    runs apart (short words first, so a narrow column still shows what differs)."""
    solver = (params.get("solver") or {}).get("name", "?")
    operators = "+".join((params.get("augment") or {}).get("operators") or []) or "no-ops"
    return f"{solver} {operators} s{params.get('seed', '?')} {fingerprint}"


# A saved view of the runs table (MLflow's "share view": an experiment tag the URL names). Sorted by run
# name, the table lists each run's parent and then its rounds, flat and in order (a child's name is its
# parent's plus ``round-NN``); the columns are the accuracies and what differs between rounds, so a
# researcher reads rounds without picking columns.
VIEW_KEY = "compaug-rounds"
VIEW_TAG = "mlflow.sharedViewState." + VIEW_KEY


def runs_view(operators: Sequence[str], earlier: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The view's state: sort, columns (every known set's ``acc/``, the round parameters, those of
    ``earlier`` views of this experiment kept, e.g. another run's operators) and the name column's width."""
    from tasks.loop.record import SET_LABELS

    columns = [f"metrics.`acc/{name}`" for name in SET_LABELS]
    columns += ["params.`round`", "params.`pool_size`", "params.`kept`"]
    columns += [f"params.`kept.{op}`" for op in operators]
    columns += [c for c in (earlier or {}).get("selectedColumns", []) if c not in columns]
    return {"orderByKey": "tags.`mlflow.runName`", "orderByAsc": True, "selectedColumns": columns,
            "columnOrder": ["attributes.`Run Name`"], "columnWidths": {"attributes.`Run Name`": 340},
            "hideEmptyCharts": True}


# Round r's colour in MLflow's tables and charts (the UI's own colour tag; otherwise it hashes the run
# id and two rounds can share a colour): matplotlib's tab10, one after another; the parent in dark grey.
RUN_COLOR_TAG = "mlflow.runColor"
ROUND_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
                "#17becf")
PARENT_COLOR = "#333333"


def child_run_name(parent_name: str, round_index: int) -> str:
    """``<parent's name> round-NN``: sorted by name, a run's rounds follow it in order."""
    return f"{parent_name} round-{round_index:02d}"


def ui_urls(server: str, experiment_id: str, run_id: str) -> tuple[str, str]:
    """The MLflow UI's runs table of the experiment (in its saved view, model-training mode) and the
    parent run's page, under ``server``."""
    base = f"{server.rstrip('/')}/#/experiments/{experiment_id}"
    return (f"{base}/runs?workflowType=machine_learning&viewStateShareKey={VIEW_KEY}",
            f"{base}/runs/{run_id}?workflowType=machine_learning")
