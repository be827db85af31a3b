"""Prefect flows that write DBCA splits (``split_flow``) and the synthetic SD set (``sd_flow``).

Thin shell over tasks/dbca/: the flows validate their parameters (``SplitParams``, ``SDParams`` in
flows/params.py, light enough for the CLI's parser), compose the tasks of
tasks/dbca/steps.py (which write the files) and log one MLflow run each (SQLite store under the output
directory unless ``MLFLOW_TRACKING_URI`` is set).
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from prefect import flow, get_run_logger
from prefect.runtime import flow_run

from flows.params import SDParams, SplitParams
from tasks.dbca.steps import load_problems, make_split, synthesize, write_sd, write_split

EXPERIMENT = "compaug-split"


def _tracking(out_dir: Path) -> None:
    import mlflow

    from mlflow.tracking import MlflowClient

    from tasks.loop.tracking import ensure_experiment

    uri = os.environ.get("MLFLOW_TRACKING_URI") or f"sqlite:///{out_dir.resolve() / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    ensure_experiment(MlflowClient(tracking_uri=uri), EXPERIMENT, uri)
    mlflow.set_experiment(EXPERIMENT)


@flow(name="split")
def split_flow(params: SplitParams) -> dict:
    """Load, split (ComDiv or I.I.D.), write the split file(s), log to MLflow. Returns the document
    written to ``params.out`` plus ``files`` and ``mlflow_run_id``."""
    import mlflow

    config = params.config()
    problems = load_problems(params.format, params.path)
    choice = make_split(problems, config, params.method, params.k, params.ks, params.window,
                        params.max_compound_depth, params.k_rule)
    files = write_split(problems, choice, params.out, params.method, params.model_dump(), config,
                        params.max_compound_depth)
    result = choice.result
    _tracking(Path(params.out).parent)
    with mlflow.start_run(run_name=f"{params.method}-{params.format}") as run:
        mlflow.set_tag("prefect.flow_run_id", str(flow_run.get_id()))
        mlflow.log_params({key: str(value) for key, value in params.model_dump().items()})
        mlflow.log_param("k_used", choice.clusters.k)
        mlflow.log_metrics({"atom_divergence": result.atom_divergence, "compound_divergence": result.compound_divergence,
                            "initial_compound_divergence": result.initial_compound_divergence,
                            "swaps": result.swaps, "n_train": len(result.train), "n_test": len(result.test)})
        for snap in result.snapshots:
            mlflow.log_metric("snapshot_compound_divergence", snap.compound_divergence, step=snap.swaps)
        for path in files:
            mlflow.log_artifact(path)
    document = json.loads(Path(params.out).read_text(encoding="utf-8"))
    get_run_logger().info("split: %s", document["stats"])
    return {**document, "files": files, "mlflow_run_id": run.info.run_id}


@flow(name="sd")
def sd_flow(params: SDParams) -> dict:
    """Build SD from one data set; write train.jsonl, test.jsonl and split.json (with the Table-3
    row and the structural/lexical label of every test problem); log to MLflow."""
    import mlflow

    problems = load_problems(params.format, params.path)
    sd = synthesize(problems)
    document = write_sd(sd, params.out, params.model_dump(), params.k, params.seed)
    out = Path(params.out)
    stats = document["stats"]
    _tracking(out)
    with mlflow.start_run(run_name=f"sd-{params.format}") as run:
        mlflow.set_tag("prefect.flow_run_id", str(flow_run.get_id()))
        mlflow.log_params({key: str(value) for key, value in params.model_dump().items()})
        mlflow.log_metrics({"n_train": len(sd.train), "n_test": len(sd.test),
                            **{k: v for k, v in stats.items() if k in ("atom_divergence", "compound_divergence")}})
        mlflow.log_artifact(str(out / "split.json"))
    return {**document, "mlflow_run_id": run.info.run_id}
