"""The Prefect edge of the split and SD flows (flows/split.py): thin ``@task`` wrappers that unpack,
call the pure code of this package, log, and return. The only module of tasks/dbca that imports Prefect."""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Sequence

from prefect import get_run_logger, task

from mwp.durable import sync_tree
from mwp.problem import Problem, write_jsonl
from tasks.dbca.atoms import KChoice, split_problems
from tasks.dbca.split_file import sd_document, snapshot_path, snapshot_result, split_document, write_document
from tasks.dbca.splitter import SplitConfig
from tasks.dbca.synthetic import SDResult, build_sd


@task
def load_problems(fmt: str, path: Optional[str]) -> list[Problem]:
    from mwp.readers import load_dataset

    from mwp.readers import require_problems

    result = load_dataset(fmt, path)
    if result.skipped:
        get_run_logger().info("skipped records: %s", dict(result.skipped))
    return require_problems(result, path or fmt).problems


@task
def make_split(problems: list[Problem], config: SplitConfig, method: str, k: int | str, ks: Sequence[int],
               window: int, max_depth: Optional[int], k_rule: str) -> KChoice:
    """ComDiv or I.I.D. split at a fixed k or the k picked from ``ks`` (:func:`split_problems`)."""
    choice = split_problems(problems, config, method, k, ks, window, max_depth, k_rule)
    get_run_logger().info("%s split at k=%d: DBCA^a %.4f, DBCA^c %.4f (%s)", method, choice.clusters.k,
                          choice.result.atom_divergence, choice.result.compound_divergence, choice.result.stop_reason)
    return choice


@task
def write_split(problems: list[Problem], choice: KChoice, out: str, method: str, parameters: dict[str, Any],
                config: SplitConfig, max_depth: Optional[int]) -> list[str]:
    """The split file, plus one file per reached divergence target (``<stem>-c0.50.json``)."""
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    clusters, result = choice.clusters, choice.result
    write_document(split_document(problems, clusters, result, choice, method, parameters, config, max_depth), path)
    written = [str(path)]
    for snap in result.snapshots:
        at = snapshot_result(result, snap, len(problems))
        snap_path = snapshot_path(path, snap.target)
        write_document(split_document(problems, clusters, at, choice, method, parameters, config, max_depth), snap_path)
        written.append(str(snap_path))
    get_run_logger().info("wrote %s", ", ".join(written))
    return written


@task
def synthesize(problems: list[Problem]) -> SDResult:
    sd = build_sd(problems)
    get_run_logger().info("SD: %d train, %d test; abandoned %s", len(sd.train), len(sd.test), dict(sd.abandoned))
    if not sd.train or not sd.test:
        raise ValueError(f"the SD set is empty ({len(sd.train)} train, {len(sd.test)} test problems from "
                         f"{len(problems)}; abandoned seeds: {dict(sd.abandoned) or 'none'})")
    return sd


@task
def write_sd(sd: SDResult, out: str, parameters: dict[str, Any], k: int, seed: int) -> dict[str, Any]:
    """``train.jsonl``, ``test.jsonl`` and ``split.json`` under ``out``; returns the split.json document."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    write_jsonl(sd.train, folder / "train.jsonl")
    write_jsonl(sd.test, folder / "test.jsonl")
    document = sd_document(sd, parameters, k, seed)
    sync_tree(folder)  # the problem files are on disk before split.json names their sides
    write_document(document, folder / "split.json")
    return document
