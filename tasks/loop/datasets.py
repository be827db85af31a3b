"""The data a loop run works on: read the source, split it into train / validation / named test sets,
and write them to ``run_dir/data`` (pure functions; the Prefect task that calls them is in steps.py).
"""
from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from mwp.durable import sync_tree
from mwp.problem import Problem, write_jsonl
from mwp.readers import DataSpec
from tasks.loop.rundir import RunRefused
from tasks.loop.rundir import write_json_atomic


@dataclass(frozen=True)
class DataSets:
    """Paths of the prepared sets (files are the contract between steps)."""

    train: Path
    valid: Path
    tests: dict[str, Path]  # name -> path, e.g. {"iid": ..., "comdiv": ...}


def load_split_file(path: str | Path) -> dict[str, Any]:
    """Read a split file (``compaug split`` writes them): JSON with ``train`` and ``test`` id lists."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        raise ValueError(f"split file {path}: cannot read it as JSON: {err}") from err
    if not isinstance(data, dict):
        raise ValueError(f"split file {path}: expected a JSON object with 'train' and 'test' lists")
    for key in ("train", "test"):
        if not isinstance(data.get(key), list):
            raise ValueError(f"split file {path}: missing the list {key!r}")
        if not data[key]:
            raise ValueError(f"split file {path}: the list {key!r} is empty")
    method = data.get("method", "comdiv")
    if not isinstance(method, str) or not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", method):
        raise ValueError(f"split file {path}: method {method!r} is not a plain name (it names the test set and a file)")
    overlap = set(map(str, data["train"])) & set(map(str, data["test"]))
    if overlap:
        raise ValueError(f"split file {path}: {len(overlap)} ids are on both sides, e.g. {sorted(overlap)[:3]}")
    return data


def split_problems(
    problems: Sequence[Problem],
    seed: int,
    test_fraction: float = 0.2,
    valid_fraction: float = 0.2,
    split: dict[str, Any] | None = None,
    iid_holdout_fraction: float = 0.0,
) -> tuple[list[Problem], list[Problem], dict[str, list[Problem]]]:
    """Train, validation and named test sets.

    Without a split file: a seeded random split, ``test_fraction`` of the problems to the I.I.D.
    test set and ``valid_fraction`` of the rest to validation (paper 003 takes 20% of training for
    validation). With a split file: its ``test`` side is the test set named by its ``method``
    (``comdiv``, ``iid`` or ``sd``; an ``iid`` split file's own test side is the I.I.D. set); only when
    asked, ``iid_holdout_fraction`` of its ``train`` side goes to an ``iid_holdout``
    test set (so the relative gap Acc_iid / Acc_comdiv - 1 can be measured) and ``valid_fraction``
    of the rest to validation. Ids in the split file that are not among the problems are an error
    when none match, and are counted otherwise (see :func:`missing_ids`)."""
    rng = random.Random(seed)
    by_id = {p.id: p for p in problems}
    if split is None:
        order = sorted(by_id)
        rng.shuffle(order)
        n_test = round(len(order) * test_fraction)
        test_ids, rest = order[:n_test], order[n_test:]
        tests = {"iid": [by_id[i] for i in test_ids]}
    else:
        rest = [str(i) for i in split["train"] if str(i) in by_id]
        test_side = [by_id[str(i)] for i in split["test"] if str(i) in by_id]
        for side, found in (("train", rest), ("test", test_side)):
            if not found:
                examples = ", ".join(repr(str(i))[:40] for i in split[side][:3]) or "none"
                raise ValueError(f"none of the split file's {len(split[side])} {side} ids (e.g. {examples}) is among "
                                 f"the {len(by_id)} problems loaded (a split of another data set?)")
        rng.shuffle(rest)
        tests = {str(split.get("method") or "comdiv"): test_side}
        n_iid = round(len(rest) * iid_holdout_fraction)
        if n_iid:
            tests["iid_holdout"] = [by_id[i] for i in rest[:n_iid]]
            rest = rest[n_iid:]
    n_valid = round(len(rest) * valid_fraction)
    valid = [by_id[i] for i in rest[:n_valid]]
    train = [by_id[i] for i in rest[n_valid:]]
    if not train or not valid:
        raise ValueError(f"too few problems to split: {len(problems)} usable")
    return train, valid, tests


def source_fingerprint(data: DataSpec, split_file: Path | None) -> str:
    """SHA-256 of what a run's sets were made from: the data file's bytes (every ``*.jsonl`` of a
    ``problems`` folder), or the generated corpus for ``builtin``, plus the split file's bytes. A
    resumed run checks it, so edited data never mixes with rounds computed from the old data."""
    import hashlib

    digest = hashlib.sha256()
    if data.format == "builtin":
        for problem in data.read().problems:
            digest.update(problem.key().encode())
    else:
        path = Path(data.path)
        for file in (sorted(path.glob("*.jsonl")) if path.is_dir() else [path]):
            digest.update(file.read_bytes())
    if split_file:
        digest.update(Path(split_file).read_bytes())
    return digest.hexdigest()


def check_unchanged(directory: Path, fingerprint: str) -> dict[str, Any] | None:
    """The data report of the sets in ``directory`` (None when none are made yet), after checking that they
    were made from the data of ``fingerprint`` (:func:`source_fingerprint`): a :class:`RunRefused` in one line
    otherwise. Run before anything of a resumed run is written or tracked."""
    path = directory / "report.json"
    if not path.exists():
        return None
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("source_sha256") != fingerprint:
        raise RunRefused(f"{directory.parent}: the data or split file changed since this run started; resuming "
                         "would mix rounds made from different data. Use another --out, or delete the run directory.")
    return report


def duplicates_across_sides(duplicates: dict[str, str], split: dict[str, Any]) -> int:
    """Pairs of exact duplicates (dropped id -> kept twin) that a split file put on different sides: the
    split was made before duplicates were dropped, and would have tested on training problems."""
    side = {str(i): "train" for i in split["train"]} | {str(i): "test" for i in split["test"]}
    return sum(1 for dropped, kept in duplicates.items()
               if dropped in side and kept in side and side[dropped] != side[kept])


def missing_ids(problems: Sequence[Problem], split: dict[str, Any]) -> int:
    known = {p.id for p in problems}
    return sum(str(i) not in known for i in list(split["train"]) + list(split["test"]))


def write_sets(directory: Path, train: Sequence[Problem], valid: Sequence[Problem],
               tests: dict[str, Sequence[Problem]]) -> DataSets:
    directory.mkdir(parents=True, exist_ok=True)
    write_jsonl(train, directory / "train.jsonl")
    write_jsonl(valid, directory / "valid.jsonl")
    paths = {}
    for name, problems in tests.items():
        paths[name] = directory / f"test_{name}.jsonl"
        write_jsonl(problems, paths[name])
    return DataSets(directory / "train.jsonl", directory / "valid.jsonl", paths)


def existing_sets(directory: Path) -> DataSets | None:
    """The sets a previous run prepared, or None. They count only once ``report.json`` (written last)
    exists: a preparation that died half-way is prepared again, never read half-written."""
    train, valid = directory / "train.jsonl", directory / "valid.jsonl"
    if not (train.exists() and valid.exists() and (directory / "report.json").exists()):
        for stale in directory.glob("*.jsonl") if directory.is_dir() else ():
            stale.unlink()
        return None
    tests = {p.stem[len("test_"):]: p for p in sorted(directory.glob("test_*.jsonl"))}
    return DataSets(train, valid, tests)


def prepare_sets(data: DataSpec, directory: Path, seed: int, test_fraction: float, valid_fraction: float,
                 split_file: Path | None, iid_holdout_fraction: float) -> tuple[DataSets, dict[str, Any]]:
    """Read the data source (skips counted and reported, never silent), split it, write the sets into
    ``directory`` and return them with the data report. Sets already there are reused after checking
    that the source data and split file are still the ones they were made from."""
    fingerprint = source_fingerprint(data, split_file)
    existing = existing_sets(directory)
    if existing is not None:
        return existing, check_unchanged(directory, fingerprint)
    result, problems = data.load()
    split = load_split_file(split_file) if split_file else None
    shared = duplicates_across_sides(result.duplicates, split) if split else 0
    train, valid, tests = split_problems(problems, seed, test_fraction, valid_fraction, split, iid_holdout_fraction)
    sets = write_sets(directory, train, valid, tests)
    report = {"format": data.format, "records": result.total, "usable": len(result.problems),
              "used": len(problems), "skipped": dict(result.skipped),
              "train": len(train), "valid": len(valid), "tests": {k: len(v) for k, v in tests.items()},
              "split_ids_not_loaded": missing_ids(problems, split) if split else 0,
              "duplicates_dropped": result.skipped.get("duplicate_problem", 0),
              "split_sides_share_duplicates": shared,
              "source_sha256": fingerprint}
    sync_tree(directory)  # the sets are on disk before report.json, which marks them complete
    write_json_atomic(directory / "report.json", report)
    return sets, report


@dataclass(frozen=True)
class GapMeasure:
    """How a run measures DBCA^c between its pool and the compositional test set: the split's own
    quantity labeler (JSON) and compound alpha."""

    labeler: Path
    alpha: float


def gap_measure(split_file: Path, data: DataSpec, labeler_path: Path) -> tuple[GapMeasure, bool]:
    """The split file's labeler written to ``labeler_path`` (once); the bool says whether it had to be
    fitted because the split file predates stored labelers (fitted exactly as the split fitted it:
    the same problems in the same order, k, window and seed)."""
    from tasks.dbca.atoms import QuantityLabeler, labeler_from_split

    split = load_split_file(split_file)
    settings = split.get("parameters", {})
    measure = GapMeasure(labeler_path, float(settings.get("compound_alpha", 0.1)))
    if labeler_path.exists():
        return measure, False
    labeler = labeler_from_split(split)
    fitted = labeler is None
    if fitted:
        k = next((v for v in (split.get("k"), settings.get("k")) if isinstance(v, int)), 10)
        labeler = QuantityLabeler.fit(data.read().problems, k=k, window=int(settings.get("window", 4)),
                                      seed=int(settings.get("seed", 0)))
    write_json_atomic(labeler_path, labeler.to_dict())
    return measure, fitted


def compound_divergence(measure: GapMeasure, pool: Sequence[Problem], test: Sequence[Problem]) -> float:
    from tasks.dbca.atoms import QuantityLabeler, compound_divergence_between

    labeler = QuantityLabeler.from_dict(json.loads(measure.labeler.read_text(encoding="utf-8")))
    return compound_divergence_between(labeler, pool, test, alpha=measure.alpha)
