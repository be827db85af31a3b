"""The JSON documents the split and SD flows write (docs/splits.md, "Split file"): the split file of
``compaug split`` and its ``-cX.XX`` snapshots, and SD's ``split.json``. Each carries, under
``quantity_labeler``, the labeler whose clusters the split was measured with, so a consumer labels new
problems with :func:`tasks.dbca.atoms.labeler_from_split` instead of refitting it."""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any, Sequence

from mwp.durable import write_json_durable
from mwp.problem import Problem
from tasks.dbca.atoms import DEFAULT_MAX_DEPTH, KChoice, QuantityClusters, atoms_of, cluster_quantities, compounds_of, \
    split_statistics
from tasks.dbca.splitter import SplitConfig, SplitResult, Snapshot, measure_divergences
from tasks.dbca.synthetic import SDResult


def split_document(problems: Sequence[Problem], clusters: QuantityClusters, result: SplitResult, choice: KChoice,
                   method: str, parameters: dict[str, Any], config: SplitConfig,
                   max_depth: int | None = DEFAULT_MAX_DEPTH) -> dict[str, Any]:
    """The split file: ids of both sides, the Table-3 row and search counters of ``result``, the ks
    ``choice`` tried, ``parameters`` as given, and the quantity labeler of ``clusters``."""
    ids = [p.id for p in problems]
    # the divergences above leave out compounds held by fewer than min_compound_examples problems;
    # this one counts every compound (paper 003's definition), for comparison
    _, all_compounds = measure_divergences(
        problems, result.train, result.test, partial(atoms_of, clusters=clusters),
        partial(compounds_of, clusters=clusters, max_depth=max_depth),
        config.atom_alpha, config.compound_alpha, min_compound_examples=1)
    return {
        "method": method,
        "parameters": parameters,
        "k": clusters.k,
        "train": [ids[i] for i in result.train],
        "test": [ids[i] for i in result.test],
        "stats": {
            **split_statistics(problems, result.train, result.test, result.atom_divergence, result.compound_divergence),
            "initial_compound_divergence": result.initial_compound_divergence,
            "iterations": result.iterations, "swaps": result.swaps, "stop_reason": result.stop_reason,
            "group_moves": result.group_moves, "repairs": result.repairs,
            "compound_divergence_all_compounds": all_compounds,
            "k_tried": {str(k): {"comdiv": choice.tried[k], "iid": choice.iid[k]} for k in choice.tried},
        },
        "quantity_labeler": clusters.labeler.to_dict() if clusters.labeler else None,
    }


def snapshot_result(result: SplitResult, snapshot: Snapshot, n_examples: int) -> SplitResult:
    """The split as it was when ``snapshot`` was taken (stop reason ``target``)."""
    test = set(snapshot.test)
    train = tuple(i for i in range(n_examples) if i not in test)
    return SplitResult(train, snapshot.test, snapshot.atom_divergence, snapshot.compound_divergence,
                       result.initial_compound_divergence, snapshot.swaps, snapshot.swaps, "target")


def snapshot_path(out: Path, target: float) -> Path:
    """``splits/comdiv.json`` -> ``splits/comdiv-c0.50.json``."""
    return out.with_name(f"{out.stem}-c{target:.2f}{out.suffix}")


def sd_document(sd: SDResult, parameters: dict[str, Any], k: int, seed: int) -> dict[str, Any]:
    """SD's split.json: ids, test labels (structural/lexical), per-rule counts, abandon reasons, the
    Table-3 row under ``k`` quantity clusters of train + test, and the labeler of those clusters."""
    both = sd.train + sd.test
    train, test = range(len(sd.train)), range(len(sd.train), len(both))
    stats: dict[str, Any] = {"rules": {str(r): n for r, n in sorted(sd.rules.items())}, "abandoned": dict(sd.abandoned)}
    labeler = None
    if sd.train and sd.test:
        clusters = cluster_quantities(both, k, seed=seed)
        a, c = measure_divergences(both, train, test, partial(atoms_of, clusters=clusters),
                                   partial(compounds_of, clusters=clusters))
        stats.update(split_statistics(both, list(train), list(test), a, c))
        labeler = clusters.labeler
    return {"method": "sd", "parameters": parameters, "train": [p.id for p in sd.train],
            "test": [p.id for p in sd.test], "labels": sd.labels, "stats": stats,
            "quantity_labeler": labeler.to_dict() if labeler else None}


def write_document(document: dict[str, Any], path: Path) -> None:
    """A split document at ``path``, durably (:mod:`mwp.durable`): runs read it later, so after any
    crash it is the old document or the new one, never a cut one."""
    write_json_durable(path, document, indent=1, ensure_ascii=False)
