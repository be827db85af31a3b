"""Preparing the data a loop run works on: load, split into train / validation / test sets, and the
files each round reads and writes (pure functions; the Prefect tasks that call them are in steps.py).

Layout of a run directory::

    data/train.jsonl, data/valid.jsonl, data/test_<name>.jsonl, data/report.json
    round_00/checkpoint/, round_00/metrics.json              (round 0: the solver on the original pool)
    round_NN/candidates.jsonl, round_NN/kept.jsonl, round_NN/checkpoint/, round_NN/metrics.json
A round is complete when its metrics.json exists: it is written last, atomically.
"""
from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from mwp.problem import Problem, read_problems_jsonl, write_jsonl


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
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"split file {path}: cannot read it as JSON: {err}") from err
    for key in ("train", "test"):
        if not isinstance(data.get(key), list):
            raise ValueError(f"split file {path}: missing the list {key!r}")
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
    iid_holdout_fraction: float = 0.1,
) -> tuple[list[Problem], list[Problem], dict[str, list[Problem]]]:
    """Train, validation and named test sets.

    Without a split file: a seeded random split, ``test_fraction`` of the problems to the I.I.D.
    test set and ``valid_fraction`` of the rest to validation (paper 003 takes 20% of training for
    validation). With a split file: its ``test`` side is the test set named by its ``method``
    (``comdiv`` by default); from its ``train`` side, ``iid_holdout_fraction`` goes to an ``iid``
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
        if not rest or not test_side:
            raise ValueError("the split file's ids do not match the loaded problems (wrong data set?)")
        rng.shuffle(rest)
        tests = {str(split.get("method") or "comdiv"): test_side}
        n_iid = round(len(rest) * iid_holdout_fraction)
        if n_iid:
            tests["iid"] = [by_id[i] for i in rest[:n_iid]]
            rest = rest[n_iid:]
    n_valid = round(len(rest) * valid_fraction)
    valid = [by_id[i] for i in rest[:n_valid]]
    train = [by_id[i] for i in rest[n_valid:]]
    if not train or not valid:
        raise ValueError(f"too few problems to split: {len(problems)} usable")
    return train, valid, tests


def source_fingerprint(data: dict[str, Any], split_file: str | None) -> str:
    """SHA-256 of what a run's sets were made from: the data file's bytes (every ``*.jsonl`` of a
    ``problems`` folder), or the generated corpus for ``builtin``, plus the split file's bytes. A
    resumed run checks it, so edited data never mixes with rounds computed from the old data."""
    import hashlib

    digest = hashlib.sha256()
    if data["format"] == "builtin":
        from mwp.builtin import generate_corpus

        for problem in generate_corpus(n=data["builtin_size"]):
            digest.update(problem.key().encode())
    else:
        path = Path(data["path"])
        for file in (sorted(path.glob("*.jsonl")) if path.is_dir() else [path]):
            digest.update(file.read_bytes())
    if split_file:
        digest.update(Path(split_file).read_bytes())
    return digest.hexdigest()


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
    train, valid = directory / "train.jsonl", directory / "valid.jsonl"
    if not (train.exists() and valid.exists()):
        return None
    tests = {p.stem[len("test_"):]: p for p in sorted(directory.glob("test_*.jsonl"))}
    return DataSets(train, valid, tests)


# ---------------------------------------------------------------- rounds on disk


def round_dir(run_dir: Path, round_index: int) -> Path:
    return run_dir / f"round_{round_index:02d}"


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str), encoding="utf-8")
    os.replace(tmp, path)


def completed_rounds(run_dir: Path) -> list[int]:
    """Indices of the rounds whose metrics.json exists, in order, stopping at the first gap."""
    done = []
    i = 0
    while (round_dir(run_dir, i) / "metrics.json").exists():
        done.append(i)
        i += 1
    return done


def read_metrics(run_dir: Path, round_index: int) -> dict[str, Any]:
    return json.loads((round_dir(run_dir, round_index) / "metrics.json").read_text(encoding="utf-8"))


def write_scored(path: Path, problems: Iterable[Problem], scores: Iterable[float]) -> int:
    """Problems as JSONL, each with its ``confidence`` (the score that ranked it)."""
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for problem, score in zip(problems, scores, strict=True):
            record = problem.to_dict()
            record["confidence"] = score
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_scored(path: Path) -> list[tuple[Problem, float]]:
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                record = json.loads(line)
                out.append((Problem.from_dict(record), float(record["confidence"])))
    return out


def current_pool(sets: DataSets, run_dir: Path, up_to_round: int) -> list[Problem]:
    """The training pool after ``up_to_round``: the original training set plus every round's kept problems."""
    pool = read_problems_jsonl(sets.train)
    for r in range(1, up_to_round + 1):
        kept = round_dir(run_dir, r) / "kept.jsonl"
        pool.extend(p for p, _ in read_scored(kept))
    return pool
