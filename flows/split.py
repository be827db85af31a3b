"""Prefect flows that write DBCA splits (``split_flow``) and the synthetic SD set (``sd_flow``).

Thin shell over tasks/dbca/ (splitter, atoms, synthetic): the flows validate their
parameters, call the pure code in small tasks, write files and log one MLflow run each (SQLite
store under the output directory unless ``MLFLOW_TRACKING_URI`` is set).
"""
from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import Literal, Optional, Union

from prefect import flow, get_run_logger, task
from prefect.runtime import flow_run
from pydantic import BaseModel, ConfigDict, Field, PositiveInt

from mwp.problem import Problem, write_jsonl
from tasks.dbca.atoms import (DEFAULT_KS, DEFAULT_MAX_DEPTH, DEFAULT_WINDOW, QuantityClusters, atoms_of, choose_k,
                              cluster_quantities, compounds_of, split_statistics, split_with_k)
from tasks.dbca.splitter import SplitConfig, SplitResult, iid_split, measure_divergences

EXPERIMENT = "compaug-split"


class SplitParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    format: str = Field(description="dataset format: builtin, mawps, math23k, svamp, asdiv, csv, jsonl")
    path: Optional[str] = Field(None, description="dataset file (none for builtin)")
    method: Literal["comdiv", "iid"] = "comdiv"
    out: str = Field(description="split file (JSON) to write")
    k: Union[Literal["auto"], PositiveInt] = Field("auto", description="quantity clusters; auto picks from ks")
    ks: list[PositiveInt] = Field(default_factory=lambda: list(DEFAULT_KS), min_length=1)
    k_rule: Literal["gain", "highest"] = Field("gain", description="auto k: highest gain over I.I.D., or highest DBCA^c")
    min_compound_examples: PositiveInt = Field(2, description="compounds held by fewer pool examples are left out")
    group_moves: bool = True
    window: PositiveInt = DEFAULT_WINDOW
    max_compound_depth: Optional[PositiveInt] = DEFAULT_MAX_DEPTH
    test_fraction: float = Field(0.2, gt=0.0, lt=1.0)
    seed: int = 0
    atom_alpha: float = Field(0.5, gt=0.0, lt=1.0)
    compound_alpha: float = Field(0.1, gt=0.0, lt=1.0)
    max_atom_divergence: float = Field(0.02, ge=0.0, le=1.0)
    target_divergences: list[float] = Field(default_factory=list, description="stop/snapshot points of DBCA^c")
    max_iterations: PositiveInt = 100_000
    candidates: int = Field(0, ge=0, description="candidates scored per side and swap; 0 = all")
    tries: PositiveInt = 100
    progress: bool = True

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

    format: str
    path: Optional[str] = None
    out: str = Field(description="directory for train.jsonl, test.jsonl and split.json")
    k: PositiveInt = Field(10, description="quantity clusters used to measure the SD divergences")
    seed: int = 0


@task
def load_problems(fmt: str, path: Optional[str]) -> list[Problem]:
    from mwp.readers import load_dataset

    result = load_dataset(fmt, path)
    if result.skipped:
        get_run_logger().info("skipped records: %s", dict(result.skipped))
    if not result.problems:
        raise ValueError(f"{path or fmt}: no problems to split")
    return result.problems


@task
def make_split(problems: list[Problem], params: SplitParams) -> tuple[QuantityClusters, SplitResult, dict]:
    config = params.config()
    tried: dict[int, dict] = {}
    if params.k == "auto":
        choice = choose_k(problems, config, params.ks, params.window, params.max_compound_depth, params.k_rule)
        clusters, comdiv = choice.clusters, choice.result
        tried = {k: {"comdiv": choice.tried[k], "iid": choice.iid[k]} for k in choice.tried}
    else:
        clusters, comdiv = split_with_k(problems, params.k, config, params.window, params.max_compound_depth)
    if params.method == "iid":
        atoms = partial(atoms_of, clusters=clusters)
        compounds = partial(compounds_of, clusters=clusters, max_depth=params.max_compound_depth)
        return clusters, iid_split(problems, atoms, compounds, config), tried
    return clusters, comdiv, tried


def split_document(problems: list[Problem], params: SplitParams, clusters: QuantityClusters, result: SplitResult,
                   tried: dict) -> dict:
    ids = [p.id for p in problems]
    # the divergences above leave out compounds held by fewer than min_compound_examples problems;
    # this one counts every compound (paper 003's definition), for comparison
    _, all_compounds = measure_divergences(
        problems, result.train, result.test, partial(atoms_of, clusters=clusters),
        partial(compounds_of, clusters=clusters, max_depth=params.max_compound_depth),
        params.atom_alpha, params.compound_alpha, min_compound_examples=1)
    return {
        "method": params.method,
        "parameters": params.model_dump(),
        "k": clusters.k,
        "train": [ids[i] for i in result.train],
        "test": [ids[i] for i in result.test],
        "stats": {
            **split_statistics(problems, result.train, result.test, result.atom_divergence, result.compound_divergence),
            "initial_compound_divergence": result.initial_compound_divergence,
            "iterations": result.iterations, "swaps": result.swaps, "stop_reason": result.stop_reason,
            "group_moves": result.group_moves, "repairs": result.repairs,
            "compound_divergence_all_compounds": all_compounds,
            "k_tried": {str(key): value for key, value in tried.items()},
        },
    }


@task
def write_split(problems: list[Problem], params: SplitParams, clusters: QuantityClusters, result: SplitResult,
                tried: dict) -> list[str]:
    """The split file, plus one file per reached divergence target (``<stem>-c0.50.json``)."""
    out = Path(params.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    document = split_document(problems, params, clusters, result, tried)
    out.write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    written = [str(out)]
    for snap in result.snapshots:
        test = set(snap.test)
        train = tuple(i for i in range(len(problems)) if i not in test)
        at = SplitResult(train, snap.test, snap.atom_divergence, snap.compound_divergence,
                         result.initial_compound_divergence, snap.swaps, snap.swaps, "target")
        path = out.with_name(f"{out.stem}-c{snap.target:.2f}{out.suffix}")
        path.write_text(json.dumps(split_document(problems, params, clusters, at, tried), indent=1, ensure_ascii=False), encoding="utf-8")
        written.append(str(path))
    return written


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

    problems = load_problems(params.format, params.path)
    clusters, result, tried = make_split(problems, params)
    files = write_split(problems, params, clusters, result, tried)
    _tracking(Path(params.out).parent)
    with mlflow.start_run(run_name=f"{params.method}-{params.format}") as run:
        mlflow.set_tag("prefect_flow_run_id", str(flow_run.get_id()))
        mlflow.log_params({key: str(value) for key, value in params.model_dump().items()})
        mlflow.log_param("k_used", clusters.k)
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


@task
def synthesize(problems: list[Problem]):
    from tasks.dbca.synthetic import build_sd

    return build_sd(problems)


@flow(name="sd")
def sd_flow(params: SDParams) -> dict:
    """Build SD from one data set; write train.jsonl, test.jsonl and split.json (with the Table-3
    row and the structural/lexical label of every test problem); log to MLflow."""
    import mlflow

    problems = load_problems(params.format, params.path)
    sd = synthesize(problems)
    out = Path(params.out)
    out.mkdir(parents=True, exist_ok=True)
    write_jsonl(sd.train, out / "train.jsonl")
    write_jsonl(sd.test, out / "test.jsonl")
    both = sd.train + sd.test
    train, test = range(len(sd.train)), range(len(sd.train), len(both))
    stats: dict = {"rules": {str(r): n for r, n in sorted(sd.rules.items())}, "abandoned": dict(sd.abandoned)}
    if sd.train and sd.test:
        clusters = cluster_quantities(both, params.k, seed=params.seed)
        a, c = measure_divergences(both, train, test, partial(atoms_of, clusters=clusters), partial(compounds_of, clusters=clusters))
        stats.update(split_statistics(both, list(train), list(test), a, c))
    document = {"method": "sd", "parameters": params.model_dump(), "train": [p.id for p in sd.train],
                "test": [p.id for p in sd.test], "labels": sd.labels, "stats": stats}
    (out / "split.json").write_text(json.dumps(document, indent=1, ensure_ascii=False), encoding="utf-8")
    _tracking(out)
    with mlflow.start_run(run_name=f"sd-{params.format}") as run:
        mlflow.set_tag("prefect_flow_run_id", str(flow_run.get_id()))
        mlflow.log_params({key: str(value) for key, value in params.model_dump().items()})
        mlflow.log_metrics({"n_train": len(sd.train), "n_test": len(sd.test),
                            **{k: v for k, v in stats.items() if k in ("atom_divergence", "compound_divergence")}})
        mlflow.log_artifact(str(out / "split.json"))
    return {**document, "mlflow_run_id": run.info.run_id}
