"""The run directory: where each round's files live, and reading and writing them (pure).

Layout::

    params.json, mlflow.json                                  (the run's parameters; its MLflow run ids)
    data/train.jsonl, data/valid.jsonl, data/test_<name>.jsonl, data/report.json,
    data/quantity_labeler.json                                (with a split file: its atom labels)
    round_00/pool.jsonl, round_00/checkpoint/, round_00/metrics.json  (round 0: the original pool)
    round_NN/candidates.jsonl, scored.jsonl, kept.jsonl, pool.jsonl, checkpoint/, metrics.json
    round_NN/correct_<set>.json                               (answer correctness per test problem)
    round_NN/epochs.json                                      (per-epoch loss and validation accuracy)
A round is complete when its metrics.json exists: it is written last, atomically.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from mwp.problem import Problem, read_problems_jsonl
from tasks.loop.record import RoundRecord


def lock(run_dir: Path):
    """An exclusive lock on the run directory for as long as the returned file stays open (the process
    holds it; it goes with the process). A second run on the same directory is refused, never interleaved."""
    import fcntl

    handle = open(run_dir / ".lock", "a+", encoding="utf-8")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another process"
        handle.close()
        raise ValueError(f"{run_dir} is in use by another run ({holder}); wait for it or use another --out") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}")
    handle.flush()
    return handle


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


def read_record(run_dir: Path, round_index: int) -> RoundRecord:
    """The record of a completed round (its metrics.json)."""
    path = round_dir(run_dir, round_index) / "metrics.json"
    return RoundRecord.from_dict(json.loads(path.read_text(encoding="utf-8")))


def write_record(run_dir: Path, record: RoundRecord) -> None:
    """Written last: from then on the round counts as complete."""
    write_json_atomic(round_dir(run_dir, record.round) / "metrics.json", record.to_dict())


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


def current_pool(train: Path, run_dir: Path, up_to_round: int) -> list[Problem]:
    """The training pool after ``up_to_round``: the original training set plus every round's kept problems."""
    pool = read_problems_jsonl(train)
    for r in range(1, up_to_round + 1):
        kept = round_dir(run_dir, r) / "kept.jsonl"
        pool.extend(p for p, _ in read_scored(kept))
    return pool
