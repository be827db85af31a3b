"""Prefect flows that write DBCA splits (``split_flow``) and the synthetic SD set (``sd_flow``).

Thin shell over tasks/dbca/: the flows validate their parameters, compose the tasks of
tasks/dbca/steps.py (which write the files) and log one MLflow run each (SQLite store under the output
directory unless ``MLFLOW_TRACKING_URI`` is set).
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated, Literal, Optional, Union

from prefect import flow, get_run_logger
from prefect.runtime import flow_run
from pydantic import BaseModel, ConfigDict, Field, PositiveInt, model_validator

from mwp.readers import FORMATS, check_source_path
from tasks.dbca.atoms import DEFAULT_KS, DEFAULT_MAX_DEPTH, DEFAULT_WINDOW, K_RULES
from tasks.dbca.splitter import SPLIT_METHODS, SplitConfig
from tasks.dbca.steps import load_problems, make_split, synthesize, write_sd, write_split

EXPERIMENT = "compaug-split"


def _readable_source(fmt: str, path: Optional[str]) -> None:
    """Checked when the parameters are validated, before any work: the data file exists."""
    if fmt != "builtin" and not path:
        raise ValueError(f"format {fmt!r} needs a data file")
    if fmt == "builtin" and path:
        raise ValueError("the builtin corpus is generated, it takes no path")
    if path:
        try:
            check_source_path(fmt, path)
        except FileNotFoundError as err:  # a ValueError, so that pydantic reports it
            raise ValueError(str(err)) from err


class SplitParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal[FORMATS] = Field(description="dataset format (mwp.readers.FORMATS)")
    path: Optional[str] = Field(None, description="dataset file (none for builtin)")
    method: Literal[SPLIT_METHODS] = "comdiv"
    out: str = Field(description="split file (JSON) to write")
    k: Union[Literal["auto"], PositiveInt] = Field("auto", description="quantity clusters; auto picks from ks")
    ks: list[PositiveInt] = Field(default_factory=lambda: list(DEFAULT_KS), min_length=1)
    k_rule: Literal[K_RULES] = Field("gain", description="auto k: highest gain over I.I.D., or highest DBCA^c")
    min_compound_examples: PositiveInt = Field(2, description="compounds held by fewer pool examples are left out")
    group_moves: bool = True
    window: PositiveInt = DEFAULT_WINDOW
    max_compound_depth: Optional[PositiveInt] = DEFAULT_MAX_DEPTH
    test_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    seed: int = 0
    atom_alpha: float = Field(0.5, gt=0.0, lt=1.0)
    compound_alpha: float = Field(0.1, gt=0.0, lt=1.0)
    max_atom_divergence: float = Field(0.02, ge=0.0, le=1.0)
    target_divergences: list[Annotated[float, Field(ge=0.0, le=1.0)]] = Field(
        default_factory=list, description="stop/snapshot points of DBCA^c (a divergence lies in [0, 1])")
    max_iterations: PositiveInt = 100_000
    candidates: int = Field(0, ge=0, description="candidates scored per side and swap; 0 = all")
    tries: PositiveInt = 100
    progress: bool = True

    @model_validator(mode="after")
    def _source(self) -> "SplitParams":
        _readable_source(self.format, self.path)
        return self

    def config(self) -> SplitConfig:
        return SplitConfig(
            test_fraction=self.test_fraction, seed=self.seed, atom_alpha=self.atom_alpha,
            compound_alpha=self.compound_alpha, max_atom_divergence=self.max_atom_divergence,
            target_divergence=max(self.target_divergences) if self.target_divergences else None,
            snapshot_divergences=tuple(sorted(self.target_divergences)), max_iterations=self.max_iterations,
            candidates=self.candidates, tries=self.tries, progress=self.progress,
            min_compound_examples=self.min_compound_examples, group_moves=self.group_moves)


class SDParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: Literal[FORMATS] = Field(description="dataset format (mwp.readers.FORMATS)")
    path: Optional[str] = None
    out: str = Field(description="directory for train.jsonl, test.jsonl and split.json")
    k: PositiveInt = Field(10, description="quantity clusters used to measure the SD divergences")
    seed: int = 0

    @model_validator(mode="after")
    def _source(self) -> "SDParams":
        _readable_source(self.format, self.path)
        return self


def _tracking(out_dir: Path) -> None:
    import mlflow

    from mlflow.tracking import MlflowClient

    from flows.tracking import ensure_experiment

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
